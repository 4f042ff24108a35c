//! The client's calls for its display and input sources, one per thing a
//! hook sees: a surface made ([`Client::surface_created`]) or destroyed,
//! its owner destroyed, a stream's X11 chain, a present asked about. The
//! config checks (`display_feedback`, `display_x11`) are here, once; each
//! Vulkan hook and GL hook makes one call. The sources themselves:
//! our Wayland connections (`steadyhud_wayland::connection`: the hotkeys'
//! keyboard and the presentation feedback read them) and X11 Present
//! (`steadyhud_x11present`), each on the client record.

use crate::client::Client;
use crate::rings::Stream;
use std::ffi::c_void;
use std::sync::Arc;
use steadyhud_x11present::matcher::Chain;

/// The native window a surface (Vulkan) or window (GL) was made of.
#[derive(Clone, Copy, Debug)]
pub enum Native {
    /// A Wayland `wl_surface` (null when not known: then only the hotkeys
    /// follow it) on the game's `wl_display`.
    Wayland {
        display: *mut c_void,
        surface: *mut c_void,
    },
    /// An X window on a live Xlib display (`Display *`).
    Xlib { display: *mut c_void, window: u32 },
    /// An X window on an xcb connection (no xcb call gives a connection's
    /// display name back: ours goes to `$DISPLAY`, as an xcb app's
    /// usually does).
    Xcb { window: u32 },
}

impl Client {
    /// The game made surface `key` (owned by `owner`: its Vulkan instance,
    /// its EGL or X display) of `native`: every source that can follow it
    /// records it (the hotkeys always, presentation feedback under
    /// `display_feedback`, X11 Present under `display_x11`). Returns
    /// whether a display source follows it (its stream then has display
    /// columns).
    ///
    /// # Safety
    /// The pointers in `native` are the game's live objects, as the
    /// surface was just made of them (or is being presented to).
    pub unsafe fn surface_created(&'static self, owner: usize, key: u64, native: Native) -> bool {
        match native {
            // SAFETY: live display and wl_surface (caller's contract).
            Native::Wayland { display, surface } => unsafe {
                let feedback = self.config.display_feedback;
                self.wayland
                    .surface_created(owner, key, display, surface, feedback)
            },
            Native::Xlib { display, window } => {
                // SAFETY: the game's live Xlib display (caller's contract).
                let name = unsafe { steadyhud_x11present::ffi::xlib_display_name(display) };
                self.x11_window(owner, key, name.as_deref(), window)
            }
            Native::Xcb { window } => self.x11_window(owner, key, None, window),
        }
    }

    /// An X window of the game's: input timing records it always, X11
    /// Present under `display_x11`. Whether a display source follows it.
    fn x11_window(&self, owner: usize, key: u64, display: Option<&str>, window: u32) -> bool {
        self.x11inputs.surface_created(owner, key, display, window);
        if !self.config.display_x11 {
            return false;
        }
        self.x11present.surface_created(owner, key, display, window);
        self.x11present.knows(key)
    }

    /// Whether a display source follows surface `key`.
    pub fn follows(&self, key: u64) -> bool {
        self.wayland.knows(key) || self.x11present.knows(key)
    }

    /// Surface `key` is being destroyed (its display still live): every
    /// source forgets it, tearing down what it had bound through it.
    pub fn surface_destroyed(&self, key: u64) {
        // Our Wayland connection goes before the display's last surface:
        // the app may disconnect its wl_display right after.
        self.wayland.surface_destroyed(key);
        // Our own X connection: reading it and deselecting are safe
        // whatever the game's display is doing.
        self.x11present.surface_destroyed(&self.x11, key);
        self.x11inputs.surface_destroyed(&self.x11, key);
    }

    /// The owner of surfaces (a Vulkan instance, an X display) is being
    /// destroyed: every source forgets them, leaking (not touching) what
    /// it bound on a display that may be gone.
    pub fn owner_destroyed(&self, owner: usize) {
        self.wayland.owner_destroyed(owner);
        self.x11present.owner_destroyed(&self.x11, owner);
        self.x11inputs.owner_destroyed(&self.x11, owner);
    }

    /// The X11 Present chain a new stream of surface `key` records into,
    /// when X11 Present follows it: connected and selected now (`now`,
    /// off any present), or, `in_swap` (a swap hook: no I/O there), on
    /// the analysis thread's next tick.
    pub fn x11_chain(
        &self,
        key: u64,
        stream: &Arc<Stream>,
        now: u64,
        in_swap: bool,
    ) -> Option<Arc<Chain>> {
        if !stream.has_display() || !self.x11present.knows(key) {
            return None;
        }
        if !in_swap {
            return self.x11present.follow(&self.x11, key, stream.clone(), now);
        }
        let chain = Arc::new(Chain::new());
        self.x11present.adopt(key, chain.clone(), stream.clone());
        Some(chain)
    }

    /// Whether the present keyed `k` to surface `key` (its stream has a
    /// display ring) is asked about, before it goes down: an X11 window's
    /// is recorded by serial in its `chain` (its complete is read on the
    /// analysis thread), a Wayland surface's asks for feedback on the
    /// commit the present makes. A forked child asks nothing (its
    /// connections are its parent's): the fork flag, no system call.
    #[inline]
    pub fn present_asked(
        &'static self,
        key: u64,
        chain: Option<&Chain>,
        stream: &Arc<Stream>,
        k: u64,
    ) -> bool {
        match chain {
            Some(chain) => chain.record(k),
            None => {
                let now = steadyhud_sys::clock::now_ns();
                !self.forked() && self.wayland.on_present(key, now, Some((stream, k))).asked
            }
        }
    }

    /// Whether [`Client::input_pump`] has work at `now` (two relaxed loads
    /// and the fork flag): the present path runs it, under a guard, only then.
    #[inline]
    pub fn input_due(&self, now: u64) -> bool {
        !self.forked() && self.wayland.pump_due(now)
    }

    /// The input sources' part of a present to surface `key` at `now`:
    /// the Wayland connection's pump for the hotkeys' keyboard (at most
    /// every 20 ms; the display is surely live while the game presents to
    /// it). Returns whether it did setup work (bound the connection,
    /// compiled a keymap). Nothing in a forked child: the fork flag, no
    /// system call.
    #[inline]
    pub fn input_pump(&'static self, key: u64, now: u64) -> bool {
        !self.forked() && self.wayland.on_present::<Stream>(key, now, None).setup
    }

    /// The answers the game read since its last present to surface `key`
    /// reach their rows (call where its display is live, the frames
    /// ending: a swapchain being destroyed).
    pub fn display_pump(&self, key: u64) {
        self.wayland.pump(key);
        self.x11present
            .poll(&self.x11, steadyhud_sys::clock::now_ns());
    }
}
