//! The HUD hotkey against a real X server (Xvfb), keys pressed with xdotool.

#[path = "common/xvfb.rs"]
mod xvfb;

use steadyhud_input::x11::{Hotkey, HotkeyError};
use steadyhud_x11::Displays;
use xvfb::Xvfb;

/// Our X connections, one per display, as the client record keeps them.
static DISPLAYS: Displays = Displays::new();

/// The X server has handled the key presses another client sent before
/// (a round trip), then the hotkey's answer.
fn poll(hk: &mut Hotkey) -> bool {
    hk.sync();
    hk.poll()
}

/// Both ways of following keys: XInput 2 raw events (the default, which
/// Xvfb has) and `QueryKeymap` polling (where XInput 2 lacks).
#[test]
fn hotkey_reports_each_press_of_the_whole_combination_once() {
    let x = Xvfb::start(640, 480);
    for events in [true, false] {
        let hk = Hotkey::on_display_with("Shift_R+F12", &DISPLAYS, &x.display(), events).unwrap();
        assert_eq!(hk.events(), events, "XInput 2 raw key events on Xvfb");
        presses(&x, hk);
    }

    // Lower-case spellings are accepted.
    let hk2 = Hotkey::on_display("control_l+f10", &DISPLAYS, &x.display()).unwrap();
    assert_eq!(hk2.keycodes().len(), 2);
}

/// With events, a tap whose press and release both come between two polls
/// still counts once (a polled keymap cannot see it).
#[test]
fn key_events_see_a_tap_between_two_polls() {
    let x = Xvfb::start(640, 480);
    let mut hk = Hotkey::on_display("Shift_R+F12", &DISPLAYS, &x.display()).unwrap();
    assert!(hk.events());
    assert!(hk.fd().is_some(), "a socket to wait on");
    x.xdotool(&["key", "Shift_R+F12"]);
    assert!(poll(&mut hk), "the tap, read from its events");
    assert!(!poll(&mut hk), "once");
    x.xdotool(&["key", "F12"]);
    assert!(!poll(&mut hk), "F12 alone is not the combination");
}

fn presses(x: &Xvfb, mut hk: Hotkey) {
    let hk = &mut hk;
    assert_eq!(hk.keycodes().len(), 2);
    assert!(!poll(hk), "nothing pressed yet");

    // One key of the combination alone is not a press.
    x.xdotool(&["keydown", "Shift_R"]);
    assert!(!poll(hk));
    x.xdotool(&["keydown", "F12"]);
    assert!(poll(hk), "Shift_R+F12 down");
    assert!(!poll(hk), "held keys count once (debounced edge)");
    x.xdotool(&["keyup", "F12"]);
    assert!(!poll(hk));
    x.xdotool(&["keydown", "F12"]);
    assert!(poll(hk), "second press while Shift_R held");
    x.xdotool(&["keyup", "F12", "keyup", "Shift_R"]);
    assert!(!poll(hk));

    // A full tap, as the screenshot tests use it: down and up between polls
    // is too quick to see, so xdotool's key command holds it briefly.
    x.xdotool(&["keydown", "Shift_R+F12"]);
    assert!(poll(hk));
    x.xdotool(&["keyup", "Shift_R+F12"]);
    assert!(!poll(hk));
}

#[test]
fn hotkey_errors_are_clear() {
    let x = Xvfb::start(640, 480);
    match Hotkey::on_display("Shift_R+NoSuchKey", &DISPLAYS, &x.display()) {
        Err(e @ HotkeyError::UnknownKey { .. }) => assert!(e.to_string().contains("NoSuchKey")),
        other => panic!("expected UnknownKey, got {:?}", other.err()),
    }
    assert!(matches!(
        Hotkey::on_display("+", &DISPLAYS, &x.display()),
        Err(HotkeyError::Empty(_))
    ));
    // No X server on this display: an error naming it, not a hang or crash.
    match Hotkey::on_display("F12", &DISPLAYS, ":9876") {
        Err(e @ HotkeyError::NoDisplay(_)) => assert!(e.to_string().contains(":9876")),
        other => panic!("expected NoDisplay, got {:?}", other.err()),
    }
    assert!(matches!(
        Hotkey::on_display("F12", &DISPLAYS, ""),
        Err(HotkeyError::NoDisplay(_))
    ));
}
