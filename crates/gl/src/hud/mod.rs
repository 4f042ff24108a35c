//! The HUD drawn with GL into a window's back buffer, just before the real
//! swap, in the context the game swaps with: the same view as the Vulkan
//! layer's (`steadyhud_hudview`: rows, graph, colours), rendered by imgui
//! into an opaque panel when the live statistics change (~10×/s), as the
//! Vulkan layer's cached panel is; each swap draws the panel as one quad
//! ([`mesh`]). The game's state is saved before and restored after every
//! draw ([`saved`]).
//!
//! Contexts it draws in: GL ≥ 3.0 (core or compatibility) and GLES ≥ 3.0;
//! anything else ([`HudError::Unsupported`]) gets no HUD, with one line,
//! while capture, log and limiter go on.

mod mesh;
mod saved;

use crate::real::{self, Api};
use mesh::Mesh;
use saved::{Caps, ClipControlFn, Pass, Saved};
use std::ffi::CStr;
use steadyhud_capture::live::LiveStats;
use steadyhud_config::Config;
use steadyhud_hudview::driver::{Imgui, ImguiBusy, Panel};

/// Why a context gets no HUD.
#[derive(Debug)]
pub enum HudError {
    /// A context the HUD cannot draw in (version, unreadable).
    Unsupported(String),
    Mesh(mesh::MeshError),
    Imgui(ImguiBusy),
}

impl From<ImguiBusy> for HudError {
    fn from(e: ImguiBusy) -> Self {
        HudError::Imgui(e)
    }
}

impl std::fmt::Display for HudError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HudError::Unsupported(why) => f.write_str(why),
            HudError::Mesh(e) => e.fmt(f),
            HudError::Imgui(e) => e.fmt(f),
        }
    }
}

/// `GL_VERSION` of the current context as (GLES?, major, minor).
pub fn parse_version(text: &str) -> Option<(bool, u32, u32)> {
    let (gles, rest) = match text.strip_prefix("OpenGL ES ") {
        Some(r) => (true, r),
        // "OpenGL ES-CM 1.1" and the like: a profile we do not draw in.
        None if text.starts_with("OpenGL ES") => return None,
        None => (false, text),
    };
    let num = rest.split([' ', '-']).next()?;
    let mut parts = num.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((gles, major, minor))
}

/// Whether the HUD draws in a context of this version.
pub fn drawable_version(gles: bool, major: u32) -> bool {
    let _ = gles;
    major >= 3
}

/// `glGetString` of the current context, through the real lookup.
///
/// # Safety
/// A context of `api` is current on this thread.
pub unsafe fn gl_string(api: Api, name: u32) -> Option<String> {
    type F = unsafe extern "C" fn(u32) -> *const u8;
    // SAFETY: a lookup by C string.
    let p = unsafe { real::real_get_proc(api, c"glGetString".as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: glGetString's signature; the context is current (caller).
    let s = unsafe { std::mem::transmute::<*mut std::ffi::c_void, F>(p)(name) };
    // SAFETY: a non-null result is a NUL-terminated string of the context.
    (!s.is_null()).then(|| {
        unsafe { CStr::from_ptr(s.cast()) }
            .to_string_lossy()
            .into_owned()
    })
}

/// The HUD of one GL context.
pub struct ContextHud {
    gl: glow::Context,
    caps: Caps,
    clip: Option<ClipControlFn>,
    mesh: Mesh,
    /// imgui's context and font size (the atlas is the mesh's texture).
    imgui: Imgui,
    /// The view, and when its panel is rendered again.
    panel: Panel,
}

// SAFETY: a context's HUD is only used on the thread where that context is
// current (inside its swap, under the process's contexts lock); glow's
// context and imgui's suspended one hold no thread-bound state (imgui's
// activations are serialised by the panel driver's lock).
unsafe impl Send for ContextHud {}

impl ContextHud {
    /// Makes the HUD of the context current on this thread, for a window
    /// of `size`.
    ///
    /// # Safety
    /// A context of `api` is current on this thread.
    pub unsafe fn new(api: Api, config: &Config, size: [u32; 2]) -> Result<ContextHud, HudError> {
        // SAFETY: the context is current (caller).
        let version = unsafe { gl_string(api, glow::VERSION) }
            .ok_or_else(|| HudError::Unsupported("GL_VERSION cannot be read".into()))?;
        let Some((gles, major, minor)) = parse_version(&version) else {
            return Err(HudError::Unsupported(format!(
                "a context the HUD does not know (GL_VERSION {version:?})"
            )));
        };
        if !drawable_version(gles, major) {
            return Err(HudError::Unsupported(format!(
                "{} {major}.{minor}: the HUD needs GL 3.0 or GLES 3.0",
                if gles { "GLES" } else { "GL" }
            )));
        }
        // SAFETY: the real GetProcAddress with glow's C strings; the
        // context is current (caller).
        let gl = unsafe {
            glow::Context::from_loader_function_cstr(|n| real::real_get_proc(api, n.as_ptr()))
        };
        use glow::HasContext;
        let ext = |e: &str| gl.supported_extensions().contains(e);
        let at_least = |m: u32, n: u32| (major, minor) >= (m, n);
        // A compatibility context: before 3.2, or the profile mask says so.
        let compat = !gles
            && (!at_least(3, 2)
                // SAFETY: a plain query on the current context (caller).
                || unsafe { gl.get_parameter_i32(glow::CONTEXT_PROFILE_MASK) }
                    & glow::CONTEXT_COMPATIBILITY_PROFILE_BIT as i32
                    != 0);
        let caps = Caps {
            gles,
            samplers: gles || at_least(3, 3) || ext("GL_ARB_sampler_objects"),
            clip_control: !gles && (at_least(4, 5) || ext("GL_ARB_clip_control")),
            restart_fixed: gles || at_least(4, 3) || ext("GL_ARB_ES3_compatibility"),
            restart: !gles && at_least(3, 1),
            compat,
            indexed: at_least(3, if gles { 2 } else { 0 }),
            blend_indexed: if gles { at_least(3, 2) } else { at_least(4, 0) },
            viewport_array: !gles && (at_least(4, 1) || ext("GL_ARB_viewport_array")),
            sample_mask: if gles {
                at_least(3, 1)
            } else {
                at_least(3, 2) || ext("GL_ARB_texture_multisample")
            },
        };
        let clip = if caps.clip_control {
            // SAFETY: a lookup by C string.
            let p = unsafe { real::real_get_proc(api, c"glClipControl".as_ptr()) };
            // SAFETY: glClipControl's signature.
            (!p.is_null()).then(|| unsafe { std::mem::transmute::<_, ClipControlFn>(p) })
        } else {
            None
        };
        let panel = Panel::new(config, size);
        let (imgui, atlas) = Imgui::new(&panel.view)?;
        // SAFETY: the context is current (caller); its state is put back.
        unsafe {
            let saved = Saved::take(&gl, caps, Pass::Render);
            saved.set_for_hud(&gl, caps, clip);
            let mesh = Mesh::new(&gl, caps, (atlas.width, atlas.height, &atlas.pixels));
            saved.restore(&gl, caps, clip);
            Ok(ContextHud {
                gl,
                caps,
                clip,
                mesh: mesh.map_err(HudError::Mesh)?,
                imgui,
                panel,
            })
        }
    }

    /// Draws the HUD with `stats` into the default framebuffer's back buffer
    /// of a window of `size`, re-rendering the panel when the stats or the
    /// size changed. The game's state is as it was afterwards.
    ///
    /// # Safety
    /// This HUD's context is current on this thread, its window the draw
    /// surface.
    pub unsafe fn draw(
        &mut self,
        config: &Config,
        size: [u32; 2],
        stats: &LiveStats,
    ) -> Result<(), HudError> {
        if size[0] == 0 || size[1] == 0 {
            return Ok(());
        }
        let gl = &self.gl;
        // Most swaps only draw the cached panel: they save less.
        let pass = if self.panel.current(size, stats) {
            Pass::Quad
        } else {
            Pass::Render
        };
        // SAFETY: the context is current (caller); its state is put back.
        unsafe {
            let saved = Saved::take(gl, self.caps, pass);
            saved.set_for_hud(gl, self.caps, self.clip);
            let r = self.render_and_draw(config, size, stats);
            saved.restore(&self.gl, self.caps, self.clip);
            r
        }
    }

    /// # Safety
    /// As [`ContextHud::draw`], the HUD's state set.
    unsafe fn render_and_draw(
        &mut self,
        config: &Config,
        size: [u32; 2],
        stats: &LiveStats,
    ) -> Result<(), HudError> {
        if !self.panel.current(size, stats) {
            if self.panel.resize(config, size, self.imgui.font_px()) {
                // A new scale: a new font atlas.
                let (imgui, atlas) = Imgui::new(&self.panel.view)?;
                // SAFETY: our texture on the current context.
                unsafe {
                    self.mesh
                        .replace_font(&self.gl, (atlas.width, atlas.height, &atlas.pixels))
                };
                self.imgui = imgui;
            }
            let (gl, mesh) = (&self.gl, &mut self.mesh);
            self.panel
                .render(&mut self.imgui, size, 0.1, stats, |content, data| {
                    // Premultiplied: the panel is drawn over the frame with
                    // (ONE, ONE_MINUS_SRC_ALPHA), so `hud_alpha=0` leaves the
                    // game's pixels as they were outside the glyphs.
                    let [r, g, b, _] = steadyhud_hudview::colors::PANEL_BG;
                    let a = config.hud_alpha;
                    let bg = [r * a, g * a, b * a, a];
                    // SAFETY: our objects on the current context (caller).
                    unsafe { mesh.render_panel(gl, data, content, bg) };
                    Ok::<_, HudError>(())
                })?;
        }
        let offset = self.panel.offset(size);
        // SAFETY: our objects on the current context (caller).
        unsafe { self.mesh.draw_panel(&self.gl, offset, size) };
        Ok(())
    }

    /// Drops the HUD of a context being destroyed (its objects go with it:
    /// no GL call).
    pub fn forget(self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_the_hud_draws_in() {
        let v = |s| parse_version(s);
        assert_eq!(v("4.5 (Core Profile) Mesa 22.3.6"), Some((false, 4, 5)));
        assert_eq!(
            v("4.5 (Compatibility Profile) Mesa 22.3.6"),
            Some((false, 4, 5))
        );
        assert_eq!(v("3.0 Mesa 22.3.6"), Some((false, 3, 0)));
        assert_eq!(v("2.1 Mesa 22.3.6"), Some((false, 2, 1)));
        assert_eq!(v("4.6.0 NVIDIA 550.54.14"), Some((false, 4, 6)));
        assert_eq!(v("OpenGL ES 3.2 Mesa 22.3.6"), Some((true, 3, 2)));
        assert_eq!(v("OpenGL ES 2.0 Mesa 22.3.6"), Some((true, 2, 0)));
        assert_eq!(v("OpenGL ES-CM 1.1 Mesa"), None);
        assert_eq!(v("garbage"), None);
        assert!(drawable_version(false, 3) && drawable_version(true, 3));
        assert!(!drawable_version(false, 2) && !drawable_version(true, 2));
    }
}
