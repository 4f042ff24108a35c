//! The one [`Process`] value: what the GL library knows of its process,
//! set up at the first swap (a process that never swaps starts no thread
//! and writes no file). Every per-window and per-context record is reached
//! through it: the windows' capture streams ([`Window`]) and the contexts'
//! HUDs ([`crate::hud::ContextHud`]), beside the process's [`Client`]
//! (`steadyhud_capture::client`: config, HUD switches, frame cap, faults,
//! Wayland, analysis, exit hook), which the Vulkan layer holds too. It is
//! the only global besides that record and the Wayland display map
//! ([`crate::wayland`]).

use crate::hud::ContextHud;
use crate::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use steadyhud_capture::client::Client;
use steadyhud_capture::guard;
use steadyhud_capture::rings::Stream;
use steadyhud_capture::sources::Native;

/// One window (GLX drawable or EGL surface) that swapped: its capture
/// stream (with its frame-cap schedule), and its size as last read.
pub struct Window {
    pub key: WindowKey,
    /// The stream's key in the analysis thread (ends the log when the
    /// window is destroyed).
    pub id: usize,
    /// `None` for a window whose context runs on Vulkan with the layer on
    /// ([`crate::path`]): the layer measures it.
    pub stream: Option<Arc<Stream>>,
    /// Width and height in pixels, read at most every
    /// [`crate::swap::SIZE_EVERY_NS`] while the HUD is shown.
    pub size: [u32; 2],
    pub size_at_ns: u64,
    /// X11 Present: this GLX drawable's swaps by serial (GLX DRI3 numbers
    /// a drawable's presents from 1, never reset), when it is followed.
    pub x11: Option<Arc<steadyhud_x11present::matcher::Chain>>,
    /// The swap's counters, with config `counters` on (as a Vulkan device's).
    pub counters: Option<WindowCounters>,
}

/// A window's statistics counters: the built-ins its swap books
/// ([`steadyhud_counters::Swap`]: the time in the swap, the frame cap's
/// wait), latched at each swap into its stream, which turns them into the
/// log's `in_present_ms`, `limiter_wait_ms` and `cpu_busy_ms` (FS2P) as
/// for a Vulkan device.
#[derive(Clone)]
pub struct WindowCounters {
    pub table: Arc<steadyhud_counters::Counters>,
    pub ids: steadyhud_counters::Swap,
}

impl WindowCounters {
    /// A new window's counters (`None`: the table has no room, never).
    pub fn new() -> Option<WindowCounters> {
        let table = Arc::new(steadyhud_counters::Counters::new());
        let ids = steadyhud_counters::Swap::register(&table)?;
        Some(WindowCounters { table, ids })
    }
}

/// A window by display and drawable (GLX) or display and surface (EGL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowKey {
    pub egl: bool,
    pub display: usize,
    pub drawable: u64,
}

/// A GL context that swapped: which path measures it and its HUD.
pub struct Context {
    pub ctx: usize,
    /// The display of the window it first swapped (GLX: the X display;
    /// EGL: the EGL display), and whether it is EGL's: the record goes when
    /// that display is closed or terminated.
    pub display: usize,
    pub egl: bool,
    pub path: Path,
    /// Made the first time the HUD is drawn in this context; `None` after
    /// a failure (said once).
    pub hud: Option<ContextHud>,
    pub hud_failed: bool,
}

/// The GL library's own state in this process: its contexts and windows.
/// What the Vulkan layer holds too (identity, config, HUD switches, frame
/// cap, faults, Wayland, analysis, exit path) is the process's [`Client`].
pub struct Process {
    pub client: &'static Client,
    pub windows: Mutex<Vec<Window>>,
    /// Windows destroyed while logged (newest last, at most
    /// [`DEAD_KEPT`]): a swap of one is passed through, not logged.
    pub dead: Mutex<Vec<WindowKey>>,
    pub contexts: Mutex<Vec<Context>>,
    /// One-line notices already printed ([`Process::say_once`]).
    said: AtomicU32,
}

/// The notices printed at most once per process.
#[derive(Clone, Copy)]
#[repr(u32)]
pub enum Once {
    NoContext = 1,
    NotCurrent = 2,
    Zink = 4,
    Missing = 8,
    DeadSwap = 16,
}

/// Destroyed windows remembered.
pub const DEAD_KEPT: usize = 16;

static PROCESS: OnceLock<Process> = OnceLock::new();

/// The process's state, set up on first use (config warnings printed once).
pub fn process() -> &'static Process {
    PROCESS.get_or_init(|| Process {
        client: steadyhud_capture::client::client(steadyhud_log::Api::OpenGl),
        windows: Mutex::default(),
        dead: Mutex::default(),
        contexts: Mutex::default(),
        said: AtomicU32::new(0),
    })
}

/// The process's state if it was ever set up (`None` in a forked child:
/// its copy is its parent's).
pub fn existing() -> Option<&'static Process> {
    PROCESS.get().filter(|p| !p.client.forked())
}

/// Whether the hooks should hand out the real functions: only once the
/// process is known to be left alone (the lookups never set it up).
pub fn left_alone_cheap() -> bool {
    existing().is_some_and(|p| p.client.left_alone)
}

/// A real function the game called is missing: one line.
pub fn missing(name: &str) {
    let p = process();
    if p.first(Once::Missing) {
        guard::say(format_args!(
            "steadyhud: the real {name} cannot be found (no libGL/libEGL?); the call does nothing"
        ));
    }
}

/// A context is being destroyed: its HUD's GL objects go with it, so the
/// record is dropped without a GL call.
pub fn context_destroyed(ctx: usize) {
    forget_contexts(|c| c.ctx == ctx);
}

/// A context was just created at `ctx`: a record left at that address (its
/// context died unseen) is dropped, so the new context never gets the old
/// HUD's buffer and texture names, which may be the game's own there.
pub fn context_created(ctx: usize) {
    forget_contexts(|c| c.ctx == ctx);
}

/// Drops the context records `gone` picks, their HUDs without a GL call.
fn forget_contexts(gone: impl Fn(&Context) -> bool) {
    if let Some(p) = existing() {
        guard::contain((), || {
            let mut c = steadyhud_sys::lock::Recover::lock_or_recover(&p.contexts);
            let mut i = 0;
            while i < c.len() {
                if gone(&c[i]) {
                    if let Some(h) = c.swap_remove(i).hud {
                        h.forget();
                    }
                } else {
                    i += 1;
                }
            }
        });
    }
}

/// An X display is being closed (`XCloseDisplay`, `egl` false) or an EGL
/// display terminated (`eglTerminate`): its contexts and windows go with
/// it. Their records are dropped and the windows' logs end here.
pub fn display_closed(egl: bool, display: usize) {
    let Some(p) = existing() else { return };
    if p.client.left_alone || display == 0 {
        return;
    }
    forget_contexts(|c| c.egl == egl && c.display == display);
    // An X display's windows go with it (an EGL display's are ended one
    // by one below, their Wayland display still live).
    if !egl {
        guard::contain((), || p.client.owner_destroyed(display));
    }
    let keys: Vec<WindowKey> = {
        use steadyhud_sys::lock::Recover;
        let w = p.windows.lock_or_recover();
        w.iter()
            .filter(|w| w.key.egl == egl && w.key.display == display)
            .map(|w| w.key)
            .collect()
    };
    for k in keys {
        window_destroyed(k.egl, k.display, k.drawable);
    }
    // The display's X ids and EGL surfaces may come back on the next
    // connection or display: new windows, not destroyed ones.
    guard::contain((), || {
        use steadyhud_sys::lock::Recover;
        p.dead
            .lock_or_recover()
            .retain(|k| !(k.egl == egl && k.display == display));
    });
}

/// A window (GLX: any display's drawable `drawable`; EGL: `display`'s
/// surface) is being destroyed: its log ends here, with one line.
pub fn window_destroyed(egl: bool, display: usize, drawable: u64) {
    let Some(p) = existing() else { return };
    if p.client.left_alone || drawable == 0 {
        return;
    }
    guard::contain((), || {
        use steadyhud_sys::lock::Recover;
        let gone = {
            let mut w = p.windows.lock_or_recover();
            let Some(i) = w.iter().position(|w| {
                w.key.egl == egl && w.key.drawable == drawable && (!egl || w.key.display == display)
            }) else {
                return;
            };
            w.swap_remove(i)
        };
        {
            let mut dead = p.dead.lock_or_recover();
            if dead.len() == DEAD_KEPT {
                dead.remove(0);
            }
            dead.push(gone.key);
        }
        p.client.surface_destroyed(drawable);
        if gone.key.egl {
            crate::wayland::forget_surface(drawable);
        }
        p.client.analysis.finish_device(gone.id);
        let Some(stream) = gone.stream else { return };
        guard::say(format_args!(
            "steadyhud: window {drawable:#x} was destroyed; its session log ends here ({} frames)",
            stream.pushed().saturating_sub(1)
        ));
    });
}

/// A window (as for [`window_destroyed`]) was just created: a destroyed
/// one with the same key (an EGL surface is a heap address, often reused)
/// is gone for good, so this one's first swap starts a new log.
pub fn window_created(egl: bool, display: usize, drawable: u64) {
    let Some(p) = existing() else { return };
    if p.client.left_alone || drawable == 0 {
        return;
    }
    guard::contain((), || {
        use steadyhud_sys::lock::Recover;
        p.dead.lock_or_recover().retain(|k| {
            !(k.egl == egl && k.drawable == drawable && (!egl || k.display == display))
        });
    });
}

/// EGL display `egl` made window surface `surface` from native window
/// `win`: on Wayland, its `wl_surface` is remembered for the presentation
/// feedback, which the window's first swap starts (config
/// `display_feedback`).
///
/// # Safety
/// `win` is the native window the game made `surface` from.
pub unsafe fn egl_window_surface(egl: usize, surface: u64, win: *mut std::ffi::c_void) {
    if crate::wayland::display_of(egl).is_none() {
        return;
    }
    // SAFETY: the caller's contract: a Wayland EGL display's native window
    // is a `wl_egl_window`.
    match unsafe { crate::wayland::wl_surface_of(win) } {
        Some(wl_surface) => crate::wayland::remember_surface(surface, wl_surface),
        None => guard::say(format_args!(
            "steadyhud: an EGL window surface on Wayland whose wl_egl_window is not one we can read; no display times for it"
        )),
    }
}

/// `glXCreateWindow` made GLX drawable `drawable` on X window `window` of
/// Xlib display `dpy`: its swaps are that window's presents (config
/// `display_feedback`).
///
/// # Safety
/// `dpy` is the game's live Xlib display.
pub unsafe fn glx_window(dpy: *mut std::ffi::c_void, drawable: u64, window: u64) {
    let Some(p) = existing() else { return };
    if p.client.left_alone || drawable == 0 {
        return;
    }
    let native = Native::Xlib {
        display: dpy,
        window: window as u32,
    };
    // SAFETY: the game's live display (caller).
    guard::contain((), || unsafe {
        p.client.surface_created(dpy as usize, drawable, native);
    });
}

/// `egl` is an EGL display on Wayland display `wl`.
pub fn wayland_display(egl: usize, wl: *mut std::ffi::c_void) {
    crate::wayland::remember(egl, wl);
}

impl Process {
    /// True the first time `what` is asked for.
    pub fn first(&self, what: Once) -> bool {
        let bit = what as u32;
        self.said.fetch_or(bit, Ordering::Relaxed) & bit == 0
    }

    /// Prints `args` the first time `what` happens.
    pub fn say_once(&self, what: Once, args: std::fmt::Arguments) {
        if self.first(what) {
            guard::say(args);
        }
    }
}
