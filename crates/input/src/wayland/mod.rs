//! The HUD hotkeys on Wayland: a keyboard reader ([`Keyboard`]: the
//! keymap and the key tracker) on each of our connections to the app's
//! displays (`steadyhud_wayland::connection`, which binds the seat's
//! `wl_keyboard` on a queue of its own and never reads the socket).
//!
//! **Reading.** [`WaylandKeys::watch`] checks a combination's names
//! against libxkbcommon (loaded then) and has every connection, now and
//! later, read its keyboard with a [`Keyboard`]. The keymap comes with
//! `wl_keyboard.keymap` (the connection maps the fd; we compile the text
//! with libxkbcommon); combination names are X11 keysym names, resolved
//! to every keycode that produces them (`xkb_keysym_from_name`, then
//! `xkb_keymap_key_get_syms_by_level` over all keys, layouts and levels).
//! `enter`/`leave`/`key` feed the [`tracker`], which finds rising edges
//! per event. The connection's pump runs on the app's present (the one
//! moment its display is known live); the analysis thread's
//! [`Watch::poll`] only reads the result. Why we never read the socket,
//! and how the connection lives and dies: the connection's docs.
//!
//! **State.** No global: the libraries and the combinations are one
//! [`WaylandKeys`] record, owned by the process's client record beside
//! its connections, and handed down. A forked child watches nothing (its
//! connections are its parent's).

#![deny(unsafe_op_in_unsafe_fn)]

pub mod tracker;
pub mod xkb;

use std::any::Any;
use std::sync::{Mutex, OnceLock};
use steadyhud_sys::guard;
use steadyhud_sys::lock::Recover;
use steadyhud_wayland::connection::{Connections, Keys};
use tracker::Tracker;
use xkb::{Keymap, Xkb};

/// Why a combination cannot be watched on Wayland.
#[derive(Debug, thiserror::Error)]
pub enum WaylandKeyError {
    #[error("hotkey (Wayland): {0}")]
    Load(String),
    #[error("hotkey: empty key combination {0:?}")]
    Empty(String),
    #[error(
        "hotkey: {key:?} in {combo:?} is not an X11 keysym name (e.g. Shift_R, F12, Control_L)"
    )]
    UnknownKey { combo: String, key: String },
}

/// Everything the Wayland hotkeys keep for the process, in one record:
/// libxkbcommon and the watched combinations (the keyboards themselves
/// are read on the connections). Methods that start reading take
/// `&'static self`: the readers they make live as long as a connection.
pub struct WaylandKeys {
    /// libxkbcommon, loaded by the first [`WaylandKeys::watch`].
    xkb: OnceLock<Result<Xkb, String>>,
    /// Names of every watched combination, by id (= tracker id).
    combos: Mutex<Vec<Vec<String>>>,
}

impl Default for WaylandKeys {
    fn default() -> WaylandKeys {
        WaylandKeys::new()
    }
}

impl WaylandKeys {
    /// Nothing loaded, nothing watched.
    pub const fn new() -> WaylandKeys {
        WaylandKeys {
            xkb: OnceLock::new(),
            combos: Mutex::new(Vec::new()),
        }
    }

    /// Loads libxkbcommon (first call) or says why it cannot be.
    fn xkb(&self) -> Result<&Xkb, WaylandKeyError> {
        self.xkb
            .get_or_init(|| Xkb::load().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| WaylandKeyError::Load(e.clone()))
    }

    /// A keyboard reader for one connection, watching every combination.
    fn keyboard(&'static self) -> Option<Keyboard> {
        let xkb = self.xkb.get()?.as_ref().ok()?;
        let mut kb = Keyboard {
            xkb,
            keymap: None,
            tracker: Tracker::default(),
            notes: Vec::new(),
        };
        kb.sync(&self.combos.lock_or_recover());
        Some(kb)
    }

    /// Watches `combo` on the app's Wayland displays (`conns`): checks its
    /// names against libxkbcommon (loading it, first time) and registers
    /// it; every connection reads its keyboard from now on.
    pub fn watch(
        &'static self,
        conns: &'static Connections,
        combo: &str,
    ) -> Result<Watch, WaylandKeyError> {
        let names = parse_combo(combo);
        if names.is_empty() {
            return Err(WaylandKeyError::Empty(combo.to_string()));
        }
        let xkb = self.xkb()?;
        if let Some(bad) = names.iter().find(|n| xkb.keysym(n).is_none()) {
            return Err(WaylandKeyError::UnknownKey {
                combo: combo.to_string(),
                key: bad.clone(),
            });
        }
        let (id, combos) = {
            let mut combos = self.combos.lock_or_recover();
            combos.push(names);
            (combos.len() - 1, combos.clone())
        };
        let make = Box::new(move || -> Box<dyn Keys> {
            match self.keyboard() {
                Some(kb) => Box::new(kb),
                None => Box::new(NoKeys),
            }
        });
        if !conns.read_keys(make) {
            return Err(WaylandKeyError::Load(
                "a forked child does not watch its parent's keyboard".into(),
            ));
        }
        // Readers made before this combination watch it too.
        conns.with_keys(
            |k| {
                if let Some(kb) = k.as_any().downcast_mut::<Keyboard>() {
                    kb.sync(&combos);
                }
            },
            &mut Vec::new(),
        );
        Ok(Watch {
            conns,
            id,
            notes: Vec::new(),
        })
    }
}

/// The keyboard reader of one connection: its keymap and key tracker.
struct Keyboard {
    xkb: &'static Xkb,
    keymap: Option<Keymap<'static>>,
    tracker: Tracker,
    /// Lines to say (outside the callbacks).
    notes: Vec<String>,
}

impl Keyboard {
    /// Watches the combinations of `all` it does not watch yet (same ids
    /// as in [`WaylandKeys::combos`]).
    fn sync(&mut self, all: &[Vec<String>]) {
        let have = self.tracker.names().count();
        for names in all.iter().skip(have) {
            self.tracker.add(names.clone());
        }
        self.resolve();
    }

    /// Resolves every combination's names on the current keymap.
    fn resolve(&mut self) {
        let xkb = self.xkb;
        match self.keymap.as_ref() {
            Some(km) => self
                .tracker
                .set_keymap(|n| xkb.keysym(n).map(|s| km.keycodes_of(s)).unwrap_or_default()),
            None => self.tracker.set_keymap(|_| Vec::new()),
        }
    }
}

impl Keys for Keyboard {
    fn keymap(&mut self, text: Option<Vec<u8>>) -> bool {
        let Some(text) = text else { return false };
        match self.xkb.compile(&text) {
            Some(km) => self.keymap = Some(km),
            None => {
                self.keymap = None;
                self.notes
                    .push("hotkey (Wayland): the compositor's keymap does not compile".into());
            }
        }
        self.resolve();
        true
    }

    fn enter(&mut self, held: &[u32]) {
        self.tracker.enter(held.iter().copied());
    }

    fn leave(&mut self) {
        self.tracker.leave();
    }

    fn key(&mut self, keycode: u32, pressed: bool) {
        self.tracker.key(keycode, pressed);
    }

    fn as_any(&mut self) -> &mut dyn Any {
        self
    }
}

/// A reader for a connection made before libxkbcommon could be loaded
/// (never, in practice: watching loads it first).
struct NoKeys;

impl Keys for NoKeys {
    fn keymap(&mut self, _: Option<Vec<u8>>) -> bool {
        false
    }
    fn enter(&mut self, _: &[u32]) {}
    fn leave(&mut self) {}
    fn key(&mut self, _: u32, _: bool) {}
    fn as_any(&mut self) -> &mut dyn Any {
        self
    }
}

/// Splits `Shift_R+F12` into its key names.
pub(crate) fn parse_combo(combo: &str) -> Vec<String> {
    combo
        .split('+')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// One key combination watched on Wayland (made by
/// [`WaylandKeys::watch`]); [`Watch::poll`] reports each press once.
pub struct Watch {
    conns: &'static Connections,
    id: usize,
    notes: Vec<String>,
}

impl Watch {
    /// True once per press of the whole combination since the last poll,
    /// on any display (the present path dispatches the events; this only
    /// reads the result and prints what the connections had to say).
    pub fn poll(&mut self) -> bool {
        let mut pressed = false;
        let id = self.id;
        let mut said = Vec::new();
        self.conns.with_keys(
            |k| {
                if let Some(kb) = k.as_any().downcast_mut::<Keyboard>() {
                    said.append(&mut kb.notes);
                    pressed |= kb.tracker.take(id);
                }
            },
            &mut self.notes,
        );
        self.notes.append(&mut said);
        for note in self.notes.drain(..) {
            guard::say(format_args!("steadyhud: {note}"));
        }
        pressed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of this test's own (leaked: a connection may hold on to them).
    fn fresh() -> (&'static WaylandKeys, &'static Connections) {
        (Box::leak(Box::default()), Box::leak(Box::default()))
    }

    #[test]
    fn combos_are_checked_before_anything_is_bound() {
        let (keys, conns) = fresh();
        assert!(matches!(
            keys.watch(conns, " + "),
            Err(WaylandKeyError::Empty(_))
        ));
        if let Err(e) = keys.xkb() {
            eprintln!("skipped the rest: {e}");
            return;
        }
        match keys.watch(conns, "Shift_R+NoSuchKey") {
            Err(e @ WaylandKeyError::UnknownKey { .. }) => {
                assert!(e.to_string().contains("\"NoSuchKey\""), "{e}")
            }
            other => panic!("expected UnknownKey, got {:?}", other.err()),
        }
        // No Wayland surface in this record: nothing to bind, no press.
        let mut w = keys.watch(conns, "shift_r+f12").expect("valid combination");
        assert!(!conns.has_surface());
        assert!(!w.poll());
        assert!(
            keys.keyboard().is_some(),
            "a reader for the next connection"
        );
    }
}
