//! The HUD hotkey on Wayland: `vkcube-wayland` with the layer in a headless
//! sway session (tests/common/wayland.rs, no X display at all), the toggle
//! pressed with `wtype`, then `steadyhud ctl status` and `ctl hud toggle`
//! as the game's user, the HUD corner read with `grim`; then a clean exit,
//! which tears our keyboard down on the app's connection.
//!
//! Skipped (with a line saying so) where sway, wtype, grim or vkcube-wayland
//! are missing, a failure under `STEADYHUD_REQUIRE_TOOLS=1` (tests/require);
//! CI installs them. Screenshots are kept in `target/hud-shots/`.

mod common;
mod require;

use common::wayland::{WaylandBed, BED_PROGRAMS};
use common::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use steadyhud::hud::view;

const W: u32 = 640;
const H: u32 = 480;
/// Top-left area the HUD is drawn in at 640x480 (scale 1).
const HUD: (u32, u32) = (270, 210);
/// HUD shown: most of its corner is panel background (text and graph
/// are the rest); hidden: vkcube's grey background and cube, no panel.
const SHOWN: f64 = 0.3;
const HIDDEN: f64 = 0.01;

fn panel_bg() -> [u8; 3] {
    let c = view::colors::PANEL_BG;
    [0, 1, 2].map(|i| (c[i] * 255.0).round() as u8)
}

/// Fraction of the HUD corner in the panel's background colour.
fn panel_fraction(s: &Screenshot) -> f64 {
    s.fraction_close(0, 0, HUD.0, HUD.1, panel_bg(), 3)
}

fn save(s: &Screenshot, name: &str) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../hud-shots");
    let _ = std::fs::create_dir_all(&dir);
    s.save_png(&dir.join(format!("{name}.png")));
}

/// Screenshots until `pred` holds on the panel fraction or `secs` pass;
/// returns whether it held and the last fraction.
fn wait_for(bed: &WaylandBed, name: &str, secs: u64, pred: impl Fn(f64) -> bool) -> (bool, f64) {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        let s = bed.screenshot();
        assert_eq!((s.width, s.height), (W, H), "sway output size");
        let f = panel_fraction(&s);
        if pred(f) || Instant::now() > end {
            save(&s, name);
            return (pred(f), f);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The bed's programs and vkcube-wayland are installed (else skipped or
/// failed, see tests/require).
fn have_tools() -> bool {
    let mut tools = BED_PROGRAMS.to_vec();
    tools.push(("vkcube-wayland", "vulkan-tools"));
    require::programs(&tools)
}

#[test]
fn wayland_hotkey_toggles_the_hud() {
    if !have_tools() {
        return;
    }
    let started = Instant::now();
    let bed = WaylandBed::start(W, H);
    let mut app = bed.spawn_app("vkcube-wayland", &[]);

    let (shown, f_on) = wait_for(&bed, "wayland_hud", 20, |f| f > SHOWN);
    assert!(
        shown,
        "HUD never appeared on vkcube-wayland: panel fraction {f_on:.3}\n{}",
        bed.compositor_log()
    );

    bed.press("Shift_R+F12");
    let (hidden, f_off) = wait_for(&bed, "wayland_hud_toggled_off", 10, |f| f < HIDDEN);

    bed.press("Shift_R+F12");
    let (back, f_back) = wait_for(&bed, "wayland_hud_toggled_on", 10, |f| f > SHOWN);

    // The same through the control socket, as the game's own user: status
    // first, then `ctl hud toggle` twice.
    let steadyhud = bed.install(&steadyhud_exe());
    let ctl = |args: &[&str]| {
        let out = bed
            .command(&steadyhud)
            .arg("ctl")
            .args(args)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "ctl {args:?}: {said}{err}");
        said
    };
    let status: serde_json::Value = serde_json::from_str(&ctl(&["--json", "status"])).unwrap();
    assert!(status["frames"].as_u64() > Some(0), "{status}");
    assert_eq!(status["hud"], "on");
    assert_eq!(status["exe"], "vkcube-wayland");
    assert!(
        status["windows"][0]["metrics"]["steady_fps"].as_u64() > Some(0),
        "{status}"
    );
    assert!(ctl(&["hud", "toggle"]).starts_with("HUD off"));
    let (ctl_hidden, f_ctl_off) = wait_for(&bed, "wayland_hud_ctl_off", 10, |f| f < HIDDEN);
    assert!(ctl(&["hud", "toggle"]).starts_with("HUD on"));
    let (ctl_back, f_ctl_on) = wait_for(&bed, "wayland_hud_ctl_on", 10, |f| f > SHOWN);

    let alive = matches!(app.child.try_wait(), Ok(None));
    let out = app.kill();
    eprintln!(
        "panel fraction of the HUD corner: shown {f_on:.3}, after Shift_R+F12 {f_off:.3}, \
         after a second press {f_back:.3}, after ctl hud toggle {f_ctl_off:.3} and again \
         {f_ctl_on:.3}; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        alive,
        "vkcube-wayland quit during the test:\n{}",
        out.stderr
    );
    assert!(
        hidden,
        "HUD still there after Shift_R+F12 (panel fraction {f_off:.3}):\n{}",
        out.stderr
    );
    assert!(
        back,
        "HUD did not come back after a second Shift_R+F12 (panel fraction {f_back:.3})"
    );
    assert!(
        ctl_hidden && ctl_back,
        "ctl hud toggle on Wayland: panel fraction {f_ctl_off:.3} after the first, {f_ctl_on:.3} after the second"
    );
    let complaints = out.output_lines(is_layer_complaint);
    assert!(
        complaints.is_empty(),
        "the layer complained:\n{}",
        complaints.join("\n")
    );

    // A clean exit: vkDestroySurfaceKHR releases our keyboard and seat on
    // the app's connection, then vkcube disconnects it. A wrong request
    // there would be a protocol error on the app's own connection.
    let out = run(bed.command("vkcube-wayland").args(["--c", "30"]).layer());
    out.assert_success("vkcube-wayland --c 30 with the layer");
    let complaints = out.output_lines(|l| is_layer_complaint(l) || l.contains("error"));
    assert!(
        complaints.is_empty(),
        "complaints on a clean exit:\n{}",
        complaints.join("\n")
    );
}

/// A seat without a keyboard: one line saying so, the HUD stays on.
#[test]
fn wayland_seat_without_keyboard_costs_one_line() {
    if !have_tools() {
        return;
    }
    let bed = WaylandBed::start_with(W, H, false);
    let app = bed.spawn_app("vkcube-wayland", &[]);
    let (shown, f) = wait_for(&bed, "wayland_hud_no_keyboard", 20, |f| f > SHOWN);
    // The binding's two round trips ride on vkcube's presents: well done
    // within a second of frames.
    std::thread::sleep(Duration::from_millis(1000));
    let out = app.kill();
    assert!(shown, "HUD never appeared (panel fraction {f:.3})");
    let lines = out.output_lines(is_layer_complaint);
    assert_eq!(
        lines,
        ["steadyhud: hotkey (Wayland): the seat has no keyboard yet; HUD toggle waits for one"],
        "expected exactly the no-keyboard line"
    );
}

/// The preset key on Wayland: `Shift_R+F10` cycles the presets
/// 2→3→0→1→2 on vkcube-wayland, each told apart by the panel's height,
/// with a toast after each press.
#[test]
fn wayland_preset_key_cycles_the_presets() {
    use common::hud_panel::{panel, size, toast_pixels};
    if !have_tools() {
        return;
    }
    let bed = WaylandBed::start(W, H);
    let mut app = bed.spawn_app("vkcube-wayland", &[]);
    let (shown, f) = wait_for(&bed, "wayland_preset_start", 20, |f| f > SHOWN);
    assert!(shown, "HUD never appeared (panel fraction {f:.3})");
    // The panel's height once no toast is up and two shots agree.
    let settled = |name: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut last = None;
        loop {
            let s = bed.screenshot();
            let p = panel(&s)
                .filter(|_| toast_pixels(&s) < 40)
                .map(|p| size(p)[1]);
            if (p.is_some() && p == last) || Instant::now() > deadline {
                save(&s, name);
                return p;
            }
            last = p;
            std::thread::sleep(Duration::from_millis(300));
        }
    };
    let mut heights = vec![settled("wayland_preset_2")];
    let mut toasts = Vec::new();
    for i in 0..4 {
        bed.press("Shift_R+F10");
        let pressed = Instant::now();
        let mut toast = false;
        while !toast && pressed.elapsed() < Duration::from_secs(2) {
            toast = toast_pixels(&bed.screenshot()) >= 40;
        }
        toasts.push(toast);
        std::thread::sleep(Duration::from_millis(1200));
        heights.push(settled(&format!("wayland_preset_key_{i}")));
    }
    let alive = matches!(app.child.try_wait(), Ok(None));
    let out = app.kill();
    eprintln!("panel heights 2, then after each press: {heights:?}; toasts {toasts:?}");
    assert!(alive, "vkcube-wayland quit:\n{}", out.stderr);
    let h: Vec<u32> = heights
        .iter()
        .map(|h| h.expect("a panel after each press"))
        .collect();
    // 2 standard → 3 detailed → 0 one line → 1 compact → 2 standard.
    assert!(h[1] > h[0], "detailed taller than standard: {h:?}");
    assert!(
        h[2] < h[3] && h[3] < h[0],
        "one line < compact < standard: {h:?}"
    );
    assert!(h[4].abs_diff(h[0]) <= 3, "back to standard: {h:?}");
    assert_eq!(toasts, [true; 4], "a toast after every press");
}
