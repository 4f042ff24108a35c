//! The game's GL state that the HUD's draw touches: read before the draw,
//! put back after it, item by item ([`Saved::take`], [`Saved::restore`]).
//! What is not listed here the draw does not change. Every item read is a
//! query, and with a threaded GL (Mesa's glthread, NVIDIA's threaded
//! optimisation) a query waits for the game's queued commands: so a pass
//! reads only what it changes ([`Pass`]: most swaps only draw the cached
//! panel, and leave pixel unpacking and the clear colour alone), the read
//! framebuffer is never touched (the HUD binds draw framebuffers only), and
//! clip distances need no saving (the HUD's vertex shader writes all eight,
//! so planes the game enabled never cut it). Items a context lacks
//! (polygon mode and `GL_FRAMEBUFFER_SRGB` on GLES, primitive restart
//! before 3.1, samplers before 3.3, the sample mask before 3.2 / GLES 3.1,
//! clip control before 4.5 / `ARB_clip_control`, alpha test and separate
//! back-face polygon modes outside compatibility contexts) are neither
//! read nor set, so no query or call raises a GL error.
//!
//! Indexed state (blend enable, colour mask, blend function and equation
//! per draw buffer; viewport, scissor box and scissor test per viewport)
//! is set and put back for index 0 alone, through the indexed calls where
//! the context has them ([`Caps`]): the plain calls would set every index
//! to one value. The plain queries read index 0.

use glow::HasContext;

/// What a context can do, read once when its HUD is made.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    pub gles: bool,
    /// Sampler objects (GL 3.3, GLES 3.0).
    pub samplers: bool,
    /// `glClipControl` (GL 4.5 or `ARB_clip_control`).
    pub clip_control: bool,
    /// `GL_PRIMITIVE_RESTART_FIXED_INDEX` (GL 4.3, GLES 3.0).
    pub restart_fixed: bool,
    /// `GL_PRIMITIVE_RESTART` (desktop GL 3.1).
    pub restart: bool,
    /// A compatibility context (desktop GL before 3.2, or its
    /// compatibility profile): alpha test, separate back-face polygon mode.
    pub compat: bool,
    /// `glEnablei(GL_BLEND)` and `glColorMaski` (GL 3.0, GLES 3.2).
    pub indexed: bool,
    /// Blend function and equation per draw buffer (GL 4.0, GLES 3.2).
    pub blend_indexed: bool,
    /// Viewport arrays (GL 4.1 or `ARB_viewport_array`).
    pub viewport_array: bool,
    /// `GL_SAMPLE_MASK` (GL 3.2, GLES 3.1).
    pub sample_mask: bool,
}

impl Caps {
    /// `on` for the blend of draw buffer 0 only.
    unsafe fn blend(&self, gl: &glow::Context, on: bool) {
        // SAFETY: state changes on the current context (caller).
        unsafe {
            match (self.indexed, on) {
                (true, true) => gl.enable_draw_buffer(glow::BLEND, 0),
                (true, false) => gl.disable_draw_buffer(glow::BLEND, 0),
                (false, true) => gl.enable(glow::BLEND),
                (false, false) => gl.disable(glow::BLEND),
            }
        }
    }

    /// `on` for the scissor test of viewport 0 only.
    unsafe fn scissor_test(&self, gl: &glow::Context, on: bool) {
        // SAFETY: state changes on the current context (caller).
        unsafe {
            match (self.viewport_array, on) {
                (true, true) => gl.enable_draw_buffer(glow::SCISSOR_TEST, 0),
                (true, false) => gl.disable_draw_buffer(glow::SCISSOR_TEST, 0),
                (false, true) => gl.enable(glow::SCISSOR_TEST),
                (false, false) => gl.disable(glow::SCISSOR_TEST),
            }
        }
    }

    /// Viewport 0.
    ///
    /// # Safety
    /// `gl` is the context current on this thread, with these caps.
    pub unsafe fn viewport(&self, gl: &glow::Context, [x, y, w, h]: [i32; 4]) {
        // SAFETY: state changes on the current context (caller).
        unsafe {
            if self.viewport_array {
                gl.viewport_f32_slice(0, 1, &[[x as f32, y as f32, w as f32, h as f32]]);
            } else {
                gl.viewport(x, y, w, h);
            }
        }
    }

    /// The scissor box of viewport 0.
    ///
    /// # Safety
    /// As [`Caps::viewport`].
    pub unsafe fn scissor(&self, gl: &glow::Context, r: [i32; 4]) {
        // SAFETY: state changes on the current context (caller).
        unsafe {
            if self.viewport_array {
                gl.scissor_slice(0, 1, &[r]);
            } else {
                gl.scissor(r[0], r[1], r[2], r[3]);
            }
        }
    }

    /// The blend function of draw buffer 0 (rgb source and destination,
    /// alpha source and destination).
    ///
    /// # Safety
    /// As [`Caps::viewport`].
    pub unsafe fn blend_func(&self, gl: &glow::Context, [a, b, c, d]: [u32; 4]) {
        // SAFETY: state changes on the current context (caller).
        unsafe {
            if self.blend_indexed {
                gl.blend_func_separate_draw_buffer(0, a, b, c, d);
            } else {
                gl.blend_func_separate(a, b, c, d);
            }
        }
    }

    unsafe fn blend_equation(&self, gl: &glow::Context, rgb: u32, alpha: u32) {
        // SAFETY: state changes on the current context (caller).
        unsafe {
            if self.blend_indexed {
                gl.blend_equation_separate_draw_buffer(0, rgb, alpha);
            } else {
                gl.blend_equation_separate(rgb, alpha);
            }
        }
    }

    unsafe fn color_mask(&self, gl: &glow::Context, [r, g, b, a]: [bool; 4]) {
        // SAFETY: state changes on the current context (caller).
        unsafe {
            if self.indexed {
                gl.color_mask_draw_buffer(0, r, g, b, a);
            } else {
                gl.color_mask(r, g, b, a);
            }
        }
    }
}

/// `glClipControl`, which glow does not wrap.
pub type ClipControlFn = unsafe extern "C" fn(u32, u32);

/// Capabilities the draw switches off, each saved and put back (blend and
/// the scissor test, which it switches on, are indexed: see [`Caps`]).
const ENABLES: [u32; 7] = [
    glow::CULL_FACE,
    glow::DEPTH_TEST,
    glow::STENCIL_TEST,
    glow::RASTERIZER_DISCARD,
    glow::SAMPLE_ALPHA_TO_COVERAGE,
    glow::SAMPLE_COVERAGE,
    glow::DITHER,
];
/// Desktop GL only.
const DESKTOP_ENABLES: [u32; 3] = [
    glow::FRAMEBUFFER_SRGB,
    glow::COLOR_LOGIC_OP,
    glow::MULTISAMPLE,
];
/// `GL_ALPHA_TEST` (compatibility contexts; glow has no name for it).
const ALPHA_TEST: u32 = 0x0BC0;
/// Pixel-store state the panel's and the font's uploads set.
const UNPACK: [u32; 6] = [
    glow::UNPACK_ALIGNMENT,
    glow::UNPACK_ROW_LENGTH,
    glow::UNPACK_SKIP_ROWS,
    glow::UNPACK_SKIP_PIXELS,
    glow::UNPACK_IMAGE_HEIGHT,
    glow::UNPACK_SKIP_IMAGES,
];

/// What a HUD pass does, so what it must save.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The cached panel drawn as one quad (most swaps).
    Quad,
    /// Also the panel rendered anew, its texture or the font allocated and
    /// uploaded: the clear colour and pixel unpacking too.
    Render,
}

/// What only [`Pass::Render`] changes.
struct RenderState {
    pixel_unpack_buffer: i32,
    unpack: [i32; UNPACK.len()],
    clear_color: [f32; 4],
}

/// The game's state as the draw found it.
pub struct Saved {
    program: i32,
    vertex_array: i32,
    array_buffer: i32,
    active_texture: i32,
    texture_2d: i32,
    sampler: i32,
    draw_framebuffer: i32,
    /// Draw buffer 0 of the default framebuffer, when that is bound (the
    /// HUD sets the back buffer there; another framebuffer's is not
    /// touched).
    draw_buffer: Option<i32>,
    viewport: [i32; 4],
    scissor_box: [i32; 4],
    color_mask: [bool; 4],
    blend_src_rgb: i32,
    blend_dst_rgb: i32,
    blend_src_alpha: i32,
    blend_dst_alpha: i32,
    blend_eq_rgb: i32,
    blend_eq_alpha: i32,
    blend: bool,
    scissor_test: bool,
    enables: [bool; ENABLES.len()],
    desktop_enables: [bool; DESKTOP_ENABLES.len()],
    restart: bool,
    restart_fixed: bool,
    alpha_test: bool,
    sample_mask: bool,
    render: Option<RenderState>,
    /// Front and back (compatibility contexts: they may differ).
    polygon_mode: [i32; 2],
    clip: [i32; 2],
}

fn name<T>(v: i32, make: impl Fn(std::num::NonZeroU32) -> T) -> Option<T> {
    std::num::NonZeroU32::new(v as u32).map(make)
}

impl Saved {
    /// Reads every item `pass` changes (module doc).
    ///
    /// # Safety
    /// `gl` is the context current on this thread, with `caps`.
    pub unsafe fn take(gl: &glow::Context, caps: Caps, pass: Pass) -> Saved {
        // SAFETY: plain queries on the current context (caller).
        unsafe {
            let i = |p| gl.get_parameter_i32(p);
            let mut viewport = [0; 4];
            gl.get_parameter_i32_slice(glow::VIEWPORT, &mut viewport);
            let mut scissor_box = [0; 4];
            gl.get_parameter_i32_slice(glow::SCISSOR_BOX, &mut scissor_box);
            let render = (pass == Pass::Render).then(|| {
                let mut clear_color = [0.0; 4];
                gl.get_parameter_f32_slice(glow::COLOR_CLEAR_VALUE, &mut clear_color);
                RenderState {
                    pixel_unpack_buffer: i(glow::PIXEL_UNPACK_BUFFER_BINDING),
                    unpack: UNPACK.map(&i),
                    clear_color,
                }
            });
            let draw_framebuffer = i(glow::DRAW_FRAMEBUFFER_BINDING);
            let active_texture = i(glow::ACTIVE_TEXTURE);
            gl.active_texture(glow::TEXTURE0);
            let texture_2d = i(glow::TEXTURE_BINDING_2D);
            let sampler = if caps.samplers {
                i(glow::SAMPLER_BINDING)
            } else {
                0
            };
            gl.active_texture(active_texture as u32);
            let mut polygon_mode = [glow::FILL as i32; 2];
            if !caps.gles {
                gl.get_parameter_i32_slice(glow::POLYGON_MODE, &mut polygon_mode);
            }
            Saved {
                program: i(glow::CURRENT_PROGRAM),
                vertex_array: i(glow::VERTEX_ARRAY_BINDING),
                array_buffer: i(glow::ARRAY_BUFFER_BINDING),
                active_texture,
                texture_2d,
                sampler,
                draw_framebuffer,
                draw_buffer: (draw_framebuffer == 0).then(|| i(glow::DRAW_BUFFER0)),
                viewport,
                scissor_box,
                color_mask: gl.get_parameter_bool_array::<4>(glow::COLOR_WRITEMASK),
                blend_src_rgb: i(glow::BLEND_SRC_RGB),
                blend_dst_rgb: i(glow::BLEND_DST_RGB),
                blend_src_alpha: i(glow::BLEND_SRC_ALPHA),
                blend_dst_alpha: i(glow::BLEND_DST_ALPHA),
                blend_eq_rgb: i(glow::BLEND_EQUATION_RGB),
                blend_eq_alpha: i(glow::BLEND_EQUATION_ALPHA),
                blend: gl.is_enabled(glow::BLEND),
                scissor_test: gl.is_enabled(glow::SCISSOR_TEST),
                enables: ENABLES.map(|c| gl.is_enabled(c)),
                desktop_enables: DESKTOP_ENABLES.map(|c| !caps.gles && gl.is_enabled(c)),
                restart: caps.restart && gl.is_enabled(glow::PRIMITIVE_RESTART),
                restart_fixed: caps.restart_fixed
                    && gl.is_enabled(glow::PRIMITIVE_RESTART_FIXED_INDEX),
                alpha_test: caps.compat && gl.is_enabled(ALPHA_TEST),
                sample_mask: caps.sample_mask && gl.is_enabled(glow::SAMPLE_MASK),
                render,
                polygon_mode,
                clip: if caps.clip_control {
                    [i(glow::CLIP_ORIGIN), i(glow::CLIP_DEPTH_MODE)]
                } else {
                    [0; 2]
                },
            }
        }
    }

    /// Sets what the HUD's draw needs: the default framebuffer's back
    /// buffer, no tests but the scissor, straight alpha blending, all
    /// colour channels, filled polygons, lower-left clip origin, encoded
    /// colours written as they are (`GL_FRAMEBUFFER_SRGB` off), texture
    /// unit 0 with no sampler; for [`Pass::Render`], plain unpacking.
    ///
    /// # Safety
    /// As [`Saved::take`].
    pub unsafe fn set_for_hud(&self, gl: &glow::Context, caps: Caps, clip: Option<ClipControlFn>) {
        // SAFETY: state changes on the current context (caller).
        unsafe {
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, None);
            if !caps.gles {
                gl.draw_buffer(glow::BACK);
                gl.polygon_mode(glow::FRONT_AND_BACK, glow::FILL);
            } else {
                gl.draw_buffers(&[glow::BACK]);
            }
            for c in ENABLES {
                gl.disable(c);
            }
            if !caps.gles {
                for c in DESKTOP_ENABLES {
                    gl.disable(c);
                }
            }
            // Only what is on: every call on a capability the context
            // lacks would be an error.
            let off = |c, on: bool| {
                if on {
                    gl.disable(c)
                }
            };
            off(glow::PRIMITIVE_RESTART, self.restart);
            off(glow::PRIMITIVE_RESTART_FIXED_INDEX, self.restart_fixed);
            off(ALPHA_TEST, self.alpha_test);
            off(glow::SAMPLE_MASK, self.sample_mask);
            caps.blend(gl, true);
            caps.scissor_test(gl, true);
            caps.blend_equation(gl, glow::FUNC_ADD, glow::FUNC_ADD);
            caps.blend_func(
                gl,
                [
                    glow::SRC_ALPHA,
                    glow::ONE_MINUS_SRC_ALPHA,
                    glow::ONE,
                    glow::ONE_MINUS_SRC_ALPHA,
                ],
            );
            caps.color_mask(gl, [true; 4]);
            if self.render.is_some() {
                gl.bind_buffer(glow::PIXEL_UNPACK_BUFFER, None);
                for p in UNPACK {
                    gl.pixel_store_i32(p, if p == glow::UNPACK_ALIGNMENT { 4 } else { 0 });
                }
            }
            gl.active_texture(glow::TEXTURE0);
            if caps.samplers {
                gl.bind_sampler(0, None);
            }
            if let Some(f) = clip {
                f(glow::LOWER_LEFT, glow::NEGATIVE_ONE_TO_ONE);
            }
        }
    }

    /// Puts every item back.
    ///
    /// # Safety
    /// As [`Saved::take`], on the same context.
    pub unsafe fn restore(&self, gl: &glow::Context, caps: Caps, clip: Option<ClipControlFn>) {
        // SAFETY: state changes on the current context (caller), with names
        // the game had bound.
        unsafe {
            gl.use_program(name(self.program, glow::NativeProgram));
            gl.bind_vertex_array(name(self.vertex_array, glow::NativeVertexArray));
            gl.bind_buffer(
                glow::ARRAY_BUFFER,
                name(self.array_buffer, glow::NativeBuffer),
            );
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, name(self.texture_2d, glow::NativeTexture));
            if caps.samplers {
                gl.bind_sampler(0, name(self.sampler, glow::NativeSampler));
            }
            gl.active_texture(self.active_texture as u32);
            gl.bind_framebuffer(
                glow::DRAW_FRAMEBUFFER,
                name(self.draw_framebuffer, glow::NativeFramebuffer),
            );
            // The draw buffer belongs to the framebuffer bound just now.
            if let Some(b) = self.draw_buffer {
                if caps.gles {
                    gl.draw_buffers(&[b as u32]);
                } else {
                    gl.draw_buffer(b as u32);
                }
            }
            caps.viewport(gl, self.viewport);
            caps.scissor(gl, self.scissor_box);
            caps.color_mask(gl, self.color_mask);
            caps.blend_equation(gl, self.blend_eq_rgb as u32, self.blend_eq_alpha as u32);
            caps.blend_func(
                gl,
                [
                    self.blend_src_rgb,
                    self.blend_dst_rgb,
                    self.blend_src_alpha,
                    self.blend_dst_alpha,
                ]
                .map(|f| f as u32),
            );
            caps.blend(gl, self.blend);
            caps.scissor_test(gl, self.scissor_test);
            let set = |c, on| if on { gl.enable(c) } else { gl.disable(c) };
            for (c, on) in ENABLES.into_iter().zip(self.enables) {
                set(c, on);
            }
            if !caps.gles {
                for (c, on) in DESKTOP_ENABLES.into_iter().zip(self.desktop_enables) {
                    set(c, on);
                }
                let [front, back] = self.polygon_mode.map(|m| m as u32);
                if caps.compat && front != back {
                    gl.polygon_mode(glow::FRONT, front);
                    gl.polygon_mode(glow::BACK, back);
                } else {
                    gl.polygon_mode(glow::FRONT_AND_BACK, front);
                }
            }
            // Only what was on is switched back on (set_for_hud's rule).
            let on = |c, was: bool| {
                if was {
                    gl.enable(c)
                }
            };
            on(glow::PRIMITIVE_RESTART, self.restart);
            on(glow::PRIMITIVE_RESTART_FIXED_INDEX, self.restart_fixed);
            on(ALPHA_TEST, self.alpha_test);
            on(glow::SAMPLE_MASK, self.sample_mask);
            if let Some(r) = &self.render {
                gl.bind_buffer(
                    glow::PIXEL_UNPACK_BUFFER,
                    name(r.pixel_unpack_buffer, glow::NativeBuffer),
                );
                for (p, v) in UNPACK.into_iter().zip(r.unpack) {
                    gl.pixel_store_i32(p, v);
                }
                let [red, g, b, a] = r.clear_color;
                gl.clear_color(red, g, b, a);
            }
            if let Some(f) = clip {
                f(self.clip[0] as u32, self.clip[1] as u32);
            }
        }
    }
}
