//! The HUD toggle hotkey: an X11 key combination, followed through XInput
//! 2's raw key events on the root window (every press and release, whatever
//! window has the focus, without taking the key from the game), or polled
//! with `QueryKeymap` every 50 ms where XInput 2 is missing.
//!
//! Why events: each poll is a round trip to the X server, and the thread
//! that polls wakes for it 20 times a second; with events the X
//! connection's socket wakes the thread only when a key moves
//! ([`Hotkey::fd`]), which took the analysis thread's CPU share at 144 fps
//! from 0.66 % to [measured in docs/measurements.md].
//!
//! The hotkeys read the display's one connection of ours
//! (`steadyhud_x11::Displays`, shared with X11 Present and input timing):
//! each is a reader of its XInput 2 events. libX11 is opened only for
//! `XStringToKeysym`, which reads no display (a game without X11 simply
//! gets a [`HotkeyError`] and keeps the HUD on).
//!
//! Wayland has no global key state query: a game with a Wayland surface
//! gets [`super::wayland`] instead (chosen by [`super::watch::KeyWatch`]).
//!
//! `STEADYHUD_X11_LIB` names another library to load instead of
//! `libX11.so.6`; the fault tests set it to a name that does not exist to
//! see what a system without libX11 gets (an X11 game has libX11 loaded
//! already, so hiding the system library would not reach this code).

use std::ffi::{c_char, c_ulong, CString};
use steadyhud_sys::lock::Recover;
use steadyhud_x11::{keyboard, xinput, Displays, OpenError, Reader, Shared};

/// Why the hotkey cannot be watched.
#[derive(Debug, thiserror::Error)]
pub enum HotkeyError {
    #[error("hotkey: cannot load libX11 ({0})")]
    NoLibX11(#[source] libloading::Error),
    #[error("hotkey: cannot open X display {0:?}")]
    NoDisplay(String),
    #[error("hotkey: {0}")]
    NoXcb(String),
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

type XStringToKeysymFn = unsafe extern "C" fn(*const c_char) -> c_ulong;

/// XInput 2 raw key events: this reader's inbox and the keys down.
struct RawKeys {
    reader: Reader,
    opcode: u8,
    /// Keys down now, a bit per keycode (as `QueryKeymap` gives them).
    down: [u8; 32],
}

/// Watches one key combination; [`Hotkey::poll`] reports each new press once.
pub struct Hotkey {
    conn: Shared,
    displays: &'static Displays,
    keycodes: Vec<u8>,
    was_down: bool,
    /// Raw key events, when XInput 2 is there (else `QueryKeymap` polls).
    raw: Option<RawKeys>,
}

impl Hotkey {
    /// Parses `combo` (X11 keysym names joined by `+`, e.g. `Shift_R+F12`) and
    /// reads it on the X display named by `$DISPLAY`.
    pub fn new(combo: &str, displays: &'static Displays) -> Result<Hotkey, HotkeyError> {
        let display = std::env::var("DISPLAY").unwrap_or_default();
        Hotkey::on_display(combo, displays, &display)
    }

    /// Like [`Hotkey::new`] on the X display `display_name` (e.g. `:1`).
    pub fn on_display(
        combo: &str,
        displays: &'static Displays,
        display_name: &str,
    ) -> Result<Hotkey, HotkeyError> {
        Hotkey::on_display_with(combo, displays, display_name, true)
    }

    /// Like [`Hotkey::on_display`]; `events`: try XInput 2 raw key events
    /// (else, and where they are missing, `QueryKeymap` polls).
    pub fn on_display_with(
        combo: &str,
        displays: &'static Displays,
        display_name: &str,
        events: bool,
    ) -> Result<Hotkey, HotkeyError> {
        let names = parse_combo(combo)?;
        let keysyms = keysyms(combo, &names)?;
        if display_name.is_empty() {
            return Err(HotkeyError::NoDisplay("$DISPLAY unset".to_string()));
        }
        let conn = displays.conn(Some(display_name)).map_err(|e| match e {
            OpenError::NoDisplay(_) => HotkeyError::NoDisplay(display_name.to_string()),
            OpenError::Load(e) => HotkeyError::NoXcb(e),
        })?;
        let mut hotkey = Hotkey {
            conn,
            displays,
            keycodes: Vec::with_capacity(names.len()),
            was_down: false,
            raw: None,
        };
        let mut c = hotkey.conn.lock_or_recover();
        for (name, keysym) in names.iter().zip(keysyms) {
            let keycode = keyboard::keycode_of(&mut c, keysym)
                .ok_or_else(|| HotkeyError::NoKeycode { key: name.clone() })?;
            hotkey.keycodes.push(keycode);
        }
        if events {
            hotkey.raw = xinput::opcode(&mut c).and_then(|opcode| {
                let mask =
                    xinput::bit(xinput::RAW_KEY_PRESS) | xinput::bit(xinput::RAW_KEY_RELEASE);
                xinput::select_raw(&mut c, mask).ok()?;
                Some(RawKeys {
                    reader: c.listen(opcode),
                    opcode,
                    down: [0; 32],
                })
            });
        }
        // A combination held while the game starts does not count as a press.
        let keys = keyboard::keys_down(&mut c).unwrap_or([0; 32]);
        drop(c);
        if let Some(raw) = hotkey.raw.as_mut() {
            raw.down = keys;
        }
        hotkey.was_down = hotkey.combo_down(&keys);
        Ok(hotkey)
    }

    /// The X connection's socket while keys come as events: readable when
    /// a key moved. `None`: [`Hotkey::poll`] must be called every 50 ms.
    pub fn fd(&self) -> Option<std::ffi::c_int> {
        self.raw.as_ref().map(|_| self.conn.lock_or_recover().fd())
    }

    /// Whether key events wait already (read off the socket by another
    /// reader of the connection, so the socket no longer says so).
    pub fn waiting(&self) -> bool {
        self.raw
            .as_ref()
            .is_some_and(|r| self.conn.lock_or_recover().waiting(r.reader))
    }

    /// Whether keys come as XInput 2 events (else `QueryKeymap` polls).
    pub fn events(&self) -> bool {
        self.raw.is_some()
    }

    /// Waits until the X server has handled every request sent before
    /// (another client's key presses among them, as far as the server's
    /// order goes), so that the next [`Hotkey::poll`] sees their events.
    /// For tests; the layer never waits on the X server.
    pub fn sync(&mut self) {
        self.query(); // a round trip
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
        let keys = self.query();
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
        let (keycodes, was_down) = (&self.keycodes, &mut self.was_down);
        self.conn.lock_or_recover().take(raw.reader, |ev| {
            let Some(e) = xinput::RawEvent::decode(ev.bytes(), raw.opcode) else {
                return;
            };
            let press = match e.kind {
                xinput::RAW_KEY_PRESS => true,
                xinput::RAW_KEY_RELEASE => false,
                _ => return,
            };
            let Ok(code) = u8::try_from(e.detail) else {
                return;
            };
            let bit = 1u8 << (code % 8);
            if press {
                raw.down[usize::from(code / 8)] |= bit;
            } else {
                raw.down[usize::from(code / 8)] &= !bit;
            }
            let down = keycodes
                .iter()
                .all(|&kc| raw.down[usize::from(kc / 8)] & (1 << (kc % 8)) != 0);
            pressed |= down && !*was_down;
            *was_down = down;
        });
        pressed
    }

    /// The keys down now, from the X server (`QueryKeymap`).
    fn query(&mut self) -> [u8; 32] {
        keyboard::keys_down(&mut self.conn.lock_or_recover()).unwrap_or([0; 32])
    }

    fn combo_down(&self, keys: &[u8; 32]) -> bool {
        self.keycodes
            .iter()
            .all(|&kc| keys[usize::from(kc / 8)] & (1 << (kc % 8)) != 0)
    }
}

impl Drop for Hotkey {
    fn drop(&mut self) {
        let broke = {
            let mut c = self.conn.lock_or_recover();
            if let Some(raw) = &self.raw {
                c.leave(raw.reader);
            }
            c.broken()
        };
        self.displays.release(&self.conn, broke);
    }
}

/// The keysym of each key name of `combo` (libX11's `XStringToKeysym`,
/// which reads no display; the library is closed after).
fn keysyms(combo: &str, names: &[String]) -> Result<Vec<u32>, HotkeyError> {
    let lib_name = std::env::var_os(X11_LIB_ENV).unwrap_or_else(|| X11_LIB.into());
    // SAFETY: loading the system libX11 runs its (trivial) initialisers.
    let lib = unsafe { libloading::Library::new(&lib_name) }.map_err(HotkeyError::NoLibX11)?;
    // SAFETY: the type matches the Xlib prototype.
    let to_keysym = unsafe {
        *lib.get::<XStringToKeysymFn>(b"XStringToKeysym\0")
            .map_err(HotkeyError::NoLibX11)?
    };
    names
        .iter()
        .map(|name| {
            candidates(name)
                .into_iter()
                .filter_map(|c| CString::new(c).ok())
                // SAFETY: a NUL-terminated string.
                .map(|c| unsafe { to_keysym(c.as_ptr()) })
                .find(|&k| k != 0)
                .and_then(|k| u32::try_from(k).ok())
                .ok_or_else(|| HotkeyError::UnknownKey {
                    combo: combo.to_string(),
                    key: name.clone(),
                })
        })
        .collect()
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
