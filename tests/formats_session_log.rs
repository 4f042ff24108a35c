//! The session log round trip: what `SessionLog` writes, `formats` reads
//! back exactly (ns-exact frame times), including logs cut off mid-row by a
//! killed game, ring-overflow notes and the summary JSON.

mod keys;
use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use steadyhud_formats::{self as formats, ErrorKind, Format, ReadOptions};
use steadyhud_log::{summary_path_for, Layout, LogError, SessionLog};
use steadyhud_metrics::{self as metrics, Options};

fn start() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_795_327_802)
}

/// Frame times with a stutter at 50 and odd ns values.
fn frames() -> Vec<u64> {
    (0..120u64)
        .map(|i| {
            if i == 50 {
                80_000_123
            } else {
                16_666_667 + (i % 3)
            }
        })
        .collect()
}

fn write_all(log: &mut SessionLog, d: &[u64]) {
    let mut t = 0;
    for (i, &ns) in d.iter().enumerate() {
        t += ns;
        log.write_frame(i as u64, t, ns).unwrap();
    }
}

#[test]
fn written_log_reads_back_exactly_and_summary_has_the_keys() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().join("a/b"); // created on demand
    let mut log = SessionLog::create(&logdir, "vk cube", start(), &Layout::default()).unwrap();
    let name = log
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let lt = steadyhud_sys::time::local_time(start());
    let stamp = format!(
        "{:04}-{:02}-{:02}_{:02}-{:02}-{:02}",
        lt.year, lt.month, lt.day, lt.hour, lt.minute, lt.second
    );
    assert_eq!(name, format!("vk_cube_{stamp}.csv"));
    let d = frames();
    write_all(&mut log, &d[..60]);
    log.note_overflow(7).unwrap();
    for (i, &ns) in d.iter().enumerate().skip(60) {
        log.write_frame(i as u64, 0, ns).unwrap();
    }
    log.flush().unwrap();
    let csv_path = log.path().to_path_buf();

    // Readable while still open (flushed), format detected.
    let back = formats::read_path(&csv_path, &ReadOptions::default()).unwrap();
    assert_eq!(back.meta.format, Format::SteadyHud);
    assert_eq!(back.durations_ns, d);
    assert_eq!(back.meta.source.as_deref(), Some("vk_cube"));
    assert!(
        back.meta
            .notes
            .iter()
            .any(|n| n.contains("7 timestamps lost")),
        "{:?}",
        back.meta.notes
    );

    let summary = metrics::summarize(&d, &Options::default()).unwrap();
    assert_eq!(summary.stutter_frames, vec![50]);
    let stk = metrics::stk_curve(&d, 100);
    let path = log
        .finish(Some(&summary), &stk, serde_json::json!({"stream": 3}))
        .unwrap();
    assert_eq!(path, summary_path_for(&csv_path));
    assert_eq!(
        path.file_name().unwrap().to_string_lossy(),
        format!("vk_cube_{stamp}.summary.json")
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let keys = keys::metrics_md_keys();
    for k in keys.iter().map(String::as_str).chain([
        "stk_curve",
        "ring_overflows",
        "exe",
        "start",
        "wall_s",
    ]) {
        assert!(v.get(k).is_some(), "summary lacks {k}: {v}");
    }
    assert_eq!(v["frames"], 120);
    assert_eq!(v["stutter_frames"], serde_json::json!([50]));
    assert_eq!(v["ring_overflows"], 7);
    assert_eq!(v["stream"], 3);
    assert_eq!(v["exe"], "vk_cube");
    assert_eq!(v["stk_curve"].as_array().unwrap().len(), 100);
    assert_eq!(v["stk_curve"][0]["fps"], 1);
    assert!(!path.with_extension("json.tmp").exists());
}

#[test]
fn names_are_made_unique() {
    let dir = tempfile::tempdir().unwrap();
    let a = SessionLog::create(dir.path(), "game", start(), &Layout::default()).unwrap();
    let b = SessionLog::create(dir.path(), "game", start(), &Layout::default()).unwrap();
    let c = SessionLog::create(dir.path(), "game", start(), &Layout::default()).unwrap();
    assert_ne!(a.path(), b.path());
    assert!(b.path().to_string_lossy().ends_with("_2.csv"));
    assert!(c.path().to_string_lossy().ends_with("_3.csv"));
    assert_eq!(
        summary_path_for(b.path())
            .file_name()
            .unwrap()
            .to_string_lossy()
            .matches("_2.summary.json")
            .count(),
        1
    );
}

#[test]
fn killed_mid_row_reads_all_complete_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::create(dir.path(), "killed", start(), &Layout::default()).unwrap();
    let d = frames();
    write_all(&mut log, &d);
    log.flush().unwrap();
    let path = log.path().to_path_buf();
    drop(log);
    // Simulate the kill: cut the file inside the last row.
    let full = std::fs::read(&path).unwrap();
    for cut in [3usize, 9, 14] {
        std::fs::write(&path, &full[..full.len() - cut]).unwrap();
        let back = formats::read_path(&path, &ReadOptions::default()).unwrap();
        assert_eq!(back.durations_ns, d[..d.len() - 1], "cut {cut}");
        assert!(
            back.meta.notes.iter().any(|n| n.contains("cut off")),
            "{:?}",
            back.meta.notes
        );
    }
    // A damaged row in the middle is an error with its line.
    let text = String::from_utf8(full).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("frame,")).unwrap();
    lines[header + 10] = "9,1500";
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "{}", lines.join("\n")).unwrap();
    let e = formats::read_path(&path, &ReadOptions::default()).unwrap_err();
    assert_eq!(e.pos.unwrap().line, header as u64 + 11);
    assert!(
        matches!(e.kind, ErrorKind::Truncated { found: 2, .. }),
        "{e}"
    );
    assert!(e.to_string().contains(&format!(":{}:", header + 11)), "{e}");
}

#[test]
fn unwritable_folder_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    match SessionLog::create(&file.join("logs"), "g", start(), &Layout::default()) {
        Err(LogError::CreateDir { path, .. }) => assert_eq!(path, file.join("logs")),
        other => panic!(
            "expected CreateDir error, got {:?}",
            other.map(|l| l.path().to_path_buf())
        ),
    }
}

#[test]
fn empty_session_finishes_with_zero_frames() {
    let dir = tempfile::tempdir().unwrap();
    let log = SessionLog::create(dir.path(), "idle", start(), &Layout::default()).unwrap();
    let csv = log.path().to_path_buf();
    let path = log.finish(None, &[], serde_json::Value::Null).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(v["frames"], 0);
    // A log with a header and no rows is "no frames", located.
    let e = formats::read_path(&csv, &ReadOptions::default()).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::NoFrames { .. }), "{e}");
}
