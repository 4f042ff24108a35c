//! The HUD toggle hotkey: an X11 key combination, followed through XInput
//! 2's raw key events on the root window (every press and release, whatever
//! window has the focus, without taking the key from the game), or polled
//! with `XQueryKeymap` every 50 ms where libXi or XInput 2 is missing.
//!
//! Why events: each poll is a round trip to the X server, and the thread
//! that polls wakes for it 20 times a second; with events the X
//! connection's socket wakes the thread only when a key moves
//! ([`Hotkey::fd`]), which took the analysis thread's CPU share at 144 fps
//! from 0.66 % to [measured in docs/measurements.md].
//!
//! libX11 (and libXi) are opened at run time with `libloading` (a game
//! without X11 simply gets a [`HotkeyError`] and keeps the HUD on).
//! The poller owns its own `Display` connection, separate from the game's, and
//! is only ever used from one thread (the layer's analysis thread), so Xlib's
//! lack of thread safety does not matter.
//!
//! Wayland has no global key state query: a game with a Wayland surface
//! gets [`super::wayland`] instead (chosen by [`super::watch::KeyWatch`]).
//!
//! `STEADYHUD_X11_LIB` names another library to load instead of
//! `libX11.so.6`; the fault tests set it to a name that does not exist to
//! see what a system without libX11 gets (an X11 game has libX11 loaded
//! already, so hiding the system library would not reach this code).

use std::ffi::{c_char, c_int, c_ulong, c_void, CString};

/// Why the hotkey cannot be watched.
#[derive(Debug, thiserror::Error)]
pub enum HotkeyError {
    #[error("hotkey: cannot load libX11 ({0})")]
    NoLibX11(#[source] libloading::Error),
    #[error("hotkey: cannot open X display {0:?}")]
    NoDisplay(String),
    #[error("hotkey: empty key combination {0:?}")]
    Empty(String),
    #[error(
        "hotkey: {key:?} in {combo:?} is not an X11 keysym name (e.g. Shift_R, F12, Control_L)"
    )]
    UnknownKey { combo: String, key: String },
    #[error("hotkey: key {key:?} has no keycode on this X server's keyboard map")]
    NoKeycode { key: String },
}

/// Environment variable overriding the Xlib library name (see module docs).
pub const X11_LIB_ENV: &str = "STEADYHUD_X11_LIB";
const X11_LIB: &str = "libX11.so.6";

type Display = c_void;
type KeySym = c_ulong;
type XOpenDisplayFn = unsafe extern "C" fn(*const c_char) -> *mut Display;
type XCloseDisplayFn = unsafe extern "C" fn(*mut Display) -> c_int;
type XStringToKeysymFn = unsafe extern "C" fn(*const c_char) -> KeySym;
type XKeysymToKeycodeFn = unsafe extern "C" fn(*mut Display, KeySym) -> u8;
type XQueryKeymapFn = unsafe extern "C" fn(*mut Display, *mut c_char) -> c_int;
type Window = c_ulong;

/// The name of libXi, the XInput 2 client library.
const XI_LIB: &str = "libXi.so.6";
/// `GenericEvent`: the type of every XInput 2 event.
const GENERIC_EVENT: c_int = 35;
/// `XI_RawKeyPress`, `XI_RawKeyRelease`.
const XI_RAW_KEY_PRESS: c_int = 13;
const XI_RAW_KEY_RELEASE: c_int = 14;
/// `XIAllDevices`: raw events of every device (the master keyboard and
/// its slaves, XTEST's among them; a key seen twice changes nothing).
const XI_ALL_DEVICES: c_int = 0;

/// `XEvent`: a union of 24 longs.
#[repr(C)]
struct XEvent {
    pad: [std::ffi::c_long; 24],
}

/// `XGenericEventCookie`.
#[repr(C)]
struct XGenericEventCookie {
    kind: c_int,
    serial: c_ulong,
    send_event: c_int,
    display: *mut Display,
    extension: c_int,
    evtype: c_int,
    cookie: u32,
    data: *mut c_void,
}

/// The head of `XIRawEvent`, up to the keycode (`detail`).
#[repr(C)]
struct XIRawEventHead {
    kind: c_int,
    serial: c_ulong,
    send_event: c_int,
    display: *mut Display,
    extension: c_int,
    evtype: c_int,
    time: c_ulong,
    deviceid: c_int,
    sourceid: c_int,
    detail: c_int,
}

/// `XIEventMask`.
#[repr(C)]
struct XIEventMask {
    deviceid: c_int,
    mask_len: c_int,
    mask: *mut u8,
}

type XQueryExtensionFn =
    unsafe extern "C" fn(*mut Display, *const c_char, *mut c_int, *mut c_int, *mut c_int) -> c_int;
type XDefaultRootWindowFn = unsafe extern "C" fn(*mut Display) -> Window;
type XConnectionNumberFn = unsafe extern "C" fn(*mut Display) -> c_int;
type XPendingFn = unsafe extern "C" fn(*mut Display) -> c_int;
type XNextEventFn = unsafe extern "C" fn(*mut Display, *mut XEvent) -> c_int;
type XGetEventDataFn = unsafe extern "C" fn(*mut Display, *mut XGenericEventCookie) -> c_int;
type XFreeEventDataFn = unsafe extern "C" fn(*mut Display, *mut XGenericEventCookie);
type XFlushFn = unsafe extern "C" fn(*mut Display) -> c_int;
type XIQueryVersionFn = unsafe extern "C" fn(*mut Display, *mut c_int, *mut c_int) -> c_int;
type XISelectEventsFn =
    unsafe extern "C" fn(*mut Display, Window, *mut XIEventMask, c_int) -> c_int;

/// XInput 2 raw key events on the root window: the keys down, kept from
/// the events.
struct RawKeys {
    opcode: c_int,
    fd: c_int,
    pending: XPendingFn,
    next_event: XNextEventFn,
    get_data: XGetEventDataFn,
    free_data: XFreeEventDataFn,
    /// Keys down now, a bit per keycode (as `XQueryKeymap` gives them).
    down: [u8; 32],
    // Keeps libXi's functions valid; dropped after the display closes.
    _xi: libloading::Library,
}
/// Watches one key combination; [`Hotkey::poll`] reports each new press once.
pub struct Hotkey {
    display: *mut Display,
    close_display: XCloseDisplayFn,
    query_keymap: XQueryKeymapFn,
    keycodes: Vec<u8>,
    was_down: bool,
    /// Raw key events, when XInput 2 is there (else `XQueryKeymap` polls).
    raw: Option<RawKeys>,
    // Keeps the function pointers above valid; dropped last.
    _lib: libloading::Library,
}

// SAFETY: the Display connection is private to this value and every use of
// it goes through `&mut self` (or `Drop`), so it is never touched from two
// threads at once; moving it to another thread is what Xlib allows for a
// connection used by one thread at a time.
unsafe impl Send for Hotkey {}

impl Hotkey {
    /// Parses `combo` (X11 keysym names joined by `+`, e.g. `Shift_R+F12`) and
    /// opens the X display named by `$DISPLAY`.
    pub fn new(combo: &str) -> Result<Hotkey, HotkeyError> {
        let display = std::env::var("DISPLAY").unwrap_or_default();
        Hotkey::on_display(combo, &display)
    }

    /// Like [`Hotkey::new`] on the X display `display_name` (e.g. `:1`).
    pub fn on_display(combo: &str, display_name: &str) -> Result<Hotkey, HotkeyError> {
        Hotkey::on_display_with(combo, display_name, true)
    }

    /// Like [`Hotkey::on_display`]; `events`: try XInput 2 raw key events
    /// (else, and where they are missing, `XQueryKeymap` polls).
    pub fn on_display_with(
        combo: &str,
        display_name: &str,
        events: bool,
    ) -> Result<Hotkey, HotkeyError> {
        let names = parse_combo(combo)?;
        // SAFETY: loading the system libX11 runs its (trivial) initialisers.
        let lib_name = std::env::var_os(X11_LIB_ENV).unwrap_or_else(|| X11_LIB.into());
        let lib = unsafe { libloading::Library::new(&lib_name) }.map_err(HotkeyError::NoLibX11)?;
        // SAFETY: the types match the Xlib prototypes.
        let (open, close, to_keysym, to_keycode, query) = unsafe {
            (
                *lib.get::<XOpenDisplayFn>(b"XOpenDisplay\0")
                    .map_err(HotkeyError::NoLibX11)?,
                *lib.get::<XCloseDisplayFn>(b"XCloseDisplay\0")
                    .map_err(HotkeyError::NoLibX11)?,
                *lib.get::<XStringToKeysymFn>(b"XStringToKeysym\0")
                    .map_err(HotkeyError::NoLibX11)?,
                *lib.get::<XKeysymToKeycodeFn>(b"XKeysymToKeycode\0")
                    .map_err(HotkeyError::NoLibX11)?,
                *lib.get::<XQueryKeymapFn>(b"XQueryKeymap\0")
                    .map_err(HotkeyError::NoLibX11)?,
            )
        };
        if display_name.is_empty() {
            return Err(HotkeyError::NoDisplay("$DISPLAY unset".to_string()));
        }
        let c_name = CString::new(display_name)
            .map_err(|_| HotkeyError::NoDisplay(display_name.to_string()))?;
        // SAFETY: a NUL-terminated display name.
        let display = unsafe { open(c_name.as_ptr()) };
        if display.is_null() {
            return Err(HotkeyError::NoDisplay(display_name.to_string()));
        }
        let mut hotkey = Hotkey {
            display,
            close_display: close,
            query_keymap: query,
            keycodes: Vec::with_capacity(names.len()),
            was_down: false,
            raw: None,
            _lib: lib,
        };
        for name in &names {
            let keysym = candidates(name)
                .into_iter()
                .filter_map(|c| CString::new(c).ok())
                // SAFETY: a NUL-terminated string.
                .map(|c| unsafe { to_keysym(c.as_ptr()) })
                .find(|&k| k != 0)
                .ok_or_else(|| HotkeyError::UnknownKey {
                    combo: combo.to_string(),
                    key: name.clone(),
                })?;
            // SAFETY: display is open.
            let keycode = unsafe { to_keycode(hotkey.display, keysym) };
            if keycode == 0 {
                return Err(HotkeyError::NoKeycode { key: name.clone() });
            }
            hotkey.keycodes.push(keycode);
        }
        if events {
            // SAFETY: the display is open and used by this thread only.
            hotkey.raw = unsafe { RawKeys::select(&hotkey._lib, display) };
        }
        // A combination held while the game starts does not count as a press.
        let mut keys = [0u8; 32];
        hotkey.query(&mut keys);
        if let Some(raw) = hotkey.raw.as_mut() {
            raw.down = keys;
        }
        hotkey.was_down = hotkey.combo_down(&keys);
        Ok(hotkey)
    }

    /// The X connection's socket while keys come as events: readable when
    /// a key moved. `None`: [`Hotkey::poll`] must be called every 50 ms.
    pub fn fd(&self) -> Option<c_int> {
        self.raw.as_ref().map(|r| r.fd)
    }

    /// Whether keys come as XInput 2 events (else `XQueryKeymap` polls).
    pub fn events(&self) -> bool {
        self.raw.is_some()
    }

    /// Waits until the X server has handled every request sent before
    /// (another client's key presses among them, as far as the server's
    /// order goes), so that the next [`Hotkey::poll`] sees their events.
    /// For tests; the layer never waits on the X server.
    pub fn sync(&mut self) {
        let mut keys = [0u8; 32];
        self.query(&mut keys); // a round trip
    }

    /// The X keycodes of the combination, in the order given.
    pub fn keycodes(&self) -> &[u8] {
        &self.keycodes
    }

    /// True once per press of the whole combination (rising edge): holding
    /// the keys, or polling again before they are released, returns false.
    /// With events, every event since the last call counts, so a press
    /// released before this call is still seen.
    pub fn poll(&mut self) -> bool {
        if self.raw.is_some() {
            return self.drain();
        }
        let mut keys = [0u8; 32];
        self.query(&mut keys);
        let down = self.combo_down(&keys);
        let pressed = down && !self.was_down;
        self.was_down = down;
        pressed
    }

    /// Reads every raw key event waiting; true when one of them completed
    /// the combination.
    fn drain(&mut self) -> bool {
        let Some(raw) = self.raw.as_mut() else {
            return false;
        };
        let mut pressed = false;
        // SAFETY: the display is open and used by this thread only;
        // XNextEvent is called only while an event is pending (it never
        // blocks), and each cookie's data is freed after use.
        unsafe {
            while (raw.pending)(self.display) > 0 {
                let mut ev = XEvent { pad: [0; 24] };
                (raw.next_event)(self.display, &mut ev);
                let cookie = &mut *(&mut ev as *mut XEvent as *mut XGenericEventCookie);
                if cookie.kind != GENERIC_EVENT || cookie.extension != raw.opcode {
                    continue;
                }
                if (raw.get_data)(self.display, cookie) == 0 {
                    continue;
                }
                let press = match cookie.evtype {
                    XI_RAW_KEY_PRESS => Some(true),
                    XI_RAW_KEY_RELEASE => Some(false),
                    _ => None,
                };
                let code = (*(cookie.data as *const XIRawEventHead)).detail;
                (raw.free_data)(self.display, cookie);
                let (Some(press), Ok(code)) = (press, u8::try_from(code)) else {
                    continue;
                };
                let bit = 1u8 << (code % 8);
                if press {
                    raw.down[usize::from(code / 8)] |= bit;
                } else {
                    raw.down[usize::from(code / 8)] &= !bit;
                }
                let down = self
                    .keycodes
                    .iter()
                    .all(|&kc| raw.down[usize::from(kc / 8)] & (1 << (kc % 8)) != 0);
                pressed |= down && !self.was_down;
                self.was_down = down;
            }
        }
        pressed
    }

    /// The keys down now, from the X server (`XQueryKeymap`).
    fn query(&mut self, keys: &mut [u8; 32]) {
        // SAFETY: display is open; XQueryKeymap writes exactly 32 bytes.
        unsafe { (self.query_keymap)(self.display, keys.as_mut_ptr().cast()) };
    }

    fn combo_down(&self, keys: &[u8; 32]) -> bool {
        self.keycodes
            .iter()
            .all(|&kc| keys[usize::from(kc / 8)] & (1 << (kc % 8)) != 0)
    }
}

impl RawKeys {
    /// Asks the X server for raw key events on the root window of
    /// `display`; `None` (polling instead) without libXi or XInput 2.
    ///
    /// # Safety
    /// `display` is open, and used by the calling thread only; `x11` is
    /// the libX11 it was opened with.
    unsafe fn select(x11: &libloading::Library, display: *mut Display) -> Option<RawKeys> {
        // SAFETY: loading the system libXi runs its (trivial) initialisers.
        let xi = unsafe { libloading::Library::new(XI_LIB) }.ok()?;
        // SAFETY: the types match the Xlib and XInput 2 prototypes.
        unsafe {
            let query_ext = *x11.get::<XQueryExtensionFn>(b"XQueryExtension\0").ok()?;
            let root_of = *x11
                .get::<XDefaultRootWindowFn>(b"XDefaultRootWindow\0")
                .ok()?;
            let conn = *x11
                .get::<XConnectionNumberFn>(b"XConnectionNumber\0")
                .ok()?;
            let flush = *x11.get::<XFlushFn>(b"XFlush\0").ok()?;
            let version = *xi.get::<XIQueryVersionFn>(b"XIQueryVersion\0").ok()?;
            let select = *xi.get::<XISelectEventsFn>(b"XISelectEvents\0").ok()?;
            let raw = RawKeys {
                opcode: 0,
                fd: conn(display),
                pending: *x11.get::<XPendingFn>(b"XPending\0").ok()?,
                next_event: *x11.get::<XNextEventFn>(b"XNextEvent\0").ok()?,
                get_data: *x11.get::<XGetEventDataFn>(b"XGetEventData\0").ok()?,
                free_data: *x11.get::<XFreeEventDataFn>(b"XFreeEventData\0").ok()?,
                down: [0; 32],
                _xi: xi,
            };
            let (mut opcode, mut event, mut error) = (0, 0, 0);
            let name = c"XInputExtension";
            if query_ext(display, name.as_ptr(), &mut opcode, &mut event, &mut error) == 0 {
                return None;
            }
            let (mut major, mut minor) = (2, 0);
            if version(display, &mut major, &mut minor) != 0 || major < 2 {
                return None;
            }
            // XISetMask for both raw key events (bits 13 and 14).
            let mut bits = [0u8; 4];
            for e in [XI_RAW_KEY_PRESS, XI_RAW_KEY_RELEASE] {
                bits[(e >> 3) as usize] |= 1 << (e & 7);
            }
            let mut mask = XIEventMask {
                deviceid: XI_ALL_DEVICES,
                mask_len: bits.len() as c_int,
                mask: bits.as_mut_ptr(),
            };
            if select(display, root_of(display), &mut mask, 1) != 0 {
                return None;
            }
            flush(display);
            Some(RawKeys { opcode, ..raw })
        }
    }
}

impl Drop for Hotkey {
    fn drop(&mut self) {
        // SAFETY: opened in `new`, closed exactly once.
        unsafe { (self.close_display)(self.display) };
    }
}

/// Splits `Shift_R+F12` into its key names.
fn parse_combo(combo: &str) -> Result<Vec<String>, HotkeyError> {
    let names: Vec<String> = combo
        .split('+')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        return Err(HotkeyError::Empty(combo.to_string()));
    }
    Ok(names)
}

/// Spellings to try for a key name: as written, then each `_`-separated
/// part capitalised (`control_l` → `Control_L`, `page_up` → `Page_Up`, `f12` →
/// `F12`), then all lower-case (`A` → `a`).
fn candidates(name: &str) -> Vec<String> {
    let titled: Vec<String> = name
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        })
        .collect();
    vec![name.to_string(), titled.join("_"), name.to_lowercase()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combo_splits_on_plus() {
        assert_eq!(parse_combo("Shift_R+F12").unwrap(), vec!["Shift_R", "F12"]);
        assert_eq!(
            parse_combo(" Control_L + a ").unwrap(),
            vec!["Control_L", "a"]
        );
        assert!(matches!(parse_combo(" + "), Err(HotkeyError::Empty(_))));
    }

    #[test]
    fn candidates_fix_case() {
        assert_eq!(candidates("shift_R")[1], "Shift_R");
        assert_eq!(candidates("control_l")[1], "Control_L");
        assert_eq!(candidates("f12")[1], "F12");
        assert_eq!(candidates("A")[2], "a");
    }
}
