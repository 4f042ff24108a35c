//! The test programs' own Wayland window and their own reading of
//! `wp_presentation` feedback (issue 42): the independent reading the
//! layer's displayed-frame times are checked against. Shared by
//! `steadyhud-testapp` (Vulkan) and `steadyhud-gltest` (EGL), which
//! includes this file with `#[path]`.
//!
//! The client is Smithay's `wayland-client` on the system libwayland
//! (dlopen'd), not the layer's hand-written FFI. One connection, one
//! `wl_surface`: an xdg toplevel (`mapped`), or a surface with no role that
//! the compositor never shows (`--wayland-unmapped`). Vulkan and EGL get
//! the raw `wl_display` and `wl_surface` pointers; their WSI attaches and
//! commits on that surface inside the present or swap.
//!
//! Right before each present the program asks for a
//! `wp_presentation.feedback` on the surface ([`WlWindow::request_feedback`]):
//! the request sits in the connection's buffer ahead of the commit the
//! present makes, so it belongs to that commit. The answers go to the
//! program's own event queue; [`WlWindow::pump`] reads the socket without
//! blocking and dispatches them every frame, and [`WlWindow::finish`] waits
//! up to a deadline for the outstanding ones at exit.
//!
//! # The feedback file (`--feedback-out FILE`)
//!
//! CSV, this header, one row per present call in call order:
//!
//! ```text
//! present,present_ns,feedback,displayed_ns,raw_ns,refresh_ns,msc,flags,clock_id
//! ```
//!
//! - `present`: 0-based index of the present call (swap) in the process;
//! - `present_ns`: CLOCK_MONOTONIC ns read right before the present call;
//! - `feedback`: `presented`, `discarded`, or `none` (never answered);
//! - `displayed_ns`: the presented time on CLOCK_MONOTONIC: as received when
//!   the presentation clock is CLOCK_MONOTONIC (1); plus MONOTONIC − RAW,
//!   sampled once at start, when it is CLOCK_MONOTONIC_RAW (4, Weston's
//!   headless backend); empty for any other clock, and unless presented;
//! - `raw_ns`: `(tv_sec_hi << 32 | tv_sec_lo) * 1e9 + tv_nsec` as received;
//! - `refresh_ns`, `msc` (`seq_hi << 32 | seq_lo`), `flags`: as received;
//!   these three and `raw_ns` are empty unless presented;
//! - `clock_id`: from `wp_presentation.clock_id` (empty if none came).
//!
//! With `--input-out` the program also reads its own `wl_seat`'s keyboard
//! and pointer ([`WlWindow::read_input`]): each key or button press, with
//! the event's own millisecond stamp, is kept until the frame start that
//! takes it ([`WlWindow::take_presses`], the file's format is the X11
//! one's, `steadyhud-testapp --help`).

use std::ffi::c_void;
use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use wayland_client::globals::GlobalList;
use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::{
    wl_compositor, wl_keyboard, wl_pointer, wl_registry, wl_seat, wl_surface,
};
use wayland_client::{delegate_noop, Connection, Dispatch, EventQueue, Proxy, QueueHandle};
use wayland_protocols::wp::presentation_time::client::{wp_presentation, wp_presentation_feedback};
use wayland_protocols::xdg::shell::client::{xdg_surface, xdg_toplevel, xdg_wm_base};

/// The file's header line (module docs).
pub const FEEDBACK_HEADER: &str =
    "present,present_ns,feedback,displayed_ns,raw_ns,refresh_ns,msc,flags,clock_id";

const CLOCK_MONOTONIC: u32 = libc::CLOCK_MONOTONIC as u32;
const CLOCK_MONOTONIC_RAW: u32 = libc::CLOCK_MONOTONIC_RAW as u32;

/// What the compositor said about one present's commit.
#[derive(Clone, Copy, Debug)]
pub enum Answer {
    None,
    Discarded,
    Presented {
        raw_ns: u64,
        refresh_ns: u32,
        msc: u64,
        flags: u32,
    },
}

/// One present call.
#[derive(Clone, Copy, Debug)]
struct Row {
    present_ns: u64,
    answer: Answer,
}

/// Presented, discarded and never answered, of every present so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub presented: u64,
    pub discarded: u64,
    pub none: u64,
}

/// What the event handlers write.
#[derive(Default)]
struct State {
    configured: bool,
    clock_id: Option<u32>,
    rows: Vec<Row>,
    /// Key and button presses not taken yet: (`key` or `button`, the
    /// event's ms).
    presses: Vec<(&'static str, u64)>,
    keyboard: Option<wl_keyboard::WlKeyboard>,
    pointer: Option<wl_pointer::WlPointer>,
}

/// The program's Wayland window (module docs).
pub struct WlWindow {
    conn: Connection,
    queue: EventQueue<State>,
    qh: QueueHandle<State>,
    state: State,
    surface: wl_surface::WlSurface,
    role: Option<(xdg_surface::XdgSurface, xdg_toplevel::XdgToplevel)>,
    presentation: Option<wp_presentation::WpPresentation>,
    /// CLOCK_MONOTONIC − CLOCK_MONOTONIC_RAW at start, ns.
    raw_offset_ns: i64,
    globals: GlobalList,
    seat: Option<wl_seat::WlSeat>,
}

// `time_t` and `c_long` are i32 in the i686 build, i64 here.
#[allow(clippy::useless_conversion)]
pub fn clock_ns(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; both clocks exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    i64::from(ts.tv_sec) * 1_000_000_000 + i64::from(ts.tv_nsec)
}

/// MONOTONIC − RAW in ns: of three back-to-back (MONOTONIC, RAW,
/// MONOTONIC) triples the one with the smallest gap, RAW against the
/// middle of its two MONOTONIC reads.
pub fn monotonic_minus_raw_ns() -> i64 {
    (0..3)
        .map(|_| {
            let a = clock_ns(libc::CLOCK_MONOTONIC);
            let r = clock_ns(libc::CLOCK_MONOTONIC_RAW);
            let b = clock_ns(libc::CLOCK_MONOTONIC);
            (b - a, a + (b - a) / 2 - r)
        })
        .min_by_key(|&(gap, _)| gap)
        .map_or(0, |(_, offset)| offset)
}

impl WlWindow {
    /// Connects to `$WAYLAND_DISPLAY`, binds the globals and makes the
    /// surface: with `mapped`, an xdg toplevel titled `title`, committed
    /// without a buffer and its first `configure` acked (what a window
    /// must do before its first buffer); without, a bare surface with no
    /// role. `feedback`: bind `wp_presentation` (an error if the
    /// compositor has none).
    pub fn open(mapped: bool, title: &str, feedback: bool) -> Result<WlWindow, String> {
        let conn = Connection::connect_to_env().map_err(|e| {
            format!(
                "cannot connect to the Wayland compositor (WAYLAND_DISPLAY={:?}): {e}",
                std::env::var("WAYLAND_DISPLAY").unwrap_or_default()
            )
        })?;
        let (globals, queue) =
            registry_queue_init::<State>(&conn).map_err(|e| format!("Wayland registry: {e}"))?;
        let qh = queue.handle();
        let compositor: wl_compositor::WlCompositor = globals
            .bind(&qh, 1..=4, ())
            .map_err(|e| format!("wl_compositor: {e}"))?;
        let presentation = if feedback {
            let p: wp_presentation::WpPresentation = globals
                .bind(&qh, 1..=1, ())
                .map_err(|e| format!("wp_presentation (needed by --feedback-out): {e}"))?;
            Some(p)
        } else {
            None
        };
        let surface = compositor.create_surface(&qh, ());
        let role = if mapped {
            let wm: xdg_wm_base::XdgWmBase = globals
                .bind(&qh, 1..=1, ())
                .map_err(|e| format!("xdg_wm_base (xdg-shell): {e}"))?;
            let xdg = wm.get_xdg_surface(&surface, &qh, ());
            let top = xdg.get_toplevel(&qh, ());
            top.set_title(title.to_string());
            top.set_app_id(title.to_string());
            Some((xdg, top))
        } else {
            None
        };
        surface.commit();
        let mut me = WlWindow {
            conn,
            queue,
            qh,
            state: State::default(),
            surface,
            role,
            presentation,
            raw_offset_ns: monotonic_minus_raw_ns(),
            globals,
            seat: None,
        };
        // The clock_id comes right after the bind; the configure after the
        // first commit.
        me.queue
            .roundtrip(&mut me.state)
            .map_err(|e| format!("Wayland roundtrip: {e}"))?;
        if mapped {
            let deadline = Instant::now() + Duration::from_secs(5);
            while !me.state.configured {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err("no xdg_surface.configure within 5 s".into());
                }
                me.pump(left)?;
            }
        }
        Ok(me)
    }

    /// The `wl_display` (for `VkWaylandSurfaceCreateInfoKHR` or
    /// `eglGetPlatformDisplay`).
    pub fn display_ptr(&self) -> *mut c_void {
        self.conn.backend().display_ptr().cast()
    }

    /// The `wl_surface` (a `wl_proxy`).
    pub fn surface_ptr(&self) -> *mut c_void {
        self.surface.id().as_ptr().cast()
    }

    /// Asks for presentation feedback on the surface's next commit (call
    /// right before the present), and starts that present's row; no-op
    /// without `feedback` at [`WlWindow::open`].
    pub fn request_feedback(&mut self) {
        if let Some(p) = &self.presentation {
            let index = self.state.rows.len();
            p.feedback(&self.surface, &self.qh, index);
            self.state.rows.push(Row {
                present_ns: 0,
                answer: Answer::None,
            });
        }
    }

    /// Sets the CLOCK_MONOTONIC ns read right before the present the last
    /// [`WlWindow::request_feedback`] was for.
    pub fn set_present_ns(&mut self, ns: u64) {
        if self.presentation.is_some() {
            if let Some(r) = self.state.rows.last_mut() {
                r.present_ns = ns;
            }
        }
    }

    /// Reads the seat's keyboard and pointer from now on (`--input-out`).
    pub fn read_input(&mut self) -> Result<(), String> {
        let seat: wl_seat::WlSeat = self
            .globals
            .bind(&self.qh, 1..=5, ())
            .map_err(|e| format!("wl_seat (needed by --input-out): {e}"))?;
        self.seat = Some(seat);
        self.queue
            .roundtrip(&mut self.state)
            .map_err(|e| format!("Wayland roundtrip: {e}"))?;
        Ok(())
    }

    /// The presses dispatched since the last take, oldest first.
    pub fn take_presses(&mut self) -> Vec<(&'static str, u64)> {
        std::mem::take(&mut self.state.presses)
    }

    /// Flushes, reads what the socket has (waiting up to `wait`), and
    /// dispatches the program's queue. `Duration::ZERO`: never blocks.
    pub fn pump(&mut self, wait: Duration) -> Result<(), String> {
        let dispatch_err = |e| format!("Wayland dispatch: {e}");
        self.queue
            .dispatch_pending(&mut self.state)
            .map_err(dispatch_err)?;
        match self.conn.flush() {
            Ok(()) => {}
            Err(wayland_client::backend::WaylandError::Io(e))
                if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(format!("Wayland flush: {e}")),
        }
        if let Some(guard) = self.queue.prepare_read() {
            let mut pfd = libc::pollfd {
                fd: guard.connection_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = wait.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd, for the connection's open socket.
            let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
            if ready > 0 {
                match guard.read() {
                    Ok(_) => {}
                    Err(wayland_client::backend::WaylandError::Io(e))
                        if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(format!("Wayland read: {e}")),
                }
            }
            // Otherwise the guard drops: the read is cancelled.
        }
        self.queue
            .dispatch_pending(&mut self.state)
            .map_err(dispatch_err)?;
        Ok(())
    }

    /// Keeps reading for up to `limit` until every feedback is answered;
    /// the counts then.
    pub fn finish(&mut self, limit: Duration) -> Result<Counts, String> {
        let deadline = Instant::now() + limit;
        loop {
            self.pump(Duration::ZERO)?;
            let left = deadline.saturating_duration_since(Instant::now());
            if self.counts().none == 0 || left.is_zero() {
                return Ok(self.counts());
            }
            self.pump(left.min(Duration::from_millis(50)))?;
        }
    }

    /// The rows' answers so far.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for r in &self.state.rows {
            match r.answer {
                Answer::None => c.none += 1,
                Answer::Discarded => c.discarded += 1,
                Answer::Presented { .. } => c.presented += 1,
            }
        }
        c
    }

    /// The file's text (module docs).
    pub fn feedback_csv(&self) -> String {
        let clock = self.state.clock_id;
        let mut out = String::with_capacity(64 * (self.state.rows.len() + 1));
        out.push_str(FEEDBACK_HEADER);
        out.push('\n');
        let clock_text = clock.map_or(String::new(), |c| c.to_string());
        for (i, r) in self.state.rows.iter().enumerate() {
            let (kind, rest) = match r.answer {
                Answer::None => ("none", ",,,,".to_string()),
                Answer::Discarded => ("discarded", ",,,,".to_string()),
                Answer::Presented {
                    raw_ns,
                    refresh_ns,
                    msc,
                    flags,
                } => {
                    let displayed = match clock {
                        Some(CLOCK_MONOTONIC) => raw_ns.to_string(),
                        Some(CLOCK_MONOTONIC_RAW) => {
                            (raw_ns as i64 + self.raw_offset_ns).to_string()
                        }
                        _ => String::new(),
                    };
                    (
                        "presented",
                        format!("{displayed},{raw_ns},{refresh_ns},{msc},{flags}"),
                    )
                }
            };
            out.push_str(&format!(
                "{i},{},{kind},{rest},{clock_text}\n",
                r.present_ns
            ));
        }
        out
    }

    /// Writes [`WlWindow::feedback_csv`] to `path`.
    pub fn write_feedback(&self, path: &Path) -> Result<(), String> {
        let mut f = std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        f.write_all(self.feedback_csv().as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

impl Drop for WlWindow {
    fn drop(&mut self) {
        if let Some(k) = self.state.keyboard.take() {
            k.release();
        }
        if let Some(p) = self.state.pointer.take() {
            p.release();
        }
        if let Some(s) = self.seat.take() {
            s.release();
        }
        // The WSI's objects on the surface are gone by now (callers destroy
        // the Vulkan surface or EGL window first).
        if let Some((xdg, top)) = self.role.take() {
            top.destroy();
            xdg.destroy();
        }
        self.surface.destroy();
        let _ = self.conn.flush();
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

delegate_noop!(State: ignore wl_compositor::WlCompositor);
delegate_noop!(State: ignore wl_surface::WlSurface);

impl Dispatch<xdg_wm_base::XdgWmBase, ()> for State {
    fn event(
        _: &mut Self,
        wm: &xdg_wm_base::XdgWmBase,
        event: xdg_wm_base::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let xdg_wm_base::Event::Ping { serial } = event {
            wm.pong(serial);
        }
    }
}

impl Dispatch<xdg_surface::XdgSurface, ()> for State {
    fn event(
        state: &mut Self,
        xdg: &xdg_surface::XdgSurface,
        event: xdg_surface::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let xdg_surface::Event::Configure { serial } = event {
            xdg.ack_configure(serial);
            state.configured = true;
        }
    }
}

impl Dispatch<xdg_toplevel::XdgToplevel, ()> for State {
    fn event(
        state: &mut Self,
        _: &xdg_toplevel::XdgToplevel,
        event: xdg_toplevel::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        // The size the compositor suggests is not followed: the program
        // picks its own (--size, --resize-at); it ends after its frames.
        let _ = (state, event);
    }
}

impl Dispatch<wp_presentation::WpPresentation, ()> for State {
    fn event(
        state: &mut Self,
        _: &wp_presentation::WpPresentation,
        event: wp_presentation::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wp_presentation::Event::ClockId { clk_id } = event {
            state.clock_id = Some(clk_id);
        }
    }
}

impl Dispatch<wp_presentation_feedback::WpPresentationFeedback, usize> for State {
    fn event(
        state: &mut Self,
        _: &wp_presentation_feedback::WpPresentationFeedback,
        event: wp_presentation_feedback::Event,
        index: &usize,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let answer = match event {
            wp_presentation_feedback::Event::Presented {
                tv_sec_hi,
                tv_sec_lo,
                tv_nsec,
                refresh,
                seq_hi,
                seq_lo,
                flags,
            } => {
                let sec = (u64::from(tv_sec_hi) << 32) | u64::from(tv_sec_lo);
                Answer::Presented {
                    raw_ns: sec * 1_000_000_000 + u64::from(tv_nsec),
                    refresh_ns: refresh,
                    msc: (u64::from(seq_hi) << 32) | u64::from(seq_lo),
                    flags: u32::from(flags),
                }
            }
            wp_presentation_feedback::Event::Discarded => Answer::Discarded,
            // sync_output: only for outputs the client bound (none).
            _ => return,
        };
        if let Some(r) = state.rows.get_mut(*index) {
            r.answer = answer;
        }
    }
}

impl Dispatch<wl_seat::WlSeat, ()> for State {
    fn event(
        state: &mut Self,
        seat: &wl_seat::WlSeat,
        event: wl_seat::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        if let wl_seat::Event::Capabilities {
            capabilities: wayland_client::WEnum::Value(caps),
        } = event
        {
            if caps.contains(wl_seat::Capability::Keyboard) && state.keyboard.is_none() {
                state.keyboard = Some(seat.get_keyboard(qh, ()));
            }
            if caps.contains(wl_seat::Capability::Pointer) && state.pointer.is_none() {
                state.pointer = Some(seat.get_pointer(qh, ()));
            }
        }
    }
}

impl Dispatch<wl_keyboard::WlKeyboard, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_keyboard::WlKeyboard,
        event: wl_keyboard::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            wl_keyboard::Event::Key {
                time,
                state: wayland_client::WEnum::Value(wl_keyboard::KeyState::Pressed),
                ..
            } => state.presses.push(("key", u64::from(time))),
            // The keymap's fd is ours to close (dropping it does).
            wl_keyboard::Event::Keymap { fd, .. } => drop(fd),
            _ => {}
        }
    }
}

impl Dispatch<wl_pointer::WlPointer, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_pointer::WlPointer,
        event: wl_pointer::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wl_pointer::Event::Button {
            time,
            state: wayland_client::WEnum::Value(wl_pointer::ButtonState::Pressed),
            ..
        } = event
        {
            state.presses.push(("button", u64::from(time)));
        }
    }
}
