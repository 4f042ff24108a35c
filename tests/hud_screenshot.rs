//! The HUD through the real layer: `steadyhud-testapp` under Xvfb + lavapipe
//! (tests/common harness), screenshots of the X root window compared with a
//! run without the layer, the hotkey pressed with xdotool, SRGB swapchains,
//! validation with resizes.
//!
//! Screenshots are kept in `target/hud-shots/` for a human to look at.

mod common;

use common::*;
use std::thread::sleep;
use std::time::{Duration, Instant};
use steadyhud::hud::view;

const W: u32 = 640;
const H: u32 = 480;
/// Top-left area the HUD is drawn in at 640x480 (scale 1).
const HUD: (u32, u32) = (270, 210);

/// The test app presenting at 60 fps for a long while (killed on drop).
struct App(Option<Running>);

impl App {
    fn start(h: &Harness, layer: bool, format: &str) -> App {
        let size = format!("{W}x{H}");
        let mut cmd = h.testapp(&[
            "--size", &size, "--format", format, "--frames", "60", "--hold", "60",
        ]);
        if layer {
            cmd.layer();
        }
        App(Some(spawn(&mut cmd)))
    }

    fn stop(mut self) -> RunOutput {
        self.0.take().expect("running").kill()
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            r.kill();
        }
    }
}

fn shot(h: &Harness) -> Vec<u8> {
    let s = h.screenshot();
    assert_eq!((s.width, s.height), (W, H));
    s.rgb
}

fn save(px: &[u8], name: &str) {
    Screenshot {
        width: W,
        height: H,
        rgb: px.to_vec(),
    }
    .keep(name);
}

/// Presses the default toggle, holding it long enough for the 50 ms poll
/// (`xdotool key` releases within milliseconds, which a poll can miss).
fn press_toggle(h: &Harness) {
    h.xdotool(&["keydown", "Shift_R", "keydown", "F12"]);
    sleep(Duration::from_millis(300));
    h.xdotool(&["keyup", "F12", "keyup", "Shift_R"]);
}

/// Screenshots until `pred` holds (or `secs` pass); returns the last one.
fn wait_for(h: &Harness, secs: u64, pred: impl Fn(&[u8]) -> bool) -> (bool, Vec<u8>) {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        let px = shot(h);
        if pred(&px) {
            return (true, px);
        }
        if Instant::now() > end {
            return (false, px);
        }
        sleep(Duration::from_millis(150));
    }
}

fn at(x: u32, y: u32) -> usize {
    ((y * W + x) * 3) as usize
}

/// The app's frame is on screen: a pixel far from the HUD matches `base`.
fn app_visible(px: &[u8], base: &[u8]) -> bool {
    let i = at(W - 20, H - 20);
    px[i..i + 3] == base[i..i + 3] && base[i..i + 3] != [0, 0, 0]
}

/// Pixels of the HUD area that differ between two screenshots.
fn hud_diff(a: &[u8], b: &[u8]) -> usize {
    (0..HUD.1)
        .flat_map(|y| (0..HUD.0).map(move |x| at(x, y)))
        .filter(|&i| (0..3).any(|c| a[i + c].abs_diff(b[i + c]) > 2))
        .count()
}

/// Pixels of the HUD area within `tol` of `rgb`.
fn hud_count(px: &[u8], rgb: [u8; 3], tol: u8) -> usize {
    (0..HUD.1)
        .flat_map(|y| (0..HUD.0).map(move |x| at(x, y)))
        .filter(|&i| (0..3).all(|c| px[i + c].abs_diff(rgb[c]) <= tol))
        .count()
}

fn bytes(c: [f32; 4]) -> [u8; 3] {
    [0, 1, 2].map(|i| (c[i] * 255.0).round() as u8)
}

/// The bar colour as it would look if an SRGB target re-encoded it.
fn washed_out(c: [f32; 4]) -> [u8; 3] {
    let enc = |v: f32| {
        if v <= 0.0031308 {
            v * 12.92
        } else {
            1.055 * v.powf(1.0 / 2.4) - 0.055
        }
    };
    [0, 1, 2].map(|i| (enc(c[i]) * 255.0).round() as u8)
}

/// The app's frame without the layer, once it is on screen.
fn baseline(h: &Harness, format: &str) -> Vec<u8> {
    let app = App::start(h, false, format);
    let band = at(4, H - 20);
    let (ok, _) = wait_for(h, 20, |px| px[band..band + 3] != [0, 0, 0]);
    assert!(ok, "test app never drew");
    sleep(Duration::from_millis(300));
    let px = shot(h);
    sleep(Duration::from_millis(200));
    assert_eq!(
        hud_diff(&px, &shot(h)),
        0,
        "the app's own frame is not static"
    );
    app.stop();
    px
}

#[test]
fn hud_is_drawn_and_the_hotkey_toggles_it() {
    let h = Harness::new();
    let base = baseline(&h, "unorm");
    save(&base, "layer_unorm_no_layer");
    let bar = bytes(view::colors::BAR);

    let app = App::start(&h, true, "unorm");
    let (shown, px) = wait_for(&h, 20, |px| {
        app_visible(px, &base) && hud_diff(px, &base) > 5000 && hud_count(px, bar, 4) > 50
    });
    save(&px, "layer_unorm_hud");
    assert!(
        shown,
        "HUD never appeared: {} pixels differ, {} bar pixels",
        hud_diff(&px, &base),
        hud_count(&px, bar, 4)
    );
    // Outside the HUD the app's frame is untouched.
    let n = (0..H)
        .flat_map(|y| (HUD.0 + 40..W).map(move |x| at(x, y)))
        .filter(|&i| px[i..i + 3] != base[i..i + 3])
        .count();
    assert_eq!(n, 0, "pixels outside the HUD changed");

    toggles_twice(&h, &base, "hotkey", press_toggle);
    let out = app.stop();
    assert!(
        !out.stderr.contains("HUD"),
        "layer complained:\n{}",
        out.stderr
    );
}

/// `toggle` hides the shown HUD and a second `toggle` brings it back
/// (screenshots saved as `layer_unorm_<how>_off` / `_on`).
fn toggles_twice(h: &Harness, base: &[u8], how: &str, toggle: impl Fn(&Harness)) {
    toggle(h);
    let (hidden, px) = wait_for(h, 5, |px| app_visible(px, base) && hud_diff(px, base) == 0);
    save(&px, &format!("layer_unorm_{how}_off"));
    assert!(
        hidden,
        "HUD still there after the {how}: {} pixels differ",
        hud_diff(&px, base)
    );
    toggle(h);
    let (back, px) = wait_for(h, 5, |px| {
        app_visible(px, base) && hud_diff(px, base) > 5000
    });
    save(&px, &format!("layer_unorm_{how}_on"));
    assert!(back, "HUD did not come back after a second {how}");
}

#[test]
fn ctl_hud_toggle_hides_and_shows_the_hud() {
    let h = Harness::new();
    let base = baseline(&h, "unorm");
    let app = App::start(&h, true, "unorm");
    let (shown, px) = wait_for(&h, 20, |px| {
        app_visible(px, &base) && hud_diff(px, &base) > 5000
    });
    assert!(
        shown,
        "HUD never appeared: {} pixels differ",
        hud_diff(&px, &base)
    );
    let pid = app.0.as_ref().expect("running").child.id();
    toggles_twice(&h, &base, "ctl", |h| {
        let out = h.steadyhud(&["ctl", "hud", "toggle"]).output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success()
                && said.starts_with("HUD o")
                && said.contains(&format!("(pid {pid})")),
            "ctl hud toggle: {said} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
    app.stop();
}

#[test]
fn hud_colours_match_on_srgb_swapchains() {
    let h = Harness::new();
    let bar = bytes(view::colors::BAR);
    let (mut counts, mut targets) = (Vec::new(), Vec::new());
    for format in ["unorm", "srgb"] {
        let base = baseline(&h, format);
        let app = App::start(&h, true, format);
        let (ok, px) = wait_for(&h, 20, |px| {
            app_visible(px, &base) && hud_count(px, bar, 4) > 200
        });
        save(&px, &format!("layer_{format}_colours"));
        app.stop();
        assert!(
            ok,
            "{format}: HUD with bars never appeared ({} bar pixels)",
            hud_count(&px, bar, 4)
        );
        let washed = hud_count(&px, washed_out(view::colors::BAR), 4);
        counts.push((format, hud_count(&px, bar, 4), washed));
        targets.push((format, hud_count(&px, bytes(view::colors::TARGET), 4)));
    }
    eprintln!("bar pixels (exact, washed-out): {counts:?}");
    for &(format, exact, washed) in &counts {
        assert!(
            washed * 20 < exact,
            "{format}: {washed} washed-out vs {exact} exact bar pixels"
        );
    }
    // The target line (drawn from the first frame, always the same length)
    // comes out in its exact colour on both.
    for &(format, target) in &targets {
        assert!(
            target >= 200,
            "{format}: only {target} target-line pixels of {:?}",
            bytes(view::colors::TARGET)
        );
    }
}

#[test]
fn no_validation_errors_with_hud_and_resizes() {
    let h = Harness::new();
    h.assert_validation_active();
    // 240 frames at 16.6 ms with two swapchain recreations, then 4 s at 320x240.
    let mut cmd = h.testapp(&[
        "--size",
        "640x480",
        "--frames",
        "240",
        "--resize-at",
        "60:500x400",
        "--resize-at",
        "150:320x240",
        "--hold",
        "4",
    ]);
    let app = spawn(cmd.layer().validation());
    // After the last resize the HUD is drawn into the new, smaller swapchain.
    sleep(Duration::from_millis(4500));
    let bar = bytes(view::colors::BAR);
    let (drawn, px) = wait_for(&h, 10, |px| {
        let (outside, inside) = (at(W - 10, H - 10), at(310, 230));
        hud_count(px, bar, 4) > 50
            && px[outside..outside + 3] == [0, 0, 0]
            && px[inside..inside + 3] != [0, 0, 0]
    });
    save(&px, "layer_validation_after_resize");
    let out = app.wait();
    out.assert_success("testapp with HUD and validation")
        .assert_no_vuid("HUD with resizes");
    assert!(
        out.stdout.contains("swapchain recreations 2"),
        "no resizes happened:\n{}",
        out.stdout
    );
    assert!(
        !out.stderr.contains("HUD disabled"),
        "HUD setup or draw failed:\n{}",
        out.stderr
    );
    assert!(drawn, "no HUD in the resized 320x240 window");
}
