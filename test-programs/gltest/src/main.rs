//! `steadyhud-gltest`: a real OpenGL program for the GL library's tests
//! (`tests/gl_games.rs`). It opens an X11 window with a GLX context
//! (compatibility or core) or an EGL one (GLES 3 or GLES 2), and each frame
//! clears the window to a known colour, then sets unusual GL state (an FBO
//! bound, a VAO and program bound, scissor on, sRGB writes on, blend off,
//! unpack alignment 1, texture unit 3, …: [`state`]), reads every item
//! back, swaps, and reads them again: any item the swap changed is a line
//! `gltest: state changed …` and exit code 1. Its FBO's pixels are checked
//! at the end. Modes for bad input: the context current on another thread
//! (`--other-thread`), the window destroyed between two swaps
//! (`--destroy-window-at N`), the window ended and made again every N
//! swaps (`--recreate-every N`).
//!
//! Output: `gltest: ready <api> <GL_VERSION> key <window key>` once the
//! window shows (`gltest: window K key …` for each new one), `gltest:
//! swaps N` at the end.
//!
//! `--wayland` / `--wayland-unmapped` draw with EGL on a Wayland surface
//! instead ([`wl`]), and `--feedback-out` writes the program's own
//! `wp_presentation` feedback for every swap (format: [`wayland`]).

mod context;
mod extra;
mod state;
// The Wayland window and feedback reading, shared with the Vulkan test
// program (one implementation, one file format).
#[path = "../../testapp/src/size.rs"]
mod size;
use size::parse_resize;
#[path = "../../testapp/src/wayland.rs"]
// Some of the Vulkan program's calls are not used here.
#[allow(dead_code)]
mod wayland;
mod wl;

use clap::{Parser, ValueEnum};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Which context to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Profile {
    /// GLX, a legacy (compatibility profile) context.
    Compat,
    /// GLX, a 3.3 core profile context (glXCreateContextAttribsARB).
    Core,
    /// EGL on X11, GLES 3.
    Gles3,
    /// EGL on X11, GLES 2 (the HUD cannot draw there).
    Gles2,
}

#[derive(Parser, Debug)]
#[command(name = "steadyhud-gltest")]
struct Args {
    /// The context (default: compat; with --wayland: gles3).
    #[arg(long, value_enum)]
    profile: Option<Profile>,
    /// Frames to swap, then exit.
    #[arg(long, default_value_t = 120)]
    frames: u64,
    /// Frames per second to pace at (0: as fast as it goes).
    #[arg(long, default_value_t = 60)]
    fps: u32,
    #[arg(long, default_value_t = 320)]
    width: u32,
    #[arg(long, default_value_t = 240)]
    height: u32,
    /// Set and check the unusual state around every swap.
    #[arg(long)]
    check_state: bool,
    /// Make the context current on a second thread; swap from the main one.
    #[arg(long)]
    other_thread: bool,
    /// Destroy the window after this many swaps, swap the dead window
    /// twice, then go on in a new window.
    #[arg(long, value_name = "N")]
    destroy_window_at: Option<u64>,
    /// Before every swap set state the HUD must leave alone (compatibility
    /// state, clip distances, sample mask, indexed state of index 1: only
    /// what the context has), and after it check that `glGetError` is
    /// clean and that state unchanged ([`extra`]).
    #[arg(long)]
    check_errors: bool,
    /// Every N swaps, lose the context with its display (EGL:
    /// `eglTerminate`; GLX: `XCloseDisplay`; no destroy call before) and
    /// make everything anew; each context gets a buffer of known bytes that
    /// is checked around every swap, with `glGetError`. Prints `gltest:
    /// context K at <address>`.
    #[arg(long, value_name = "N")]
    lose_context_every: Option<u64>,
    /// While the main thread swaps (the HUD shown), a second thread forks N
    /// children, 10 ms apart; each child, without exec, calls
    /// `eglSwapBuffers` (as `dlsym` hands it out) and exits. A child that
    /// has not ended 5 s later hung (a lock held at the fork): it is
    /// killed, counted, and the program exits 1.
    #[arg(long, value_name = "N")]
    fork_children: Option<u32>,
    /// Every N swaps, end the window and make a new one (EGL: surface and
    /// X window; GLX: the X window and a `glXCreateWindow` drawable), as a
    /// game's video restart does; prints `gltest: window K` for each.
    #[arg(long, value_name = "N")]
    recreate_every: Option<u64>,
    /// Time each swap call on this thread (after `--warmup` frames) and
    /// print the median and mean, and the CPU time of steadyhud's threads:
    /// `gltest: swap_ns median M mean A n N` and `gltest: threads_cpu_ms T`;
    /// also each window's first swap as it happens: `gltest: first swap of
    /// window K ns N` (a new window: `--recreate-every`). On Wayland only
    /// `gltest: swap_ns median M n N`.
    #[arg(long)]
    time_swaps: bool,
    #[arg(long, default_value_t = 60)]
    warmup: u64,
    /// Before the GL context, make a Vulkan instance through the loader
    /// and keep it, as Mesa's zink does when it makes its screen (with the
    /// driconf variable `force_gl_renderer=zink…`, the GL library's zink
    /// decision can be tried where zink does not run). Prints `gltest:
    /// vulkan instance made`.
    #[arg(long)]
    vulkan_instance: bool,
    /// Draw on a Wayland window (`$WAYLAND_DISPLAY`) instead of X11: an
    /// xdg-shell toplevel, configured before its `wl_egl_window` and EGL
    /// surface (`eglGetPlatformDisplay(EGL_PLATFORM_WAYLAND_KHR)`) are
    /// made; GLES (`--profile gles3`, the default there, or `gles2`). Each
    /// frame clears the window and swaps, paced by `--fps`. Takes
    /// `--frames`, `--fps`, `--width`, `--height`, `--swap-interval`,
    /// `--resize-at`, `--feedback-out`, `--input-out`; not the state checks or window
    /// modes of X11.
    #[arg(long)]
    wayland: bool,
    /// Like `--wayland`, but the surface never gets a role: it is never
    /// mapped, so the compositor never shows a frame (Weston answers each
    /// commit's feedback `discarded` at the next attach). Needs
    /// `--swap-interval 0`: with interval 1 Mesa waits for a frame callback
    /// an unmapped surface never gets.
    #[arg(long, conflicts_with = "wayland")]
    wayland_unmapped: bool,
    /// With --wayland: `eglSwapInterval` (0: swaps never wait; 1: one
    /// swap per frame callback). Default 1.
    #[arg(long, value_name = "0|1", value_parser = clap::value_parser!(u32).range(0..=1))]
    swap_interval: Option<u32>,
    /// With --wayland: before swap number FRAME (0-based), resize the
    /// window to WxH (`wl_egl_window_resize`; the next swap has the new
    /// size). Repeatable.
    #[arg(long, value_name = "FRAME:WxH", value_parser = parse_resize)]
    resize_at: Vec<(u64, (u32, u32))>,
    /// With --wayland / --wayland-unmapped: right before every
    /// eglSwapBuffers ask for `wp_presentation` feedback on the surface (on
    /// the program's own event queue, read without blocking every frame),
    /// wait up to 1 s after the last swap for the outstanding answers, and
    /// write one CSV row per swap to FILE:
    /// `present,present_ns,feedback,displayed_ns,raw_ns,refresh_ns,msc,flags,clock_id`
    /// (feedback `presented`, `discarded` or `none`; displayed_ns on
    /// CLOCK_MONOTONIC). Prints `gltest: feedback presented P discarded D
    /// none N`.
    #[arg(long, value_name = "FILE")]
    feedback_out: Option<std::path::PathBuf>,
    /// Read the keys and buttons pressed in the window at each frame's
    /// start (X11: KeyPress and ButtonPress; `--wayland`: the seat's
    /// keyboard and pointer, as the Vulkan test program reads them; the
    /// way a game samples input: the frame waits for `--fps` before its
    /// swap, so it starts where the previous swap returned) and write to
    /// FILE, per frame, `frame K START_NS PRESENT_NS` (CLOCK_MONOTONIC: the
    /// frame's start, where it reads; right before swap K), and per press
    /// `input KIND TIME_MS READ_NS K` (key or button, the event's own
    /// millisecond stamp, when it was read, the swap that carried the
    /// frame that used it). Plain frames only.
    #[arg(long, value_name = "FILE")]
    input_out: Option<std::path::PathBuf>,
}

impl Args {
    /// The context of the X11 paths (`--profile`, compat by default).
    fn profile(&self) -> Profile {
        self.profile.unwrap_or(Profile::Compat)
    }
}

/// The colour the window is cleared to every frame (8-bit).
pub const WINDOW_RGB: [u8; 3] = [40, 90, 160];

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            // Usage errors exit 1 like every other error (clap's is 2).
            let _ = e.print();
            return ExitCode::from(1);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gltest: {e}");
            ExitCode::from(1)
        }
    }
}

/// With `--input-out`: the presses that came, read at the start of frame
/// `k` (now) into `text`. Returns now (CLOCK_MONOTONIC ns).
fn sample(ctx: &context::Context, text: &mut String, k: u64) -> u64 {
    let start_ns = wl::now_ns();
    write_presses(text, ctx.take_presses(), start_ns, k);
    start_ns
}

/// The `--input-out` lines of `presses` (kind, the event's ms), read at
/// `read_ns` by frame `k`.
fn write_presses(text: &mut String, presses: Vec<(&'static str, u64)>, read_ns: u64, k: u64) {
    for (kind, time_ms) in presses {
        text.push_str(&format!("input {kind} {time_ms} {read_ns} {k}\n"));
    }
}

fn run(args: &Args) -> Result<(), String> {
    if args.vulkan_instance {
        vulkan_instance()?;
    }
    if args.wayland || args.wayland_unmapped {
        return wl::run(args);
    }
    for (on, name) in [
        (args.swap_interval.is_some(), "--swap-interval"),
        (!args.resize_at.is_empty(), "--resize-at"),
        (args.feedback_out.is_some(), "--feedback-out"),
    ] {
        if on {
            return Err(format!("{name} needs --wayland or --wayland-unmapped"));
        }
    }
    let plain = !(args.check_state
        || args.time_swaps
        || args.check_errors
        || args.other_thread
        || args.recreate_every.is_some()
        || args.destroy_window_at.is_some()
        || args.lose_context_every.is_some());
    if args.input_out.is_some() && !plain {
        return Err(
            "--input-out takes plain frames: no state checks, timing or window changes".into(),
        );
    }
    let mut ctx = context::Context::new(args.profile(), args.width, args.height)?;
    if args.input_out.is_some() {
        ctx.select_presses();
    }
    let mut inputs = args.input_out.as_ref().map(|_| String::new());
    if args.other_thread {
        return ctx.swap_from_other_thread(args.frames);
    }
    if let Some(n) = args.lose_context_every {
        context::SEEK_REUSE.store(true, std::sync::atomic::Ordering::Relaxed);
        return lose_contexts(ctx, args, n);
    }
    let gl = ctx.glow();
    let objects = if args.check_state {
        Some(state::Objects::new(&gl, args.profile())?)
    } else {
        None
    };
    println!(
        "gltest: ready {:?} {} key {:#x}",
        args.profile(),
        ctx.version(&gl),
        ctx.key()
    );
    let forks = args
        .fork_children
        .map(|n| std::thread::spawn(move || fork_children(n)));
    let extra = args.check_errors.then(|| extra::Extra::new(&gl));
    if let Some(e) = &extra {
        println!("gltest: checking GL errors in {}", e.version);
    }
    let interval = (args.fps > 0).then(|| Duration::from_secs_f64(1.0 / f64::from(args.fps)));
    let start = Instant::now();
    let mut swaps = 0u64;
    let mut timed: Vec<u64> = Vec::with_capacity(args.frames as usize);
    // The window whose first swap is next (0: none).
    let mut first_of = 1u64;
    let mut next_start = None;
    for frame in 0..args.frames {
        state::clear_window(&gl, args.profile(), args.width, args.height);
        if let Some(text) = inputs.as_mut() {
            // The frame's start: the previous swap's return, where a game
            // samples its input (the first frame's: now).
            let start_ns = match next_start.take() {
                Some(t) => t,
                None => sample(&ctx, text, frame),
            };
            // The pacing wait is inside the frame, before its swap.
            if let Some(i) = interval {
                let due = start + i * frame as u32;
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            let present_ns = wl::now_ns();
            text.push_str(&format!("frame {frame} {start_ns} {present_ns}\n"));
            ctx.swap();
            swaps += 1;
            // No frame follows the last swap.
            if frame + 1 < args.frames {
                next_start = Some(sample(&ctx, text, frame + 1));
            }
            continue;
        }
        if let Some(objects) = &objects {
            objects.set_unusual(&gl);
            let before = state::snapshot(&gl, args.profile());
            ctx.swap();
            swaps += 1;
            let after = state::snapshot(&gl, args.profile());
            state::compare(&before, &after, frame)?;
        } else if args.time_swaps {
            let t = Instant::now();
            ctx.swap();
            let ns = t.elapsed().as_nanos() as u64;
            if first_of > 0 {
                println!("gltest: first swap of window {first_of} ns {ns}");
                first_of = 0;
            }
            if frame >= args.warmup {
                timed.push(ns);
            }
            swaps += 1;
        } else if let Some(e) = &extra {
            e.set(&gl);
            let own = extra::errors(&gl);
            if !own.is_empty() {
                return Err(format!(
                    "GL errors {own:x?} of the program's own before swap {frame}"
                ));
            }
            let before = e.snapshot(&gl);
            ctx.swap();
            swaps += 1;
            let after_errors = extra::errors(&gl);
            if !after_errors.is_empty() {
                return Err(format!("GL errors {after_errors:x?} after swap {frame}"));
            }
            state::compare(&before, &e.snapshot(&gl), frame)?;
        } else {
            ctx.swap();
            swaps += 1;
        }
        if Some(swaps) == args.destroy_window_at {
            swaps += ctx.destroy_and_replace()?;
        }
        if let Some(n) = args.recreate_every.filter(|&n| n > 0) {
            // `%`, not `is_multiple_of`: the i686 build's compiler is Rust 1.85.
            #[allow(clippy::manual_is_multiple_of)]
            let due = swaps % n == 0;
            if due && swaps < args.frames {
                ctx.recreate()?;
                use std::io::Write;
                first_of = swaps / n + 1;
                println!("gltest: window {first_of} key {:#x}", ctx.key());
                let _ = std::io::stdout().flush();
            }
        }
        if let Some(i) = interval {
            let due = start + i * (frame as u32 + 1);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    }
    if let (Some(text), Some(path)) = (inputs, &args.input_out) {
        std::fs::write(path, text)
            .map_err(|e| format!("writing --input-out {}: {e}", path.display()))?;
    }
    if let Some(objects) = &objects {
        objects.check_fbo(&gl)?;
        println!("gltest: state unchanged across {swaps} swaps; FBO pixels unchanged");
    }
    if let Some(f) = forks {
        let (n, hung) = f.join().map_err(|_| "the forking thread panicked")??;
        println!("gltest: {n} forked children swapped, {hung} hung");
        if hung > 0 {
            return Err(format!("{hung} of {n} forked children hung"));
        }
    }
    if let Some(e) = &extra {
        println!(
            "gltest: no GL error and extra state unchanged across {swaps} swaps ({})",
            e.version
        );
    }
    if args.time_swaps && !timed.is_empty() {
        let mean = timed.iter().sum::<u64>() / timed.len() as u64;
        timed.sort_unstable();
        println!(
            "gltest: swap_ns median {} mean {mean} n {}",
            timed[timed.len() / 2],
            timed.len()
        );
        println!("gltest: threads_cpu_ms {:.3}", steadyhud_threads_cpu_ms());
    }
    println!("gltest: swaps {swaps}");
    Ok(())
}

/// `--vulkan-instance`: an instance through the Vulkan loader (with
/// whatever layers the environment enables), kept for the process's life.
fn vulkan_instance() -> Result<(), String> {
    // SAFETY: loads the system's Vulkan loader; its entry points are used
    // as the Vulkan API says.
    let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
    // SAFETY: a valid, empty create info.
    let instance = unsafe { entry.create_instance(&ash::vk::InstanceCreateInfo::default(), None) }
        .map_err(|e| format!("vkCreateInstance: {e}"))?;
    // Kept, as zink keeps its screen's.
    std::mem::forget((entry, instance));
    println!("gltest: vulkan instance made");
    Ok(())
}

/// `--fork-children n` (see [`Args`]): (children, hung).
fn fork_children(n: u32) -> Result<(u32, u32), String> {
    type Swap = unsafe extern "C" fn(*mut std::ffi::c_void, *mut std::ffi::c_void) -> u32;
    // SAFETY: libEGL's eglSwapBuffers, with its signature.
    let (_lib, swap) = unsafe {
        let lib = libloading::Library::new("libEGL.so.1").map_err(|e| e.to_string())?;
        let swap: Swap = *lib
            .get::<Swap>(b"eglSwapBuffers\0")
            .map_err(|e| e.to_string())?;
        (lib, swap)
    };
    let mut hung = 0;
    for _ in 0..n {
        std::thread::sleep(Duration::from_millis(10));
        // SAFETY: fork(2); the child calls one function and _exit(2)s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: no display, no surface: EGL_BAD_DISPLAY, after our hook.
            unsafe {
                swap(std::ptr::null_mut(), std::ptr::null_mut());
                libc::_exit(0);
            }
        }
        if pid < 0 {
            return Err("fork failed".into());
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut status = 0;
            // SAFETY: waitpid(2) of our own child.
            if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
                break;
            }
            if Instant::now() > deadline {
                hung += 1;
                // SAFETY: kill(2) and waitpid(2) of our own child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    Ok((n, hung))
}

/// `--lose-context-every n`: `frames` swaps, the context lost and made
/// again every `n`, the game's own buffer checked around each swap.
fn lose_contexts(mut ctx: context::Context, args: &Args, n: u64) -> Result<(), String> {
    use glow::HasContext;
    const BYTES: usize = 4096;
    const BUFFERS: u32 = 8;
    let pattern: Vec<u8> = (0..BYTES).map(|i| (i * 7 % 251) as u8).collect();
    let mut k = 1;
    for frame in 0..args.frames {
        if frame > 0 && frame % n == 0 {
            ctx.lose();
            ctx = context::Context::new(args.profile(), args.width, args.height)?;
            k += 1;
        }
        let gl = ctx.glow();
        if frame % n == 0 {
            println!("gltest: context {k} at {:#x}", ctx.context_key());
        }
        // SAFETY: GL calls on the current context with our own buffer.
        unsafe {
            if frame % n == 0 {
                // The game's first buffers in this context, names 1 to 8:
                // the names the HUD's buffers had in the context before.
                for _ in 0..BUFFERS {
                    let b = gl.create_buffer()?;
                    gl.bind_buffer(glow::ARRAY_BUFFER, Some(b));
                    gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &pattern, glow::STATIC_DRAW);
                }
            }
            state::clear_window(&gl, args.profile(), args.width, args.height);
            let own = extra::errors(&gl);
            ctx.swap();
            let after = extra::errors(&gl);
            if !own.is_empty() || !after.is_empty() {
                return Err(format!(
                    "GL errors {after:x?} after swap {frame} ({own:x?} before)"
                ));
            }
            for name in 1..=BUFFERS {
                let b = std::num::NonZeroU32::new(name).map(glow::NativeBuffer);
                gl.bind_buffer(glow::ARRAY_BUFFER, b);
                let p =
                    gl.map_buffer_range(glow::ARRAY_BUFFER, 0, BYTES as i32, glow::MAP_READ_BIT);
                if p.is_null() {
                    return Err(format!("cannot map buffer {name} after swap {frame}"));
                }
                let same = std::slice::from_raw_parts(p, BYTES) == &pattern[..];
                gl.unmap_buffer(glow::ARRAY_BUFFER);
                if !same {
                    return Err(format!(
                        "the game's buffer {name} changed across swap {frame} (context {k})"
                    ));
                }
            }
        }
        std::thread::sleep(Duration::from_secs_f64(1.0 / f64::from(args.fps.max(1))));
    }
    ctx.lose();
    println!(
        "gltest: buffers unchanged across {} swaps in {k} contexts",
        args.frames
    );
    println!("gltest: swaps {}", args.frames);
    Ok(())
}

/// User + system CPU time of this process's threads named `steadyhud-*`
/// (`/proc/self/task/*/stat`, clock ticks of 10 ms), in ms.
fn steadyhud_threads_cpu_ms() -> f64 {
    let mut ticks = 0u64;
    let main = std::process::id().to_string();
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        // The main thread carries the program's name (`steadyhud-gltes`).
        if task.file_name().to_string_lossy() == main {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if !stat[open + 1..close].starts_with("steadyhud") {
            continue;
        }
        // Fields after the name: state is 3rd, utime 14th, stime 15th.
        let rest: Vec<&str> = stat[close + 2..].split(' ').collect();
        let field = |i: usize| {
            rest.get(i - 3)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        ticks += field(14) + field(15);
    }
    ticks as f64 * 10.0
}
