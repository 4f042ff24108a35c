//! The X server of a [`Harness`]: its private Xvfb ([`super::xvfb`]), and
//! input sent to it with xdotool.

use super::Harness;

impl Harness {
    /// Runs `xdotool ARGS` on this display (e.g. `["key", "shift_R+F12"]`).
    pub fn xdotool(&self, args: &[&str]) {
        self.xvfb.xdotool(args);
    }
}
