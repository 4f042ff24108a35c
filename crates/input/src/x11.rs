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
//! without X11 simply gets a [`HotkeyError`] and keeps the HUD on). The
//! keys are read on our own connection to the display, separate from the
//! game's and shared with the display's other readers (X11 Present):
//! `steadyhud_x11::conn`, whose pump reads every event and files the
//! XInput 2 ones for us. Every call on it is made under its lock.
//!
//! Wayland has no global key state query: a game with a Wayland surface
//! gets [`super::wayland`] instead (chosen by [`super::watch::KeyWatch`]).
//!
//! `STEADYHUD_X11_LIB` names another library to load instead of
//! `libX11.so.6` ([`X11_LIB_ENV`]).

use std::ffi::{c_char, c_int, c_ulong, c_void, CString};
use std::sync::{Arc, Mutex};
use steadyhud_sys::lock::Recover;
use steadyhud_x11::conn::{Displays, OpenError, Reader, Shared, XConn};
pub use steadyhud_x11::ffi::X11_LIB_ENV;
use steadyhud_x11::ffi::{Libs, LibsError};

/// Why the hotkey cannot be watched.
#[derive(Debug, thiserror::Error)]
pub enum HotkeyError {
    #[error("hotkey: cannot load libX11 ({0})")]
    NoLibX11(#[source] libloading::Error),
    #[error("hotkey: {0}")]
    Libs(String),
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

impl From<OpenError> for HotkeyError {
    fn from(e: OpenError) -> HotkeyError {
        match e {
            OpenError::Libs(why) => HotkeyError::Libs(why),
            OpenError::NoDisplay(name) => HotkeyError::NoDisplay(name),
        }
    }
}

type Display = c_void;
type KeySym = c_ulong;
type XStringToKeysymFn = unsafe extern "C" fn(*const c_char) -> KeySym;
type XKeysymToKeycodeFn = unsafe extern "C" fn(*mut Display, KeySym) -> u8;
type XQueryKeymapFn = unsafe extern "C" fn(*mut Display, *mut c_char) -> c_int;
type Window = c_ulong;

/// The name of libXi, the XInput 2 client library.
const XI_LIB: &str = "libXi.so.6";
/// `XI_RawKeyPress`, `XI_RawKeyRelease`.
const XI_RAW_KEY_PRESS: c_int = 13;
const XI_RAW_KEY_RELEASE: c_int = 14;
/// `XIAllDevices`: raw events of every device (the master keyboard and
/// its slaves, XTEST's among them; a key seen twice changes nothing).
const XI_ALL_DEVICES: c_int = 0;

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
type XFlushFn = unsafe extern "C" fn(*mut Display) -> c_int;
type XIQueryVersionFn = unsafe extern "C" fn(*mut Display, *mut c_int, *mut c_int) -> c_int;
type XISelectEventsFn =
    unsafe extern "C" fn(*mut Display, Window, *mut XIEventMask, c_int) -> c_int;

/// XInput 2 raw key events on the root window: the keys down, kept from
/// the events.
struct RawKeys {
    /// Our place in the connection's inbox (XInput 2's events).
    reader: Reader,
    fd: c_int,
    /// Keys down now, a bit per keycode (as `XQueryKeymap` gives them).
    down: [u8; 32],
    // Keeps libXi's functions valid while the connection may use them.
    _xi: libloading::Library,
}

/// Watches one key combination; [`Hotkey::poll`] reports each new press once.
pub struct Hotkey {
    /// Our connection to the display, shared with its other readers.
    conn: Shared,
    /// The record the connection is given back to when the hotkey goes
    /// (`None`: a connection of its own).
    displays: Option<&'static Displays>,
    query_keymap: XQueryKeymapFn,
    keycodes: Vec<u8>,
    was_down: bool,
    /// Raw key events, when XInput 2 is there (else `XQueryKeymap` polls).
    raw: Option<RawKeys>,
}

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

    /// Like [`Hotkey::on_display`], on a connection of its own; `events`:
    /// try XInput 2 raw key events (else, and where they are missing,
    /// `XQueryKeymap` polls).
    pub fn on_display_with(
        combo: &str,
        display_name: &str,
        events: bool,
    ) -> Result<Hotkey, HotkeyError> {
        let names = parse_combo(combo)?;
        let libs = Libs::load().map_err(|e| match e {
            LibsError::X11(e) => HotkeyError::NoLibX11(e),
            other => HotkeyError::Libs(other.to_string()),
        })?;
        // Leaked: the connection points at them (a test's few hotkeys).
        let libs: &'static Libs = Box::leak(Box::new(libs));
        let conn = Arc::new(Mutex::new(XConn::open(libs, display_name)?));
        Hotkey::on_conn(combo, names, conn, None, events)
    }

    /// Watches `combo` on the process's connection to `$DISPLAY` (from
    /// `displays`, shared with the display's other readers), with XInput 2
    /// raw key events where the server has them.
    pub fn shared(combo: &str, displays: &'static Displays) -> Result<Hotkey, HotkeyError> {
        let names = parse_combo(combo)?;
        let conn = displays.conn(None)?;
        Hotkey::on_conn(combo, names, conn, Some(displays), true)
    }

    fn on_conn(
        combo: &str,
        names: Vec<String>,
        conn: Shared,
        displays: Option<&'static Displays>,
        events: bool,
    ) -> Result<Hotkey, HotkeyError> {
        let (libs, display) = {
            let c = conn.lock_or_recover();
            (c.libs(), c.display())
        };
        let x11 = &libs.x11;
        let no_lib = |e| HotkeyError::Libs(format!("libX11: {e}"));
        // SAFETY: the types match the Xlib prototypes.
        let (to_keysym, to_keycode, query) = unsafe {
            (
                *x11.get::<XStringToKeysymFn>(b"XStringToKeysym\0")
                    .map_err(no_lib)?,
                *x11.get::<XKeysymToKeycodeFn>(b"XKeysymToKeycode\0")
                    .map_err(no_lib)?,
                *x11.get::<XQueryKeymapFn>(b"XQueryKeymap\0")
                    .map_err(no_lib)?,
            )
        };
        let mut hotkey = Hotkey {
            conn,
            displays,
            query_keymap: query,
            keycodes: Vec::with_capacity(names.len()),
            was_down: false,
            raw: None,
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
            // SAFETY: the display is open; called under its lock.
            let keycode = {
                let _c = hotkey.conn.lock_or_recover();
                unsafe { to_keycode(display, keysym) }
            };
            if keycode == 0 {
                return Err(HotkeyError::NoKeycode { key: name.clone() });
            }
            hotkey.keycodes.push(keycode);
        }
        if events {
            let mut c = hotkey.conn.lock_or_recover();
            // SAFETY: the display is open; we hold its lock.
            hotkey.raw = unsafe { RawKeys::select(&mut c) };
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
        let events = self.conn.lock_or_recover().take(raw.reader);
        let mut pressed = false;
        for ev in events {
            let Some((press, code)) = raw_key(&ev) else {
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
        pressed
    }

    /// The keys down now, from the X server (`XQueryKeymap`).
    fn query(&mut self, keys: &mut [u8; 32]) {
        let c = self.conn.lock_or_recover();
        // SAFETY: the display is open and we hold its lock; XQueryKeymap
        // writes exactly 32 bytes.
        unsafe { (self.query_keymap)(c.display(), keys.as_mut_ptr().cast()) };
    }

    fn combo_down(&self, keys: &[u8; 32]) -> bool {
        self.keycodes
            .iter()
            .all(|&kc| keys[usize::from(kc / 8)] & (1 << (kc % 8)) != 0)
    }
}

/// A raw key event (`xcb_input_raw_key_press_event_t` as libxcb returns
/// it): pressed or released, and the keycode (`detail`, at byte 16).
fn raw_key(ev: &[u8]) -> Option<(bool, u8)> {
    let evtype = u16::from_ne_bytes(ev.get(8..10)?.try_into().ok()?);
    let press = match c_int::from(evtype) {
        XI_RAW_KEY_PRESS => true,
        XI_RAW_KEY_RELEASE => false,
        _ => return None,
    };
    let detail = u32::from_ne_bytes(ev.get(16..20)?.try_into().ok()?);
    Some((press, u8::try_from(detail).ok()?))
}

impl RawKeys {
    /// Asks the X server for raw key events on the root window of the
    /// connection's display, filed for us by its pump; `None` (polling
    /// instead) without libXi or XInput 2.
    ///
    /// # Safety
    /// `c` is our live connection, its lock held.
    unsafe fn select(c: &mut XConn) -> Option<RawKeys> {
        let (x11, display) = (&c.libs().x11, c.display());
        // SAFETY: loading the system libXi runs its (trivial) initialisers.
        let xi = unsafe { libloading::Library::new(XI_LIB) }.ok()?;
        // SAFETY: the types match the Xlib and XInput 2 prototypes; the
        // display is open and locked (caller).
        unsafe {
            let query_ext = *x11.get::<XQueryExtensionFn>(b"XQueryExtension\0").ok()?;
            let root_of = *x11
                .get::<XDefaultRootWindowFn>(b"XDefaultRootWindow\0")
                .ok()?;
            let flush = *x11.get::<XFlushFn>(b"XFlush\0").ok()?;
            let version = *xi.get::<XIQueryVersionFn>(b"XIQueryVersion\0").ok()?;
            let select = *xi.get::<XISelectEventsFn>(b"XISelectEvents\0").ok()?;
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
            let reader = c.listen(u8::try_from(opcode).ok()?);
            Some(RawKeys {
                reader,
                fd: c.fd(),
                down: [0; 32],
                _xi: xi,
            })
        }
    }
}

impl Drop for Hotkey {
    fn drop(&mut self) {
        if let Some(d) = self.displays {
            d.release(&self.conn, false);
        }
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
