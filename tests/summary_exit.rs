//! Issue 17, what every kind of exit leaves on disk: the layer keeps
//! `<stem>.summary.json` current while the session runs (`"complete":
//! false`, `frames_so_far`), so SIGTERM (no handler in the app), SIGKILL
//! and `_exit` (`steadyhud-testapp --exit-now`: no `.fini_array`) each leave
//! a summary no more than ~10 s of presents behind the CSV that agrees with
//! `analyze` of the CSV's first `frames_so_far` rows; the next game with
//! the layer (SIGKILL) or the next `analyze` (the others) makes such a log
//! whole from the present tail (issue 39): a row for every present and a
//! summary of them all. A clean exit leaves
//! `"complete": true` and the CSV's `# end: complete` line.

mod common;
mod keys;
use common::*;
use serde_json::Value;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

/// How long the killed apps run after their first present.
const RUN_BEFORE_KILL: Duration = Duration::from_secs(15);
/// The layer rewrites the summary at most this far apart at these session
/// lengths (upkeep's minimum interval).
const SUMMARY_INTERVAL: Duration = Duration::from_secs(10);
/// Allowance for the analysis thread's tick and a loaded machine.
const SLACK: Duration = Duration::from_millis(1500);
/// Cycles of 49 frames of 10 ms and one 50 ms stutter: 0.54 s each.
const CYCLE_S: f64 = 0.54;

/// A script of `cycles` cycles, so summaries have stutters to agree on.
fn pattern(cycles: usize) -> String {
    vec!["10ms*49,50ms"; cycles].join(",")
}

/// How a session ends without a clean exit.
#[derive(Clone, Copy, Debug)]
enum End {
    SigTerm,
    SigKill,
    ExitNow,
}

/// `(present_ns, line index)` of each complete data row of a session CSV.
fn rows(csv: &str) -> Vec<(u64, usize)> {
    let mut header_seen = false;
    let mut out = Vec::new();
    for (i, line) in csv.split_inclusive('\n').enumerate() {
        if line.starts_with('#') || !line.ends_with('\n') {
            continue;
        }
        if !header_seen {
            header_seen = true;
            continue;
        }
        let ns = line
            .split(',')
            .nth(1)
            .and_then(|f| f.parse().ok())
            .unwrap_or_else(|| panic!("row without present_ns: {line:?}"));
        out.push((ns, i));
    }
    out
}

/// Equal, numbers within a relative 1e-9. Both sides compute from the same
/// integer ns with the same code and JSON round-trips f64 exactly, so they
/// are expected bit-equal; the tolerance only keeps the test about the
/// numbers rather than about their printing.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_u64(), y.as_u64()) {
            (Some(p), Some(q)) => p == q,
            _ => {
                let (p, q) = (x.as_f64(), y.as_f64());
                p.zip(q)
                    .is_some_and(|(p, q)| p == q || (p - q).abs() <= 1e-9 * p.abs().max(q.abs()))
            }
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The CSV's header and first `n` rows (comments between them kept) in `to`.
fn truncate_csv(csv: &str, n: usize, to: &Path) {
    let r = rows(csv);
    let last_line = r[n - 1].1;
    let text: String = csv.split_inclusive('\n').take(last_line + 1).collect();
    std::fs::write(to, text).expect("write truncated CSV");
}

/// Runs the test app with the layer, ends it by `exit` ~15 s after its first
/// present, and checks what it left.
fn scenario(exit: End) {
    let h = Harness::new();
    let what = format!("{exit:?}");
    let script = match exit {
        // Runs ~43 s: still presenting when the kill comes.
        End::SigTerm | End::SigKill => pattern(80),
        End::ExitNow => pattern((RUN_BEFORE_KILL.as_secs_f64() / CYCLE_S).ceil() as usize),
    };
    let mut args = vec!["--pattern", &script, "--progress"];
    if matches!(exit, End::ExitNow) {
        args.push("--exit-now");
    }
    let mut app = spawn(h.testapp(&args).layer());
    app.wait_presents(1, Duration::from_secs(60));
    let out = match exit {
        End::SigTerm => {
            std::thread::sleep(RUN_BEFORE_KILL);
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(app.child.id() as libc::pid_t, libc::SIGTERM) };
            app.wait()
        }
        End::SigKill => {
            std::thread::sleep(RUN_BEFORE_KILL);
            app.kill()
        }
        End::ExitNow => app.wait(),
    };
    match exit {
        End::SigTerm => assert_eq!(out.status.signal(), Some(libc::SIGTERM), "{what}"),
        End::SigKill => assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{what}"),
        End::ExitNow => {
            out.assert_success(&what);
            assert!(out.presented().is_some(), "{what}: {}", out.stdout);
        }
    }

    let log = h.only_session_log();
    let csv = std::fs::read_to_string(&log.csv).expect("read CSV");
    assert!(
        !csv.contains("# end: complete"),
        "{what}: no clean end, yet the CSV says complete"
    );
    let r = rows(&csv);
    let s = log.summary_json();
    assert_eq!(s["complete"], false, "{what}: {s}");
    let n = s["frames_so_far"].as_u64().expect("frames_so_far") as usize;
    let last_ns = r.last().expect("rows").0;
    eprintln!(
        "{what}: CSV {} rows ({:.2} s), summary frames_so_far {n}, upkeep {}",
        r.len(),
        last_ns as f64 / 1e9,
        s["summary_upkeep"]
    );
    assert!(
        n > 0,
        "{what}: only the summary of the log's opening after {:.1} s of presents",
        last_ns as f64 / 1e9
    );
    assert!(
        n <= r.len(),
        "{what}: the summary counts {n} frames, the CSV holds {}",
        r.len()
    );
    assert_eq!(s["frames"].as_u64(), Some(n as u64), "{what}");
    // Frames the summary misses: all presented within the last ~10 s.
    let behind = Duration::from_nanos(last_ns - r[n - 1].0);
    assert!(
        behind <= SUMMARY_INTERVAL + SLACK,
        "{what}: the summary is {behind:?} of presents behind the CSV ({n} of {} rows)",
        r.len()
    );

    if matches!(exit, End::SigKill) {
        // The next game with the layer recovers it at its start, quietly
        // (the others are left to analyze, below).
        let next = run(h.testapp(&["--frames", "3"]).layer());
        next.assert_success("the next game");
        assert!(
            !next.stderr.contains("recovered"),
            "{what}: the game's output names another's log: {}",
            next.stderr
        );
        // Recovered (even with no row missing, when the kill came just
        // after a flush): its summary is the recovery's.
        let after = log.summary_json();
        assert!(
            after["recovered_frames"].as_u64().is_some(),
            "{what}: the next game did not recover the log: {after}"
        );
    }
    // analyze of the full CSV says the session did not end cleanly.
    let full = h.analyze(&log.csv);
    assert!(
        full["notes"].as_array().is_some_and(|n| n.iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.starts_with("session did not end cleanly (last flush at ")))),
        "{what}: {}",
        full["notes"]
    );
    // That analyze first made the log whole from the present tail: a row
    // for every frame the app presented, and a summary of them all, still
    // marked incomplete.
    let presents = match exit {
        End::ExitNow => out.presented(),
        End::SigTerm | End::SigKill => out.stdout.lines().rev().find_map(|l| {
            l.strip_prefix("testapp: present ")
                .and_then(|n| n.parse::<u64>().ok())
        }),
    }
    .expect("the app's present count");
    let whole = rows(&std::fs::read_to_string(&log.csv).expect("read CSV"));
    let n_whole = whole.len() as u64;
    // A present the kill cut short was timestamped at its start: one more.
    let most = match exit {
        End::ExitNow => presents - 1,
        End::SigTerm | End::SigKill => presents,
    };
    assert!(
        (presents - 1..=most).contains(&n_whole),
        "{what}: {n_whole} rows after recovery for {presents} presents ({} before)",
        r.len()
    );
    let s2 = log.summary_json();
    assert_eq!(s2["complete"], false, "{what}: {s2}");
    assert_eq!(s2["frames"].as_u64(), Some(n_whole), "{what}: {s2}");
    assert_eq!(
        s2["recovered_frames"].as_u64(),
        Some(n_whole - r.len() as u64),
        "{what}: {s2}"
    );
    if !matches!(exit, End::SigKill) {
        // A second analyze finds nothing left to recover.
        let said = run(h.steadyhud(&["analyze"]).arg(&log.csv));
        assert!(
            !said.stderr.contains("recovered"),
            "recovered twice: {}",
            said.stderr
        );
    }
    eprintln!(
        "{what}: recovered {} rows: {n_whole} for {presents} presents",
        n_whole - r.len() as u64
    );

    // The summary is analyze of the CSV's first frames_so_far rows.
    let cut = h.root.path().join("first-rows.csv");
    truncate_csv(&csv, n, &cut);
    let a = h.analyze(&cut);
    assert_eq!(a["frames"].as_u64(), Some(n as u64), "{what}");
    let common: Vec<&String> = a
        .as_object()
        .expect("analyze object")
        .keys()
        .filter(|k| s.get(k.as_str()).is_some())
        .collect();
    for k in keys::metrics_md_keys() {
        assert!(
            common.iter().any(|c| c.as_str() == k),
            "{what}: {k} missing"
        );
    }
    assert!(
        s["stutter_count"].as_u64().unwrap_or(0) > 0,
        "{what}: the script's stutters are not in the summary: {s}"
    );
    eprintln!("{what}: summary and analyze of the first {n} rows compared on {common:?}");
    // The catalog's metrics at their printed precision (the running
    // session's summary comes from its fixed-size state, issue 52); the
    // rest (stutter lists and causes, readings) exactly.
    assert_as_printed(&s, &a, &logged_durations_ns(&cut), &what);
    for k in common.into_iter().filter(|k| !is_catalog_metric(k)) {
        assert!(
            same(&s[k], &a[k]),
            "{what}: {k} differs: summary {} vs analyze of the first {n} rows {}",
            s[k],
            a[k]
        );
    }
}

/// SIGTERM, SIGKILL and `_exit` at once (each with its own X server): ~20 s.
#[test]
fn killed_or_exit_now_sessions_leave_an_incomplete_summary_that_agrees_with_the_csv() {
    let runs: Vec<_> = [End::SigTerm, End::SigKill, End::ExitNow]
        .into_iter()
        .map(|e| (e, std::thread::spawn(move || scenario(e))))
        .collect();
    let failed: Vec<String> = runs
        .into_iter()
        .filter_map(|(e, t)| t.join().err().map(|_| format!("{e:?}")))
        .collect();
    assert!(
        failed.is_empty(),
        "failed: {failed:?} (their panics are above)"
    );
}

/// Clean ends, by destroying everything and by leaving `main` with the
/// device alive (`.fini_array`): the final summary and the `# end` line.
#[test]
fn a_clean_exit_leaves_a_complete_summary_and_the_end_line() {
    let h = Harness::new();
    for extra in [None, Some("--no-destroy")] {
        h.clear_logs();
        let mut args = vec!["--frames", "30", "--interval", "5ms"];
        args.extend(extra);
        let what = format!("testapp {args:?}");
        run(h.testapp(&args).layer()).assert_success(&what);
        let log = h.only_session_log();
        let s = log.summary_json();
        assert_eq!(s["complete"], true, "{what}: {s}");
        assert_eq!(s["frames_so_far"], 30, "{what}: {s}");
        assert_eq!(s["frames"], 30, "{what}: {s}");
        let csv = std::fs::read_to_string(&log.csv).expect("read CSV");
        assert!(
            csv.ends_with("\n# end: complete\n"),
            "{what}: CSV ends {:?}",
            &csv[csv.len().saturating_sub(80)..]
        );
        let a = h.analyze(&log.csv);
        assert!(
            !a["notes"].to_string().contains("did not end cleanly"),
            "{what}: {}",
            a["notes"]
        );
        assert!(
            list_dir(&h.log_dir)
                .iter()
                .all(|p| !p.to_string_lossy().ends_with(".tmp")),
            "{what}: a temporary file is left: {:?}",
            list_dir(&h.log_dir)
        );
    }
}

/// The session summary carries the mergeable time histogram (issue 16):
/// `steadyhud merge` of the summary gives the same fleet metrics as `merge`
/// of `summarize --json` run on the session's CSV.
#[test]
fn the_session_summary_histogram_merges_like_the_csv() {
    let h = Harness::new();
    let out = run(h.testapp(&["--frames", "120"]).layer());
    out.assert_success("testapp --frames 120 with steadyhud");
    let log = h.only_session_log();
    let summary = log.summary.expect("a summary");
    let merged = |file: &std::path::Path| -> serde_json::Value {
        let out = run(&mut h.steadyhud(&["merge", file.to_str().expect("utf-8"), "--json"]));
        out.assert_success("steadyhud merge");
        let mut v: serde_json::Value = serde_json::from_str(&out.stdout).expect("merge JSON");
        if let Some(m) = v.as_object_mut() {
            m.remove("inputs");
        }
        v
    };
    let rows = run(&mut h.steadyhud(&["summarize", log.csv.to_str().expect("utf-8"), "--json"]));
    rows.assert_success("steadyhud summarize --json");
    let rows_file = h.log_dir.join("rows.json.txt");
    std::fs::write(&rows_file, &rows.stdout).expect("write");
    let from_summary = merged(&summary);
    assert!(
        from_summary["frames"].as_u64() == Some(120),
        "merge of the summary: {from_summary}"
    );
    assert_eq!(from_summary, merged(&rows_file));
}
