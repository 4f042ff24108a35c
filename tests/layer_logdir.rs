//! Issue 3, where the session log goes: `STEADYHUD_LOG_DIR`, else
//! `$XDG_STATE_HOME/steadyhud`; named `<exe>_<YYYY-mm-dd_HH-MM-SS>.csv` with
//! `<same stem>.summary.json`; an unwritable folder costs one stderr line and
//! the app keeps running.

mod common;
use common::*;

const ARGS: [&str; 4] = ["--frames", "20", "--interval", "5ms"];

/// `steadyhud-testapp_2026-11-22_06-40-01` (optionally `_2`, `_3`… after it).
fn is_session_stem(stem: &str) -> bool {
    let Some(rest) = stem.strip_prefix("steadyhud-testapp_") else {
        return false;
    };
    let b = rest.as_bytes();
    if b.len() < 19 {
        return false;
    }
    let shape = "dddd-dd-dd_dd-dd-dd";
    let ok = shape.bytes().zip(b).all(|(s, c)| {
        if s == b'd' {
            c.is_ascii_digit()
        } else {
            s == *c
        }
    });
    ok && (b.len() == 19 || (b[19] == b'_' && b[20..].iter().all(u8::is_ascii_digit)))
}

#[test]
fn log_is_named_after_the_exe_and_start_time() {
    let h = Harness::new();
    run(h.testapp(&ARGS).layer()).assert_success("testapp with layer");
    let log = h.only_session_log();
    let stem = log
        .csv
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("utf-8 name");
    assert!(
        is_session_stem(stem),
        "unexpected log name {}",
        log.csv.display()
    );
    let summary = log.summary.as_ref().expect("summary written at exit");
    assert_eq!(
        summary.file_name().and_then(|s| s.to_str()),
        Some(format!("{stem}.summary.json").as_str())
    );
    assert!(is_session_stem("steadyhud-testapp_2026-11-22_06-40-01_2"));
    assert!(!is_session_stem("steadyhud-testapp_2026-11-22"));
}

#[test]
fn default_log_dir_is_xdg_state_home_steadyhud() {
    let h = Harness::new();
    let out = run(h.testapp(&ARGS).layer().env_remove("STEADYHUD_LOG_DIR"));
    out.assert_success("testapp with layer, no STEADYHUD_LOG_DIR");
    let dir = h.state_home.join("steadyhud");
    let logs = session_logs_in(&dir);
    assert_eq!(
        logs.len(),
        1,
        "logs in {}: {:?}",
        dir.display(),
        list_dir(&dir)
    );
    assert_eq!(logged_durations_ns(&logs[0].csv).len(), 20);
    assert!(
        h.session_logs().is_empty(),
        "STEADYHUD_LOG_DIR was unset, yet {:?}",
        list_dir(&h.log_dir)
    );
}

#[test]
fn unwritable_log_dir_costs_one_line_and_the_app_runs_on() {
    let h = Harness::new();
    // A folder below a regular file cannot be created, even by root.
    let file = h.root.path().join("not-a-dir");
    std::fs::write(&file, "x").expect("write file");
    let bad = file.join("logs");
    let out = run(h.testapp(&ARGS).layer().env("STEADYHUD_LOG_DIR", &bad));
    out.assert_success("testapp with an unwritable log dir");
    assert_eq!(
        out.presented(),
        Some(21),
        "the app must present every frame"
    );
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("steadyhud"))
        .collect();
    let about_dir: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains(&*bad.to_string_lossy()))
        .collect();
    assert_eq!(
        about_dir.len(),
        1,
        "expected one stderr line naming {}, got:\n{}",
        bad.display(),
        out.stderr
    );
}
