//! Games through Steam and Proton, with the real layer in the test app
//! (Xvfb + lavapipe): a process whose `argv[0]` is a Windows path, as under
//! Wine, is named after the `.exe` (log file, `ctl list`, summary), gets its
//! per-game config file on top of the global one (the frame cap measured in
//! its log, the HUD corner seen in a screenshot); blacklisted processes
//! (`steamwebhelper`, or listed with `blacklist=`) present with the layer
//! loaded but inert; several processes of one game each log under their
//! own pid and all show in `ctl list`.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

const W: u32 = 640;
const H: u32 = 480;
const GAME: &str = "Game-Win64-Shipping";
const WINE_ARGV0: &str = "Z:\\games\\Very Long Game Name\\Bin\\Game-Win64-Shipping.exe";

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

/// Pixels differing from `base` in the quadrant `(qx, qy)` (0/1 each:
/// left/right, top/bottom) of the 640x480 window.
fn changed_in(px: &[u8], base: &[u8], qx: u32, qy: u32) -> usize {
    let (w, h) = (W / 2, H / 2);
    (qy * h..(qy + 1) * h)
        .flat_map(|y| (qx * w..(qx + 1) * w).map(move |x| ((y * W + x) * 3) as usize))
        .filter(|&i| (0..3).any(|c| px[i + c].abs_diff(base[i + c]) > 2))
        .count()
}

/// The test app's own frame (no layer) once on screen.
fn baseline(h: &Harness) -> Vec<u8> {
    let size = format!("{W}x{H}");
    let mut app = spawn(&mut h.testapp(&[
        "--size",
        &size,
        "--frames",
        "20",
        "--hold",
        "60",
        "--progress",
    ]));
    app.wait_presents(10, Duration::from_secs(30));
    sleep(Duration::from_millis(300));
    let px = shot(h);
    drop(app.kill());
    assert_ne!(&px[0..3], &[0, 0, 0], "the test app never drew");
    px
}

/// Screenshots until `pred` holds or `secs` pass; the last one.
fn wait_for(h: &Harness, secs: u64, pred: impl Fn(&[u8]) -> bool) -> (bool, Vec<u8>) {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        let px = shot(h);
        if pred(&px) || Instant::now() > end {
            return (pred(&px), px);
        }
        sleep(Duration::from_millis(150));
    }
}

fn ctl_list(h: &Harness) -> (i32, String, String) {
    let out = h
        .steadyhud(&["ctl", "list"])
        .output()
        .expect("run steadyhud ctl list");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `ctl list` row of `pid`.
fn row_of(list: &str, pid: u32) -> Option<String> {
    list.lines()
        .find(|l| l.split_whitespace().next() == Some(&pid.to_string()))
        .map(str::to_string)
}

fn header_line<'a>(csv: &'a str, prefix: &str) -> Option<&'a str> {
    csv.lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix(prefix))
}

/// `GAME_YYYY-mm-dd_HH-MM-SS` (optionally `_N`) `.csv`.
fn is_dated_log_of(path: &Path, name: &str) -> bool {
    let file = path.file_name().unwrap().to_string_lossy();
    let Some(rest) = file
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix('_'))
        .and_then(|r| r.strip_suffix(".csv"))
    else {
        return false;
    };
    let date = rest.get(..19).unwrap_or("");
    let shape = "dddd-dd-dd_dd-dd-dd";
    date.len() == 19
        && date
            .chars()
            .zip(shape.chars())
            .all(|(c, s)| if s == 'd' { c.is_ascii_digit() } else { c == s })
        && (rest.len() == 19
            || rest[19..]
                .strip_prefix('_')
                .is_some_and(|n| n.parse::<u32>().is_ok()))
}

/// A Wine-like command line names the game after its `.exe`; its
/// `Game-Win64-Shipping.conf` moves the HUD to the bottom-right corner and
/// caps it at 50 fps over the global file's top-left and 100 fps, while the
/// global file's `stutter_threshold` still holds.
#[test]
fn a_wine_named_game_gets_its_name_and_its_config_file() {
    let _serial = serial();
    let h = Harness::with_screen(W, H);
    h.write_config("position=top-left\nfps_limit=100\nstutter_threshold=0.35\n");
    std::fs::write(
        h.config_home.join("steadyhud").join(format!("{GAME}.conf")),
        "# per-game file\nposition=bottom-right\nfps_limit=50\npreset_key=Control_L+F9\nhud_colors=0\n",
    )
    .unwrap();
    let base = baseline(&h);

    // `steadyhud config --show --name` resolves the same files.
    let show = run(&mut h.steadyhud(&["config", "--show", "--name", &format!("{GAME}.exe")]));
    show.assert_success("config --show");
    for (key, value, from) in [
        ("position", "bottom-right", format!("{GAME}.conf:2")),
        ("fps_limit", "50", format!("{GAME}.conf:3")),
        // The HUD's own keys come from a game's file like any other.
        ("preset_key", "Control_L+F9", format!("{GAME}.conf:4")),
        ("hud_colors", "false", format!("{GAME}.conf:5")),
        ("preset", "2", "default".to_string()),
        ("stutter_threshold", "0.35", "steadyhud.conf:3".to_string()),
        ("window_seconds", "10", "default".to_string()),
    ] {
        let line = show
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in:\n{}", show.stdout));
        assert!(
            line.starts_with(&format!("{key}={value} ")) && line.ends_with(&from),
            "{line}"
        );
    }

    let size = format!("{W}x{H}");
    let mut cmd = h.testapp(&[
        "--size",
        &size,
        "--frames",
        "300",
        "--interval",
        "1ms",
        "--progress",
    ]);
    {
        use std::os::unix::process::CommandExt as _;
        cmd.arg0(WINE_ARGV0);
    }
    let mut app = spawn(cmd.layer());
    let pid = app.child.id();
    app.wait_presents(30, Duration::from_secs(30));

    let (code, list, err) = ctl_list(&h);
    assert_eq!(code, 0, "{err}");
    let row = row_of(&list, pid).unwrap_or_else(|| panic!("pid {pid} not listed:\n{list}"));
    assert!(row.contains(GAME) && !row.contains(".exe"), "{row}");

    let (corner, px) = wait_for(&h, 20, |px| {
        changed_in(px, &base, 1, 1) > 2000 && changed_in(px, &base, 0, 0) == 0
    });
    save(&px, "steam_proton_bottom_right");
    assert!(
        corner,
        "HUD not in the bottom-right corner alone: {} pixels changed there, {} top-left, {} top-right, {} bottom-left",
        changed_in(&px, &base, 1, 1),
        changed_in(&px, &base, 0, 0),
        changed_in(&px, &base, 1, 0),
        changed_in(&px, &base, 0, 1)
    );

    let out = app.wait();
    out.assert_success("Wine-named test app");
    let presents = out.presented().expect("presented line");
    let (log, _) = h.only_session_log_of(presents, "Wine-named test app");
    assert!(is_dated_log_of(&log.csv, GAME), "{}", log.csv.display());
    let csv = std::fs::read_to_string(&log.csv).unwrap();
    assert_eq!(header_line(&csv, "# exe: "), Some(GAME));
    assert_eq!(header_line(&csv, "# pid: "), Some(&*pid.to_string()));
    assert!(
        csv.lines().any(|l| l == "# fps_limit: 50 at frame 0"),
        "no 50 fps cap line in {}",
        log.csv.display()
    );
    // The cap measured: the median frame is the cap's 20 ms (a busy
    // machine stalls a few frames, which moves the average, not the
    // median), and the average never passes the cap.
    let mut rows = csv.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = rows.next().expect("header").split(',').collect();
    let col = header
        .iter()
        .position(|c| *c == "frametime_ms")
        .expect("frametime_ms");
    let mut ft: Vec<f64> = rows
        .filter_map(|l| l.split(',').nth(col)?.parse().ok())
        .collect();
    ft.sort_by(f64::total_cmp);
    let typical = ft[ft.len() / 2];
    assert!(
        (19.5..=20.5).contains(&typical),
        "median frame {typical:.2} ms under a 50 fps cap"
    );
    let avg = h.analyze(&log.csv)["average_fps"].as_f64().unwrap();
    assert!(avg <= 51.0, "average {avg:.2} fps over a 50 fps cap");
    let summary = log.summary_json();
    assert_eq!(summary["exe"], GAME);
    assert_eq!(summary["pid"], pid);
    assert_eq!(summary["stutter_threshold"], 0.35, "the global file's key");
}

/// Runs the test app presenting 200 times under validation with `how`
/// applied; asserts the layer was loaded but did nothing: one stderr line
/// naming `alias`, no HUD pixels, no log, no control socket, exit 0, no
/// validation message.
fn left_alone(h: &Harness, base: &[u8], what: &str, alias: &str, how: impl Fn(&mut Command)) {
    let size = format!("{W}x{H}");
    let mut cmd = h.testapp(&[
        "--size",
        &size,
        "--frames",
        "199",
        "--interval",
        "10ms",
        "--progress",
    ]);
    how(&mut cmd);
    let mut app = spawn(cmd.layer().validation());
    app.wait_presents(60, Duration::from_secs(30));
    sleep(Duration::from_millis(300));
    let px = shot(h);
    let (code, list, _) = ctl_list(h);
    let out = app.wait();
    save(&px, &format!("steam_proton_left_alone_{alias}"));
    out.assert_success(what).assert_no_vuid(what);
    out.assert_no_validation_error(what);
    assert_eq!(out.presented(), Some(200), "{what}");
    let said = out.output_lines(|l| l.starts_with("steadyhud:"));
    assert_eq!(said.len(), 1, "{what}: steadyhud lines {said:?}");
    assert!(
        said[0].starts_with(&format!("steadyhud: {alias} is on the "))
            && said[0].contains("blacklist"),
        "{what}: {said:?}"
    );
    let changed: usize = (0..4).map(|q| changed_in(&px, base, q % 2, q / 2)).sum();
    assert_eq!(changed, 0, "{what}: HUD pixels on screen");
    assert_eq!(
        list_dir(&h.log_dir),
        Vec::<std::path::PathBuf>::new(),
        "{what}: logs"
    );
    let sockets = list_dir(&h.runtime_dir.join("steadyhud"));
    assert!(sockets.is_empty(), "{what}: sockets {sockets:?}");
    assert!(
        code == 0 && list.contains("no running session"),
        "{what}: ctl list found a session:\n{list}"
    );
}

/// Steam's web helper (by `argv[0]`, on the built-in list) and the test
/// app put on the list by the `blacklist` key are left alone.
#[test]
fn blacklisted_processes_are_left_alone() {
    let _serial = serial();
    let h = Harness::with_screen(W, H);
    h.assert_validation_active();
    let base = baseline(&h);
    left_alone(
        &h,
        &base,
        "test app as steamwebhelper",
        "steamwebhelper",
        |c| {
            use std::os::unix::process::CommandExt as _;
            c.arg0("steamwebhelper");
        },
    );
    h.write_config("blacklist=SomeLauncher.exe+steadyhud-testapp\n");
    left_alone(
        &h,
        &base,
        "test app with blacklist=…+steadyhud-testapp",
        "steadyhud-testapp",
        |_| {},
    );

    // `-name` takes an entry off the list: the helper gets the layer back.
    h.write_config("blacklist=-steamwebhelper\nhud_hidden=1\n");
    let mut cmd = h.testapp(&["--frames", "20", "--interval", "1ms"]);
    {
        use std::os::unix::process::CommandExt as _;
        cmd.arg0("steamwebhelper");
    }
    let out = run(cmd.layer());
    out.assert_success("steamwebhelper taken off the list");
    let presents = out.presented().unwrap();
    let (log, _) = h.only_session_log_of(presents, "steamwebhelper taken off the list");
    assert!(
        is_dated_log_of(&log.csv, "steadyhud-testapp"),
        "{}",
        log.csv.display()
    );
}

/// Two processes of one game at once (a launcher and the game, or a
/// restarted renderer): `ctl list` shows both under the game's name, each
/// log names its own pid.
#[test]
fn several_processes_of_one_game_each_log_their_pid() {
    let _serial = serial();
    let h = Harness::new();
    let start = || {
        let mut cmd = h.testapp(&["--frames", "400", "--interval", "5ms", "--progress"]);
        {
            use std::os::unix::process::CommandExt as _;
            cmd.arg0(WINE_ARGV0);
        }
        spawn(cmd.layer())
    };
    let mut a = start();
    let mut b = start();
    let pids = [a.child.id(), b.child.id()];
    a.wait_presents(30, Duration::from_secs(30));
    b.wait_presents(30, Duration::from_secs(30));
    let (code, list, err) = ctl_list(&h);
    assert_eq!(code, 0, "{err}");
    for pid in pids {
        let row = row_of(&list, pid).unwrap_or_else(|| panic!("pid {pid} not listed:\n{list}"));
        assert!(row.contains(GAME), "{row}");
    }
    a.wait().assert_success("first process");
    b.wait().assert_success("second process");
    let logs = h.session_logs();
    assert_eq!(logs.len(), 2, "{:?}", list_dir(&h.log_dir));
    let mut logged: Vec<u32> = logs
        .iter()
        .map(|l| {
            assert!(is_dated_log_of(&l.csv, GAME), "{}", l.csv.display());
            let csv = std::fs::read_to_string(&l.csv).unwrap();
            assert_eq!(header_line(&csv, "# exe: "), Some(GAME));
            let pid: u32 = header_line(&csv, "# pid: ").unwrap().parse().unwrap();
            assert_eq!(l.summary_json()["pid"], pid);
            pid
        })
        .collect();
    logged.sort();
    let mut want = pids.to_vec();
    want.sort();
    assert_eq!(logged, want);
}
