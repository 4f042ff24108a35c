//! The game's GL state that the HUD's draw touches: read before the draw,
//! put back after it, item by item ([`Saved::take`], [`Saved::restore`]).
//! What is not listed here the draw does not change. Items a context lacks
//! (polygon mode and `GL_FRAMEBUFFER_SRGB` on GLES, samplers before 3.3,
//! clip control before 4.5 / `ARB_clip_control`) are neither read nor set.

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
}

/// `glClipControl`, which glow does not wrap.
pub type ClipControlFn = unsafe extern "C" fn(u32, u32);

/// Capabilities the draw switches, each saved and put back.
const ENABLES: [u32; 9] = [
    glow::BLEND,
    glow::CULL_FACE,
    glow::DEPTH_TEST,
    glow::STENCIL_TEST,
    glow::SCISSOR_TEST,
    glow::RASTERIZER_DISCARD,
    glow::SAMPLE_ALPHA_TO_COVERAGE,
    glow::SAMPLE_COVERAGE,
    glow::DITHER,
];
/// Desktop GL only.
const DESKTOP_ENABLES: [u32; 4] = [
    glow::FRAMEBUFFER_SRGB,
    glow::COLOR_LOGIC_OP,
    glow::PRIMITIVE_RESTART,
    glow::MULTISAMPLE,
];
/// Pixel-store state the font upload sets.
const UNPACK: [u32; 6] = [
    glow::UNPACK_ALIGNMENT,
    glow::UNPACK_ROW_LENGTH,
    glow::UNPACK_SKIP_ROWS,
    glow::UNPACK_SKIP_PIXELS,
    glow::UNPACK_IMAGE_HEIGHT,
    glow::UNPACK_SKIP_IMAGES,
];

/// The game's state as the draw found it.
pub struct Saved {
    program: i32,
    vertex_array: i32,
    array_buffer: i32,
    pixel_unpack_buffer: i32,
    active_texture: i32,
    texture_2d: i32,
    sampler: i32,
    draw_framebuffer: i32,
    read_framebuffer: i32,
    draw_buffer: i32,
    viewport: [i32; 4],
    scissor_box: [i32; 4],
    clear_color: [f32; 4],
    color_mask: [bool; 4],
    blend_src_rgb: i32,
    blend_dst_rgb: i32,
    blend_src_alpha: i32,
    blend_dst_alpha: i32,
    blend_eq_rgb: i32,
    blend_eq_alpha: i32,
    enables: [bool; ENABLES.len()],
    desktop_enables: [bool; DESKTOP_ENABLES.len()],
    restart_fixed: bool,
    unpack: [i32; UNPACK.len()],
    polygon_mode: i32,
    clip: [i32; 2],
}

fn name<T>(v: i32, make: impl Fn(std::num::NonZeroU32) -> T) -> Option<T> {
    std::num::NonZeroU32::new(v as u32).map(make)
}

impl Saved {
    /// Reads every item (module doc).
    ///
    /// # Safety
    /// `gl` is the context current on this thread, with `caps`.
    pub unsafe fn take(gl: &glow::Context, caps: Caps) -> Saved {
        // SAFETY: plain queries on the current context (caller).
        unsafe {
            let i = |p| gl.get_parameter_i32(p);
            let mut viewport = [0; 4];
            gl.get_parameter_i32_slice(glow::VIEWPORT, &mut viewport);
            let mut scissor_box = [0; 4];
            gl.get_parameter_i32_slice(glow::SCISSOR_BOX, &mut scissor_box);
            let mut clear_color = [0.0; 4];
            gl.get_parameter_f32_slice(glow::COLOR_CLEAR_VALUE, &mut clear_color);
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
                pixel_unpack_buffer: i(glow::PIXEL_UNPACK_BUFFER_BINDING),
                active_texture,
                texture_2d,
                sampler,
                draw_framebuffer: i(glow::DRAW_FRAMEBUFFER_BINDING),
                read_framebuffer: i(glow::READ_FRAMEBUFFER_BINDING),
                draw_buffer: i(glow::DRAW_BUFFER0),
                viewport,
                scissor_box,
                clear_color,
                color_mask: gl.get_parameter_bool_array::<4>(glow::COLOR_WRITEMASK),
                blend_src_rgb: i(glow::BLEND_SRC_RGB),
                blend_dst_rgb: i(glow::BLEND_DST_RGB),
                blend_src_alpha: i(glow::BLEND_SRC_ALPHA),
                blend_dst_alpha: i(glow::BLEND_DST_ALPHA),
                blend_eq_rgb: i(glow::BLEND_EQUATION_RGB),
                blend_eq_alpha: i(glow::BLEND_EQUATION_ALPHA),
                enables: ENABLES.map(|c| gl.is_enabled(c)),
                desktop_enables: DESKTOP_ENABLES.map(|c| !caps.gles && gl.is_enabled(c)),
                restart_fixed: caps.restart_fixed
                    && gl.is_enabled(glow::PRIMITIVE_RESTART_FIXED_INDEX),
                unpack: UNPACK.map(&i),
                polygon_mode: polygon_mode[0],
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
    /// colours written as they are (`GL_FRAMEBUFFER_SRGB` off), plain
    /// unpacking, texture unit 0 with no sampler.
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
            if caps.restart_fixed {
                gl.disable(glow::PRIMITIVE_RESTART_FIXED_INDEX);
            }
            gl.enable(glow::BLEND);
            gl.enable(glow::SCISSOR_TEST);
            gl.blend_equation_separate(glow::FUNC_ADD, glow::FUNC_ADD);
            gl.blend_func_separate(
                glow::SRC_ALPHA,
                glow::ONE_MINUS_SRC_ALPHA,
                glow::ONE,
                glow::ONE_MINUS_SRC_ALPHA,
            );
            gl.color_mask(true, true, true, true);
            gl.bind_buffer(glow::PIXEL_UNPACK_BUFFER, None);
            for p in UNPACK {
                gl.pixel_store_i32(p, if p == glow::UNPACK_ALIGNMENT { 4 } else { 0 });
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
            gl.bind_buffer(
                glow::PIXEL_UNPACK_BUFFER,
                name(self.pixel_unpack_buffer, glow::NativeBuffer),
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
            gl.bind_framebuffer(
                glow::READ_FRAMEBUFFER,
                name(self.read_framebuffer, glow::NativeFramebuffer),
            );
            // The draw buffer belongs to the framebuffer bound just now.
            if self.draw_framebuffer == 0 {
                if caps.gles {
                    gl.draw_buffers(&[self.draw_buffer as u32]);
                } else {
                    gl.draw_buffer(self.draw_buffer as u32);
                }
            }
            let [x, y, w, h] = self.viewport;
            gl.viewport(x, y, w, h);
            let [x, y, w, h] = self.scissor_box;
            gl.scissor(x, y, w, h);
            let [r, g, b, a] = self.clear_color;
            gl.clear_color(r, g, b, a);
            let [r, g, b, a] = self.color_mask;
            gl.color_mask(r, g, b, a);
            gl.blend_equation_separate(self.blend_eq_rgb as u32, self.blend_eq_alpha as u32);
            gl.blend_func_separate(
                self.blend_src_rgb as u32,
                self.blend_dst_rgb as u32,
                self.blend_src_alpha as u32,
                self.blend_dst_alpha as u32,
            );
            let set = |c, on| if on { gl.enable(c) } else { gl.disable(c) };
            for (c, on) in ENABLES.into_iter().zip(self.enables) {
                set(c, on);
            }
            if !caps.gles {
                for (c, on) in DESKTOP_ENABLES.into_iter().zip(self.desktop_enables) {
                    set(c, on);
                }
                gl.polygon_mode(glow::FRONT_AND_BACK, self.polygon_mode as u32);
            }
            if caps.restart_fixed {
                set(glow::PRIMITIVE_RESTART_FIXED_INDEX, self.restart_fixed);
            }
            for (p, v) in UNPACK.into_iter().zip(self.unpack) {
                gl.pixel_store_i32(p, v);
            }
            if let Some(f) = clip {
                f(self.clip[0] as u32, self.clip[1] as u32);
            }
        }
    }
}
