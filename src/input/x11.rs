//! The HUD toggle hotkey: an X11 key combination polled with `XQueryKeymap`.
//!
//! libX11 is opened at run time with `libloading` (a game without X11 simply
//! gets a [`HotkeyError`] and keeps the HUD on).
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
    #[error("hotkey: cannot load libX11 ({0}); HUD toggle disabled")]
    NoLibX11(#[source] libloading::Error),
    #[error("hotkey: cannot open X display {0:?}; HUD toggle disabled")]
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

/// Watches one key combination; [`Hotkey::poll`] reports each new press once.
pub struct Hotkey {
    display: *mut Display,
    close_display: XCloseDisplayFn,
    query_keymap: XQueryKeymapFn,
    keycodes: Vec<u8>,
    was_down: bool,
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
        // A combination held while the game starts does not count as a press.
        hotkey.was_down = hotkey.all_down();
        Ok(hotkey)
    }

    /// The X keycodes of the combination, in the order given.
    pub fn keycodes(&self) -> &[u8] {
        &self.keycodes
    }

    /// True once per press of the whole combination (rising edge): holding
    /// the keys, or polling again before they are released, returns false.
    pub fn poll(&mut self) -> bool {
        let down = self.all_down();
        let pressed = down && !self.was_down;
        self.was_down = down;
        pressed
    }

    fn all_down(&mut self) -> bool {
        let mut keys = [0 as c_char; 32];
        // SAFETY: display is open; XQueryKeymap writes exactly 32 bytes.
        unsafe { (self.query_keymap)(self.display, keys.as_mut_ptr()) };
        self.keycodes
            .iter()
            .all(|&kc| (keys[usize::from(kc / 8)] as u8) & (1 << (kc % 8)) != 0)
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
