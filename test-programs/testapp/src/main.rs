//! `steadyhud-testapp`: a real Vulkan application (ash, X11 window, swapchain)
//! that presents frames on a scripted schedule, so tests know the ground
//! truth the steadyhud layer must capture.
//!
//! Data flow per schedule point: acquire → submit the pre-recorded band
//! pattern → sleep until the absolute schedule point → vkQueuePresentKHR.
//!
//! With `--wayland` (or `--wayland-unmapped`) the one window is a Wayland
//! surface instead, and `--feedback-out` writes the program's own
//! `wp_presentation` feedback for every present (format: [`wayland`]).

mod size;
use size::{parse_resize, parse_size};
mod error;
mod gpu;
mod gpu_work;
mod keys;
mod pacing;
mod pattern;
mod say;
mod submit;
mod target;
mod wayland;
mod workload;
mod x11;

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use steadyhud_sys::lock::Recover;

use ash::vk;
use clap::{Parser, ValueEnum};

use error::Error;
use gpu::{Gpu, Instance};
use gpu_work::GpuWork;
use pacing::Schedule;
use pattern::Pattern;
use say::say;
use target::{PresentOutcome, Ready, SwapchainWish, Target};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    /// VK_FORMAT_B8G8R8A8_UNORM
    Unorm,
    /// VK_FORMAT_B8G8R8A8_SRGB
    Srgb,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum PresentModeArg {
    Fifo,
    Immediate,
    Mailbox,
}

/// Presents frames into real X11 (or Wayland) windows following a pacing
/// script.
///
/// The app presents 1 + (number of frames in the pattern) times at each
/// swapchain; the gap between consecutive presents follows the pattern
/// (absolute schedule: sleep, then spin the last 1.5 ms). Prints
/// `testapp: presented N frames` (N = number of vkQueuePresentKHR calls) on exit.
#[derive(Parser, Debug)]
#[command(name = "steadyhud-testapp", version)]
struct Args {
    /// Pacing script: comma-separated GAP[*COUNT], GAP in ns/us/ms/s (ms if
    /// no unit), e.g. "16.6ms*300,120ms*1,16.6ms*300".
    #[arg(long, conflicts_with = "frames")]
    pattern: Option<String>,
    /// Shorthand for a constant pattern of N frames at --interval.
    #[arg(long)]
    frames: Option<u64>,
    /// Gap used by --frames (and by the default pattern).
    #[arg(long, default_value = "16.6ms")]
    interval: String,
    /// Keep presenting the last pattern entry for S extra seconds.
    #[arg(long, value_name = "S")]
    hold: Option<f64>,
    /// Window (and swapchain) size.
    #[arg(long, default_value = "320x240", value_parser = parse_size)]
    size: (u32, u32),
    /// Number of windows/swapchains.
    #[arg(long, default_value_t = 1)]
    swapchains: u32,
    /// Present all swapchains with ONE vkQueuePresentKHR call per schedule
    /// point (default: one call per swapchain, in turn).
    #[arg(long)]
    multi_present: bool,
    /// Present from T threads, each with its own window and swapchain
    /// (implies --swapchains T); the queue is shared behind a lock.
    #[arg(long, default_value_t = 1, value_name = "T")]
    threads: u32,
    /// Create D logical devices; window i belongs to device i % D (implies
    /// --swapchains D). Presented in turn, or one per thread with --threads.
    #[arg(long, default_value_t = 1, value_name = "D")]
    devices: u32,
    /// Run the whole session (windows, instance, devices, swapchains,
    /// presents, teardown) N times in one process: the loader unloads and
    /// reloads the layers each time.
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeat: u32,
    /// Before present number FRAME (0-based), resize every window to WxH and
    /// recreate its swapchain. Repeatable.
    #[arg(long, value_name = "FRAME:WxH", value_parser = parse_resize)]
    resize_at: Vec<(u64, (u32, u32))>,
    /// With --resize-at: only resize the window; the swapchain is recreated
    /// when the driver reports it SUBOPTIMAL / OUT_OF_DATE or, before the
    /// next acquire, when the surface's current extent no longer matches
    /// (as games that watch their window do). Default: recreate right after
    /// resizing.
    #[arg(long)]
    resize_lazy: bool,
    /// Every N presents, resize every window and recreate its swapchain
    /// (passing the old one as oldSwapchain), alternating between --size
    /// and 3/4 of it; with --resize-lazy only the window is resized.
    #[arg(long, value_name = "N")]
    resize_every: Option<u64>,
    /// A second thread keeps submitting small GPU work (a clear of an image
    /// of its own, fenced) on the queue the app presents on, as DXVK's
    /// submission thread does, while the main thread presents and
    /// recreates swapchains. Every vkQueueSubmit/vkQueuePresentKHR of the
    /// app holds one queue lock. Prints `testapp: submit thread submits N`.
    #[arg(long)]
    submit_thread: bool,
    /// Pause of the submit thread after each submit (e.g. 500us; 0: submit
    /// again as soon as one of its two slots is free).
    #[arg(
        long,
        default_value = "0",
        value_name = "GAP",
        requires = "submit_thread"
    )]
    submit_gap: String,
    /// Make the submit thread's work racy on purpose (its image is cleared
    /// twice with no barrier in between): synchronization validation must
    /// report it. For tests that check that it is active.
    #[arg(long, hide = true, requires = "submit_thread")]
    submit_hazard: bool,
    /// At exit wait only for the app's own fences (never vkDeviceWaitIdle)
    /// and destroy each swapchain before its semaphores, as libplacebo
    /// does: the layer must not leave anything a present may still use.
    #[arg(long, hide = true, conflicts_with = "submit_thread")]
    fence_teardown: bool,
    /// Right before present number FRAME, create N graphics pipelines (each
    /// compiled anew): a shader-compile stutter on frame FRAME-1. Repeatable.
    #[arg(long, value_name = "FRAME:N", value_parser = workload::parse_at)]
    pipelines_at: Vec<(u64, u32)>,
    /// Right before present number FRAME, allocate MIB MiB of device memory
    /// (one vkAllocateMemory). Repeatable.
    #[arg(long, value_name = "FRAME:MIB", value_parser = workload::parse_at)]
    alloc_at: Vec<(u64, u32)>,
    /// Right before present number FRAME, allocate MIB MiB of host memory
    /// and write every byte (it stays resident until exit): RSS grows by
    /// that much. Repeatable.
    #[arg(long, value_name = "FRAME:MIB", value_parser = workload::parse_at)]
    host_alloc_at: Vec<(u64, u32)>,
    /// While presenting, a second thread spins without pause (a known CPU
    /// load). Prints `testapp: process cpu P% of one core over S s of
    /// presenting` (CLOCK_PROCESS_CPUTIME_ID) per session.
    #[arg(long)]
    busy_thread: bool,
    /// Swapchain image format.
    #[arg(long, value_enum, default_value = "unorm")]
    format: FormatArg,
    /// Swapchain present mode.
    #[arg(long, value_enum, default_value = "immediate")]
    present_mode: PresentModeArg,
    /// Do not sleep between presents (soak / overhead runs).
    #[arg(long)]
    uncapped: bool,
    /// Return from main without destroying the device, instance or windows.
    #[arg(long)]
    no_destroy: bool,
    /// Right after the last present (and the totals), end the process with
    /// `_exit(0)`: nothing is destroyed and no exit handler runs (no
    /// `atexit`, no `.fini_array`), as Wine processes and crash handlers end.
    #[arg(long, conflicts_with = "no_destroy")]
    exit_now: bool,
    /// Print `testapp: present K` after every schedule point (K = present
    /// calls so far), flushed, for tests that kill the app mid-run.
    #[arg(long)]
    progress: bool,
    /// Print to stderr, per schedule point, the time spent acquiring and
    /// submitting (render, includes the wait for the schedule) and inside
    /// vkQueuePresentKHR.
    #[arg(long)]
    trace: bool,
    /// Write the CLOCK_MONOTONIC ns taken right before each
    /// vkQueuePresentKHR call to FILE, one per line (`# thread T` lines
    /// separate threads): what the app really presented, to compare with
    /// what the layer captured.
    #[arg(long, value_name = "FILE")]
    timestamps: Option<std::path::PathBuf>,
    /// Read the keys and buttons pressed in its window at each frame's
    /// start (X11: KeyPress and ButtonPress on its window; `--wayland`: the
    /// seat's keyboard and pointer on its own connection, read then; the
    /// way a game samples input) and write to FILE, per frame, `frame K START_NS
    /// PRESENT_NS` (CLOCK_MONOTONIC: the frame's start, as soon as present
    /// K−1 returned, where it reads; right before present K), and
    /// per press `input KIND TIME_MS READ_NS K` (key or button, the X
    /// server's stamp, when it was read, the present that carried the
    /// frame that used it). One window, one thread.
    #[arg(long, value_name = "FILE")]
    input_out: Option<std::path::PathBuf>,
    /// Call `vkAntiLagUpdateAMD` (`VK_AMD_anti_lag`; Mesa's anti-lag layer
    /// offers it over any driver): its input stage for frame K right
    /// before the frame samples input (so `--input-out`'s START is when
    /// that call returned), its present stage right before present K. An
    /// error where the device does not offer it.
    #[arg(long)]
    anti_lag: bool,
    /// Make the GPU execution of each frame's command buffer (one per
    /// swapchain per present) last about MS milliseconds (e.g. 8, 0.5; 0:
    /// no load, measure only): a compute loop before the render pass, its
    /// iteration count calibrated per device at start-up against measured
    /// time on the idle queue, then adapted after every frame (median of
    /// the last 9). Measured with vkCmdWriteTimestamp at the start and end
    /// of that command buffer, read after its fence. Prints `testapp: gpu
    /// work ms: median=M p10=A p90=B frames=N requested=MS` at exit (every
    /// measured frame of the process); --trace prints every measurement.
    #[arg(long, value_name = "MS", value_parser = gpu_work::parse_ms, allow_hyphen_values = true)]
    gpu_work: Option<f64>,
    /// Present on a Wayland window (`$WAYLAND_DISPLAY`) instead of X11: an
    /// xdg-shell toplevel, configured before its Vulkan surface
    /// (`VK_KHR_wayland_surface`) is made. One window: not with
    /// `--swapchains`, `--threads` or `--devices` above 1, `--repeat`
    /// above 1 or `--resize-lazy`. The surface has no size of its own: the
    /// swapchain takes `--size`, and `--resize-at` / `--resize-every`
    /// recreate it at the new size (oldSwapchain passed).
    #[arg(long)]
    wayland: bool,
    /// Like `--wayland`, but the surface never gets a role: it is never
    /// mapped, so the compositor never shows a frame (Weston answers each
    /// commit's feedback `discarded` at the next attach). Needs a present
    /// mode other than FIFO (`--present-mode mailbox`): Mesa's FIFO waits
    /// for a frame callback that an unmapped surface never gets.
    #[arg(long, conflicts_with = "wayland")]
    wayland_unmapped: bool,
    /// With `--wayland` / `--wayland-unmapped`: right before every
    /// vkQueuePresentKHR ask for `wp_presentation` feedback on the surface
    /// (on the program's own event queue, read without blocking every
    /// frame), wait up to 1 s after the last present for the outstanding
    /// answers, and write one CSV row per present call to FILE:
    /// `present,present_ns,feedback,displayed_ns,raw_ns,refresh_ns,msc,flags,clock_id`
    /// (feedback `presented`, `discarded` or `none`; displayed_ns on
    /// CLOCK_MONOTONIC). Prints `testapp: feedback presented P discarded D
    /// none N`.
    #[arg(long, value_name = "FILE")]
    feedback_out: Option<std::path::PathBuf>,
    /// Present nothing: type N presses of `a` on the compositor's seat
    /// (`$WAYLAND_DISPLAY`, `zwp_virtual_keyboard_v1`), each stamped with
    /// the CLOCK_MONOTONIC ms it is sent at, one every `--key-gap-ms`.
    #[arg(long, value_name = "N")]
    type_keys: Option<u32>,
    /// With `--type-keys`: ms between two presses.
    #[arg(long, value_name = "MS", default_value_t = 300)]
    key_gap_ms: u64,
    /// With `--type-keys`: the evdev code the key `a` is typed on (1, the
    /// default, is `KEY_ESC` to a program that reads raw codes, as vkcube
    /// does and quits on; 30 is `KEY_A`).
    #[arg(long, value_name = "CODE", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=247))]
    key_code: u32,
}

/// Where the windows live.
enum Platform {
    X11(Box<x11::Display>),
    /// The one Wayland window (locked around each present: the loop's
    /// context is shared with present threads, which Wayland never has).
    Wayland(Box<std::sync::Mutex<wayland::WlWindow>>),
}

impl Platform {
    fn wayland(&self) -> Option<std::sync::MutexGuard<'_, wayland::WlWindow>> {
        match self {
            Platform::Wayland(w) => Some(w.lock_or_recover()),
            Platform::X11(_) => None,
        }
    }
}

/// The Wayland display and surface as raw-window-handle values.
fn wayland_handles(
    w: &wayland::WlWindow,
) -> Result<
    (
        raw_window_handle::RawDisplayHandle,
        raw_window_handle::RawWindowHandle,
    ),
    Error,
> {
    use raw_window_handle::{WaylandDisplayHandle, WaylandWindowHandle};
    let display = std::ptr::NonNull::new(w.display_ptr())
        .ok_or_else(|| Error::Unsupported("no wl_display".into()))?;
    let surface = std::ptr::NonNull::new(w.surface_ptr())
        .ok_or_else(|| Error::Unsupported("no wl_surface".into()))?;
    Ok((
        WaylandDisplayHandle::new(display).into(),
        WaylandWindowHandle::new(surface).into(),
    ))
}

fn main() -> ExitCode {
    // Usage errors exit 1 like every other error (clap's default is 2);
    // --help/--version print to stdout and exit 0.
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 1 } else { 0 });
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            say(format!("testapp: error: {e}"));
            ExitCode::from(1)
        }
    }
}

/// Total vkQueuePresentKHR calls, across threads.
static PRESENT_CALLS: AtomicU64 = AtomicU64::new(0);

/// Parses an option that takes one duration (`16.6ms`, `500us`, `0`).
fn single_duration(option: &str, text: &str) -> Result<Duration, Error> {
    let one = Pattern::parse(text).map_err(|e| Error::Usage(format!("{option}: {e}")))?;
    if one.entries.len() != 1 || one.entries[0].count != 1 {
        return Err(Error::Usage(format!(
            "{option} takes one duration, e.g. 16.6ms"
        )));
    }
    Ok(one.entries[0].gap)
}

fn build_pattern(args: &Args) -> Result<Pattern, Error> {
    let mut p = match (&args.pattern, args.frames) {
        (Some(text), _) => {
            Pattern::parse(text).map_err(|e| Error::Usage(format!("--pattern: {e}")))?
        }
        (None, frames) => Pattern::constant(
            single_duration("--interval", &args.interval)?,
            frames.unwrap_or(300),
        ),
    };
    if let Some(s) = args.hold {
        if !(s.is_finite() && s >= 0.0) {
            return Err(Error::Usage(format!("--hold {s}: seconds must be >= 0")));
        }
        p.hold(Duration::from_secs_f64(s));
    }
    Ok(p)
}

fn run(args: &Args) -> Result<(), Error> {
    if let Some(n) = args.type_keys {
        let gap = Duration::from_millis(args.key_gap_ms);
        return keys::type_keys(n, gap, args.key_code).map_err(Error::Wayland);
    }
    let pattern = build_pattern(args)?;
    if args.threads == 0 || args.swapchains == 0 || args.devices == 0 || args.repeat == 0 {
        return Err(Error::Usage(
            "--swapchains, --threads, --devices and --repeat must be at least 1".into(),
        ));
    }
    if args.threads > 1 && args.multi_present {
        return Err(Error::Usage(
            "--threads and --multi-present cannot be combined".into(),
        ));
    }
    if args.devices > 1 && args.multi_present {
        return Err(Error::Usage(
            "--devices and --multi-present cannot be combined (one present call is on one queue)"
                .into(),
        ));
    }
    if args.repeat > 1 && (args.no_destroy || args.exit_now) {
        return Err(Error::Usage(
            "--repeat cannot be combined with --no-destroy or --exit-now".into(),
        ));
    }
    if args.resize_every == Some(0) {
        return Err(Error::Usage("--resize-every must be at least 1".into()));
    }
    single_duration("--submit-gap", &args.submit_gap)?;
    let on_wayland = args.wayland || args.wayland_unmapped;
    let platform = if on_wayland {
        check_wayland_args(args)?;
        let w = wayland::WlWindow::open(
            args.wayland,
            "steadyhud-testapp",
            args.feedback_out.is_some(),
        )
        .map_err(Error::Wayland)?;
        let mut w = w;
        if args.input_out.is_some() {
            w.read_input().map_err(Error::Wayland)?;
        }
        Platform::Wayland(Box::new(std::sync::Mutex::new(w)))
    } else {
        if args.feedback_out.is_some() {
            return Err(Error::Usage(
                "--feedback-out needs --wayland or --wayland-unmapped".into(),
            ));
        }
        Platform::X11(Box::new(x11::Display::open()?))
    };
    if args.input_out.is_some()
        && (args.multi_present
            || args.wayland_unmapped
            || args.swapchains > 1
            || args.threads > 1
            || args.devices > 1
            || args.repeat > 1)
    {
        return Err(Error::Usage(
            "--input-out reads one window (X11, or --wayland): one swapchain, thread, device and round"
                .into(),
        ));
    }
    let mut totals = Totals::default();
    for round in 0..args.repeat {
        session(args, &platform, &pattern, round, &mut totals)?;
    }
    print_totals(args, &totals);
    Ok(())
}

/// The options `--wayland` / `--wayland-unmapped` cannot take.
fn check_wayland_args(args: &Args) -> Result<(), Error> {
    let flag = if args.wayland {
        "--wayland"
    } else {
        "--wayland-unmapped"
    };
    if args.swapchains > 1 || args.threads > 1 || args.devices > 1 {
        return Err(Error::Usage(format!(
            "{flag} makes one window: --swapchains, --threads and --devices must be 1"
        )));
    }
    if args.repeat > 1 {
        return Err(Error::Usage(format!(
            "{flag} cannot be combined with --repeat"
        )));
    }
    if args.resize_lazy {
        return Err(Error::Usage(format!(
            "{flag} cannot be combined with --resize-lazy (a Wayland surface has no size of its own \
             to watch: the swapchain is recreated right after each resize)"
        )));
    }
    if args.wayland_unmapped && matches!(args.present_mode, PresentModeArg::Fifo) {
        return Err(Error::Usage(
            "--wayland-unmapped needs --present-mode mailbox or immediate: under FIFO Mesa waits \
             for a frame callback, which a surface that is never mapped never gets"
                .into(),
        ));
    }
    Ok(())
}

/// After the last present: reads the outstanding feedback (up to 1 s),
/// writes `--feedback-out` and returns the counts.
fn finish_feedback(args: &Args, platform: &Platform) -> Result<Option<wayland::Counts>, Error> {
    let (Some(path), Some(mut w)) = (&args.feedback_out, platform.wayland()) else {
        return Ok(None);
    };
    let counts = w.finish(Duration::from_secs(1)).map_err(Error::Wayland)?;
    w.write_feedback(path).map_err(Error::Wayland)?;
    Ok(Some(counts))
}

/// Counters summed over `--repeat` rounds.
#[derive(Default)]
struct Totals {
    per_swapchain: Vec<u64>,
    recreations: u64,
    late: u64,
    worst: Duration,
    late_at: Vec<u64>,
    /// Submits of the `--submit-thread` thread.
    thread_submits: u64,
    /// `--feedback-out`'s answers.
    feedback: Option<wayland::Counts>,
}

fn print_totals(args: &Args, t: &Totals) {
    let per: Vec<String> = t.per_swapchain.iter().map(|n| n.to_string()).collect();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "testapp: swapchain presents {}", per.join(","));
    let _ = writeln!(out, "testapp: swapchain recreations {}", t.recreations);
    // How far the app itself missed its script (the ground truth tests trust):
    // presents that started more than 2 ms after their schedule point.
    let at: Vec<String> = t.late_at.iter().map(|k| k.to_string()).collect();
    let _ = writeln!(
        out,
        "testapp: late presents {} worst {:.3} ms at [{}]",
        t.late,
        t.worst.as_secs_f64() * 1e3,
        at.join(",")
    );
    if args.submit_thread {
        let _ = writeln!(out, "testapp: submit thread submits {}", t.thread_submits);
    }
    let _ = writeln!(
        out,
        "testapp: vkCreateSwapchainKHR us: {}",
        target::create_swapchain_summary()
    );
    if let Some(ms) = args.gpu_work {
        let _ = writeln!(out, "{}", gpu_work::summary_line(ms));
    }
    if let Some(c) = t.feedback {
        let _ = writeln!(
            out,
            "testapp: feedback presented {} discarded {} none {}",
            c.presented, c.discarded, c.none
        );
    }
    let _ = writeln!(
        out,
        "testapp: presented {} frames",
        PRESENT_CALLS.load(Ordering::Relaxed)
    );
    let _ = out.flush();
}

/// CPU time of the whole process so far, ns (CLOCK_PROCESS_CPUTIME_ID).
fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; the clock always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One whole Vulkan session: windows, instance, device(s), swapchains, the
/// present loop, and (unless --no-destroy) the teardown in reverse order.
fn session(
    args: &Args,
    platform: &Platform,
    pattern: &Pattern,
    round: u32,
    totals: &mut Totals,
) -> Result<(), Error> {
    let windows_n = args.swapchains.max(args.threads).max(args.devices);
    let (width, height) = args.size;
    let mut windows = Vec::new();
    let mut surfaces = Vec::new();
    let inst =
        match platform {
            Platform::X11(display) => {
                for i in 0..windows_n {
                    let x = (i * (width + 8)) as i32;
                    windows.push(display.create_window(
                        x,
                        0,
                        width,
                        height,
                        &format!("steadyhud-testapp {i}"),
                    )?);
                }
                if args.input_out.is_some() {
                    for w in &windows {
                        display.select_presses(w);
                    }
                }
                let inst = Instance::new(display.raw_display_handle())?;
                for w in &windows {
                    surfaces.push(inst.create_surface(
                        display.raw_display_handle(),
                        display.raw_window_handle(w),
                    )?);
                }
                inst
            }
            Platform::Wayland(w) => {
                let (display, window) = wayland_handles(&w.lock_or_recover())?;
                let inst = Instance::new(display)?;
                surfaces.push(inst.create_surface(display, window)?);
                inst
            }
        };
    // Window i belongs to device i % devices.
    let mut gpus = Vec::new();
    for d in 0..args.devices as usize {
        let mine: Vec<vk::SurfaceKHR> = surfaces
            .iter()
            .enumerate()
            .filter(|(i, _)| i % args.devices as usize == d)
            .map(|(_, s)| *s)
            .collect();
        gpus.push(Gpu::new(&inst, &mine, args.anti_lag)?);
    }
    // The `--gpu-work` load of each device (index = device index), shared
    // by the device's targets; destroyed after them, before the device.
    let mut works: Vec<Option<Arc<GpuWork>>> = Vec::with_capacity(gpus.len());
    for g in &gpus {
        works.push(match args.gpu_work {
            // Before any other submission: calibration times the idle queue.
            Some(ms) => Some(Arc::new(GpuWork::new(&inst, g, ms, args.trace)?)),
            None => None,
        });
    }
    let wish = SwapchainWish {
        format: match args.format {
            FormatArg::Unorm => vk::Format::B8G8R8A8_UNORM,
            FormatArg::Srgb => vk::Format::B8G8R8A8_SRGB,
        },
        present_mode: match args.present_mode {
            PresentModeArg::Fifo => vk::PresentModeKHR::FIFO,
            PresentModeArg::Immediate => vk::PresentModeKHR::IMMEDIATE,
            PresentModeArg::Mailbox => vk::PresentModeKHR::MAILBOX,
        },
        width,
        height,
    };
    let make_targets = || -> Result<Vec<Target>, Error> {
        let mut targets = Vec::new();
        for (i, &s) in surfaces.iter().enumerate() {
            let g = i % gpus.len();
            targets.push(Target::new(&inst, &gpus[g], g, works[g].clone(), s, wish)?);
        }
        say(format!(
            "testapp: device {:?} x{}, {} swapchain(s) {}x{} {:?} {:?}, {} frames scripted{}",
            gpus[0].device_name,
            gpus.len(),
            targets.len(),
            targets[0].extent.width,
            targets[0].extent.height,
            wish.format,
            wish.present_mode,
            pattern.frames(),
            if args.repeat > 1 {
                format!(", round {}", round + 1)
            } else {
                String::new()
            }
        ));
        Ok(targets)
    };

    let ctx = LoopCtx {
        args,
        inst: &inst,
        gpus: &gpus,
        platform,
        pattern,
        leftovers: std::sync::Mutex::new(
            (0..gpus.len())
                .map(|_| workload::Leftovers::default())
                .collect(),
        ),
    };
    // The submit thread works on device 0's queue, which window 0 presents
    // on. It starts before the swapchains exist, as a game's submission
    // thread starts with its device, so every vkCreateSwapchainKHR of the
    // app overlaps its submits.
    let submit_work = match args.submit_thread {
        true => {
            let gap = single_duration("--submit-gap", &args.submit_gap)?;
            let mode = if args.submit_hazard {
                submit::Mode::Hazard
            } else {
                submit::Mode::Correct
            };
            Some(submit::SubmitWork::new(&gpus[0], gap, mode)?)
        }
        false => None,
    };
    let stop = AtomicBool::new(false);
    let (result, submitted) = std::thread::scope(|scope| {
        let submitter = submit_work.as_ref().map(|w| {
            let (gpu, stop) = (&gpus[0], &stop);
            scope.spawn(move || w.run(gpu, stop))
        });
        let busy = args.busy_thread.then(|| {
            let stop = &stop;
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        });
        let cpu_start = (process_cpu_ns(), Instant::now());
        let present = || -> Result<(Vec<Target>, Vec<LoopReport>), Error> {
            let mut targets = make_targets()?;
            let reports = if args.threads > 1 {
                std::thread::scope(|inner| {
                    let handles: Vec<_> = targets
                        .chunks_mut(1)
                        .zip(windows.chunks(1))
                        .map(|(t, w)| {
                            let ctx = &ctx;
                            inner.spawn(move || ctx.present_loop(t, w))
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| {
                            h.join().unwrap_or_else(|_| {
                                Err(Error::Unsupported("present thread panicked".into()))
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()
                })?
            } else {
                vec![ctx.present_loop(&mut targets, &windows)?]
            };
            Ok((targets, reports))
        };
        let result = present();
        if busy.is_some() {
            let cpu = process_cpu_ns().saturating_sub(cpu_start.0) as f64 / 1e9;
            let wall = cpu_start.1.elapsed().as_secs_f64();
            say(format!(
                "testapp: process cpu {:.1}% of one core over {wall:.3} s of presenting",
                cpu / wall * 100.0
            ));
        }
        stop.store(true, Ordering::Relaxed);
        if let Some(b) = busy {
            let _ = b.join();
        }
        let submitted = submitter.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Error::Unsupported("submit thread panicked".into())))
        });
        (result, submitted)
    });
    let (targets, reports) = result?;
    if let Some(c) = finish_feedback(args, platform)? {
        totals.feedback = Some(c);
    }
    if let Some(n) = submitted {
        totals.thread_submits += n?;
    }
    totals.late += reports.iter().map(|r| r.late).sum::<u64>();
    totals.worst = totals
        .worst
        .max(reports.iter().map(|r| r.worst).max().unwrap_or_default());
    totals
        .late_at
        .extend(reports.iter().flat_map(|r| r.late_at.iter().copied()));
    if let Some(path) = &args.timestamps {
        write_timestamps(path, &reports, round, args.repeat > 1)?;
    }
    totals
        .per_swapchain
        .resize(targets.len().max(totals.per_swapchain.len()), 0);
    for (sum, t) in totals.per_swapchain.iter_mut().zip(&targets) {
        *sum += t.presented;
    }
    totals.recreations += targets.iter().map(|t| t.recreations).sum::<u64>();

    if args.exit_now {
        print_totals(args, totals);
        // SAFETY: _exit ends the process at once; nothing runs after it.
        unsafe { libc::_exit(0) };
    }
    if args.no_destroy {
        // Leave main with the device and instance alive, as some games do.
        print_totals(args, totals);
        std::process::exit(0);
    }
    if args.fence_teardown {
        for t in &targets {
            t.wait_own_fences(&gpus[t.gpu])?;
        }
    } else {
        for g in &gpus {
            g.wait_idle()?;
        }
    }
    if let Some(w) = submit_work {
        w.destroy(&gpus[0]);
    }
    let leftovers = ctx
        .leftovers
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    for (l, g) in leftovers.into_iter().zip(&gpus) {
        l.destroy(g);
    }
    for t in targets {
        let g = t.gpu;
        let s = t.destroy(&gpus[g]);
        inst.destroy_surface(s);
    }
    // Each device's load, then the device (the targets, which used the
    // load, are gone).
    for (w, g) in works.into_iter().zip(gpus) {
        if let Some(w) = w {
            w.destroy(&g.device);
        }
        g.destroy();
    }
    inst.destroy();
    if let Platform::X11(display) = platform {
        for w in windows {
            display.destroy_window(w);
        }
    }
    Ok(())
}

/// What one present loop reports back.
struct LoopReport {
    late: u64,
    worst: Duration,
    late_at: Vec<u64>,
    /// CLOCK_MONOTONIC ns at each vkQueuePresentKHR call (with --timestamps).
    stamps: Vec<u64>,
}

/// Writes (round 0) or appends the present-call timestamps, one per line;
/// `# thread T` / `# round R` lines separate threads and rounds.
fn write_timestamps(
    path: &std::path::Path,
    reports: &[LoopReport],
    round: u32,
    rounds: bool,
) -> Result<(), Error> {
    let mut text = String::new();
    if rounds {
        text.push_str(&format!("# round {round}\n"));
    }
    for (i, r) in reports.iter().enumerate() {
        if reports.len() > 1 {
            text.push_str(&format!("# thread {i}\n"));
        }
        for t in &r.stamps {
            text.push_str(&t.to_string());
            text.push('\n');
        }
    }
    let io = |source| Error::Io {
        what: format!("writing --timestamps {}", path.display()),
        source,
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(round > 0)
        .truncate(round == 0)
        .open(path)
        .map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)
}

struct LoopCtx<'a> {
    args: &'a Args,
    inst: &'a Instance,
    gpus: &'a [Gpu],
    platform: &'a Platform,
    pattern: &'a Pattern,
    /// Objects created by injected work, per device, destroyed at exit.
    leftovers: std::sync::Mutex<Vec<workload::Leftovers>>,
}

impl LoopCtx<'_> {
    /// On Wayland with `--feedback-out`: asks for the feedback of the
    /// commit the next vkQueuePresentKHR makes.
    fn before_present(&self) {
        if let Some(mut w) = self.platform.wayland() {
            w.request_feedback();
        }
    }

    /// With `--input-out` (X11): the presses that came, read now, at the
    /// start of frame `k`, into `text`. Returns now (CLOCK_MONOTONIC ns).
    fn sample_input(&self, text: Option<&mut String>, k: u64) -> u64 {
        let start_ns = steadyhud_sys::clock::now_ns();
        let Some(text) = text else {
            return start_ns;
        };
        let presses = match self.platform {
            Platform::X11(display) => display.take_presses(),
            // Wayland: the socket read now, the seat's presses dispatched.
            Platform::Wayland(w) => {
                let mut w = w.lock_or_recover();
                if let Err(e) = w.pump(Duration::ZERO) {
                    say(format!("testapp: --input-out: {e}"));
                }
                w.take_presses()
            }
        };
        for (kind, time_ms) in presses {
            text.push_str(&format!("input {kind} {time_ms} {start_ns} {k}\n"));
        }
        start_ns
    }

    /// On Wayland: records the present's time on its feedback row, then
    /// reads and dispatches what the socket has, without blocking.
    fn after_present(&self, present_ns: u64) -> Result<(), Error> {
        if let Some(mut w) = self.platform.wayland() {
            w.set_present_ns(present_ns);
            w.pump(Duration::ZERO).map_err(Error::Wayland)?;
        }
        Ok(())
    }

    /// Runs the `--pipelines-at` / `--alloc-at` work due before present `k`,
    /// then shifts the schedule by the time it took.
    fn inject_work(
        &self,
        k: u64,
        targets: &[Target],
        schedule: &mut Schedule,
    ) -> Result<(), Error> {
        let args = self.args;
        let work = args
            .pipelines_at
            .iter()
            .filter(|(f, _)| *f == k)
            .map(|(_, n)| workload::Work::Pipelines(*n))
            .chain(
                args.alloc_at
                    .iter()
                    .filter(|(f, _)| *f == k)
                    .map(|(_, n)| workload::Work::AllocMib(*n)),
            )
            .chain(
                args.host_alloc_at
                    .iter()
                    .filter(|(f, _)| *f == k)
                    .map(|(_, n)| workload::Work::HostMib(*n)),
            );
        let start = Instant::now();
        let mut any = false;
        for w in work {
            any = true;
            let g = targets[0].gpu;
            let mut left = self.leftovers.lock_or_recover();
            left[g].run(&self.gpus[g], targets[0].render_pass(), w)?;
        }
        if any {
            let took = start.elapsed();
            schedule.shift(took);
            if args.trace {
                say(format!(
                    "testapp: trace work before present {k} took {:.3} ms",
                    took.as_secs_f64() * 1e3
                ));
            }
        }
        Ok(())
    }

    /// Presents every target at each schedule point; returns (late presents,
    /// worst lateness, first late present numbers).
    fn present_loop(
        &self,
        targets: &mut [Target],
        windows: &[x11::Window],
    ) -> Result<LoopReport, Error> {
        let args = self.args;
        let mut gaps = self.pattern.gaps();
        let mut schedule = Schedule::new(Instant::now());
        let mut ready: Vec<Ready> = Vec::with_capacity(targets.len());
        let mut outcomes: Vec<PresentOutcome> = Vec::with_capacity(targets.len());
        let total = self.pattern.frames() + 1;
        let mut inputs = args.input_out.as_ref().map(|_| String::new());
        let mut next_start = None;
        let mut stamps: Vec<u64> = if args.timestamps.is_some() {
            Vec::with_capacity((total as usize).saturating_mul(targets.len()))
        } else {
            Vec::new()
        };
        for k in 0..total {
            let every = args.resize_every.filter(|n| k > 0 && k % n == 0).map(|n| {
                // Alternate: 3/4 of --size, --size, 3/4, ...
                let (w, h) = args.size;
                if (k / n) % 2 == 1 {
                    (k, ((w * 3 / 4).max(1), (h * 3 / 4).max(1)))
                } else {
                    (k, (w, h))
                }
            });
            for (_, (w, h)) in args
                .resize_at
                .iter()
                .filter(|(f, _)| *f == k)
                .chain(every.as_ref())
            {
                for (i, t) in targets.iter_mut().enumerate() {
                    // A Wayland surface has no size of its own: the
                    // swapchain's extent is the window's.
                    if let (Platform::X11(display), Some(win)) = (self.platform, windows.get(i)) {
                        display.resize(win, *w, *h);
                    }
                    t.wish.width = *w;
                    t.wish.height = *h;
                    if !args.resize_lazy {
                        t.recreate(self.inst, &self.gpus[t.gpu])?;
                    }
                }
            }
            if args.resize_lazy {
                for t in targets.iter_mut() {
                    if t.surface_changed(self.inst, &self.gpus[t.gpu])? {
                        t.recreate(self.inst, &self.gpus[t.gpu])?;
                    }
                }
            }
            // The frame's start: present k−1's return, where a game
            // samples its input (the first frame's: now).
            let start_ns = match next_start.take() {
                Some(t) => t,
                None => {
                    self.gpus[0].anti_lag(0, k);
                    self.sample_input(inputs.as_mut(), k)
                }
            };
            let t_render = Instant::now();
            ready.clear();
            for t in targets.iter_mut() {
                ready.push(t.render(self.inst, &self.gpus[t.gpu])?);
            }
            if k == 0 {
                // The schedule starts at the first present.
                schedule = Schedule::new(Instant::now());
            } else if let Some(gap) = gaps.next() {
                schedule.advance(gap);
                if !args.uncapped {
                    schedule.wait();
                }
            }
            self.inject_work(k, targets, &mut schedule)?;
            let t_present = Instant::now();
            outcomes.clear();
            let mut first_entry = None;
            if args.multi_present {
                let mut refs: Vec<&mut Target> = targets.iter_mut().collect();
                self.before_present();
                let e = target::present(&self.gpus[0], &mut refs, &ready, &mut outcomes)?;
                self.after_present(e.monotonic_ns)?;
                PRESENT_CALLS.fetch_add(1, Ordering::Relaxed);
                first_entry = Some(e.at);
                if args.timestamps.is_some() {
                    stamps.push(e.monotonic_ns);
                }
            } else {
                for (t, r) in targets.iter_mut().zip(&ready) {
                    let g = t.gpu;
                    self.gpus[g].anti_lag(1, k);
                    self.before_present();
                    let e = target::present(
                        &self.gpus[g],
                        &mut [t],
                        std::slice::from_ref(r),
                        &mut outcomes,
                    )?;
                    if let Some(text) = inputs.as_mut() {
                        text.push_str(&format!("frame {k} {start_ns} {}\n", e.monotonic_ns));
                        // No frame follows the last present.
                        if k + 1 < total {
                            self.gpus[g].anti_lag(0, k + 1);
                            next_start = Some(self.sample_input(Some(text), k + 1));
                        }
                    }
                    self.after_present(e.monotonic_ns)?;
                    PRESENT_CALLS.fetch_add(1, Ordering::Relaxed);
                    first_entry.get_or_insert(e.at);
                    if args.timestamps.is_some() {
                        stamps.push(e.monotonic_ns);
                    }
                }
            }
            if k > 0 && !args.uncapped {
                if let Some(at) = first_entry {
                    schedule.entered(at);
                }
            }
            for (t, o) in targets.iter_mut().zip(&outcomes) {
                if *o == PresentOutcome::Recreate {
                    t.recreate(self.inst, &self.gpus[t.gpu])?;
                }
            }
            if args.trace {
                let done = Instant::now();
                say(format!(
                    "testapp: trace present {k} render {:.3} ms present {:.3} ms",
                    (t_present - t_render).as_secs_f64() * 1e3,
                    (done - t_present).as_secs_f64() * 1e3
                ));
            }
            if args.progress {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "testapp: present {}",
                    PRESENT_CALLS.load(Ordering::Relaxed)
                );
                let _ = out.flush();
            }
        }
        if let (Some(text), Some(path)) = (inputs, &args.input_out) {
            std::fs::write(path, text).map_err(|source| Error::Io {
                what: format!("writing --input-out {}", path.display()),
                source,
            })?;
        }
        Ok(LoopReport {
            late: schedule.late,
            worst: schedule.worst_late,
            late_at: schedule.late_at,
            stamps,
        })
    }
}
