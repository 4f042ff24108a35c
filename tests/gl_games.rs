//! The GL library (`libsteadyhud_gl.so`) on real OpenGL programs under
//! Xvfb on llvmpipe: glxgears (GLX, linked), es2gears (EGL on X11 and on
//! Wayland), Warzone 2100 (SDL2: `dlopen` + `dlsym`), and the GL test
//! program (`test-programs/gltest`: the game's state across every swap, bad
//! input). Every swap is counted independently by a second preloaded hook
//! (`tests/gl/count_swaps.c`), so "rows = swaps − 1" compares the log with
//! the program's real swaps.

mod common;
mod require;

use common::gl::{
    count_gets_lib, count_swaps_lib, gl_library, gltest_exe, label_pixels, layer_library_64,
    mesa_util, preload, SwapCounts,
};
use common::wayland::{WaylandBed, BED_PROGRAMS};
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// HUD label pixels that mean "the HUD is shown" / "it is not".
const SHOWN: usize = 150;
const HIDDEN: usize = 10;

/// The tools a test needs (skipped or failed without them, see tests/require).
fn have(programs: &[(&str, &str)]) -> bool {
    require::programs(programs)
}

/// Takes screenshots until `pred` holds for the label pixels in `rect`
/// (or `secs` pass); returns whether it held and the last count.
fn wait_label(
    shot: &dyn Fn() -> Screenshot,
    rect: [u32; 4],
    secs: u64,
    pred: impl Fn(usize) -> bool,
) -> (bool, usize) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut last = 0;
    while Instant::now() < deadline {
        last = label_pixels(&shot(), rect);
        if pred(last) {
            return (true, last);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    (false, last)
}

/// The one session log's text, `# api:` and summary checked.
fn check_api(log: &SessionLog, api: &str) {
    let text = std::fs::read_to_string(&log.csv).unwrap();
    assert!(
        text.lines().any(|l| l == format!("# api: {api}")),
        "{}: no `# api: {api}` line",
        log.csv.display()
    );
    assert_eq!(log.summary_json()["api"], api, "{}", log.csv.display());
}

/// Ends a mesa-utils demo the way a player does: Escape to its window
/// (`name` as xdotool finds it), again every second until it exits (a key
/// sent before its window takes input is lost); its output.
fn quit_with_escape(h: &Harness, name: &str, mut game: Running) -> RunOutput {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !game.has_exited() && Instant::now() < deadline {
        let _ = std::process::Command::new("xdotool")
            .args(["search", "--name", name, "key", "--window", "%1", "Escape"])
            .env("DISPLAY", h.xvfb.display())
            .stdin(std::process::Stdio::null())
            .output();
        let tick = Instant::now() + Duration::from_secs(1);
        while !game.has_exited() && Instant::now() < tick {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    game.kill()
}

/// glxgears through `steadyhud run`: the HUD shows (absent without the
/// library), `ctl hud off/on` and the hotkey hide and show it, and at a
/// clean exit the log has one row per swap − 1 (swaps counted by a second
/// hook preloaded before ours), `# api: opengl`, a complete summary.
#[test]
fn glxgears_under_run_logs_every_swap_and_shows_the_hud() {
    let gears = mesa_util("glxgears");
    if !have(&[(&gears, "mesa-utils"), ("xdotool", "xdotool")]) {
        return;
    }
    let h = Harness::new();
    let win = [0, 0, 300, 300];
    let shot = || h.screenshot();

    // Without the library: no HUD.
    let plain = spawn(&mut h.command(&gears));
    std::thread::sleep(Duration::from_secs(2));
    let without = label_pixels(&h.screenshot(), win);
    drop(plain);
    assert!(
        without < HIDDEN,
        "HUD pixels without the library: {without}"
    );

    // In the 32-bit run, `run` finds the 32-bit GL library beside the
    // 32-bit layer build, as for a 32-bit game on a 64-bit system.
    let counts = h.root.path().join("swaps");
    let mut cmd = h.steadyhud(&["run", "--lib"]);
    cmd.arg(layer_library_64()).args(["--", &gears]);
    cmd.env("COUNT_SWAPS_OUT", &counts);
    preload(&mut cmd, &[&count_swaps_lib()]);
    let game = spawn(&mut cmd);

    let (shown, n_on) = wait_label(&shot, win, 20, |n| n > SHOWN);
    let ctl = |args: &[&str]| {
        let out = run(h.steadyhud(&["ctl"]).args(args));
        assert!(out.status.success(), "ctl {args:?}: {}", out.stderr);
        out.stdout
    };
    assert!(ctl(&["hud", "off"]).starts_with("HUD off"));
    let (off, n_off) = wait_label(&shot, win, 10, |n| n < HIDDEN);
    assert!(ctl(&["hud", "on"]).starts_with("HUD on"));
    let (on_again, n_again) = wait_label(&shot, win, 10, |n| n > SHOWN);
    h.xdotool(&["key", "Shift_R+F12"]);
    let (key_off, n_key) = wait_label(&shot, win, 10, |n| n < HIDDEN);
    // A frame cap and a mark through the socket, as for a Vulkan game.
    ctl(&["limit", "30"]);
    ctl(&["mark", "gl", "scene"]);
    std::thread::sleep(Duration::from_secs(1));
    ctl(&["limit", "off"]);
    let out = quit_with_escape(&h, "^glxgears$", game);
    eprintln!(
        "HUD label pixels: without {without}, shown {n_on}, ctl off {n_off}, ctl on {n_again}, \
         hotkey {n_key}"
    );
    assert!(out.status.success(), "glxgears under run: {}", out.stderr);
    assert!(
        shown,
        "no HUD on glxgears ({n_on} label pixels):\n{}",
        out.stderr
    );
    assert!(off && on_again, "ctl hud off/on: {n_off} then {n_again}");
    assert!(key_off, "Shift_R+F12 left {n_key} label pixels");

    let swaps = SwapCounts::read(&counts);
    assert!(swaps.glx > 20, "{swaps:?}");
    let (log, rows) = h.only_session_log_of(swaps.glx, "glxgears");
    check_api(&log, "opengl");
    let text = std::fs::read_to_string(&log.csv).unwrap();
    for want in [
        "# fps_limit: 30 at frame ",
        "# fps_limit: 0 at frame ",
        "# mark: gl scene at frame ",
    ] {
        assert!(
            text.contains(want),
            "no `{want}…` line in {}",
            log.csv.display()
        );
    }
    let summary = log.summary_json();
    assert_eq!(summary["complete"], true, "{summary}");
    assert_eq!(summary["frames"].as_u64(), Some(rows));
}

/// `fps_limit=30` holds 30 on glxgears: frames never come faster than
/// the cap allows, however loaded the machine. The limiter keeps an
/// absolute schedule (a late frame is caught up, one more than an
/// interval late restarts it later), so the swap after frame k starts no
/// earlier than k intervals after the first: n logged frames span at least
/// n − 1 intervals, and the average is never above the cap. (The median
/// frame, 33.3 ms on a quiet machine, is printed: a busy machine moves it
/// either way, so it is a number, not a pass/fail.)
#[test]
fn glxgears_fps_limit_holds_30() {
    let gears = mesa_util("glxgears");
    if !have(&[(&gears, "mesa-utils")]) {
        return;
    }
    let h = Harness::new();
    h.write_config("fps_limit=30\nhud_hidden=1\n");
    let mut cmd = h.command(&gears);
    preload(&mut cmd, &[&gl_library()]);
    let out = run_killed_after(&mut cmd, Duration::from_secs(5));
    let log = h.only_session_log();
    let mut ms: Vec<f64> = logged_durations_ns(&log.csv)
        .iter()
        .map(|&d| d as f64 / 1e6)
        .collect();
    assert!(ms.len() > 60, "{} rows:\n{}", ms.len(), out.stderr);
    let avg = ms.iter().sum::<f64>() / ms.len() as f64;
    ms.sort_by(f64::total_cmp);
    let median = ms[ms.len() / 2];
    eprintln!(
        "fps_limit=30 on glxgears: median {median:.2} ms, average {:.2} fps",
        1000.0 / avg
    );
    // 1e9 / 30 ns per interval; the log's ms have three decimals (half a
    // µs of rounding per row).
    let span: f64 = ms.iter().sum();
    let floor = (ms.len() - 1) as f64 * 33.333 - 0.0005 * ms.len() as f64;
    assert!(
        span >= floor,
        "{} frames in {span:.1} ms: faster than 30 fps ({floor:.1} ms at least)",
        ms.len()
    );
    assert!(1000.0 / avg <= 30.5, "average {:.2} fps", 1000.0 / avg);
}

/// es2gears_x11 (EGL on X11): every swap logged, the HUD drawn, with
/// another tool's hook preloaded after ours.
#[test]
fn es2gears_x11_logs_every_swap_and_shows_the_hud() {
    let gears = mesa_util("es2gears_x11");
    if !have(&[(&gears, "mesa-utils"), ("xdotool", "xdotool")]) {
        return;
    }
    let h = Harness::new();
    let counts = h.root.path().join("swaps");
    let mut cmd = h.command(&gears);
    cmd.env("COUNT_SWAPS_OUT", &counts);
    // The counter after us here (under `run` it comes before): its
    // dlsym(RTLD_NEXT) must find libEGL's function, not its own through
    // ours (it would call itself until the stack ran out), on 64 and on
    // 32 bits alike.
    let (count, gl) = (count_swaps_lib(), gl_library());
    preload(&mut cmd, &[&gl, &count]);
    let game = spawn(&mut cmd);
    let shot = || h.screenshot();
    let (shown, n) = wait_label(&shot, [0, 0, 300, 300], 20, |n| n > SHOWN);
    // A second more of frames after the HUD's first panel (the 32-bit
    // es2gears had swapped only 18 times by then on a fresh root).
    std::thread::sleep(Duration::from_secs(1));
    let out = quit_with_escape(&h, "^es2gears$", game);
    assert!(out.status.success(), "es2gears_x11: {}", out.stderr);
    assert!(
        shown,
        "no HUD on es2gears_x11 ({n} label pixels):\n{}",
        out.stderr
    );
    let swaps = SwapCounts::read(&counts);
    assert!(swaps.egl > 5, "{swaps:?}");
    let (log, _) = h.only_session_log_of(swaps.egl, "es2gears_x11");
    check_api(&log, "opengl");
}

/// The game's state is what it set, across every swap with the HUD shown
/// (the test program reads each item back), its FBO keeps its pixels,
/// and on screen its own pixels outside the HUD are unchanged: GL
/// compatibility and core profiles and GLES 3.
#[test]
fn game_state_and_pixels_untouched() {
    let (w, hgt) = (640u32, 480u32);
    let h = Harness::with_screen(w, hgt);
    for profile in ["compat", "core", "gles3"] {
        h.clear_logs();
        let mut cmd = h.command(gltest_exe());
        cmd.args([
            "--profile",
            profile,
            "--check-state",
            "--frames",
            "150",
            "--fps",
            "30",
        ])
        .args(["--width", &w.to_string(), "--height", &hgt.to_string()]);
        preload(&mut cmd, &[&gl_library()]);
        let mut game = spawn(&mut cmd);
        assert!(
            game.wait_for_line(Duration::from_secs(20), |l| l.starts_with("gltest: ready")),
            "{profile}: the test program did not start"
        );
        let shot = || h.screenshot();
        let (shown, n) = wait_label(&shot, [0, 0, 300, 260], 10, |n| n > SHOWN);
        let s = h.screenshot();
        let out = game.wait();
        assert!(
            out.status.success() && out.stdout.contains("state unchanged across 150 swaps"),
            "{profile}: {}\n{}",
            out.stdout,
            out.stderr
        );
        assert!(shown, "{profile}: no HUD ({n} label pixels)");
        // Right of and below the HUD's corner, the game's own colour.
        let mut other = 0;
        for y in 0..hgt {
            for x in 0..w {
                if (x >= 300 || y >= 260) && s.pixel(x, y) != gltest_window_rgb() {
                    other += 1;
                }
            }
        }
        assert_eq!(other, 0, "{profile}: game pixels outside the HUD changed");
        let (log, _) = h.only_session_log_of(150, profile);
        check_api(&log, "opengl");
    }
}

/// `steadyhud-gltest`'s window colour (test-programs/gltest `WINDOW_RGB`).
fn gltest_window_rgb() -> [u8; 3] {
    [40, 90, 160]
}

/// Bad input: a GLES 2 context (no HUD), a context current on another
/// thread, a window destroyed between two swaps: one line each, the
/// program runs to its end, its frames are logged.
#[test]
fn bad_input_costs_one_line_each() {
    let h = Harness::new();
    let gltest = |args: &[&str], env: &[(&str, &str)]| {
        h.clear_logs();
        let mut cmd = h.command(gltest_exe());
        cmd.args(args).args(["--fps", "100"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        preload(&mut cmd, &[&gl_library()]);
        let out = run(&mut cmd);
        assert!(
            out.status.success(),
            "{args:?}: {}\n{}",
            out.stdout,
            out.stderr
        );
        out
    };
    let lines =
        |out: &RunOutput, what: &str| out.stderr.lines().filter(|l| l.contains(what)).count();

    let out = gltest(
        &["--profile", "gles2", "--frames", "40"],
        &[("MESA_GLES_VERSION_OVERRIDE", "2.0")],
    );
    assert_eq!(
        lines(&out, "steadyhud: no HUD in this GL context: GLES 2.0"),
        1,
        "{}",
        out.stderr
    );
    h.only_session_log_of(40, "GLES 2");

    let out = gltest(&["--other-thread", "--frames", "40"], &[]);
    assert_eq!(lines(&out, "no current GL context"), 1, "{}", out.stderr);
    h.only_session_log_of(40, "context on another thread");

    let out = gltest(&["--destroy-window-at", "10", "--frames", "30"], &[]);
    assert_eq!(
        lines(&out, "was destroyed; its session log ends here (9 frames)"),
        1,
        "{}",
        out.stderr
    );
    assert_eq!(
        lines(&out, "a swap of a destroyed window"),
        1,
        "{}",
        out.stderr
    );
    let logs = h.session_logs();
    assert_eq!(logs.len(), 2, "one log per window: {logs:?}");
    let rows: Vec<usize> = logs
        .iter()
        .map(|l| logged_durations_ns(&l.csv).len())
        .collect();
    // 10 swaps of the first window, 30 − 10 of the second (the two swaps
    // of the dead window are passed through).
    assert_eq!(rows, [19, 9], "rows of each window's log (sorted by name)");
    let complaints: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("panicked"))
        .collect();
    assert!(complaints.is_empty(), "{complaints:?}");
}

/// A process that loads the library but never swaps (glxinfo: a context,
/// no swap) starts nothing and writes nothing; a blacklisted one passes
/// everything through (no log, one line).
#[test]
fn never_swapping_or_blacklisted_leaves_no_trace() {
    let glxinfo = mesa_util("glxinfo");
    if !have(&[(&glxinfo, "mesa-utils")]) {
        return;
    }
    let h = Harness::new();
    let mut cmd = h.command(&glxinfo);
    cmd.arg("-B");
    preload(&mut cmd, &[&gl_library()]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stdout.contains("OpenGL renderer"), "{}", out.stdout);
    assert!(!out.stderr.contains("steadyhud"), "{}", out.stderr);
    assert_eq!(list_dir(&h.log_dir), Vec::<std::path::PathBuf>::new());

    h.write_config("blacklist=steadyhud-gltest\n");
    let mut cmd = h.command(gltest_exe());
    cmd.args(["--frames", "20", "--fps", "100"]);
    preload(&mut cmd, &[&gl_library()]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stdout.contains("gltest: swaps 20"), "{}", out.stdout);
    let said: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("steadyhud:"))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("blacklist"), "{said:?}");
    assert_eq!(list_dir(&h.log_dir), Vec::<std::path::PathBuf>::new());
}

/// A 64-bit game of Debian's at `path` (in /usr/games, which root's PATH
/// lacks), else `package`'s program on PATH; `None` in the 32-bit pass (the
/// 64-bit one covers it) or when missing (a skip, or a failure where skips
/// are not allowed).
fn debian_game(path: &str, package: &str) -> Option<String> {
    if skip_in_i686(&format!("Debian's {package} is a 64-bit game")) {
        return None;
    }
    if Path::new(path).is_file() {
        Some(path.to_string())
    } else if require::on_path(package) {
        Some(package.to_string())
    } else {
        require::skip_or_fail(&format!(
            "not installed: `{package}` (apt-get install {package})"
        ));
        None
    }
}

/// Where Debian installs Warzone 2100.
const WARZONE: &str = "/usr/games/warzone2100";

/// Warzone 2100 on OpenGL under `steadyhud run` (SDL2 finds GL through
/// `dlopen` + `dlsym`): HUD drawn, frames logged as opengl; the same game
/// on Vulkan writes exactly one log, through the layer.
#[test]
fn warzone_2100_opengl_through_dlsym_and_vulkan_once() {
    let Some(game) = debian_game(WARZONE, "warzone2100") else {
        return;
    };
    let h = Harness::with_screen(800, 600);
    let lib = layer_library();
    for backend in ["opengl", "vulkan"] {
        h.clear_logs();
        let config = h.root.path().join(format!("wz-{backend}"));
        std::fs::create_dir_all(&config).unwrap();
        let mut cmd = h.steadyhud(&["run", "--lib"]);
        cmd.arg(&lib)
            .args(["--", &game, "--window", "--resolution=800x600", "--nosound"])
            .arg(format!("--gfxbackend={backend}"))
            .arg(format!("--configdir={}", config.display()));
        let running = spawn(&mut cmd);
        let shot = || h.screenshot();
        let (shown, n) = wait_label(&shot, [0, 0, 300, 260], 60, |n| n > SHOWN);
        // Let it log a while past the first frames.
        std::thread::sleep(Duration::from_secs(2));
        let out = running.terminate();
        assert!(
            shown,
            "{backend}: no HUD on Warzone 2100 ({n} label pixels):\n{}",
            tail(&out.stderr, 30)
        );
        let log = h.only_session_log();
        let rows = logged_durations_ns(&log.csv).len();
        assert!(rows > 30, "{backend}: {rows} rows");
        check_api(&log, backend);
    }
}

/// es2gears_wayland under headless sway: the HUD drawn on an EGL Wayland
/// surface, toggled by the Wayland hotkey.
#[test]
fn es2gears_wayland_hud_and_hotkey() {
    let gears = mesa_util("es2gears_wayland");
    let mut tools = BED_PROGRAMS.to_vec();
    tools.push((&gears, "mesa-utils"));
    if !have(&tools) {
        return;
    }
    let bed = WaylandBed::start(640, 480);
    let gl = bed.install(&gl_library());
    let mut cmd = bed.command(&gears);
    preload(&mut cmd, &[&gl]);
    let game = spawn(&mut cmd);
    let shot = || bed.screenshot();
    let all = [0, 0, 640, 480];
    let (shown, n_on) = wait_label(&shot, all, 20, |n| n > SHOWN);
    // The keyboard is bound at a swap after the analysis thread loaded the
    // Wayland libraries, which may come after the HUD's first panel: a key
    // pressed before that is lost, as on a real seat. Once more if so.
    std::thread::sleep(Duration::from_secs(1));
    bed.press("Shift_R+F12");
    let (mut hidden, mut n_off) = wait_label(&shot, all, 5, |n| n < HIDDEN);
    if !hidden {
        bed.press("Shift_R+F12");
        (hidden, n_off) = wait_label(&shot, all, 5, |n| n < HIDDEN);
    }
    bed.press("Shift_R+F12");
    let (back, n_back) = wait_label(&shot, all, 10, |n| n > SHOWN);
    let out = game.kill();
    eprintln!("es2gears_wayland label pixels: {n_on}, after the key {n_off}, again {n_back}");
    assert!(
        shown,
        "no HUD on es2gears_wayland ({n_on}):\n{}\n{}",
        out.stderr,
        bed.compositor_log()
    );
    assert!(
        hidden && back,
        "Wayland hotkey: {n_off} then {n_back}:\n{}",
        out.stderr
    );
    let logs = session_logs_in(&bed.log_dir);
    assert_eq!(logs.len(), 1, "{logs:?}");
    check_api(&logs[0], "opengl");
}

/// Issue 40: a window that comes back (SDL's video restart, a recreated
/// Wayland window) is logged again. The test program ends its window and
/// makes a new one 5 times with the same context: EGL destroys and
/// recreates its surface and X window (Mesa hands out the old surface's
/// address again), GLX its X window and a `glXCreateWindow` drawable
/// (ended by `glXDestroyWindow`). Six windows: six logs of every frame,
/// and the HUD drawn in each.
#[test]
fn a_window_that_comes_back_is_logged_again() {
    let h = Harness::new();
    for profile in ["gles3", "core"] {
        h.clear_logs();
        let mut cmd = h.command(gltest_exe());
        cmd.args(["--profile", profile, "--recreate-every", "45"])
            .args(["--frames", "270", "--fps", "30"]);
        preload(&mut cmd, &[&gl_library()]);
        let mut game = spawn(&mut cmd);
        let mut keys = Vec::new();
        let mut huds = Vec::new();
        for k in 1..=6u32 {
            let start = if k == 1 {
                "gltest: ready".to_string()
            } else {
                format!("gltest: window {k} ")
            };
            assert!(
                game.wait_for_line(Duration::from_secs(30), |l| l.starts_with(&start)),
                "{profile}: no window {k}"
            );
            let shot = || h.screenshot();
            huds.push(wait_label(&shot, [0, 0, 300, 260], 3, |n| n > SHOWN).1);
        }
        let out = game.wait();
        assert!(
            out.status.success(),
            "{profile}: {}\n{}",
            out.stdout,
            out.stderr
        );
        for l in out.stdout.lines() {
            if let Some((_, key)) = l.split_once(" key ") {
                keys.push(key.to_string());
            }
        }
        let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
        eprintln!(
            "{profile}: window keys {keys:?} ({} distinct), HUD label pixels {huds:?}",
            distinct.len()
        );
        assert_eq!(keys.len(), 6, "{}", out.stdout);
        if profile == "gles3" {
            // Otherwise the test would not try what it is about.
            assert!(distinct.len() < 6, "no surface address came back: {keys:?}");
        }
        assert!(
            huds.iter().all(|&n| n > SHOWN),
            "{profile}: HUD per window {huds:?}"
        );
        let logs = h.session_logs();
        let rows: Vec<usize> = logs
            .iter()
            .map(|l| logged_durations_ns(&l.csv).len())
            .collect();
        assert_eq!(
            rows, [44; 6],
            "{profile}: rows per window's log\n{}",
            out.stderr
        );
        assert_eq!(
            out.stderr
                .matches("was destroyed; its session log ends here")
                .count(),
            5,
            "{profile}: {}",
            out.stderr
        );
    }
}

/// Issue 40: the HUD causes no GL error and leaves the state a game may
/// have alone, in every context a game can have: GL 3.0, 3.1, 3.3 core
/// and compatibility, 4.5 core and compatibility, GLES 3.0 and 3.2
/// (Mesa's version overrides on llvmpipe). The test program checks
/// `glGetError` after every swap, and alpha test, back-face polygon mode,
/// clip distances, sample mask, primitive restart and the indexed state
/// of index 1 (`--check-errors`).
#[test]
fn the_hud_raises_no_gl_error_in_any_context() {
    let h = Harness::new();
    let cases: [(&str, &str, &str, &str); 8] = [
        ("compat", "MESA_GL_VERSION_OVERRIDE", "3.0", "GL 3.0 compat"),
        ("compat", "MESA_GL_VERSION_OVERRIDE", "3.1", "GL 3.1 compat"),
        ("core", "MESA_GL_VERSION_OVERRIDE", "3.3", "GL 3.3"),
        (
            "compat",
            "MESA_GL_VERSION_OVERRIDE",
            "3.3COMPAT",
            "GL 3.3 compat",
        ),
        ("core", "MESA_GL_VERSION_OVERRIDE", "4.5", "GL 4.5"),
        (
            "compat",
            "MESA_GL_VERSION_OVERRIDE",
            "4.5COMPAT",
            "GL 4.5 compat",
        ),
        ("gles3", "MESA_GLES_VERSION_OVERRIDE", "3.0", "GLES 3.0"),
        ("gles3", "MESA_GLES_VERSION_OVERRIDE", "3.2", "GLES 3.2"),
    ];
    let mut failed = Vec::new();
    for (profile, var, version, label) in cases {
        h.clear_logs();
        let mut cmd = h.command(gltest_exe());
        cmd.args([
            "--profile",
            profile,
            "--check-errors",
            "--frames",
            "40",
            "--fps",
            "60",
        ])
        .env(var, version);
        preload(&mut cmd, &[&gl_library()]);
        let out = run(&mut cmd);
        let want = format!("no GL error and extra state unchanged across 40 swaps ({label})");
        eprintln!("{label}: {}", out.stdout.lines().last().unwrap_or(""));
        if !out.status.success() || !out.stdout.contains(&want) || out.stderr.contains("no HUD") {
            failed.push(format!("{label}: {}\n{}", out.stdout, out.stderr));
            continue;
        }
        // The HUD drew (no "no HUD" line) and every swap was logged.
        h.only_session_log_of(40, label);
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Issue 40: context records die with their context and display. The test
/// program loses its context 5 times as a game whose display goes does
/// (EGL: `eglTerminate`; GLX: `XCloseDisplay`; no destroy call first) and
/// makes display, window and context anew, each time with 8 buffers of
/// its own (names 1–8, the names the HUD's objects had before) checked
/// around every swap with `glGetError`, the HUD shown. Every buffer keeps
/// its bytes, no GL error, and each of the 6 windows has its own log (a
/// new X connection hands out the old window's id again).
#[test]
fn contexts_and_displays_that_go_take_their_records() {
    let h = Harness::new();
    for profile in ["gles3", "core", "compat"] {
        h.clear_logs();
        let mut cmd = h.command(gltest_exe());
        cmd.args(["--profile", profile, "--lose-context-every", "20"])
            .args(["--frames", "120", "--fps", "30"]);
        preload(&mut cmd, &[&gl_library()]);
        let out = run(&mut cmd);
        assert!(
            out.status.success()
                && out
                    .stdout
                    .contains("buffers unchanged across 120 swaps in 6 contexts"),
            "{profile}: {}\n{}",
            out.stdout,
            out.stderr
        );
        assert!(!out.stderr.contains("no HUD"), "{profile}: {}", out.stderr);
        let rows: Vec<usize> = h
            .session_logs()
            .iter()
            .map(|l| logged_durations_ns(&l.csv).len())
            .collect();
        assert_eq!(rows, [19; 6], "{profile}: rows per window\n{}", out.stderr);
    }
}

/// Issue 40: the real functions come from the library the game opened.
/// A game linked to the system's libGL that swaps through a bundled libGL
/// it `dlopen`s `RTLD_LOCAL` (`tests/gl/bundled_game.c`) reaches the
/// bundled copy's swap (it counts), logged by us; and Xlib opened as SDL
/// opens it (`RTLD_LOCAL`, `tests/gl/x11_local.c`), with a libGL that has
/// no Xlib behind it on the library path, still has its window destroyed
/// by the `XDestroyWindow` we hand out.
#[test]
fn real_functions_come_from_the_library_the_game_opened() {
    if !have(&[("gcc", "gcc")]) {
        return;
    }
    let h = Harness::new();
    let dir = h.root.path().join("libs");
    for d in ["bundled", "fake"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let m32: &[&str] = if i686() { &["-m32"] } else { &[] };
    let with = |extra: &[&'static str]| -> Vec<&str> { m32.iter().chain(extra).copied().collect() };
    let bundled = dir.join("bundled/libGL.so.1");
    build_c(
        "tests/gl/bundled_gl.c",
        &bundled,
        &with(&["-shared", "-fPIC", "-Wl,-soname,libGL.so.1"]),
        &[],
    );
    let game = dir.join("bundled_game");
    build_c(
        "tests/gl/bundled_game.c",
        &game,
        &with(&[]),
        &["-l:libGL.so.1", "-l:libX11.so.6", "-ldl"],
    );
    let counts = h.root.path().join("bundled-swaps");
    let mut cmd = h.command(&game);
    cmd.arg(&bundled)
        .arg("60")
        .env("BUNDLED_SWAPS_OUT", &counts);
    preload(&mut cmd, &[&gl_library()]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let swaps = std::fs::read(&counts)
        .ok()
        .and_then(|b| {
            b.get(..8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap()))
        })
        .unwrap_or(0);
    assert_eq!(
        swaps, 60,
        "swaps that reached the bundled libGL\n{}",
        out.stderr
    );
    h.only_session_log_of(60, "bundled libGL");

    let fake = dir.join("fake/libGL.so.1");
    build_c("tests/gl/empty.c", &fake, &with(&["-shared", "-fPIC"]), &[]);
    let x11 = dir.join("x11_local");
    build_c("tests/gl/x11_local.c", &x11, &with(&[]), &["-ldl"]);
    let mut cmd = h.command(&x11);
    cmd.env("LD_LIBRARY_PATH", dir.join("fake"));
    preload(&mut cmd, &[&gl_library()]);
    let out = run(&mut cmd);
    assert!(
        out.status.success() && out.stdout.contains("the window is gone"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
}

/// Issue 40: a real GL program that forks children (no exec) that swap
/// while its main thread swaps with the HUD shown: no child hangs. (The
/// deterministic case, a lock held at the fork, is the GL library's unit
/// test `a_forked_child_swaps_through_locks_held_at_the_fork`.)
#[test]
fn forked_children_that_swap_never_hang() {
    let h = Harness::new();
    let mut cmd = h.command(gltest_exe());
    cmd.args(["--profile", "gles3", "--fork-children", "50"])
        .args(["--frames", "240", "--fps", "60"]);
    preload(&mut cmd, &[&gl_library()]);
    let out = run(&mut cmd);
    assert!(
        out.status.success() && out.stdout.contains("50 forked children swapped, 0 hung"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    h.only_session_log_of(240, "the forking program");
}

/// RetroArch's configuration for [`retroarch_gl_menu_under_run`]: the GL
/// video driver, the still RGUI menu (no clock, no particles), no audio,
/// Escape quits at once.
const RETROARCH_CFG: &str = "video_driver = \"gl\"\nmenu_driver = \"rgui\"\n\
video_fullscreen = \"false\"\naudio_driver = \"null\"\naudio_enable = \"false\"\n\
input_driver = \"x\"\njoypad_driver = \"null\"\npause_nonactive = \"false\"\n\
config_save_on_exit = \"false\"\nquit_press_twice = \"false\"\n\
menu_timedate_enable = \"false\"\nmenu_battery_level_enable = \"false\"\n\
rgui_particle_effect = \"0\"\nmenu_show_start_screen = \"false\"\n\
video_font_enable = \"false\"\nmenu_core_enable = \"false\"\n";

/// Issue 40: a real GL program, RetroArch (Debian) with its GL menu, under
/// `steadyhud run`: the HUD drawn, one row per swap − 1 (swaps counted by a
/// second hook preloaded before ours), and outside the HUD the picture the
/// same as without the library.
#[test]
fn retroarch_gl_menu_under_run() {
    if !have(&[
        ("retroarch", "retroarch"),
        ("dbus-run-session", "dbus"),
        ("xdotool", "xdotool"),
    ]) {
        return;
    }
    if i686() {
        // Debian's RetroArch is 64-bit: the 64-bit pass covers it.
        return;
    }
    let h = Harness::with_screen(1024, 768);
    let home = h.root.path().join("retroarch");
    std::fs::create_dir_all(&home).unwrap();
    let cfg = home.join("retroarch.cfg");
    std::fs::write(&cfg, RETROARCH_CFG).unwrap();
    // Without a session bus its GameMode client aborts (TESTBED).
    let retroarch = |with_lib: bool| {
        let mut cmd = h.command("dbus-run-session");
        cmd.arg("--");
        if with_lib {
            cmd.arg(steadyhud_exe())
                .args(["run", "--lib"])
                .arg(layer_library_64())
                .arg("--");
        }
        cmd.args(["retroarch", "--config"])
            .arg(&cfg)
            .env("HOME", &home);
        cmd
    };
    let plain = spawn(&mut retroarch(false));
    std::thread::sleep(Duration::from_secs(6));
    let without = h.screenshot();
    quit_with_escape(&h, "RetroArch", plain);

    let counts = h.root.path().join("swaps");
    let mut cmd = retroarch(true);
    cmd.env("COUNT_SWAPS_OUT", &counts);
    preload(&mut cmd, &[&count_swaps_lib()]);
    let game = spawn(&mut cmd);
    std::thread::sleep(Duration::from_secs(6));
    let shot = || h.screenshot();
    let (shown, n) = wait_label(&shot, [0, 0, 300, 260], 20, |n| n > SHOWN);
    let with = h.screenshot();
    let out = quit_with_escape(&h, "RetroArch", game);
    assert!(
        shown,
        "no HUD on RetroArch ({n} label pixels):\n{}",
        out.stderr
    );
    // Outside the HUD's corner, the menu's pixels as without the library.
    let (mut differ, mut seen) = (0usize, 0usize);
    for y in 0..with.height.min(without.height) {
        for x in 0..with.width.min(without.width) {
            if x < 300 && y < 260 {
                continue;
            }
            seen += 1;
            if !close(with.pixel(x, y), without.pixel(x, y), 2) {
                differ += 1;
            }
        }
    }
    // The menu is on screen (text and background), not a blank window.
    let colours: std::collections::BTreeSet<[u8; 3]> = (0..without.height)
        .step_by(4)
        .flat_map(|y| (0..without.width).step_by(4).map(move |x| (x, y)))
        .map(|(x, y)| without.pixel(x, y))
        .collect();
    eprintln!(
        "RetroArch: HUD label pixels {n}; {differ} of {seen} pixels outside the HUD differ; {} colours in the menu",
        colours.len()
    );
    assert!(colours.len() >= 3, "no menu on screen: {colours:?}");
    assert!(differ == 0, "{differ} pixels outside the HUD changed");
    let swaps = SwapCounts::read(&counts);
    assert!(swaps.glx > 20, "{swaps:?}\n{}", out.stderr);
    let (log, _) = h.only_session_log_of(swaps.glx, "RetroArch");
    check_api(&log, "opengl");
}

/// Who measures a zink game is what the process says, not its environment
/// (issue 40): the GL library leaves a GL-on-Vulkan context to the layer
/// exactly when an instance was made through the active layer in the same
/// process (the layer's mark, `steadyhud_config::LAYER_MARK`). zink does
/// not run on Xvfb here (no DRI3; in the sid root under headless sway it
/// makes its swapchain through the layer, but no GL client there ever
/// presented): so the test program makes a Vulkan instance first, as zink
/// does when it makes its screen, and Mesa's driconf `force_gl_renderer`
/// names the llvmpipe context `zink …`. Each way the layer can be loaded or
/// kept out, the library stays out (a line, no GL log) where the layer
/// loaded and measures (one log of every swap) where it did not: before
/// the mark it read `STEADYHUD` and `VK_INSTANCE_LAYERS`, so
/// `VK_LOADER_LAYERS_ENABLE` had both count a zink game and
/// `VK_LOADER_LAYERS_DISABLE` neither.
#[test]
fn zink_is_left_to_the_layer_only_where_the_layer_is_active() {
    const FRAMES: u64 = 20;
    const STAYS_OUT: &str = "steadyhud: this GL context runs on Vulkan";
    let h = Harness::new();
    let layer = steadyhud_config::LAYER_NAME;
    let game = |cmd: &mut std::process::Command| {
        cmd.args(["--vulkan-instance", "--fps", "0", "--frames"])
            .arg(FRAMES.to_string())
            .env("force_gl_renderer", "zink (steadyhud test: llvmpipe)");
    };
    // (case, environment, whether the layer is active)
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], bool);
    let cases: [Case; 5] = [
        ("the layer off", &[], false),
        ("STEADYHUD=1", &[("STEADYHUD", "1")], true),
        (
            "VK_LOADER_LAYERS_ENABLE",
            &[("VK_LOADER_LAYERS_ENABLE", layer)],
            true,
        ),
        (
            "STEADYHUD=1, VK_LOADER_LAYERS_DISABLE",
            &[("STEADYHUD", "1"), ("VK_LOADER_LAYERS_DISABLE", layer)],
            false,
        ),
        ("steadyhud run", &[], true),
    ];
    for (what, env, layer_active) in cases {
        h.clear_logs();
        let mut cmd = if what == "steadyhud run" {
            let mut c = h.steadyhud(&["run", "--lib"]);
            c.arg(layer_library_64()).arg("--").arg(gltest_exe());
            c
        } else {
            let mut c = h.command(gltest_exe());
            preload(&mut c, &[&gl_library()]);
            c
        };
        game(&mut cmd);
        cmd.envs(env.iter().copied());
        let out = run(&mut cmd);
        assert!(
            out.status.success() && out.stdout.contains("gltest: vulkan instance made"),
            "{what}: {}\n{}",
            out.stdout,
            out.stderr
        );
        let said = out.stderr.contains(STAYS_OUT);
        let logs = h.session_logs();
        if layer_active {
            assert!(
                said && logs.is_empty(),
                "{what}: the layer is active, yet the GL library measured ({} logs):\n{}",
                logs.len(),
                out.stderr
            );
        } else {
            assert!(!said, "{what}: the layer is not active:\n{}", out.stderr);
            let (log, _) = h.only_session_log_of(FRAMES, what);
            check_api(&log, "opengl");
        }
    }
}

/// Issue 40: the shown HUD reads less of the game's state per swap. Each
/// `glGet*` / `glIsEnabled*` waits for a threaded GL's queue (Mesa's
/// glthread, NVIDIA's threaded optimisation), and the HUD used to read ~53
/// items on every shown swap. Now a swap that only draws the cached panel
/// reads what that draw changes (no pixel unpacking, clear colour or read
/// framebuffer, no clip distances: the shader writes them), and the full
/// set is read only when the panel is rendered anew (~10 times a second).
/// Counted by a second tool's hook (`tests/gl/count_gets.c`, preloaded
/// after ours: the query functions the HUD looks up are its counting
/// wrappers); the test program itself queries nothing per frame.
#[test]
fn the_shown_hud_reads_less_state_per_swap() {
    const FRAMES: usize = 120;
    let h = Harness::new();
    for profile in ["compat", "core", "gles3"] {
        h.clear_logs();
        let counts = h.root.path().join(format!("gets-{profile}"));
        let mut cmd = h.command(gltest_exe());
        cmd.args(["--profile", profile, "--frames"])
            .arg(FRAMES.to_string())
            .env("COUNT_GETS_OUT", &counts);
        preload(&mut cmd, &[&gl_library(), &count_gets_lib()]);
        let out = run(&mut cmd);
        assert!(out.status.success(), "{profile}: {}", out.stderr);
        let per_swap: Vec<u32> = std::fs::read_to_string(&counts)
            .unwrap_or_else(|e| panic!("{profile}: no counts ({e}):\n{}", out.stderr))
            .lines()
            .map(|l| l.parse().expect("a count"))
            .collect();
        assert_eq!(per_swap.len(), FRAMES, "{profile}: swaps counted");
        // The first swap makes the HUD (its objects, the font): left out.
        let mut seen: std::collections::BTreeMap<u32, usize> = Default::default();
        for &n in &per_swap[1..] {
            *seen.entry(n).or_default() += 1;
        }
        let (&quad, &quad_swaps) = seen.iter().max_by_key(|(_, &k)| k).expect("counts");
        let render = *seen.keys().max().expect("counts");
        eprintln!("{profile}: queries per swap (count: swaps) {seen:?}");
        assert!(quad > 0, "{profile}: the HUD read nothing: not drawn?");
        assert!(
            quad <= 40 && quad < render && quad_swaps * 2 > FRAMES,
            "{profile}: most swaps made {quad} queries (the panel's renders {render}): {seen:?}"
        );
    }
}

/// Where Debian installs SuperTuxKart.
const SUPERTUXKART: &str = "/usr/games/supertuxkart";

/// The direct children of `pid` (`/proc/PID/task/PID/children`).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// The pixels at which `shots` of one screen do not all agree (the game's
/// own animation), and those within 2 pixels of them (a glow's fringe
/// changes in phases a few shots can miss).
fn moving(shots: &[Screenshot]) -> std::collections::HashSet<(u32, u32)> {
    let first = &shots[0];
    let mut seen = std::collections::HashSet::new();
    for s in &shots[1..] {
        for y in 0..first.height.min(s.height) {
            for x in 0..first.width.min(s.width) {
                if !close(first.pixel(x, y), s.pixel(x, y), 2) {
                    seen.insert((x, y));
                }
            }
        }
    }
    let mut set = std::collections::HashSet::new();
    for &(x, y) in &seen {
        for dy in -2i64..=2 {
            for dx in -2i64..=2 {
                let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                if nx >= 0 && ny >= 0 {
                    set.insert((nx as u32, ny as u32));
                }
            }
        }
    }
    set
}

/// Distinct colours on a 4-pixel grid of `s`.
fn colours(s: &Screenshot) -> usize {
    (0..s.height)
        .step_by(4)
        .flat_map(|y| (0..s.width).step_by(4).map(move |x| (x, y)))
        .map(|(x, y)| s.pixel(x, y))
        .collect::<std::collections::BTreeSet<[u8; 3]>>()
        .len()
}

/// The share of the pixels where `keep` holds that `a` and `b` agree on.
fn agree(a: &Screenshot, b: &Screenshot, keep: &dyn Fn(u32, u32) -> bool) -> f64 {
    let (mut same, mut all) = (0usize, 0usize);
    for y in 0..a.height.min(b.height) {
        for x in 0..a.width.min(b.width) {
            if keep(x, y) {
                all += 1;
                same += usize::from(close(a.pixel(x, y), b.pixel(x, y), 2));
            }
        }
    }
    same as f64 / all.max(1) as f64
}

/// The game's screen once it is up and still: colourful (a game, not a
/// black window) and, where `keep` holds, the same within 1 % in three
/// screenshots a second apart (SuperTuxKart's one pulsing button is
/// 0.6 %). A loaded machine can show the HUD over black frames for
/// seconds before the game draws its screen. `None` after `secs`.
fn still_screen(h: &Harness, keep: &dyn Fn(u32, u32) -> bool, secs: u64) -> Option<Screenshot> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut last = h.screenshot();
    let mut calm = 0;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_secs(1));
        let s = h.screenshot();
        calm = if colours(&s) >= 10 && agree(&s, &last, keep) > 0.99 {
            calm + 1
        } else {
            0
        };
        last = s;
        if calm >= 2 {
            return Some(last);
        }
    }
    None
}

/// Issue 40: SuperTuxKart 1.4 (Debian, GL) under `steadyhud run`: the HUD
/// drawn, its frames logged, and outside the HUD's corner its picture the
/// same as without the library. Its first-run screen (a new player and
/// the question about the Internet) is what a fresh home shows; the one
/// pulsing button there is measured in the plain run (pixels that change
/// between its screenshots) and left out. It ignores SIGTERM (TESTBED):
/// it is killed, and `run` then adds the rows after the log's last flush
/// from the present tail.
#[test]
fn supertuxkart_under_run() {
    let Some(game) = debian_game(SUPERTUXKART, "supertuxkart") else {
        return;
    };
    let (w, hgt) = (800u32, 600u32);
    let h = Harness::with_screen(w, hgt);
    let home = h.root.path().join("stk-home");
    std::fs::create_dir_all(&home).unwrap();
    let stk = |cmd: &mut std::process::Command| {
        cmd.arg(&game)
            .args(["--windowed", &format!("--screensize={w}x{hgt}")])
            .env("HOME", &home);
    };
    let hud = [0, 0, 300, 260];
    let outside = |x: u32, y: u32| x >= hud[2] || y >= hud[3];

    // With the library first: its first start fills the texture cache
    // (minutes on llvmpipe), which the plain run then reuses.
    let mut cmd = h.steadyhud(&["run", "--lib"]);
    cmd.arg(layer_library_64()).arg("--");
    stk(&mut cmd);
    let running = spawn(&mut cmd);
    let shot = || h.screenshot();
    let (shown, n) = wait_label(&shot, hud, 300, |n| n > SHOWN);
    let with = still_screen(&h, &outside, 300);
    let pids = children(running.pid());
    for &p in &pids {
        // SAFETY: kill(2) of the game `run` started.
        unsafe { libc::kill(p as libc::pid_t, libc::SIGKILL) };
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut running = running;
    while !running.has_exited() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = running.kill();
    assert!(
        shown,
        "no HUD on SuperTuxKart ({n} label pixels; game pids {pids:?}):\n{}",
        tail(&out.stderr, 30)
    );
    let with = with.expect("SuperTuxKart's screen never came up still under the library");
    let log = h.only_session_log();
    let rows = logged_durations_ns(&log.csv).len();
    assert!(rows > 10, "{rows} rows:\n{}", tail(&out.stderr, 30));
    let text = std::fs::read_to_string(&log.csv).unwrap();
    assert!(text.contains("# api: opengl"), "{}", log.csv.display());

    // Without the library: the same screen, once it is up.
    let mut plain_cmd = h.command(&game);
    plain_cmd.args(["--windowed", &format!("--screensize={w}x{hgt}")]);
    plain_cmd.env("HOME", &home);
    let plain = spawn(&mut plain_cmd);
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut share = 0.0;
    while Instant::now() < deadline {
        let Some(s) = still_screen(&h, &outside, 300) else {
            break;
        };
        share = agree(&s, &with, &outside);
        if share > 0.98 {
            break;
        }
    }
    // Two seconds of its animation, a shot every 200 ms.
    let shots: Vec<Screenshot> = (0..10)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(200));
            h.screenshot()
        })
        .collect();
    // SAFETY: kill(2) of our own child.
    unsafe { libc::kill(plain.pid() as libc::pid_t, libc::SIGKILL) };
    drop(plain.kill());
    assert!(
        share > 0.98,
        "the plain run never showed the same still screen ({share:.3})"
    );
    let anim = moving(&shots);
    let (mut differ, mut seen) = (0usize, 0usize);
    for y in 0..hgt {
        for x in 0..w {
            if !outside(x, y) || anim.contains(&(x, y)) {
                continue;
            }
            seen += 1;
            if !close(with.pixel(x, y), shots[0].pixel(x, y), 2) {
                differ += 1;
            }
        }
    }
    let colours = colours(&shots[0]);
    eprintln!(
        "SuperTuxKart: HUD label pixels {n}; {rows} rows; {} animated pixels left out; \
         {differ} of {seen} pixels outside the HUD differ; {} colours",
        anim.len(),
        colours
    );
    assert!(colours >= 10, "no game on screen: {colours} colours");
    assert!(
        anim.len() * 20 < (w * hgt) as usize,
        "{} of the game's pixels move: too many to compare",
        anim.len()
    );
    assert_eq!(differ, 0, "{differ} pixels outside the HUD changed");
}
