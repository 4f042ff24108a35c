//! The HUD's counter section through the real layer (Xvfb + lavapipe):
//! with `hud_counters=1` the HUD grows below the frame-time graph (real
//! pixels change there), with the default it does not, and validation stays
//! clean with the section drawn.

mod common;
use common::*;
use std::time::Duration;

const W: u32 = 640;
const H: u32 = 480;
/// Below the main HUD section (it ends near y = 185 at 640x480), where the
/// counter section goes: x 20..250, y 200..330.
const AREA: (u32, u32, u32, u32) = (20, 200, 230, 130);

/// Screenshot of the test app (pipelines created now and then) with the
/// layer and `config`, after some frames.
fn shot(config: &str) -> (Screenshot, RunOutput) {
    let h = Harness::with_screen(W, H);
    let size = format!("{W}x{H}");
    let mut cmd = h.testapp(&[
        "--size",
        &size,
        "--frames",
        "120",
        "--pipelines-at",
        "30:4",
        "--pipelines-at",
        "90:4",
        "--hold",
        "60",
        "--progress",
    ]);
    cmd.layer().validation().env("STEADYHUD_CONFIG", config);
    let mut app = spawn(&mut cmd);
    app.wait_presents(150, Duration::from_secs(60));
    // The panel is refreshed ~10×/s; give it a few refreshes.
    std::thread::sleep(Duration::from_millis(600));
    let s = h.screenshot();
    let out = app.kill();
    (s, out)
}

#[test]
fn counter_section_is_drawn_only_when_configured() {
    let _s = serial();
    let (plain, out_plain) = shot("hud_counters=0");
    let (counted, out_counted) = shot("hud_counters=1");
    assert!(out_plain.vuid_lines().is_empty(), "{:?}", out_plain.vuid_lines());
    assert!(out_counted.vuid_lines().is_empty(), "{:?}", out_counted.vuid_lines());
    let (x, y, w, h) = AREA;
    let changed = counted.diff_count(&plain, x, y, w, h, 24);
    let total = (w * h) as usize;
    if changed < total / 3 {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        plain.save_png(&dir.join("counters_hud_off.png"));
        counted.save_png(&dir.join("counters_hud_on.png"));
        panic!("only {changed} of {total} pixels below the HUD changed with hud_counters=1 (shots in {})", dir.display());
    }
    // Right of the HUD nothing changes: the section stays inside the HUD.
    assert_eq!(counted.diff_count(&plain, 400, 0, 240, 480, 24), 0);
}
