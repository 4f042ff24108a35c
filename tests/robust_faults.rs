//! Issue 7, faults the layer meets inside somebody else's game, each under
//! Xvfb + lavapipe with the HUD on: the app exits 0 having presented every
//! frame, the fault costs one clear `steadyhud:` line, and the session log
//! still holds every frame (rows == presents − 1) where the fault leaves a
//! log possible at all.
//!
//! Log folders that fail for root too are made with a private mount
//! namespace (`unshare -rm`): a 4 KiB tmpfs fills up mid-session (full
//! disk), a read-only tmpfs cannot take a file. The namespace ends with the
//! app, so the wrapper copies what the layer wrote out before it exits.

mod common;
use common::*;
use std::path::Path;

const FRAMES: u64 = 120;

/// `FRAMES` frames, i.e. `FRAMES + 1` presents.
const ARGS: [&str; 4] = ["--frames", "120", "--interval", "4ms"];

/// `steadyhud:` lines of stderr, but the CPU device note that every run on
/// lavapipe has (checked in `tests/gpu_timing.rs`).
fn layer_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| is_layer_complaint(l)).collect()
}

/// Asserts the app ran to the end and the single session log holds every
/// frame it presented, and the summary agrees.
fn assert_every_frame_logged(h: &Harness, out: &RunOutput, what: &str) {
    out.assert_success(what);
    let presented = out
        .presented()
        .unwrap_or_else(|| panic!("{what}: no `presented` line:\n{}", out.stdout));
    assert_eq!(
        presented,
        FRAMES + 1,
        "{what}: the app must present its whole script"
    );
    let (log, rows) = h.only_session_log_of(presented, what);
    assert_eq!(
        log.summary_json()["frames"].as_u64(),
        Some(rows),
        "{what}: summary frames"
    );
}

/// Runs the harness's test app with the layer inside a private mount
/// namespace where `mount_opts` tmpfs covers the log dir; afterwards the
/// tmpfs content is in `saved`.
fn run_on_tmpfs(h: &Harness, mount_opts: &str, saved: &Path, app_args: &[&str]) -> RunOutput {
    std::fs::create_dir_all(saved).expect("create save dir");
    let script = r#"mount -t tmpfs -o "$1" steadyhud-test "$2" || { echo "cannot mount tmpfs" >&2; exit 97; }
shift 3
"$@"; rc=$?
cp -a "$MNT"/. "$SAVE"/ 2>/dev/null
exit $rc"#;
    let mut cmd = h.command("unshare");
    cmd.args(["-rm", "sh", "-c", script, "sh", mount_opts])
        .arg(&h.log_dir)
        .arg("--")
        .arg(testapp_exe())
        .args(app_args)
        .env("MNT", &h.log_dir)
        .env("SAVE", saved)
        .layer();
    let out = run(&mut cmd);
    assert_ne!(
        out.status.code(),
        Some(97),
        "cannot mount a tmpfs in a private namespace (unshare -rm, util-linux): {}",
        out.stderr
    );
    out
}

#[test]
fn full_log_disk_costs_one_line_and_the_app_presents_every_frame() {
    let h = Harness::new();
    let saved = h.root.path().join("saved");
    // One 4 KiB page: the header and ~150 rows fit, then ENOSPC mid-session.
    let frames = 600u64;
    let out = run_on_tmpfs(
        &h,
        "size=4k",
        &saved,
        &["--frames", "600", "--interval", "1ms"],
    );
    out.assert_success("testapp with a log folder that fills up");
    assert_eq!(
        out.presented(),
        Some(frames + 1),
        "the app must present its whole script"
    );
    let lines = layer_lines(&out.stderr);
    let full: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("No space left on device"))
        .collect();
    assert!(
        !full.is_empty() && full.len() <= 2,
        "expected one line about the full disk (plus at most one for the summary), got:\n{}",
        out.stderr
    );
    assert!(
        full[0].contains("not logged"),
        "the first line must say the rest is not logged: {}",
        full[0]
    );
    // What reached the disk is a clean prefix of the session that analyze reads.
    let logs = session_logs_in(&saved);
    assert_eq!(
        logs.len(),
        1,
        "files on the full tmpfs: {:?}",
        list_dir(&saved)
    );
    let rows = logged_durations_ns(&logs[0].csv).len() as u64;
    assert!(
        rows > 0 && rows < frames,
        "a 4 KiB disk holds some but not all {frames} rows, found {rows}"
    );
    assert_eq!(h.analyze(&logs[0].csv)["frames"].as_u64(), Some(rows));
}

#[test]
fn read_only_log_dir_costs_one_line_and_the_app_runs_on() {
    let h = Harness::new();
    let saved = h.root.path().join("saved");
    let out = run_on_tmpfs(&h, "ro", &saved, &ARGS);
    out.assert_success("testapp with a read-only log folder");
    assert_eq!(out.presented(), Some(FRAMES + 1));
    let lines = layer_lines(&out.stderr);
    let about: Vec<&&str> = lines.iter().filter(|l| l.contains("session log")).collect();
    assert_eq!(
        about.len(),
        1,
        "expected one line about the session log, got:\n{}",
        out.stderr
    );
    assert!(
        about[0].contains("Read-only file system"),
        "the line must say why: {}",
        about[0]
    );
    assert!(
        list_dir(&saved).is_empty(),
        "nothing can be written on a read-only folder"
    );
}

#[test]
fn garbage_config_warns_once_per_item_and_everything_else_works() {
    let h = Harness::new();
    // Binary junk in the file (a NUL, invalid UTF-8, a bare CR) around one good line.
    let mut junk =
        b"\x00\x01\xff\xfe binary\r\nwindow_seconds=2\n\x7fELF\x02\x01=\xc3\x28\n".to_vec();
    junk.extend_from_slice(&[0u8; 64]);
    let dir = h.config_home.join("steadyhud");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("steadyhud.conf"), &junk).unwrap();
    let env = "position=,,=,===,hud_hidden=maybe,\u{1b}[31mred,target_fps=99999999999999999999,stutter_threshold=NaN";
    let out = run(h.testapp(&ARGS).layer().env("STEADYHUD_CONFIG", env));
    assert_every_frame_logged(&h, &out, "testapp with a garbage config");
    let warnings: Vec<&str> = layer_lines(&out.stderr)
        .into_iter()
        .filter(|l| l.starts_with("steadyhud: config:"))
        .collect();
    // File: not UTF-8, line 1 (no '='), line 3 (unknown key), line 4 (NULs,
    // no '='); env: items 1, 3, 4, 5, 6, 7, 8 (item 2 is empty).
    assert_eq!(
        warnings.len(),
        11,
        "one warning per bad item, got:\n{}",
        out.stderr
    );
    assert!(
        warnings.iter().any(|w| w.contains("not valid UTF-8")),
        "{warnings:#?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("STEADYHUD_CONFIG item 8") && w.contains("stutter_threshold")),
        "{warnings:#?}"
    );
    assert!(
        warnings
            .iter()
            .all(|w| !w.contains('\u{1b}') && !w.contains('\0')),
        "control characters must be escaped in warnings: {warnings:#?}"
    );
    // Defaults survive the bad values; the one good line was applied.
    let s = h.only_session_log().summary_json();
    assert_eq!(
        s["stutter_threshold"].as_f64(),
        Some(0.2),
        "default threshold kept: {s}"
    );
}

#[test]
fn missing_libx11_disables_only_the_hotkey() {
    let h = Harness::new();
    let out = run(h
        .testapp(&ARGS)
        .layer()
        .env("STEADYHUD_X11_LIB", "libX11-missing-for-test.so.6"));
    assert_every_frame_logged(&h, &out, "testapp without libX11 for the hotkey");
    let lines = layer_lines(&out.stderr);
    assert_eq!(
        lines.len(),
        1,
        "expected exactly one steadyhud line, got:\n{}",
        out.stderr
    );
    assert!(
        lines[0].contains("HUD, preset hotkeys unavailable")
            && lines[0].contains("cannot load libX11")
            && lines[0].contains("libX11-missing-for-test.so.6"),
        "the line must name the library and the consequence: {}",
        lines[0]
    );
    // Control: with the real library there is no such line.
    h.clear_logs();
    let out = run(h.testapp(&ARGS).layer());
    assert_every_frame_logged(&h, &out, "testapp with libX11");
    assert!(
        layer_lines(&out.stderr).is_empty(),
        "unexpected steadyhud lines:\n{}",
        out.stderr
    );
}

/// Runs the test app with a panic injected at `site`, under validation.
fn injected_panic(site: &str) -> RunOutput {
    let h = Harness::new();
    let what = format!("testapp with STEADYHUD_TEST_PANIC={site} and validation");
    let out = run(h
        .testapp(&ARGS)
        .layer()
        .validation()
        .env("STEADYHUD_TEST_PANIC", site));
    assert_every_frame_logged(&h, &out, &what);
    out.assert_no_vuid(&what);
    let contained: Vec<&str> = layer_lines(&out.stderr)
        .into_iter()
        .filter(|l| l.contains("internal error contained"))
        .collect();
    assert_eq!(
        contained.len(),
        1,
        "{what}: one line per contained panic, got:\n{}",
        out.stderr
    );
    assert!(
        contained[0].contains("injected test panic"),
        "{what}: {}",
        contained[0]
    );
    assert!(
        !out.stderr.contains("panicked at"),
        "{what}: default panic report leaked:\n{}",
        out.stderr
    );
    out
}

#[test]
fn panic_in_present_is_contained_and_the_log_is_complete() {
    injected_panic("present");
}

/// Issue 11: a panic after the HUD's submission consumed the app's wait
/// semaphores must not leave the real present waiting on them (binary
/// semaphores with no pending signal: a hang, or a validation error). The
/// present waits on the layer's semaphore instead.
#[test]
fn panic_after_the_hud_submitted_still_presents_on_the_layers_semaphore() {
    let out = injected_panic("after-hud");
    assert!(out.stderr.contains("AfterHud"), "{}", out.stderr);
}

#[test]
fn panic_in_the_analysis_thread_is_contained_and_the_log_is_complete() {
    let out = injected_panic("analysis");
    assert!(
        out.stderr.contains("live statistics stopped"),
        "the HUD's live statistics stop with a note:\n{}",
        out.stderr
    );
}

#[test]
fn every_fault_at_once_with_validation_is_clean() {
    // Repeated instances (the loader dlcloses the layer each time, though glibc keeps it mapped), two devices, two
    // presenting threads, a panic in present and a garbage config together.
    let h = Harness::new();
    let what = "testapp --repeat 3 --devices 2 --threads 2 with faults and validation";
    let out = run(h
        .testapp(&[
            "--frames",
            "20",
            "--interval",
            "5ms",
            "--repeat",
            "3",
            "--devices",
            "2",
            "--threads",
            "2",
        ])
        .layer()
        .validation()
        .env("STEADYHUD_TEST_PANIC", "present")
        .env("STEADYHUD_CONFIG", "nonsense"));
    out.assert_success(what).assert_no_vuid(what);
    // 3 rounds × 2 windows × 21 presents.
    assert_eq!(out.presented(), Some(3 * 2 * 21), "{what}:\n{}", out.stdout);
    let logs = h.session_logs();
    assert_eq!(
        logs.len(),
        6,
        "{what}: one log per window and round: {:?}",
        list_dir(&h.log_dir)
    );
    for l in &logs {
        assert_eq!(
            logged_durations_ns(&l.csv).len(),
            20,
            "{what}: {}",
            l.csv.display()
        );
        assert_eq!(
            l.summary_json()["frames"].as_u64(),
            Some(20),
            "{what}: {}",
            l.csv.display()
        );
    }
    // Config warning and injected panic come once per load of the library.
    // The loader dlcloses the layer at each vkDestroyInstance, but glibc
    // keeps libsteadyhud.so mapped (LD_DEBUG=files: one `calling init`, one
    // `calling fini` at exit), so this is 1 here; 3 if it ever is unloaded.
    let lines = layer_lines(&out.stderr);
    let config = lines.iter().filter(|l| l.contains("config:")).count();
    let panics = lines
        .iter()
        .filter(|l| l.contains("internal error contained"))
        .count();
    assert!(
        (1..=3).contains(&config) && config == panics,
        "{what}: {config} config lines, {panics} panics:\n{}",
        out.stderr
    );
}

#[test]
fn device_lost_in_the_hud_disables_only_the_hud() {
    // Lavapipe cannot lose a device; `STEADYHUD_TEST_DEVICE_LOST=1` makes the
    // HUD's submission fail with VK_ERROR_DEVICE_LOST from the 10th present
    // on, which is what the layer sees first when a device is lost.
    let h = Harness::new();
    let what = "testapp with STEADYHUD_TEST_DEVICE_LOST=1 and validation";
    let out = run(h
        .testapp(&ARGS)
        .layer()
        .validation()
        .env("STEADYHUD_TEST_DEVICE_LOST", "1"));
    assert_every_frame_logged(&h, &out, what);
    out.assert_no_vuid(what);
    let lines = layer_lines(&out.stderr);
    let lost: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("device has been lost"))
        .collect();
    assert_eq!(
        lost.len(),
        1,
        "{what}: one line for the lost device, got:\n{}",
        out.stderr
    );
    assert!(
        lost[0].contains("HUD disabled") && lost[0].contains("capture and log continue"),
        "{what}: {}",
        lost[0]
    );
}
