//! Input timing's reader against a real X server (Xvfb), clicks and keys
//! sent with xdotool (XTest): each press is taken once, at the server's
//! millisecond mapped to CLOCK_MONOTONIC, which lies between the moments
//! just before xdotool ran and just after it returned; presses while the
//! pointer (the focus, under `PointerRoot`) is outside the game's window
//! are dropped.

#[path = "../../../tests/common/xvfb.rs"]
mod xvfb;

use steadyhud_sys::clock::now_ns;
use steadyhud_x11::inputs::{InputKind, Inputs};
use steadyhud_x11::{Displays, XConn};
use xvfb::Xvfb;

static DISPLAYS: Displays = Displays::new();

/// The "game": a 200×200 window at (0, 0), mapped, on a connection of its
/// own (CreateWindow and MapWindow by their wire bytes).
fn game_window(display: &str) -> (XConn, u32) {
    let xcb = DISPLAYS.xcb().expect("libxcb");
    let mut c = XConn::open(xcb, display).expect("the game's connection");
    let root = c.root().expect("a root window");
    // SAFETY: our live connection.
    let wid = unsafe { (xcb.generate_id)(c.raw()) };
    let mut create = [0u8; 32];
    create[4..8].copy_from_slice(&wid.to_ne_bytes());
    create[8..12].copy_from_slice(&root.to_ne_bytes());
    create[16..18].copy_from_slice(&200u16.to_ne_bytes());
    create[18..20].copy_from_slice(&200u16.to_ne_bytes());
    create[22..24].copy_from_slice(&1u16.to_ne_bytes()); // InputOutput
    c.checked(None, 1, &mut create).expect("CreateWindow");
    let mut map = [0u8; 8];
    map[4..8].copy_from_slice(&wid.to_ne_bytes());
    c.checked(None, 8, &mut map).expect("MapWindow");
    (c, wid)
}

/// Every press taken now (after a round trip, so the server handled
/// xdotool's requests and sent their events).
fn taken(inputs: &Inputs, windows: &[u32]) -> (Vec<(u64, InputKind)>, u64) {
    let mut got = Vec::new();
    let left = inputs.take(windows, now_ns(), |i| got.push((i.t_ns, i.kind)));
    assert_eq!(left.over, 0);
    (got, left.unfocused)
}

#[test]
fn presses_are_taken_once_at_their_server_millisecond_while_the_game_has_the_focus() {
    let x = Xvfb::start(640, 480);
    let (_game, window) = game_window(&x.display());
    let inputs = Inputs::on(&DISPLAYS, Some(&x.display())).expect("XInput 2 on Xvfb");
    let windows = [window];
    x.xdotool(&["mousemove", "100", "100"]);
    let _ = taken(&inputs, &windows); // the motion is no press
    for (args, kind) in [
        (&["click", "1"][..], InputKind::Button),
        (&["key", "a"][..], InputKind::Key),
        (&["click", "3"][..], InputKind::Button),
    ] {
        // The millisecond that holds `before` starts at most 1 ms earlier.
        let before = now_ns() / 1_000_000 * 1_000_000;
        x.xdotool(args);
        let after = now_ns();
        let mut got = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while got.is_empty() && std::time::Instant::now() < deadline {
            let (g, dropped) = taken(&inputs, &windows);
            assert_eq!(dropped, 0, "{args:?}: the pointer is in the game's window");
            got = g;
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(got.len(), 1, "{args:?}: one press, once: {got:?}");
        let (t, k) = got[0];
        assert_eq!(k, kind, "{args:?}");
        assert!(
            (before..=after).contains(&t),
            "{args:?}: {t} not within [{before}, {after}] ({} ms after before)",
            (t as i64 - before as i64) as f64 / 1e6
        );
    }
    // The pointer outside the game's window: its presses are not the game's.
    x.xdotool(&["mousemove", "400", "400"]);
    x.xdotool(&["click", "1"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let (got, dropped) = taken(&inputs, &windows);
        assert!(got.is_empty(), "{got:?}");
        if dropped == 1 {
            break;
        }
        assert_eq!(dropped, 0);
        assert!(std::time::Instant::now() < deadline, "the click never came");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    inputs.close(&DISPLAYS);
}
