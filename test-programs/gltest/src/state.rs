//! The unusual state set before every swap, and the snapshot compared
//! across it: every item the issue lists that the context has.

use crate::{Profile, WINDOW_RGB};
use glow::HasContext;

/// The FBO's colour (8-bit RGBA), cleared once and checked at the end.
const FBO_RGBA: [u8; 4] = [200, 30, 60, 255];

/// The objects the unusual state binds.
pub struct Objects {
    profile: Profile,
    fbo: glow::NativeFramebuffer,
    vao: glow::NativeVertexArray,
    program: glow::NativeProgram,
    buffer: glow::NativeBuffer,
    unpack: glow::NativeBuffer,
    tex0: glow::NativeTexture,
    tex3: glow::NativeTexture,
    sampler: glow::NativeSampler,
    clip_control: Option<unsafe extern "C" fn(u32, u32)>,
}

fn desktop(p: Profile) -> bool {
    matches!(p, Profile::Compat | Profile::Core)
}

impl Objects {
    pub fn new(gl: &glow::Context, profile: Profile) -> Result<Objects, String> {
        // SAFETY: object creation on the current context.
        unsafe {
            let tex = |gl: &glow::Context| -> Result<glow::NativeTexture, String> {
                let t = gl.create_texture()?;
                gl.bind_texture(glow::TEXTURE_2D, Some(t));
                gl.tex_image_2d(
                    glow::TEXTURE_2D,
                    0,
                    glow::RGBA8 as i32,
                    16,
                    16,
                    0,
                    glow::RGBA,
                    glow::UNSIGNED_BYTE,
                    glow::PixelUnpackData::Slice(None),
                );
                Ok(t)
            };
            let target = tex(gl)?;
            let fbo = gl.create_framebuffer()?;
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(fbo));
            gl.framebuffer_texture_2d(
                glow::FRAMEBUFFER,
                glow::COLOR_ATTACHMENT0,
                glow::TEXTURE_2D,
                Some(target),
                0,
            );
            let [r, g, b, a] = FBO_RGBA.map(|c| f32::from(c) / 255.0);
            gl.clear_color(r, g, b, a);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
            let vs = if desktop(profile) {
                "#version 130\nvoid main() { gl_Position = vec4(0.0); }\n"
            } else {
                "#version 300 es\nvoid main() { gl_Position = vec4(0.0); }\n"
            };
            let fs = if desktop(profile) {
                "#version 130\nout vec4 c;\nvoid main() { c = vec4(1.0); }\n"
            } else {
                "#version 300 es\nprecision mediump float;\nout vec4 c;\nvoid main() { c = vec4(1.0); }\n"
            };
            let program = gl.create_program()?;
            for (kind, src) in [(glow::VERTEX_SHADER, vs), (glow::FRAGMENT_SHADER, fs)] {
                let s = gl.create_shader(kind)?;
                gl.shader_source(s, src);
                gl.compile_shader(s);
                if !gl.get_shader_compile_status(s) {
                    return Err(gl.get_shader_info_log(s));
                }
                gl.attach_shader(program, s);
            }
            gl.link_program(program);
            if !gl.get_program_link_status(program) {
                return Err(gl.get_program_info_log(program));
            }
            let ext = gl.supported_extensions();
            let v = gl.version();
            let clip = desktop(profile)
                && ((v.major, v.minor) >= (4, 5) || ext.contains("GL_ARB_clip_control"));
            let clip_control = if clip {
                let p = gl_proc(gl, "glClipControl");
                (!p.is_null()).then(|| std::mem::transmute(p))
            } else {
                None
            };
            Ok(Objects {
                profile,
                fbo,
                vao: gl.create_vertex_array()?,
                program,
                buffer: gl.create_buffer()?,
                unpack: gl.create_buffer()?,
                tex0: tex(gl)?,
                tex3: tex(gl)?,
                sampler: gl.create_sampler()?,
                clip_control,
            })
        }
    }

    /// Sets the unusual state (see the module doc), the game's state at
    /// its swap.
    pub fn set_unusual(&self, gl: &glow::Context) {
        // SAFETY: state changes on the current context with our objects.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.fbo));
            gl.bind_vertex_array(Some(self.vao));
            gl.use_program(Some(self.program));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.buffer));
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(self.buffer));
            gl.bind_buffer(glow::PIXEL_UNPACK_BUFFER, Some(self.unpack));
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(self.tex0));
            gl.bind_sampler(0, Some(self.sampler));
            gl.active_texture(glow::TEXTURE3);
            gl.bind_texture(glow::TEXTURE_2D, Some(self.tex3));
            gl.enable(glow::SCISSOR_TEST);
            gl.scissor(3, 5, 17, 19);
            gl.viewport(1, 2, 33, 44);
            gl.disable(glow::BLEND);
            gl.blend_func_separate(glow::DST_COLOR, glow::ZERO, glow::ONE, glow::ONE);
            gl.blend_equation_separate(glow::FUNC_SUBTRACT, glow::MAX);
            gl.enable(glow::DEPTH_TEST);
            gl.enable(glow::STENCIL_TEST);
            gl.enable(glow::CULL_FACE);
            gl.enable(glow::RASTERIZER_DISCARD);
            gl.disable(glow::DITHER);
            gl.color_mask(true, false, true, false);
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            gl.pixel_store_i32(glow::UNPACK_ROW_LENGTH, 7);
            gl.pixel_store_i32(glow::UNPACK_SKIP_ROWS, 2);
            gl.pixel_store_i32(glow::UNPACK_SKIP_PIXELS, 3);
            gl.enable(glow::PRIMITIVE_RESTART_FIXED_INDEX);
            if desktop(self.profile) {
                gl.enable(glow::FRAMEBUFFER_SRGB);
                gl.enable(glow::PRIMITIVE_RESTART);
                gl.polygon_mode(glow::FRONT_AND_BACK, glow::LINE);
            }
            if let Some(f) = self.clip_control {
                f(glow::UPPER_LEFT, glow::ZERO_TO_ONE);
            }
        }
    }

    /// Reads the FBO back: still its colour (the HUD drew into the default
    /// framebuffer only).
    pub fn check_fbo(&self, gl: &glow::Context) -> Result<(), String> {
        let mut px = [0u8; 4];
        // SAFETY: a read from our FBO on the current context.
        unsafe {
            gl.bind_buffer(glow::PIXEL_PACK_BUFFER, None);
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, Some(self.fbo));
            gl.read_pixels(
                8,
                8,
                1,
                1,
                glow::RGBA,
                glow::UNSIGNED_BYTE,
                glow::PixelPackData::Slice(Some(&mut px)),
            );
        }
        if px != FBO_RGBA {
            return Err(format!("FBO pixel changed: want {FBO_RGBA:?}, got {px:?}"));
        }
        Ok(())
    }
}

pub fn gl_proc(gl: &glow::Context, name: &str) -> *const std::ffi::c_void {
    let _ = gl;
    let c = std::ffi::CString::new(name).unwrap_or_default();
    // SAFETY: both GetProcAddress functions take a C string; whichever API
    // made the context answers for it.
    unsafe {
        type F = unsafe extern "C" fn(*const i8) -> *const std::ffi::c_void;
        for (lib, f) in [
            ("libGL.so.1", "glXGetProcAddressARB"),
            ("libEGL.so.1", "eglGetProcAddress"),
        ] {
            if let Ok(l) = libloading::Library::new(lib) {
                if let Ok(g) = l.get::<F>(f.as_bytes()) {
                    let p = g(c.as_ptr());
                    if !p.is_null() {
                        std::mem::forget(l);
                        return p;
                    }
                }
            }
        }
    }
    std::ptr::null()
}

/// Clears the window's back buffer to [`WINDOW_RGB`] (plain state first).
pub fn clear_window(gl: &glow::Context, profile: Profile, width: u32, height: u32) {
    // SAFETY: state changes and a clear on the current context.
    unsafe {
        gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        if desktop(profile) {
            gl.disable(glow::FRAMEBUFFER_SRGB);
        }
        gl.disable(glow::SCISSOR_TEST);
        gl.disable(glow::RASTERIZER_DISCARD);
        gl.color_mask(true, true, true, true);
        gl.viewport(0, 0, width as i32, height as i32);
        let [r, g, b] = WINDOW_RGB.map(|c| f32::from(c) / 255.0);
        gl.clear_color(r, g, b, 1.0);
        gl.clear(glow::COLOR_BUFFER_BIT);
    }
}

/// One state item's name and value.
pub type Item = (&'static str, Vec<i32>);

/// Every item, read with `glGet*`.
pub fn snapshot(gl: &glow::Context, profile: Profile) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    // SAFETY: queries on the current context.
    unsafe {
        let mut int = |name: &'static str, p: u32, n: usize| {
            let mut v = vec![0; n];
            if n == 1 {
                v[0] = gl.get_parameter_i32(p);
            } else {
                gl.get_parameter_i32_slice(p, &mut v);
            }
            out.push((name, v));
        };
        int("program", glow::CURRENT_PROGRAM, 1);
        int("vertex array", glow::VERTEX_ARRAY_BINDING, 1);
        int("array buffer", glow::ARRAY_BUFFER_BINDING, 1);
        int("element buffer", glow::ELEMENT_ARRAY_BUFFER_BINDING, 1);
        int("pixel unpack buffer", glow::PIXEL_UNPACK_BUFFER_BINDING, 1);
        int("active texture", glow::ACTIVE_TEXTURE, 1);
        int("draw framebuffer", glow::DRAW_FRAMEBUFFER_BINDING, 1);
        int("read framebuffer", glow::READ_FRAMEBUFFER_BINDING, 1);
        int("viewport", glow::VIEWPORT, 4);
        int("scissor box", glow::SCISSOR_BOX, 4);
        int("blend src rgb", glow::BLEND_SRC_RGB, 1);
        int("blend dst rgb", glow::BLEND_DST_RGB, 1);
        int("blend src alpha", glow::BLEND_SRC_ALPHA, 1);
        int("blend dst alpha", glow::BLEND_DST_ALPHA, 1);
        int("blend equation rgb", glow::BLEND_EQUATION_RGB, 1);
        int("blend equation alpha", glow::BLEND_EQUATION_ALPHA, 1);
        for (n, p) in [
            ("unpack alignment", glow::UNPACK_ALIGNMENT),
            ("unpack row length", glow::UNPACK_ROW_LENGTH),
            ("unpack skip rows", glow::UNPACK_SKIP_ROWS),
            ("unpack skip pixels", glow::UNPACK_SKIP_PIXELS),
        ] {
            int(n, p, 1);
        }
        if desktop(profile) {
            int("polygon mode", glow::POLYGON_MODE, 2);
            int("clip origin", glow::CLIP_ORIGIN, 1);
            int("clip depth mode", glow::CLIP_DEPTH_MODE, 1);
        }
        let mask = gl.get_parameter_bool_array::<4>(glow::COLOR_WRITEMASK);
        out.push(("colour mask", mask.iter().map(|&b| i32::from(b)).collect()));
        for unit in [0u32, 3] {
            gl.active_texture(glow::TEXTURE0 + unit);
            let t = gl.get_parameter_i32(glow::TEXTURE_BINDING_2D);
            let s = gl.get_parameter_i32(glow::SAMPLER_BINDING);
            out.push((
                if unit == 0 {
                    "unit 0 texture, sampler"
                } else {
                    "unit 3 texture, sampler"
                },
                vec![t, s],
            ));
        }
        gl.active_texture(glow::TEXTURE3);
        let mut caps = vec![
            ("blend", glow::BLEND),
            ("depth test", glow::DEPTH_TEST),
            ("stencil test", glow::STENCIL_TEST),
            ("scissor test", glow::SCISSOR_TEST),
            ("cull face", glow::CULL_FACE),
            ("rasterizer discard", glow::RASTERIZER_DISCARD),
            ("dither", glow::DITHER),
            (
                "primitive restart fixed index",
                glow::PRIMITIVE_RESTART_FIXED_INDEX,
            ),
        ];
        if desktop(profile) {
            caps.push(("framebuffer sRGB", glow::FRAMEBUFFER_SRGB));
            caps.push(("primitive restart", glow::PRIMITIVE_RESTART));
        }
        for (n, c) in caps {
            out.push((n, vec![i32::from(gl.is_enabled(c))]));
        }
    }
    out
}

/// Every item equal before and after swap `frame`.
pub fn compare(before: &[Item], after: &[Item], frame: u64) -> Result<(), String> {
    for (b, a) in before.iter().zip(after) {
        if b != a {
            return Err(format!(
                "state changed across swap {frame}: {}: before {:?}, after {:?}",
                b.0, b.1, a.1
            ));
        }
    }
    Ok(())
}
