//! `--check-errors`: state a game may have that the HUD must not touch,
//! set before every swap only where the context has it (so this program
//! raises no GL error of its own), and read back after the swap together
//! with `glGetError`: compatibility state (alpha test, separate back-face
//! polygon mode), clip distances, the sample mask, primitive restart, and
//! indexed state of index 1 (blend enable, colour mask and blend function
//! of draw buffer 1; viewport, scissor box and scissor test of viewport 1).

use crate::state::{gl_proc, Item};
use glow::HasContext;
use std::ffi::c_void;

type IsEnabledi = unsafe extern "C" fn(u32, u32) -> u8;
type GetBooleani = unsafe extern "C" fn(u32, u32, *mut u8);
type GetIntegeri = unsafe extern "C" fn(u32, u32, *mut i32);
type GetFloati = unsafe extern "C" fn(u32, u32, *mut f32);
type ViewportIndexedf = unsafe extern "C" fn(u32, f32, f32, f32, f32);
type ScissorIndexed = unsafe extern "C" fn(u32, i32, i32, i32, i32);

/// `GL_ALPHA_TEST`.
const ALPHA_TEST: u32 = 0x0BC0;

/// What this context has, read as a game would (independently of the
/// GL library's own reading).
pub struct Extra {
    compat: bool,
    desktop: bool,
    restart: bool,
    sample_mask: bool,
    indexed: Option<(IsEnabledi, GetBooleani)>,
    blend_indexed: Option<GetIntegeri>,
    viewport_array: Option<(GetFloati, ViewportIndexedf, ScissorIndexed)>,
    /// The version, for the report.
    pub version: String,
}

fn f<T: Copy>(gl: &glow::Context, name: &str) -> Option<T> {
    let p = gl_proc(gl, name);
    // SAFETY: the caller names a function whose signature T is.
    (!p.is_null()).then(|| unsafe { std::mem::transmute_copy::<*const c_void, T>(&p) })
}

impl Extra {
    pub fn new(gl: &glow::Context) -> Extra {
        let v = gl.version();
        let at_least = |m: u32, n: u32| (v.major, v.minor) >= (m, n);
        let desktop = !v.is_embedded;
        let ext = gl.supported_extensions();
        // SAFETY: a query valid from 3.2 on.
        let profile = if desktop && at_least(3, 2) {
            unsafe { gl.get_parameter_i32(glow::CONTEXT_PROFILE_MASK) }
        } else {
            0
        };
        let compat = desktop
            && (!at_least(3, 2) || profile & glow::CONTEXT_COMPATIBILITY_PROFILE_BIT as i32 != 0);
        let indexed = if desktop { true } else { at_least(3, 2) };
        let blend_indexed = if desktop {
            at_least(4, 0)
        } else {
            at_least(3, 2)
        };
        let viewport_array = desktop && (at_least(4, 1) || ext.contains("GL_ARB_viewport_array"));
        Extra {
            compat,
            desktop,
            restart: desktop && at_least(3, 1),
            sample_mask: if desktop {
                at_least(3, 2) || ext.contains("GL_ARB_texture_multisample")
            } else {
                at_least(3, 1)
            },
            indexed: if indexed {
                f(gl, "glIsEnabledi").zip(f(gl, "glGetBooleani_v"))
            } else {
                None
            },
            blend_indexed: if blend_indexed {
                f(gl, "glGetIntegeri_v")
            } else {
                None
            },
            viewport_array: if viewport_array {
                f(gl, "glGetFloati_v")
                    .zip(f(gl, "glViewportIndexedf"))
                    .zip(f(gl, "glScissorIndexed"))
                    .map(|((a, b), c)| (a, b, c))
            } else {
                None
            },
            version: format!(
                "{} {}.{}{}",
                if desktop { "GL" } else { "GLES" },
                v.major,
                v.minor,
                if compat { " compat" } else { "" }
            ),
        }
    }

    /// Sets every item this context has.
    pub fn set(&self, gl: &glow::Context) {
        // SAFETY: state changes this context has (see `new`).
        unsafe {
            if self.compat {
                gl.enable(ALPHA_TEST);
                gl.polygon_mode(glow::FRONT, glow::LINE);
                gl.polygon_mode(glow::BACK, glow::POINT);
            }
            if self.desktop {
                gl.enable(glow::CLIP_DISTANCE0);
                gl.enable(glow::CLIP_DISTANCE3);
            }
            if self.restart {
                gl.enable(glow::PRIMITIVE_RESTART);
            }
            if self.sample_mask {
                gl.enable(glow::SAMPLE_MASK);
            }
            if self.indexed.is_some() {
                gl.disable(glow::BLEND);
                gl.enable_draw_buffer(glow::BLEND, 1);
                gl.color_mask_draw_buffer(1, false, true, false, true);
            }
            if self.blend_indexed.is_some() {
                gl.blend_func_separate_draw_buffer(
                    1,
                    glow::SRC_COLOR,
                    glow::DST_ALPHA,
                    glow::ZERO,
                    glow::ONE,
                );
            }
            if let Some((_, viewport, scissor)) = self.viewport_array {
                viewport(1, 4.0, 5.0, 60.0, 70.0);
                scissor(1, 6, 7, 80, 90);
                gl.disable(glow::SCISSOR_TEST);
                gl.enable_draw_buffer(glow::SCISSOR_TEST, 1);
            }
        }
    }

    /// Every item this context has.
    pub fn snapshot(&self, gl: &glow::Context) -> Vec<Item> {
        let mut out: Vec<Item> = Vec::new();
        // SAFETY: queries this context has (see `new`).
        unsafe {
            let on = |c| vec![i32::from(gl.is_enabled(c))];
            if self.compat {
                out.push(("alpha test", on(ALPHA_TEST)));
                let mut m = vec![0; 2];
                gl.get_parameter_i32_slice(glow::POLYGON_MODE, &mut m);
                out.push(("polygon mode front, back", m));
            }
            if self.desktop {
                for (i, c) in (0..8).map(|i| (i, glow::CLIP_DISTANCE0 + i)) {
                    out.push((CLIP_NAMES[i as usize], on(c)));
                }
            }
            if self.restart {
                out.push(("primitive restart", on(glow::PRIMITIVE_RESTART)));
            }
            if self.sample_mask {
                out.push(("sample mask", on(glow::SAMPLE_MASK)));
            }
            if let Some((is_enabledi, get_booleani)) = self.indexed {
                out.push((
                    "blend, buffers 0 and 1",
                    vec![
                        i32::from(is_enabledi(glow::BLEND, 0)),
                        i32::from(is_enabledi(glow::BLEND, 1)),
                    ],
                ));
                let mut m = [0u8; 4];
                get_booleani(glow::COLOR_WRITEMASK, 1, m.as_mut_ptr());
                out.push(("colour mask, buffer 1", m.map(i32::from).to_vec()));
            }
            if let Some(get_integeri) = self.blend_indexed {
                let mut v = Vec::new();
                for p in [
                    glow::BLEND_SRC_RGB,
                    glow::BLEND_DST_RGB,
                    glow::BLEND_SRC_ALPHA,
                    glow::BLEND_DST_ALPHA,
                ] {
                    let mut x = 0;
                    get_integeri(p, 1, &mut x);
                    v.push(x);
                }
                out.push(("blend function, buffer 1", v));
            }
            if let Some((get_floati, _, _)) = self.viewport_array {
                let mut vp = [0f32; 4];
                get_floati(glow::VIEWPORT, 1, vp.as_mut_ptr());
                out.push(("viewport 1", vp.map(|x| x as i32).to_vec()));
                if let (Some(get_integeri), Some((is_enabledi, _))) =
                    (self.blend_indexed, self.indexed)
                {
                    let mut sb = [0i32; 4];
                    get_integeri(glow::SCISSOR_BOX, 1, sb.as_mut_ptr());
                    out.push(("scissor box 1", sb.to_vec()));
                    out.push((
                        "scissor test, viewports 0 and 1",
                        vec![
                            i32::from(is_enabledi(glow::SCISSOR_TEST, 0)),
                            i32::from(is_enabledi(glow::SCISSOR_TEST, 1)),
                        ],
                    ));
                }
            }
        }
        out
    }
}

const CLIP_NAMES: [&str; 8] = [
    "clip distance 0",
    "clip distance 1",
    "clip distance 2",
    "clip distance 3",
    "clip distance 4",
    "clip distance 5",
    "clip distance 6",
    "clip distance 7",
];

/// Every pending GL error, drained.
pub fn errors(gl: &glow::Context) -> Vec<u32> {
    let mut out = Vec::new();
    for _ in 0..16 {
        // SAFETY: glGetError on the current context.
        let e = unsafe { gl.get_error() };
        if e == glow::NO_ERROR {
            break;
        }
        out.push(e);
    }
    out
}
