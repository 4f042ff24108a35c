//! Issue 39, the Proton path: Windows programs of our own
//! (`tests/wine/present.c`: a render thread presents, the main thread ends
//! the process) under Wine 10 in a Debian sid root (`scripts/sid-root.sh`),
//! Direct3D 9 and 11 through DXVK, Direct3D 12 through Wine's vkd3d, on
//! lavapipe, with the layer and both cores kept busy by other processes.
//! Every present is counted independently by a second layer
//! (`tests/wine/count_presents.c`).
//!
//! - Each API, five runs ending with `ExitProcess` while the render thread
//!   presents (and five without the layer): exit 0, no `FATAL` line, rows =
//!   presents − 1, a complete summary (Direct3D 12: or wineserver's
//!   SIGKILL, seen without the layer too, with every row and the summary
//!   marked incomplete).
//! - Under validation, each API ended by `WM_CLOSE`: no validation error,
//!   every row.
//! - The HUD in screenshots, beside DXVK's own HUD and on each API; the log
//!   named after the `.exe`, whose per-game config file applies.
//! - Exits games do: `WM_CLOSE` (every row, a complete summary),
//!   `TerminateProcess` and Steam's Stop (SIGTERM to the Wine processes):
//!   no abort, the log marked incomplete; Wine ends these with no exit
//!   handler, so the next steadyhud command recovers the rows after the
//!   last flush from the present tail: rows = presents − 1 and a summary
//!   of them all.
//! - AMD Anti-Lag through Mesa's anti-lag layer in the same root: the
//!   game's input stage is each frame's start.

mod common;
mod require;
use common::*;
use serde_json::Value;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The game's name: the `.exe` is copied under it.
const GAME: &str = "ProtonTestGame-Win64-Shipping";
/// Presents before the program ends itself.
const FRAMES: &str = "150";
/// Runs of each API.
const RUNS: usize = 5;

/// The sid root, made by `scripts/sid-root.sh` when missing (minutes).
fn sid_root() -> Option<PathBuf> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| {
        if !require::programs(&[("debootstrap", "debootstrap"), ("unshare", "util-linux")]) {
            return None;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sid-root.sh");
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .expect("run scripts/sid-root.sh");
        assert!(
            out.status.success(),
            "scripts/sid-root.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Some(PathBuf::from(path))
    })
    .clone()
}

/// What the runs share in /tmp (bound into the root at the same path): the
/// `.exe` under the game's name, the layer and the counting layer.
struct Bed {
    dir: PathBuf,
    exe: PathBuf,
    counter: PathBuf,
    layer: PathBuf,
}

fn bed(root: &Path) -> &'static Bed {
    static BED: OnceLock<Bed> = OnceLock::new();
    BED.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("steadyhud-wine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the wine bed");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wine");
        // mingw runs inside the root: the source goes where it can see it.
        std::fs::copy(src.join("present.c"), dir.join("present.c")).expect("copy present.c");
        let exe = dir.join(format!("{GAME}.exe"));
        let out = inside(root, &mut Command::new("x86_64-w64-mingw32-gcc"))
            .args(["-O2", "-Wall", "-o"])
            .arg(&exe)
            .arg(dir.join("present.c"))
            .args(["-ld3d9", "-ld3d11", "-ld3d12", "-ldxgi", "-luuid"])
            .output()
            .expect("run mingw in the sid root");
        assert!(
            out.status.success(),
            "mingw could not build present.c:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let counter = dir.join("libcount_presents.so");
        build_c(
            "tests/wine/count_presents.c",
            &counter,
            &["-shared", "-fPIC"],
            &[],
        );
        let layer = dir.join("libsteadyhud.so");
        std::fs::copy(layer_library(), &layer).expect("copy the layer");
        Bed {
            dir,
            exe,
            counter,
            layer,
        }
    })
}

/// `cmd` run inside the root: its own mount namespace with /proc, /dev,
/// /sys and /tmp, then chroot; the environment passes through.
fn inside<'a>(root: &Path, cmd: &'a mut Command) -> &'a mut Command {
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
    let mut c = Command::new("unshare");
    c.args(["-m", "--propagation", "private", "sh", "-ec"])
        .arg(
            "r=$1; shift; mount -t proc proc \"$r/proc\"; mount --rbind /dev \"$r/dev\"; \
             mount --rbind /sys \"$r/sys\"; mount --bind /tmp \"$r/tmp\"; exec chroot \"$r\" \"$@\"",
        )
        .arg("inside")
        .arg(root)
        .arg(program)
        .args(args);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    *cmd = c;
    cmd
}

/// Wine runs one at a time (one prefix, one wineserver).
fn wine_lock() -> std::sync::MutexGuard<'static, ()> {
    static L: Mutex<()> = Mutex::new(());
    L.lock().unwrap_or_else(|e| e.into_inner())
}

/// One run of the game: `api`, `exit`; `env` on top. The counts file of
/// the second layer is `counts`.
fn wine_game(
    h: &Harness,
    root: &Path,
    args: &[&str],
    layer: bool,
    counts: &Path,
    env: &[(&str, &str)],
) -> Command {
    let b = bed(root);
    let mut cmd = h.command("wine");
    let windows_exe = format!("Z:{}", b.exe.display()).replace('/', "\\");
    let windows_counts = format!("Z:{}", b.dir.join("app-counts").display()).replace('/', "\\");
    cmd.arg(windows_exe)
        .args(args)
        .arg(windows_counts)
        .env("WINEPREFIX", "/opt/prefix")
        .env("WINEDEBUG", "-all")
        .env("COUNT_PRESENTS", "1")
        .env("COUNT_PRESENTS_OUT", counts);
    if args.first() == Some(&"d3d12") {
        // DXVK's dxgi has no D3D12 (TESTBED): Wine's own with vkd3d.
        cmd.env("WINEDLLOVERRIDES", "dxgi=b");
    }
    if layer {
        cmd.layer();
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    inside(root, &mut cmd);
    cmd
}

/// Ends the prefix's wineserver and whatever it still runs.
fn wineserver_kill(h: &Harness, root: &Path) {
    let mut c = h.command("/usr/lib/x86_64-linux-gnu/wine/wineserver");
    c.arg("-k").env("WINEPREFIX", "/opt/prefix");
    let _ = run(inside(root, &mut c));
}

/// Writes the counting layer's manifest into the harness's data home.
fn add_counter(h: &Harness, root: &Path) {
    let b = bed(root);
    let dir = h.data_home.join("vulkan/implicit_layer.d");
    std::fs::write(
        dir.join("count_presents.json"),
        serde_json::json!({
            "file_format_version": "1.0.0",
            "layer": {
                "name": "VK_LAYER_STEADYHUD_TEST_count_presents",
                "type": "GLOBAL",
                "library_path": b.counter,
                "api_version": "1.3.0",
                "implementation_version": "1",
                "description": "counts presents (steadyhud's tests)",
                "enable_environment": {"COUNT_PRESENTS": "1"},
                "disable_environment": {"DISABLE_COUNT_PRESENTS": "1"}
            }
        })
        .to_string(),
    )
    .expect("write the counter's manifest");
    write_manifest(&h.data_home, &b.layer);
}

/// (begun, returned) presents in a counts file.
fn counted(path: &Path) -> (u64, u64) {
    let b = std::fs::read(path).unwrap_or_default();
    let n = |i: usize| {
        b.get(i * 8..i * 8 + 8)
            .map_or(0, |s| u64::from_le_bytes(s.try_into().unwrap()))
    };
    (n(0), n(1))
}

/// What every run with the layer must leave: no abort, no validation
/// error, one log of the game with rows = presents − 1 (within the one in
/// flight: the layer, above the counting one, logs a present before the
/// counter sees it), a summary that holds every row, complete when
/// `complete`.
fn check_logged(h: &Harness, what: &str, out: &RunOutput, counts: &Path, complete: bool) -> Value {
    let both = format!("{}\n{}", out.stdout, out.stderr);
    assert!(!both.contains("FATAL"), "{what}: {both}");
    assert!(!both.contains("Validation Error"), "{what}: {both}");
    let logs = h.session_logs();
    assert_eq!(logs.len(), 1, "{what}: {logs:?}\n{both}");
    let log = &logs[0];
    let name = log.csv.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(GAME), "{what}: {name}");
    let csv = std::fs::read_to_string(&log.csv).unwrap();
    assert!(
        csv.lines().any(|l| l == format!("# exe: {GAME}")),
        "{what}: no `# exe: {GAME}` line"
    );
    let rows = logged_durations_ns(&log.csv).len() as u64;
    let (begun, returned) = counted(counts);
    assert!(
        returned > 2 && rows + 1 >= returned && rows <= begun,
        "{what}: {rows} rows for {begun} presents begun, {returned} returned\n{both}"
    );
    let summary = log.summary_json();
    assert_eq!(summary["complete"], complete, "{what}: {summary}");
    if complete {
        assert_eq!(summary["frames"], rows, "{what}: {summary}");
    }
    summary
}

/// A killed process (`TerminateProcess`, SIGTERM): no abort, its log
/// marked incomplete with the summary no further than its rows; then the
/// next steadyhud command (`analyze`) makes the log whole from the present
/// tail: rows = presents − 1 and a summary of them all, still incomplete.
fn check_killed(h: &Harness, what: &str, out: &RunOutput, counts: &Path) {
    assert!(!out.stderr.contains("FATAL"), "{what}: {}", out.stderr);
    let log = h.only_session_log();
    let flushed = logged_durations_ns(&log.csv).len() as u64;
    let summary = log.summary_json();
    assert_eq!(summary["complete"], false, "{what}: {summary}");
    assert!(
        summary["frames"].as_u64().unwrap_or(u64::MAX) <= flushed,
        "{what}: {summary}"
    );
    h.analyze(&log.csv);
    let rows = logged_durations_ns(&log.csv).len() as u64;
    let (begun, returned) = counted(counts);
    assert!(
        returned > 2 && rows + 1 >= returned && rows <= begun,
        "{what}: {rows} rows ({flushed} before recovery) for {begun} presents begun, {returned} returned"
    );
    let whole = log.summary_json();
    assert_eq!(whole["complete"], false, "{what}: {whole}");
    assert_eq!(whole["frames"], rows, "{what}: {whole}");
    assert_eq!(whole["recovered_frames"], rows - flushed, "{what}: {whole}");
    eprintln!(
        "{what}: {flushed} rows flushed, {rows} after recovery, of {returned} presents; summary was at frame {}",
        summary["frames"]
    );
}

fn have_bed() -> Option<PathBuf> {
    if !require::programs(&[("gcc", "gcc"), ("Xvfb", "xvfb")]) {
        return None;
    }
    sid_root()
}

/// One test's Wine: the root, a harness (screen `w`×`h`) with both layers'
/// manifests, the counts file, and the lock that keeps other tests' Wine
/// out until it is dropped (last).
struct Wine {
    h: Harness,
    root: PathBuf,
    counts: PathBuf,
    _lock: std::sync::MutexGuard<'static, ()>,
}

impl Wine {
    fn open(w: u32, h: u32) -> Option<Wine> {
        let root = have_bed()?;
        let lock = wine_lock();
        let h = Harness::with_screen(w, h);
        add_counter(&h, &root);
        let counts = h.root.path().join("counts");
        Some(Wine {
            h,
            root,
            counts,
            _lock: lock,
        })
    }

    /// The game with `args` (see [`wine_game`]).
    fn game(&self, args: &[&str], layer: bool, env: &[(&str, &str)]) -> Command {
        wine_game(&self.h, &self.root, args, layer, &self.counts, env)
    }

    /// [`check_logged`] of this bed.
    fn check(&self, what: &str, out: &RunOutput, complete: bool) -> Value {
        check_logged(&self.h, what, out, &self.counts, complete)
    }
}

#[test]
fn d3d9_11_12_under_wine_end_as_without_the_layer_with_every_frame_logged() {
    let Some(w) = Wine::open(640, 480) else {
        return;
    };
    let h = &w.h;
    let _load = CpuLoad::start();
    for api in ["d3d9", "d3d11", "d3d12"] {
        let mut without = Vec::new();
        for _ in 0..RUNS {
            let plain = run(&mut w.game(&[api, FRAMES, "exit"], false, &[]));
            assert!(
                !plain.stderr.contains("FATAL"),
                "{api} without the layer: {}",
                plain.stderr
            );
            without.push(plain.status);
        }
        eprintln!("{api} without the layer: {without:?}");
        h.clear_logs();
        for k in 0..RUNS {
            let what = format!("{api} run {k}");
            let out = run(&mut w.game(&[api, FRAMES, "exit"], true, &[]));
            // Under load wineserver now and then SIGKILLs a Direct3D 12
            // process whose vkd3d thread does not end in time (1 of 10
            // runs without the layer here): its rows are all there, its
            // summary is marked incomplete. Every other run exits 0.
            let killed = api == "d3d12" && out.status.signal() == Some(libc::SIGKILL);
            assert!(
                out.status.code() == Some(0) || killed,
                "{what}: {:?} (without the layer: {without:?})\n{}",
                out.status,
                out.stderr
            );
            w.check(&what, &out, !killed);
            h.clear_logs();
        }
    }
}

/// Under validation, each API ending by `WM_CLOSE` (the renderer stopped
/// first): no validation error, every present logged. (Ended by a forced
/// thread exit the validation layer itself now and then aborts the process:
/// `terminate called without an active exception` from a `noexcept` frame
/// of `libVkLayer_khronos_validation.so` under Wine's `pthread_exit`, with
/// or without steadyhud.)
#[test]
fn d3d9_11_12_under_validation_report_no_error() {
    let Some(w) = Wine::open(640, 480) else {
        return;
    };
    let h = &w.h;
    let validation = [
        ("VK_INSTANCE_LAYERS", VALIDATION),
        ("VK_LOADER_DEBUG", "layer"),
    ];
    for api in ["d3d9", "d3d11", "d3d12"] {
        let out = run(&mut w.game(&[api, "60", "close"], true, &validation));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{api} under validation: {}",
            out.stderr
        );
        // The loader's own word that validation is in the chain.
        assert!(
            out.inserted_layer(VALIDATION),
            "{api}: validation not loaded:\n{}",
            tail(&out.stderr, 40)
        );
        w.check(&format!("{api} under validation"), &out, true);
        h.clear_logs();
    }
}

#[test]
fn the_hud_is_drawn_beside_dxvks_and_the_games_config_file_applies() {
    // Room for Wine's own window frame around the 640x480 client area.
    let Some(w) = Wine::open(800, 600) else {
        return;
    };
    let h = &w.h;
    h.write_config("position=top-left\n");
    std::fs::write(
        h.config_home.join("steadyhud").join(format!("{GAME}.conf")),
        "position=bottom-right\nfps_limit=40\n",
    )
    .unwrap();
    let dxvk_hud = [("DXVK_HUD", "fps,frametimes")];
    let shot_of = |api: &str, layer: bool, env: &[(&str, &str)]| {
        let game = spawn(&mut w.game(&[api, "40", "hold"], layer, env));
        std::thread::sleep(Duration::from_secs(6));
        let s = h.screenshot();
        drop(game.kill());
        wineserver_kill(h, &w.root);
        h.clear_logs();
        s
    };
    let plain = shot_of("d3d11", false, &[]);
    let dxvk = shot_of("d3d11", false, &dxvk_hud);
    let both = shot_of("d3d11", true, &dxvk_hud);
    both.keep("wine-d3d11-hud-beside-dxvk.png");
    // DXVK's HUD (top-left) and ours (bottom-right, the game's file) both
    // change the game's pixels in their corner.
    let changed = |a: &Screenshot, b: &Screenshot, x0: u32, y0: u32| {
        let mut n = 0;
        for y in y0..y0 + 200 {
            for x in x0..x0 + 240 {
                if a.pixel(x, y) != b.pixel(x, y) {
                    n += 1;
                }
            }
        }
        n
    };
    let dxvk_px = changed(&plain, &dxvk, 0, 0);
    let ours_px = changed(&dxvk, &both, 380, 300);
    let dxvk_kept = changed(&plain, &both, 0, 0);
    assert!(dxvk_px > 200, "DXVK's HUD not drawn: {dxvk_px} px");
    assert!(
        ours_px > 2000,
        "our HUD not drawn in the bottom-right corner: {ours_px} px"
    );
    assert!(dxvk_kept > 200, "DXVK's HUD gone with ours: {dxvk_kept} px");
    // Direct3D 9 (DXVK) and 12 (vkd3d): ours in the same corner.
    for api in ["d3d9", "d3d12"] {
        let (without, with) = (shot_of(api, false, &[]), shot_of(api, true, &[]));
        with.keep(&format!("wine-{api}-hud.png"));
        let ours = changed(&without, &with, 380, 300);
        assert!(ours > 2000, "{api}: our HUD not drawn: {ours} px");
    }

    // The game's own file capped it at 40 fps. (Its row count is not
    // checked here: under a cap an ExitProcess has lost the last rows,
    // the open part of issue 39.)
    let out = run(&mut w.game(&["d3d11", "120", "exit"], true, &[]));
    assert!(
        !out.stderr.contains("FATAL"),
        "d3d11 capped: {}",
        out.stderr
    );
    let log = h.only_session_log();
    assert_eq!(log.summary_json()["complete"], true, "d3d11 capped");
    let mut ms = logged_durations_ns(&log.csv);
    ms.sort_unstable();
    let median = ms[ms.len() / 2] as f64 / 1e6;
    assert!(
        (23.0..28.0).contains(&median),
        "median frame {median} ms under a 40 fps cap"
    );
}

#[test]
fn exits_games_do_leave_every_frame_logged() {
    let Some(w) = Wine::open(640, 480) else {
        return;
    };
    let h = &w.h;
    let _load = CpuLoad::start();
    // WM_CLOSE: the game stops its renderer and returns 0.
    let out = run(&mut w.game(&["d3d11", FRAMES, "close"], true, &[]));
    assert_eq!(out.status.code(), Some(0), "WM_CLOSE: {}", out.stderr);
    w.check("WM_CLOSE", &out, true);
    h.clear_logs();
    // TerminateProcess of itself while the render thread presents.
    let out = run(&mut w.game(&["d3d11", FRAMES, "terminate"], true, &[]));
    assert_eq!(
        out.status.code(),
        Some(3),
        "TerminateProcess: {}",
        out.stderr
    );
    check_killed(h, "TerminateProcess", &out, &w.counts);
    h.clear_logs();
    // Steam's Stop: SIGTERM to every process of the Wine tree.
    let game = spawn(&mut w.game(&["d3d11", FRAMES, "hold"], true, &[]));
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while counted(&w.counts).1 < 150 {
        assert!(
            std::time::Instant::now() < deadline,
            "the game never presented 150 frames"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let pgrep = Command::new("pgrep")
        .args(["-f", GAME])
        .output()
        .expect("pgrep");
    for pid in String::from_utf8_lossy(&pgrep.stdout).split_whitespace() {
        if let Ok(pid) = pid.parse::<i32>() {
            // SAFETY: kill(2) of the game's processes.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }
    let out = game.wait();
    // Wine ends on the signal, as without the layer.
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGTERM),
        "SIGTERM: {}",
        out.stderr
    );
    check_killed(h, "SIGTERM", &out, &w.counts);
    wineserver_kill(h, &w.root);
}

/// AMD Anti-Lag live: Mesa's anti-lag layer (in the sid root, Mesa 26)
/// offers `VK_AMD_anti_lag` over lavapipe; the test app calls its input
/// stage right before it samples input and its present stage right before
/// each present (`--anti-lag`). Our layer, above Mesa's, hooks
/// `vkAntiLagUpdateAMD`: every frame's start is the game's own (the log's
/// FS2P is its `al_input_to_present_ms`), and FS2P is the program's own
/// record's (its present call − when its input stage returned and it
/// sampled) within 0.1 ms at the median.
#[test]
fn anti_lag_input_stage_is_the_frame_start_live() {
    let Some(w) = Wine::open(640, 480) else {
        return;
    };
    let h = &w.h;
    let app = h.root.path().join("steadyhud-testapp");
    std::fs::copy(testapp_exe(), &app).expect("copy the test app");
    let record = h.root.path().join("inputs.txt");
    let mut cmd = h.command(&app);
    cmd.args(["--frames", "120", "--anti-lag", "--input-out"])
        .arg(&record)
        .env("ENABLE_LAYER_MESA_ANTI_LAG", "1")
        .env("STEADYHUD_CONFIG", "hud_hidden=1,sensor_hz=0")
        .layer();
    let out = run(inside(&w.root, &mut cmd));
    out.assert_success("testapp --anti-lag");
    let log = h.only_session_log();
    let text = std::fs::read_to_string(&log.csv).expect("the log");
    let header: Vec<&str> = text
        .lines()
        .find(|l| !l.starts_with('#'))
        .expect("a header")
        .split(',')
        .collect();
    let al = header
        .iter()
        .position(|c| *c == steadyhud_counters::markers::ANTI_LAG_INPUT_TO_PRESENT)
        .unwrap_or_else(|| panic!("no Anti-Lag column: {header:?}\n{}", out.stderr));
    let spans: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| l.split(',').nth(al).expect("a cell").parse().expect("ms"))
        .collect();
    let (_, rows) = latency_rows(&log.csv);
    assert_eq!(rows.len(), spans.len());
    let frames: Vec<(u64, u64)> = std::fs::read_to_string(&record)
        .expect("the program's record")
        .lines()
        .filter_map(
            |l| match l.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["frame", _, start, present] => {
                    Some((start.parse().unwrap(), present.parse().unwrap()))
                }
                _ => None,
            },
        )
        .collect();
    assert_eq!(
        frames.len(),
        rows.len() + 1,
        "a row per present but the first"
    );
    assert!(rows.len() >= 100, "{} rows:\n{}", rows.len(), out.stderr);
    let mut off = Vec::new();
    for (r, (row, span)) in rows.iter().zip(&spans).enumerate() {
        let fs2p = row.fs2p_ms.expect("FS2P on every frame");
        assert!(*span > 0.0, "row {r}: no Anti-Lag span");
        assert!(
            (fs2p - span).abs() <= 0.000_001 + 1e-9,
            "row {r}: FS2P {fs2p} ms is not the Anti-Lag span {span} ms"
        );
        let (start, present) = frames[r + 1];
        let program = (present - start) as f64 / 1e6;
        if (fs2p - program).abs() > 0.1 {
            off.push((r, fs2p, program));
        }
    }
    assert!(
        off.len() <= rows.len() / 2,
        "FS2P off the program's by more than 0.1 ms on {} of {} frames: {off:?}",
        off.len(),
        rows.len()
    );
}
