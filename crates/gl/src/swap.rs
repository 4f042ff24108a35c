//! One flow per swap, as the layer has one per present: timestamp (the
//! window's counters latched with it) → capture stream → HUD drawn into
//! the back buffer → real swap → its return booked (`in_present_ms`) →
//! frame cap (its wait booked: `limiter_wait_ms`).
//!
//! The swapping thread takes two locks, each uncontended unless the game
//! swaps two windows from two threads at once: the window list (to record)
//! and, while the HUD is shown, the context list (to draw). Nothing here
//! allocates after a window's first swap, and nothing does I/O: the
//! window's size is read at most every [`SIZE_EVERY_NS`].

use crate::hud::ContextHud;
use crate::path::{self, Path};
use crate::process::{self, Context, Once, Process, Window, WindowCounters, WindowKey};
use crate::real::Api;
use no_panic::no_panic;
use std::ffi::{c_int, c_ulong, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use steadyhud_capture::analysis::StreamSpec;
use steadyhud_capture::guard;
use steadyhud_capture::limiter;
use steadyhud_capture::rings::Stream;
use steadyhud_capture::sources::Native;
use steadyhud_sys::clock::now_ns;
use steadyhud_sys::lock::{Hold, Recover};

/// The next window's stream key.
static NEXT_WINDOW: AtomicUsize = AtomicUsize::new(1);

/// How often a shown HUD re-reads its window's size.
pub const SIZE_EVERY_NS: u64 = 250_000_000;

/// An X id (`unsigned long`: 32 bits in a 32-bit process) as a key.
#[allow(clippy::useless_conversion)]
pub fn xid(x: c_ulong) -> u64 {
    u64::from(x)
}

/// What a swap is for: the window and the API it swaps through.
#[derive(Clone, Copy)]
pub struct Target {
    pub api: Api,
    pub key: WindowKey,
}

impl Target {
    pub fn glx(dpy: *mut c_void, drawable: c_ulong) -> Target {
        Target {
            api: Api::Glx,
            key: WindowKey {
                egl: false,
                display: dpy as usize,
                drawable: xid(drawable),
            },
        }
    }

    pub fn egl(dpy: *mut c_void, surface: *mut c_void) -> Target {
        Target {
            api: Api::Egl,
            key: WindowKey {
                egl: true,
                display: dpy as usize,
                drawable: surface as u64,
            },
        }
    }
}

/// What a swap's capture leaves for after the real swap.
enum Measured {
    /// A window this library does not measure (the layer does, or none).
    Not,
    /// One it measures, with its counters when it counts.
    Yes(Option<WindowCounters>),
}

/// The swap of `t`: capture and HUD around `real`, the real swap; then,
/// on a window with counters, the time from the hook's entry to the real
/// swap's return booked as `in_present_ms` (the next frame's start: FS2P
/// counts from it). The frame cap's wait runs outside the guard, as the
/// real swap does: a thread ended while it waits unwinds through it (see
/// `steadyhud_sys::guard`).
pub fn swap<R>(t: Target, real: impl FnOnce() -> R) -> R {
    let p = process::process();
    // A child forked without exec passes through: the record, its locks
    // included, is its parent's (nothing is printed: stderr's lock too).
    if !p.client.active() {
        return real();
    }
    let client = p.client;
    // The wait is part of the frame this swap ends (early) or starts.
    let cap = |after: bool| {
        if let Some(fps) = client.cap_at(after) {
            if let Some((d, counters)) = guard::contain(None, || deadline(p, t.key, fps)) {
                let waited = limiter::wait_until(d);
                if let Some(c) = counters {
                    book(&c, c.ids.limiter_wait_ns, waited);
                }
            }
        }
    };
    cap(false);
    let now = now_ns();
    // Nothing but the capture due: no guard (no system call).
    let measured = match capture_only(p, t, now) {
        Some(measured) => measured,
        None => guard::contain(Measured::Not, || before_swap(p, t, now)),
    };
    let r = real();
    if let Measured::Yes(counters) = measured {
        if let Some(c) = counters {
            // Lands in the next latch: the frame that starts at this swap.
            book(&c, c.ids.in_present_ns, now_ns().saturating_sub(now));
        }
        cap(true);
    }
    r
}

/// Adds `ns` to a window's counter `id`: one relaxed atomic add.
#[no_panic]
fn book(c: &WindowCounters, id: steadyhud_counters::CounterId, ns: u64) {
    c.table.add(id, ns);
}

/// The swap's timestamp `now` into window `w`'s stream, with its counters
/// latched (when it counts); the swap's key, as [`Stream::record_with`].
#[inline]
fn record(w: &Window, stream: &Stream, now: u64) -> Option<u64> {
    let mut latched = [0u64; steadyhud_counters::MAX_COUNTERS];
    let values = w.counters.as_ref().map(|c| {
        c.table.latch(&mut latched);
        &latched
    });
    stream.record_with(now, values)
}

/// The swap's own work when it is all that is due: the timestamp `now`
/// into the stream of window `t`, one already followed whose HUD is not
/// drawn, without a display source and, on EGL, with the Wayland input
/// pump not due. `Some(whether this library measures it)` when done;
/// `None` when more is due ([`before_swap`], under the guard).
/// `#[no_panic]`: proved panic-free when the library links (optimized
/// builds), so a swap that takes this path needs no guard, and a forced
/// thread exit meets no `catch_unwind` (see `steadyhud_sys::guard`).
#[no_panic]
fn capture_only(p: &Process, t: Target, now: u64) -> Option<Measured> {
    if p.client.hud.drawn(now) || (t.key.egl && p.client.input_due(now)) {
        return None;
    }
    let windows = p.windows.hold();
    let w = windows.iter().find(|w| w.key == t.key)?;
    // GL on Vulkan with the layer on: the layer measures it.
    let Some(stream) = w.stream.as_ref() else {
        return Some(Measured::Not);
    };
    if stream.has_display() {
        return None;
    }
    record(w, stream, now);
    Some(Measured::Yes(w.counters.clone()))
}

/// The frame cap's deadline for window `key` (none before its first swap,
/// and none for a window the layer measures: it caps its own), with the
/// window's counters, which book the wait.
fn deadline(p: &Process, key: WindowKey, fps: u32) -> Option<(u64, Option<WindowCounters>)> {
    let w = p.windows.lock_or_recover();
    let w = w.iter().find(|w| w.key == key)?;
    let d = w.stream.as_ref()?.cap_deadline(now_ns(), fps)?;
    Some((d, w.counters.clone()))
}

/// The context current on this thread for `api` (0: none).
fn current_context(api: Api) -> usize {
    type F = unsafe extern "C" fn() -> *mut c_void;
    let f = match api {
        Api::Glx => crate::real!(Api::Glx, "glXGetCurrentContext", F),
        Api::Egl => crate::real!(Api::Egl, "eglGetCurrentContext", F),
    };
    // SAFETY: the real function, no arguments.
    f.map_or(0, |f| unsafe { f() } as usize)
}

/// The drawable (GLX) or draw surface (EGL) current on this thread.
fn current_drawable(api: Api) -> u64 {
    match api {
        Api::Glx => {
            type F = unsafe extern "C" fn() -> c_ulong;
            let f = crate::real!(Api::Glx, "glXGetCurrentDrawable", F);
            // SAFETY: the real function, no arguments.
            f.map_or(0, |f| xid(unsafe { f() }))
        }
        Api::Egl => {
            type F = unsafe extern "C" fn(c_int) -> *mut c_void;
            const EGL_DRAW: c_int = 0x3059;
            let f = crate::real!(Api::Egl, "eglGetCurrentSurface", F);
            // SAFETY: the real function with a valid enum.
            f.map_or(0, |f| unsafe { f(EGL_DRAW) } as u64)
        }
    }
}

/// The size of window `key` in pixels, asked of GLX or EGL.
fn window_size(api: Api, key: WindowKey) -> Option<[u32; 2]> {
    match api {
        Api::Glx => {
            type F = unsafe extern "C" fn(*mut c_void, c_ulong, c_int, *mut u32) -> c_int;
            const GLX_WIDTH: c_int = 0x801D;
            const GLX_HEIGHT: c_int = 0x801E;
            let f = crate::real!(Api::Glx, "glXQueryDrawable", F)?;
            let (mut w, mut h) = (0u32, 0u32);
            let (d, dr) = (key.display as *mut c_void, key.drawable as c_ulong);
            // SAFETY: the game's display and drawable, swapped just now.
            unsafe {
                f(d, dr, GLX_WIDTH, &mut w);
                f(d, dr, GLX_HEIGHT, &mut h);
            }
            Some([w, h])
        }
        Api::Egl => {
            type F = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int, *mut c_int) -> u32;
            const EGL_WIDTH: c_int = 0x3057;
            const EGL_HEIGHT: c_int = 0x3056;
            let f = crate::real!(Api::Egl, "eglQuerySurface", F)?;
            let (mut w, mut h) = (0, 0);
            let (d, s) = (key.display as *mut c_void, key.drawable as *mut c_void);
            // SAFETY: the game's display and surface, swapped just now.
            let ok = unsafe { f(d, s, EGL_WIDTH, &mut w) != 0 && f(d, s, EGL_HEIGHT, &mut h) != 0 };
            ok.then_some([w.max(0) as u32, h.max(0) as u32])
        }
    }
}

/// The path of the context current on this thread, deciding it at its
/// first swap.
fn context_path(p: &Process, t: Target, ctx: usize) -> Path {
    let api = t.api;
    let mut contexts = p.contexts.lock_or_recover();
    if let Some(c) = contexts.iter().find(|c| c.ctx == ctx) {
        return c.path;
    }
    // SAFETY: `ctx` is current on this thread.
    let renderer = unsafe { crate::hud::gl_string(api, glow::RENDERER) }.unwrap_or_default();
    let decided = path::path(&renderer, path::layer_marked());
    if decided == Path::Layer {
        p.say_once(
            Once::Zink,
            format_args!(
                "steadyhud: this GL context runs on Vulkan ({renderer}); the Vulkan layer measures and draws on its frames, the GL library stays out"
            ),
        );
    }
    contexts.push(Context {
        ctx,
        display: t.key.display,
        egl: t.key.egl,
        path: decided,
        hud: None,
        hud_failed: false,
    });
    decided
}

/// A swap with no current context on its thread: one line.
fn no_context(p: &Process) {
    p.say_once(
        Once::NoContext,
        format_args!(
            "steadyhud: a swap with no current GL context on its thread; its frames are logged, without a HUD"
        ),
    );
}

/// Capture and HUD for one swap at `t`; whether this library measured it
/// (with the window's counters). The steps: find the window
/// ([`window_for`], which makes it at its first swap: [`new_window`]),
/// record the swap ([`record_swap`]), and while the HUD is shown draw it
/// ([`draw_hud`]).
fn before_swap(p: &'static Process, t: Target, now: u64) -> Measured {
    let visible = p.client.hud.drawn(now);
    let (stream, size, measured) = {
        let mut windows = p.windows.lock_or_recover();
        let Some(w) = window_for(p, &mut windows, t) else {
            return Measured::Not;
        };
        if !record_swap(p, t, w, now) {
            return Measured::Not;
        }
        let measured = Measured::Yes(w.counters.clone());
        if !visible {
            return measured;
        }
        if now.saturating_sub(w.size_at_ns) >= SIZE_EVERY_NS {
            if let Some(s) = window_size(t.api, t.key) {
                w.size = s;
            }
            w.size_at_ns = now;
        }
        let Some(stream) = w.stream.clone() else {
            return measured;
        };
        (stream, w.size, measured)
    };
    draw_hud(p, t, &stream, size);
    measured
}

/// The native window of the window `t` swaps, for the client's display
/// sources: an EGL surface on Wayland (its `wl_surface`, when its creation
/// was seen), or a GLX window not recorded yet (`glXCreateWindow` records
/// its X window; an X window swapped directly is its own drawable).
/// `None`: EGL on X11 (not followed), or a GLX window already recorded.
fn native(p: &Process, t: Target) -> Option<Native> {
    if t.key.egl {
        let display = crate::wayland::display_of(t.key.display)?;
        let surface = crate::wayland::wl_surface_for(t.key.drawable);
        return Some(Native::Wayland {
            display,
            surface: surface.unwrap_or(std::ptr::null_mut()),
        });
    }
    (!p.client.x11present.knows(t.key.drawable)).then_some(Native::Xlib {
        display: t.key.display as *mut c_void,
        window: t.key.drawable as u32,
    })
}

/// The record of the window `t` swaps, made at its first swap; `None` for
/// a swap of a destroyed window (passed through, said once).
fn window_for<'w>(
    p: &'static Process,
    windows: &'w mut Vec<Window>,
    t: Target,
) -> Option<&'w mut Window> {
    if let Some(i) = windows.iter().position(|w| w.key == t.key) {
        return Some(&mut windows[i]);
    }
    if p.dead.lock_or_recover().contains(&t.key) {
        p.say_once(
            Once::DeadSwap,
            format_args!("steadyhud: a swap of a destroyed window; passed through, not logged"),
        );
        return None;
    }
    windows.push(new_window(p, t));
    windows.last_mut()
}

/// A window at its first swap: who measures it (decided once, by the
/// context it first swaps with: a hidden HUD then never asks GL anything,
/// few cache lines on a cold swap), its display sources and its stream.
fn new_window(p: &'static Process, t: Target) -> Window {
    let ctx = current_context(t.api);
    let path = if ctx == 0 {
        no_context(p);
        Path::Gl
    } else {
        context_path(p, t, ctx)
    };
    let id = NEXT_WINDOW.fetch_add(1, Ordering::Relaxed);
    // Counters as a Vulkan device's: config `counters`.
    let counters = (path == Path::Gl && p.client.config.counters)
        .then(WindowCounters::new)
        .flatten();
    // GL on Vulkan with the layer on: the layer measures it, and follows
    // it on the display.
    let stream = (path == Path::Gl).then(|| {
        let display = match native(p, t) {
            // SAFETY: the game is swapping this window of its display: the
            // display and what the window was made of are live.
            Some(n) => unsafe { p.client.surface_created(t.key.display, t.key.drawable, n) },
            None => p.client.follows(t.key.drawable),
        };
        p.client.new_stream(StreamSpec {
            device_key: id,
            counters: counters.as_ref().map(|c| c.table.clone()),
            display,
            ..StreamSpec::default()
        })
    });
    // Followed from the analysis thread's next tick: no I/O here.
    let x11 = stream
        .as_ref()
        .and_then(|s| p.client.x11_chain(t.key.drawable, s, now_ns(), true));
    Window {
        key: t.key,
        id,
        stream,
        size: [0, 0],
        size_at_ns: 0,
        x11,
        counters,
    }
}

/// Records the swap at `now` on the window's stream, asks its display
/// source about it (before the swap goes down: EGL commits inside it; a
/// swap not asked about is known at once), and pumps the Wayland hotkeys.
/// False for a window this library does not measure (GL on Vulkan with
/// the layer on: the layer does).
fn record_swap(p: &'static Process, t: Target, w: &Window, now: u64) -> bool {
    let Some(stream) = w.stream.as_ref() else {
        return false;
    };
    let key = record(w, stream, now);
    if let (true, Some(k)) = (stream.has_display(), key) {
        if !p
            .client
            .present_asked(t.key.drawable, w.x11.as_deref(), stream, k)
        {
            stream.not_asked(k);
        }
    }
    if t.key.egl {
        p.client.input_pump(t.key.drawable, now);
    }
    true
}

/// The HUD drawn into the back buffer of the window `t` swaps, in the
/// context current on this thread, when that context is ours to draw in.
fn draw_hud(p: &'static Process, t: Target, stream: &Stream, size: [u32; 2]) {
    let Some(ctx) = hud_context(p, t) else {
        return;
    };
    let stats = stream.live.latest();
    let mut contexts = p.contexts.lock_or_recover();
    let Some(c) = contexts.iter_mut().find(|c| c.ctx == ctx) else {
        return;
    };
    if c.hud_failed {
        return;
    }
    if c.hud.is_none() {
        // SAFETY: `ctx` is current on this thread.
        match guard::try_run(|| unsafe { ContextHud::new(t.api, &p.client.config, size) }) {
            Some(Ok(h)) => c.hud = Some(h),
            Some(Err(e)) => {
                c.hud_failed = true;
                guard::say(format_args!(
                    "steadyhud: no HUD in this GL context: {e}; capture, log and frame cap go on"
                ));
                return;
            }
            None => {
                c.hud_failed = true;
                return;
            }
        }
    }
    let Some(hud) = c.hud.as_mut() else {
        return;
    };
    // SAFETY: `ctx` is current on this thread with this window's drawable.
    let drawn = guard::try_run(|| unsafe { hud.draw(&p.client.config, size, &stats) });
    if !matches!(drawn, Some(Ok(()))) {
        c.hud_failed = true;
        match drawn {
            Some(Err(e)) => guard::say(format_args!(
                "steadyhud: the GL HUD's draw failed: {e}; no HUD in this context from now on"
            )),
            _ => guard::say(format_args!(
                "steadyhud: internal error in the GL HUD's draw; no HUD in this context from now on"
            )),
        }
        // A HUD that failed half-way may hold objects in an unknown state:
        // it is dropped with its context, never used again.
    }
}

/// The context current on this thread, when the GL library draws the HUD
/// in it for window `t`: none, one on Vulkan (the layer draws), or one
/// current on another surface: `None` (each said once).
fn hud_context(p: &'static Process, t: Target) -> Option<usize> {
    let ctx = current_context(t.api);
    if ctx == 0 {
        no_context(p);
        return None;
    }
    if context_path(p, t, ctx) == Path::Layer {
        return None;
    }
    if current_drawable(t.api) != t.key.drawable {
        p.say_once(
            Once::NotCurrent,
            format_args!("steadyhud: a window swapped while its context is current on another thread or surface; its frames are logged, without a HUD"),
        );
        return None;
    }
    Some(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child forked (without exec) while another thread of its parent
    /// held the window list's lock swaps and ends: the hooks pass through
    /// in it instead of waiting for a lock nobody there will release.
    #[test]
    fn a_forked_child_swaps_through_locks_held_at_the_fork() {
        let dir = std::env::temp_dir().join(format!("steadyhud-fork-{}", std::process::id()));
        std::env::set_var("STEADYHUD_LOG_DIR", &dir);
        let p = process::process();
        let (held_tx, held_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let _w = p.windows.lock_or_recover();
            let _c = p.contexts.lock_or_recover();
            held_tx.send(()).unwrap();
            let _ = done_rx.recv();
        });
        held_rx.recv().unwrap();
        // SAFETY: fork(2); the child swaps once and _exit(2)s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let r = swap(
                Target::egl(std::ptr::null_mut(), std::ptr::null_mut()),
                || 7,
            );
            // SAFETY: ends the child without running the test harness's
            // exit handlers.
            unsafe { libc::_exit(if r == 7 { 0 } else { 3 }) };
        }
        assert!(pid > 0, "fork failed");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut status = 0;
        let ended = loop {
            // SAFETY: waitpid(2) of our own child.
            if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
                break true;
            }
            if std::time::Instant::now() > deadline {
                // SAFETY: kill(2) and waitpid(2) of our own child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                break false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        done_tx.send(()).unwrap();
        holder.join().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(ended, "the forked child hung on a lock held at the fork");
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child status {status:#x}"
        );
    }
}
