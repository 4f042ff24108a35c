//! The X server of a [`Harness`]: its private Xvfb ([`super::xvfb`]), and
//! input sent to it with xdotool.

use super::Harness;
use std::time::Duration;

impl Harness {
    /// Runs `xdotool ARGS` on this display (e.g. `["key", "shift_R+F12"]`).
    pub fn xdotool(&self, args: &[&str]) {
        self.xvfb.xdotool(args);
    }

    /// `n` presses with the pointer at (100, 100) (in the test app's
    /// window): a left click and an `a` key in turn, `gap` apart.
    pub fn click_and_type(&self, n: usize, gap: Duration) {
        self.xdotool(&["mousemove", "100", "100"]);
        for i in 0..n {
            if i % 2 == 0 {
                self.xdotool(&["click", "1"]);
            } else {
                self.xdotool(&["key", "a"]);
            }
            std::thread::sleep(gap);
        }
    }
}
