//! The HUD hotkey against a real X server (Xvfb), keys pressed with xdotool.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use steadyhud::input::x11::{Hotkey, HotkeyError};

/// An Xvfb server on a free display number, killed on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "640x480x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is required (apt-get install xvfb)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let display = format!(":{}", line.trim());
        Xvfb { child, display }
    }

    fn xdotool(&self, args: &[&str]) {
        let ok = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .status()
            .expect("xdotool is required (apt-get install xdotool)")
            .success();
        assert!(ok, "xdotool {args:?} failed");
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn hotkey_reports_each_press_of_the_whole_combination_once() {
    let x = Xvfb::start();
    let mut hk = Hotkey::on_display("Shift_R+F12", &x.display).unwrap();
    assert_eq!(hk.keycodes().len(), 2);
    assert!(!hk.poll(), "nothing pressed yet");

    // One key of the combination alone is not a press.
    x.xdotool(&["keydown", "Shift_R"]);
    assert!(!hk.poll());
    x.xdotool(&["keydown", "F12"]);
    assert!(hk.poll(), "Shift_R+F12 down");
    assert!(!hk.poll(), "held keys count once (debounced edge)");
    x.xdotool(&["keyup", "F12"]);
    assert!(!hk.poll());
    x.xdotool(&["keydown", "F12"]);
    assert!(hk.poll(), "second press while Shift_R held");
    x.xdotool(&["keyup", "F12", "keyup", "Shift_R"]);
    assert!(!hk.poll());

    // A full tap, as the screenshot tests use it: down and up between polls
    // is too quick to see, so xdotool's key command holds it briefly.
    x.xdotool(&["keydown", "Shift_R+F12"]);
    assert!(hk.poll());
    x.xdotool(&["keyup", "Shift_R+F12"]);
    assert!(!hk.poll());

    // Lower-case spellings are accepted.
    let hk2 = Hotkey::on_display("control_l+f10", &x.display).unwrap();
    assert_eq!(hk2.keycodes().len(), 2);
}

#[test]
fn hotkey_errors_are_clear() {
    let x = Xvfb::start();
    match Hotkey::on_display("Shift_R+NoSuchKey", &x.display) {
        Err(e @ HotkeyError::UnknownKey { .. }) => assert!(e.to_string().contains("NoSuchKey")),
        other => panic!("expected UnknownKey, got {:?}", other.err()),
    }
    assert!(matches!(
        Hotkey::on_display("+", &x.display),
        Err(HotkeyError::Empty(_))
    ));
    // No X server on this display: an error naming it, not a hang or crash.
    match Hotkey::on_display("F12", ":9876") {
        Err(e @ HotkeyError::NoDisplay(_)) => assert!(e.to_string().contains(":9876")),
        other => panic!("expected NoDisplay, got {:?}", other.err()),
    }
    assert!(matches!(
        Hotkey::on_display("F12", ""),
        Err(HotkeyError::NoDisplay(_))
    ));
}
