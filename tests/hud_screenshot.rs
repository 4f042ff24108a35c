//! The HUD through the real layer: `steadyhud-testapp` under Xvfb + lavapipe,
//! screenshots of the X root window compared with a run without the layer,
//! the hotkey pressed with xdotool, SRGB swapchains, validation with resizes.
//!
//! Screenshots are kept in `target/hud-shots/` for a human to look at.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};
use steadyhud::hud::view;

const W: u32 = 640;
const H: u32 = 480;
/// Top-left area the HUD is drawn in at 640x480 (scale 1).
const HUD: (u32, u32) = (270, 210);

/// An Xvfb server on a free display, a private XDG tree with the layer
/// manifest, and a log folder; all removed on drop.
struct Session {
    xvfb: Child,
    display: String,
    dir: tempfile::TempDir,
}

impl Session {
    fn new() -> Session {
        let mut xvfb = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", &format!("{W}x{H}x24"), "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is required (apt-get install xvfb)");
        let mut line = String::new();
        BufReader::new(xvfb.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let display = format!(":{}", line.trim());
        let dir = tempfile::tempdir().unwrap();
        let layers = dir.path().join("data/vulkan/implicit_layer.d");
        std::fs::create_dir_all(&layers).unwrap();
        let manifest = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("layer-manifest/VK_LAYER_STEADYHUD_overlay.json"),
        )
        .unwrap()
        .replace("\"libsteadyhud.so\"", &format!("{:?}", layer_lib().display().to_string()));
        std::fs::write(layers.join("VK_LAYER_STEADYHUD_overlay.json"), manifest).unwrap();
        for sub in ["run", "logs", "config"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path().join("run"), std::fs::Permissions::from_mode(0o700)).unwrap();
        Session { xvfb, display, dir }
    }

    fn command(&self, layer: bool, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_steadyhud-testapp"));
        cmd.args(args)
            .env("DISPLAY", &self.display)
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_RUNTIME_DIR", self.dir.path().join("run"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("STEADYHUD_LOG_DIR", self.dir.path().join("logs"))
            .env_remove("STEADYHUD_CONFIG")
            .env_remove("VK_INSTANCE_LAYERS");
        if layer {
            cmd.env("STEADYHUD", "1").env_remove("DISABLE_STEADYHUD");
        } else {
            cmd.env("DISABLE_STEADYHUD", "1");
        }
        cmd
    }

    /// Starts the test app presenting at 60 fps for a long while.
    fn spawn(&self, layer: bool, format: &str) -> App {
        let child = self
            .command(layer, &["--size", &format!("{W}x{H}"), "--format", format, "--frames", "60", "--hold", "60"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        App(child)
    }

    /// The root window as RGB bytes.
    fn screenshot(&self) -> Vec<u8> {
        let out = Command::new("import")
            .args(["-window", "root", "-depth", "8", "rgb:-"])
            .env("DISPLAY", &self.display)
            .output()
            .expect("ImageMagick import is required");
        assert!(out.status.success(), "import failed");
        assert_eq!(out.stdout.len(), (W * H * 3) as usize);
        out.stdout
    }

    fn save(&self, px: &[u8], name: &str) {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../hud-shots");
        std::fs::create_dir_all(&dir).unwrap();
        let raw = self.dir.path().join("shot.rgb");
        std::fs::write(&raw, px).unwrap();
        let png = dir.join(format!("{name}.png"));
        let _ = Command::new("convert")
            .args(["-size", &format!("{W}x{H}"), "-depth", "8"])
            .arg(format!("rgb:{}", raw.display()))
            .arg(&png)
            .status();
        eprintln!("screenshot: {}", png.display());
    }

    fn xdotool(&self, args: &[&str]) {
        let ok = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .status()
            .expect("xdotool is required")
            .success();
        assert!(ok, "xdotool {args:?}");
    }

    /// Presses the default toggle, holding it long enough for the 50 ms poll.
    fn press_toggle(&self) {
        self.xdotool(&["keydown", "Shift_R", "keydown", "F12"]);
        sleep(Duration::from_millis(300));
        self.xdotool(&["keyup", "F12", "keyup", "Shift_R"]);
    }

    /// Screenshots until `pred` holds (or `secs` pass); returns the last one.
    fn wait_for(&self, secs: u64, pred: impl Fn(&[u8]) -> bool) -> (bool, Vec<u8>) {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let px = self.screenshot();
            if pred(&px) {
                return (true, px);
            }
            if Instant::now() > end {
                return (false, px);
            }
            sleep(Duration::from_millis(150));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}

struct App(Child);

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The cdylib cargo built next to the test binaries.
fn layer_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().parent().unwrap().join("libsteadyhud.so");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

/// Pixels of the HUD area that differ between two screenshots.
fn hud_diff(a: &[u8], b: &[u8]) -> usize {
    (0..HUD.1)
        .flat_map(|y| (0..HUD.0).map(move |x| ((y * W + x) * 3) as usize))
        .filter(|&i| (0..3).any(|c| a[i + c].abs_diff(b[i + c]) > 2))
        .count()
}

/// Pixels of the HUD area within `tol` of `rgb`.
fn hud_count(px: &[u8], rgb: [u8; 3], tol: u8) -> usize {
    (0..HUD.1)
        .flat_map(|y| (0..HUD.0).map(move |x| ((y * W + x) * 3) as usize))
        .filter(|&i| (0..3).all(|c| px[i + c].abs_diff(rgb[c]) <= tol))
        .count()
}

fn bytes(c: [f32; 4]) -> [u8; 3] {
    [0, 1, 2].map(|i| (c[i] * 255.0).round() as u8)
}

/// The bar colour as it would look if an SRGB target re-encoded it.
fn washed_out(c: [f32; 4]) -> [u8; 3] {
    let enc = |v: f32| if v <= 0.0031308 { v * 12.92 } else { 1.055 * v.powf(1.0 / 2.4) - 0.055 };
    [0, 1, 2].map(|i| (enc(c[i]) * 255.0).round() as u8)
}

/// The app's frame without the layer, once it is on screen.
fn baseline(s: &Session, format: &str) -> Vec<u8> {
    let app = s.spawn(false, format);
    let black = vec![0u8; (W * H * 3) as usize];
    let (ok, px) = s.wait_for(20, |px| hud_diff(px, &black) > 1000);
    assert!(ok, "test app never drew");
    sleep(Duration::from_millis(300));
    let px2 = s.screenshot();
    assert_eq!(hud_diff(&px, &px2), 0, "the app's own frame is not static");
    drop(app);
    px2
}

#[test]
fn hud_is_drawn_and_the_hotkey_toggles_it() {
    let s = Session::new();
    let base = baseline(&s, "unorm");
    s.save(&base, "layer_unorm_no_layer");

    let _app = s.spawn(true, "unorm");
    let (shown, px) = s.wait_for(20, |px| hud_diff(px, &base) > 5000);
    s.save(&px, "layer_unorm_hud");
    assert!(shown, "HUD never appeared: {} pixels differ", hud_diff(&px, &base));
    let bar = bytes(view::colors::BAR);
    assert!(hud_count(&px, bar, 4) > 50, "no frame-time bars in the HUD");
    // Outside the HUD the app's frame is untouched.
    let far = (((H - 20) * W + (W - 20)) * 3) as usize;
    assert_eq!(&px[far..far + 3], &base[far..far + 3]);

    s.press_toggle();
    let (hidden, px) = s.wait_for(5, |px| hud_diff(px, &base) == 0);
    s.save(&px, "layer_unorm_hud_toggled_off");
    assert!(hidden, "HUD still there after Shift_R+F12: {} pixels differ", hud_diff(&px, &base));

    s.press_toggle();
    let (back, px) = s.wait_for(5, |px| hud_diff(px, &base) > 5000);
    s.save(&px, "layer_unorm_hud_toggled_on");
    assert!(back, "HUD did not come back after a second Shift_R+F12");
}

#[test]
fn hud_colours_match_on_srgb_swapchains() {
    let s = Session::new();
    let bar = bytes(view::colors::BAR);
    let mut counts = Vec::new();
    for format in ["unorm", "srgb"] {
        let base = baseline(&s, format);
        let app = s.spawn(true, format);
        let (ok, px) = s.wait_for(20, |px| hud_diff(px, &base) > 5000 && hud_count(px, bar, 4) > 200);
        s.save(&px, &format!("layer_{format}_colours"));
        drop(app);
        assert!(ok, "{format}: HUD with bars never appeared ({} bar pixels)", hud_count(&px, bar, 4));
        let washed = hud_count(&px, washed_out(view::colors::BAR), 4);
        counts.push((format, hud_count(&px, bar, 4), washed));
    }
    eprintln!("bar pixels (exact, washed-out): {counts:?}");
    for &(format, exact, washed) in &counts {
        assert!(washed * 20 < exact, "{format}: {washed} washed-out vs {exact} exact bar pixels");
    }
    let (u, s) = (counts[0].1 as f64, counts[1].1 as f64);
    assert!(s > 0.5 * u && s < 2.0 * u, "srgb {s} vs unorm {u} bar pixels");
}

#[test]
fn no_validation_errors_with_hud_and_resizes() {
    let s = Session::new();
    let log = s.dir.path().join("app.log");
    let file = std::fs::File::create(&log).unwrap();
    // 240 frames at 16.6 ms (two swapchain recreations), then 4 s at 320x240.
    let mut app = App(
        s.command(true, &["--size", "640x480", "--frames", "240", "--resize-at", "60:500x400", "--resize-at", "150:320x240", "--hold", "4"])
            .env("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation")
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap(),
    );
    // After the last resize the HUD is drawn into the new, smaller swapchain.
    sleep(Duration::from_millis(4500));
    let bar = bytes(view::colors::BAR);
    let (drawn, px) = s.wait_for(10, |px| {
        let outside = (((H - 10) * W + (W - 10)) * 3) as usize;
        hud_count(px, bar, 4) > 50 && px[outside..outside + 3] == [0, 0, 0]
    });
    s.save(&px, "layer_validation_after_resize");
    let status = app.0.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let vuids: Vec<&str> = text.lines().filter(|l| l.contains("VUID-")).collect();
    assert!(vuids.is_empty(), "{} VUID lines:\n{}", vuids.len(), vuids.join("\n"));
    assert!(status.success(), "testapp failed:\n{text}");
    assert!(text.contains("swapchain recreations 2"), "no resizes happened:\n{text}");
    assert!(drawn, "no HUD in the resized 320x240 window:\n{text}");
}
