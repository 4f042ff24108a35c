//! Pressed keys and per-combination rising edges, fed by `wl_keyboard`
//! events in the order they arrive (pure: no Wayland, no xkb).
//!
//! Wayland has no key state query, so unlike the X11 poller the state is
//! rebuilt from events. The edges are found per event, not per poll: a
//! combination pressed and released between two polls (`wtype` sends all
//! four events within a millisecond) still counts once.
//!
//! Keycodes are xkb keycodes (evdev + 8), as in the keymap.

/// One watched combination.
#[derive(Debug)]
struct Combo {
    /// Per key name, every keycode that produces it in the current keymap
    /// (empty: the keymap has no such key, the combination cannot be down).
    keycodes: Vec<Vec<u32>>,
    names: Vec<String>,
    down: bool,
    presses: u32,
}

/// Keys held on our `wl_keyboard` and the watched combinations.
#[derive(Debug, Default)]
pub struct Tracker {
    pressed: Vec<u32>,
    combos: Vec<Combo>,
}

impl Tracker {
    /// Watches a combination of key `names`; returns its id for [`take`].
    /// Its keycodes are unknown until [`set_keymap`] resolves them.
    ///
    /// [`take`]: Tracker::take
    /// [`set_keymap`]: Tracker::set_keymap
    pub fn add(&mut self, names: Vec<String>) -> usize {
        self.combos.push(Combo {
            keycodes: vec![Vec::new(); names.len()],
            names,
            down: false,
            presses: 0,
        });
        self.combos.len() - 1
    }

    /// The names of every combination, by id.
    pub fn names(&self) -> impl Iterator<Item = &[String]> {
        self.combos.iter().map(|c| c.names.as_slice())
    }

    /// A new keymap: `resolve` gives the keycodes of a key name. Keys held
    /// across the change do not make a press.
    pub fn set_keymap(&mut self, mut resolve: impl FnMut(&str) -> Vec<u32>) {
        for c in &mut self.combos {
            c.keycodes = c.names.iter().map(|n| resolve(n)).collect();
        }
        self.settle();
    }

    /// `wl_keyboard.enter` with the keys already held: a combination held
    /// while focus arrives is not a press (as with X11 at start).
    pub fn enter(&mut self, keys: impl IntoIterator<Item = u32>) {
        self.pressed.clear();
        for k in keys {
            if !self.pressed.contains(&k) {
                self.pressed.push(k);
            }
        }
        self.settle();
    }

    /// `wl_keyboard.leave`, or the keyboard went away: nothing is held.
    pub fn leave(&mut self) {
        self.pressed.clear();
        self.settle();
    }

    /// `wl_keyboard.key`: counts a press of every combination this event
    /// completes.
    pub fn key(&mut self, keycode: u32, pressed: bool) {
        if pressed {
            if !self.pressed.contains(&keycode) {
                self.pressed.push(keycode);
            }
        } else {
            self.pressed.retain(|&k| k != keycode);
        }
        for c in &mut self.combos {
            let down = all_down(&c.keycodes, &self.pressed);
            if down && !c.down {
                c.presses = c.presses.saturating_add(1);
            }
            c.down = down;
        }
    }

    /// Whether combination `id` was pressed since the last call (several
    /// presses between two calls count as one).
    pub fn take(&mut self, id: usize) -> bool {
        self.combos
            .get_mut(id)
            .is_some_and(|c| std::mem::take(&mut c.presses) > 0)
    }

    /// Records the current state of every combination without counting.
    fn settle(&mut self) {
        for c in &mut self.combos {
            c.down = all_down(&c.keycodes, &self.pressed);
        }
    }
}

fn all_down(keycodes: &[Vec<u32>], pressed: &[u32]) -> bool {
    !keycodes.is_empty()
        && keycodes
            .iter()
            .all(|alts| alts.iter().any(|k| pressed.contains(k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHIFT_R: u32 = 62;
    const F12: u32 = 96;
    const A: u32 = 38;

    fn tracker() -> (Tracker, usize) {
        let mut t = Tracker::default();
        let id = t.add(vec!["Shift_R".into(), "F12".into()]);
        t.set_keymap(|n| match n {
            "Shift_R" => vec![SHIFT_R],
            "F12" => vec![F12],
            _ => vec![],
        });
        (t, id)
    }

    #[test]
    fn whole_combination_is_one_press() {
        let (mut t, id) = tracker();
        t.key(SHIFT_R, true);
        assert!(!t.take(id), "one key alone");
        t.key(F12, true);
        assert!(t.take(id));
        assert!(!t.take(id), "taken once");
        t.key(A, true);
        t.key(A, false);
        assert!(!t.take(id), "other keys while held");
        t.key(F12, false);
        t.key(F12, true);
        assert!(t.take(id), "second press while Shift_R is held");
    }

    #[test]
    fn a_press_between_polls_is_not_lost() {
        let (mut t, id) = tracker();
        for (k, p) in [(SHIFT_R, true), (F12, true), (F12, false), (SHIFT_R, false)] {
            t.key(k, p);
        }
        assert!(t.take(id));
        // Two whole presses between polls: one toggle, not zero.
        for _ in 0..2 {
            t.key(SHIFT_R, true);
            t.key(F12, true);
            t.key(F12, false);
            t.key(SHIFT_R, false);
        }
        assert!(t.take(id));
        assert!(!t.take(id));
    }

    #[test]
    fn enter_with_held_keys_is_no_press_and_leave_clears() {
        let (mut t, id) = tracker();
        t.enter([SHIFT_R, F12]);
        assert!(!t.take(id), "held while focus arrived");
        t.key(F12, false);
        t.key(F12, true);
        assert!(t.take(id), "enter's keys count as held");
        t.leave();
        // After leave nothing is held: F12 alone does not complete it.
        t.enter([]);
        t.key(F12, true);
        assert!(!t.take(id));
        t.key(SHIFT_R, true);
        assert!(t.take(id));
    }

    #[test]
    fn keymap_change_resolves_again_without_a_press() {
        let (mut t, id) = tracker();
        t.key(SHIFT_R, true);
        t.key(F12, true);
        assert!(t.take(id));
        // A keymap without F12 (wtype uploads its own): not down.
        t.set_keymap(|n| {
            if n == "Shift_R" {
                vec![SHIFT_R]
            } else {
                vec![]
            }
        });
        t.key(F12, false);
        t.key(F12, true);
        assert!(!t.take(id), "no keycode for F12");
        // F12 back on another keycode, held across the change: no press.
        t.set_keymap(|n| {
            if n == "Shift_R" {
                vec![SHIFT_R]
            } else {
                vec![F12, 200]
            }
        });
        assert!(!t.take(id));
        t.key(F12, false);
        t.key(200, true);
        assert!(t.take(id), "any keycode of a name counts");
    }

    #[test]
    fn unresolved_and_unknown_ids_never_fire() {
        let mut t = Tracker::default();
        let id = t.add(vec!["F12".into()]);
        t.key(F12, true);
        assert!(!t.take(id), "no keymap yet");
        assert!(!t.take(7));
    }
}
