//! `--wayland` / `--wayland-unmapped`: an EGL window surface on a Wayland
//! surface (`wl_egl_window`, from `libwayland-egl.so.1`, dlopen'd), a GLES
//! context, and a plain loop: clear to [`crate::WINDOW_RGB`], ask for
//! presentation feedback, `eglSwapBuffers`, read the socket. The window
//! and the feedback file: testapp's `wayland.rs` (included as
//! [`crate::wayland`]), which documents the file's format. With
//! `--input-out` the window reads its seat's keys and buttons
//! ([`WlWindow::read_input`], as testapp does) at each frame's start: the
//! socket read right after the previous swap returns ([`sample`]).

use std::ffi::{c_int, c_uint};
use std::time::{Duration, Instant};

use crate::wayland::WlWindow;
use crate::{Args, Profile};

use crate::context::Egl;

const EGL_NONE: c_int = 0x3038;
const EGL_PLATFORM_WAYLAND_KHR: c_uint = 0x31D8;
const EGL_OPENGL_ES_API: c_uint = 0x30A0;

/// The options the Wayland path cannot take.
fn check(args: &Args, profile: Profile) -> Result<(), String> {
    let flag = if args.wayland {
        "--wayland"
    } else {
        "--wayland-unmapped"
    };
    if !matches!(profile, Profile::Gles3 | Profile::Gles2) {
        return Err(format!(
            "{flag} draws with EGL: --profile gles3 (its default) or gles2"
        ));
    }
    let unsupported = [
        (args.other_thread, "--other-thread"),
        (args.destroy_window_at.is_some(), "--destroy-window-at"),
        (args.lose_context_every.is_some(), "--lose-context-every"),
        (args.fork_children.is_some(), "--fork-children"),
        (args.recreate_every.is_some(), "--recreate-every"),
        (args.check_state, "--check-state"),
        (args.check_errors, "--check-errors"),
    ];
    if let Some((_, name)) = unsupported.iter().find(|(on, _)| *on) {
        return Err(format!("{flag} cannot be combined with {name}"));
    }
    if args.input_out.is_some() && (args.wayland_unmapped || args.time_swaps) {
        return Err("--input-out takes plain frames in a mapped window (--wayland)".into());
    }
    if args.wayland_unmapped && args.swap_interval.unwrap_or(1) != 0 {
        return Err(
            "--wayland-unmapped needs --swap-interval 0: with interval 1 Mesa waits \
                    for a frame callback, which a surface that is never mapped never gets"
                .into(),
        );
    }
    Ok(())
}

/// `--wayland` / `--wayland-unmapped` (module docs).
pub fn run(args: &Args) -> Result<(), String> {
    let profile = args.profile.unwrap_or(Profile::Gles3);
    check(args, profile)?;
    let interval = args.swap_interval.unwrap_or(1);
    let mut win = WlWindow::open(
        args.wayland,
        "steadyhud-gltest",
        args.feedback_out.is_some(),
    )?;
    let mut inputs = args.input_out.as_ref().map(|_| String::new());
    if inputs.is_some() {
        win.read_input()?;
    }
    let egl_win_lib = wayland_sys::egl::wayland_egl_option()
        .ok_or("cannot load libwayland-egl.so.1 (package libwayland-egl1)")?;
    let egl = Egl::load()?;
    let (mut width, mut height) = (args.width, args.height);
    let size = |v: u32| c_int::try_from(v).map_err(|_| format!("size {v} out of range"));
    // SAFETY: EGL and wl_egl_window calls in their documented order on the
    // live connection and surface; every result is checked, and everything
    // is destroyed below before the window.
    unsafe {
        let dpy = (egl.get_platform_display)(
            EGL_PLATFORM_WAYLAND_KHR,
            win.display_ptr(),
            std::ptr::null(),
        );
        if dpy.is_null() || (egl.initialize)(dpy, std::ptr::null_mut(), std::ptr::null_mut()) == 0 {
            return Err(egl.error("eglGetPlatformDisplay(WAYLAND)/eglInitialize"));
        }
        (egl.bind_api)(EGL_OPENGL_ES_API);
        let major = if profile == Profile::Gles3 { 3 } else { 2 };
        let es_bit = if major >= 3 { 0x40 } else { 0x4 };
        let attribs = [
            0x3033, 0x4, 0x3040, es_bit, 0x3024, 8, 0x3023, 8, 0x3022, 8, EGL_NONE,
        ];
        let (mut config, mut n) = (std::ptr::null_mut(), 0);
        if (egl.choose_config)(dpy, attribs.as_ptr(), &mut config, 1, &mut n) == 0 || n == 0 {
            return Err("no EGL config for a Wayland window".into());
        }
        let ctx_attribs = [0x3098, major, EGL_NONE];
        let ctx = (egl.create_context)(dpy, config, std::ptr::null_mut(), ctx_attribs.as_ptr());
        if ctx.is_null() {
            return Err(egl.error("eglCreateContext"));
        }
        let egl_window = (egl_win_lib.wl_egl_window_create)(
            win.surface_ptr().cast(),
            size(width)?,
            size(height)?,
        );
        if egl_window.is_null() {
            return Err("wl_egl_window_create failed".into());
        }
        let surface =
            (egl.create_platform_window_surface)(dpy, config, egl_window.cast(), std::ptr::null());
        if surface.is_null() || (egl.make_current)(dpy, surface, surface, ctx) == 0 {
            return Err(egl.error("eglCreatePlatformWindowSurface/eglMakeCurrent"));
        }
        if (egl.swap_interval)(dpy, interval as c_int) == 0 {
            return Err(egl.error("eglSwapInterval"));
        }
        let gl = glow::Context::from_loader_function_cstr(|name| {
            (egl.get_proc_address)(name.as_ptr()).cast_const()
        });
        println!(
            "gltest: ready {profile:?} {} key {:#x} wayland{} interval {interval}",
            {
                use glow::HasContext;
                gl.get_parameter_string(glow::VERSION)
            },
            surface as usize,
            if args.wayland { "" } else { "-unmapped" }
        );
        let pace = (args.fps > 0).then(|| Duration::from_secs_f64(1.0 / f64::from(args.fps)));
        let start = Instant::now();
        let mut swaps = 0u64;
        let mut timed = Vec::new();
        let mut result = Ok(());
        // With --input-out: the next frame's start, where it read its input.
        let mut next_start = None;
        for frame in 0..args.frames {
            if let (Some(text), None) = (inputs.as_mut(), next_start) {
                // The first frame's start: now.
                next_start = Some(sample(&mut win, text, frame)?);
            }
            for (_, (w, h)) in args.resize_at.iter().filter(|(f, _)| *f == frame) {
                (width, height) = (*w, *h);
                (egl_win_lib.wl_egl_window_resize)(egl_window, size(width)?, size(height)?, 0, 0);
            }
            crate::state::clear_window(&gl, profile, width, height);
            win.request_feedback();
            if inputs.is_some() {
                // The pacing wait is inside the frame, before its swap.
                pace_until(pace.map(|i| start + i * frame as u32));
            }
            let present_ns = now_ns();
            if let (Some(text), Some(start_ns)) = (inputs.as_mut(), next_start.take()) {
                text.push_str(&format!("frame {frame} {start_ns} {present_ns}\n"));
            }
            let ok = (egl.swap_buffers)(dpy, surface);
            if args.time_swaps && frame >= args.warmup {
                timed.push(now_ns() - present_ns);
            }
            win.set_present_ns(present_ns);
            if ok == 0 {
                result = Err(egl.error(&format!("eglSwapBuffers {frame}")));
                break;
            }
            swaps += 1;
            if let Some(text) = inputs.as_mut() {
                // The next frame starts here: its input read now (no frame
                // follows the last swap).
                if frame + 1 < args.frames {
                    match sample(&mut win, text, frame + 1) {
                        Ok(t) => next_start = Some(t),
                        Err(e) => {
                            result = Err(e);
                            break;
                        }
                    }
                }
                continue;
            }
            if let Err(e) = win.pump(Duration::ZERO) {
                result = Err(e);
                break;
            }
            pace_until(pace.map(|i| start + i * (frame as u32 + 1)));
        }
        if let (Ok(()), Some(text), Some(path)) = (&result, &inputs, &args.input_out) {
            result = std::fs::write(path, text)
                .map_err(|e| format!("writing --input-out {}: {e}", path.display()));
        }
        if result.is_ok() {
            if let Some(path) = &args.feedback_out {
                result = win.finish(Duration::from_secs(1)).and_then(|c| {
                    win.write_feedback(path)?;
                    println!(
                        "gltest: feedback presented {} discarded {} none {}",
                        c.presented, c.discarded, c.none
                    );
                    Ok(())
                });
            }
        }
        let none = std::ptr::null_mut();
        (egl.make_current)(dpy, none, none, none);
        (egl.destroy_surface)(dpy, surface);
        (egl_win_lib.wl_egl_window_destroy)(egl_window);
        (egl.destroy_context)(dpy, ctx);
        (egl.terminate)(dpy);
        drop(win);
        result?;
        println!("gltest: swaps {swaps}");
        if !timed.is_empty() {
            timed.sort_unstable();
            println!(
                "gltest: swap_ns median {} n {}",
                timed[timed.len() / 2],
                timed.len()
            );
        }
    }
    Ok(())
}

/// Sleeps until `due` (none: returns at once).
fn pace_until(due: Option<Instant>) {
    if let Some(wait) = due.and_then(|d| d.checked_duration_since(Instant::now())) {
        std::thread::sleep(wait);
    }
}

/// With `--input-out`: the presses that came, read at the start of frame
/// `k` (now: the socket read and the seat's events dispatched) into
/// `text`, in the format of the X11 path ([`crate::sample`]). Returns now
/// (CLOCK_MONOTONIC ns).
fn sample(win: &mut WlWindow, text: &mut String, k: u64) -> Result<u64, String> {
    let start_ns = now_ns();
    win.pump(Duration::ZERO)?;
    crate::write_presses(text, win.take_presses(), start_ns, k);
    Ok(start_ns)
}

/// CLOCK_MONOTONIC ns, the clock of `present_ns`.
pub(crate) fn now_ns() -> u64 {
    crate::wayland::clock_ns(libc::CLOCK_MONOTONIC) as u64
}
