//! The HUD's counter section through the real layer (Xvfb + lavapipe):
//! with `hud_counters=1` the HUD grows below the frame-time graph (real
//! pixels change there), with the default it does not, and validation stays
//! clean with the section drawn. `hud_counter_names` picks what it shows:
//! one counter makes a shorter section, and an unknown name is reported.

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
    // Without the sensor rows, whose changing readings would move and
    // repaint the section between runs.
    cmd.layer()
        .validation()
        .env("STEADYHUD_CONFIG", format!("{config},hud_sensor_rows=none"));
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
    assert!(
        out_plain.vuid_lines().is_empty(),
        "{:?}",
        out_plain.vuid_lines()
    );
    assert!(
        out_counted.vuid_lines().is_empty(),
        "{:?}",
        out_counted.vuid_lines()
    );
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

    // One chosen counter (and a name the device lacks): the section starts
    // as before (last stutter, header) but ends after one counter row, so
    // the lower part of AREA, where the default four rows continue, shows
    // the app again.
    let (one, out_one) = shot("hud_counters=1,hud_counter_names=pipelines+no_such");
    assert!(
        out_one.vuid_lines().is_empty(),
        "{:?}",
        out_one.vuid_lines()
    );
    assert!(
        out_one
            .stderr
            .contains("hud_counter_names: this device has no counter \"no_such\""),
        "no warning for the unknown name:\n{}",
        out_one.stderr
    );
    let (upper, lower) = ((x, y, w, 30), (x, y + 100, w, h - 100));
    let changed_upper = one.diff_count(&plain, upper.0, upper.1, upper.2, upper.3, 24);
    let lower_vs_plain = one.diff_count(&plain, lower.0, lower.1, lower.2, lower.3, 24);
    let lower_four = counted.diff_count(&plain, lower.0, lower.1, lower.2, lower.3, 24);
    eprintln!("one counter: top {changed_upper} px changed, below its row {lower_vs_plain} (four counters: {lower_four})");
    if changed_upper < (upper.2 * upper.3) as usize / 3 || lower_vs_plain * 10 > lower_four {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        plain.save_png(&dir.join("counters_hud_off.png"));
        one.save_png(&dir.join("counters_hud_one.png"));
        counted.save_png(&dir.join("counters_hud_on.png"));
        panic!(
            "one counter: {changed_upper} pixels changed at the top of the section, {lower_vs_plain} below its row \
             (four counters: {lower_four}); shots in {}",
            dir.display()
        );
    }
}
