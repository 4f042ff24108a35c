//! `steadyhud analyze` as users run it: the real binary on every capture in
//! `../shared/data/`, checked against numbers this test computes itself
//! from the raw files, plus bad input (exit 2, `file:line:col:` message).

#[path = "../../../tests/data/mod.rs"]
mod data;
#[path = "../../../tests/keys/mod.rs"]
mod keys;
mod stutter_rule;
use data::data_dir;
use stutter_rule::stutters_by_hand;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn analyze(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg("analyze")
        .args(args)
        .output()
        .expect("run steadyhud")
}

fn json_of(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec![path.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = analyze(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", path.display());
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Exactly one JSON object on stdout.
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON value");
    assert!(v.is_object());
    v
}

/// Independent reading of a capture: the frame-time column by name, rows
/// grouped by (ProcessID, SwapChainAddress), the biggest group's values.
struct Expected {
    frames: usize,
    total_ms: f64,
    /// The biggest group's frame times, in order.
    frames_ms: Vec<f64>,
    app: String,
}

fn expected_from_csv(path: &Path, column: &str, unit_to_ms: f64) -> Expected {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.trim_start_matches('\u{feff}');
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with("//") && !l.trim().is_empty());
    let mut header: Vec<&str>;
    loop {
        header = lines.next().unwrap().split(',').collect();
        if header.iter().any(|h| h.eq_ignore_ascii_case(column)) {
            break;
        }
    }
    let col = header
        .iter()
        .position(|h| h.eq_ignore_ascii_case(column))
        .unwrap();
    let key_cols: Vec<usize> = ["ProcessID", "SwapChainAddress"]
        .iter()
        .filter_map(|k| header.iter().position(|h| h == k))
        .collect();
    let app_col = header.iter().position(|h| *h == "Application");
    type Group = (String, String, usize, f64, Vec<f64>);
    let mut groups: Vec<Group> = Vec::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let key: String = key_cols.iter().map(|&i| f[i]).collect::<Vec<_>>().join("/");
        let v: f64 = f[col].trim().parse().unwrap();
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => {
                g.2 += 1;
                g.3 += v * unit_to_ms;
                g.4.push(v * unit_to_ms);
            }
            None => groups.push((
                key,
                app_col.map_or(String::new(), |i| f[i].to_string()),
                1,
                v * unit_to_ms,
                vec![v * unit_to_ms],
            )),
        }
    }
    // Biggest group; the first one on ties.
    let best = groups.iter().fold(None::<&Group>, |b, g| match b {
        Some(b) if b.2 >= g.2 => Some(b),
        _ => Some(g),
    });
    let best = best.unwrap();
    Expected {
        frames: best.2,
        total_ms: best.3,
        frames_ms: best.4.clone(),
        app: best.1.clone(),
    }
}

fn check_sane(v: &Value, exp: &Expected, name: &str) {
    let keys = keys::metrics_md_keys();
    for k in keys.iter().map(String::as_str).chain(["format", "source"]) {
        assert!(v.get(k).is_some(), "{name}: no {k}");
    }
    assert_eq!(
        v["frames"].as_u64().unwrap() as usize,
        exp.frames,
        "{name}: frames"
    );
    let avg = exp.frames as f64 / (exp.total_ms / 1000.0);
    let got = v["average_fps"].as_f64().unwrap();
    assert!(
        ((got - avg) / avg).abs() < 1e-9,
        "{name}: average_fps {got} vs {avg}"
    );
    let dur = v["duration_s"].as_f64().unwrap();
    assert!(
        (dur - exp.total_ms / 1000.0).abs() < 1e-6,
        "{name}: duration {dur}"
    );
    let p: Vec<f64> = ["p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms"]
        .iter()
        .map(|k| v[k].as_f64().unwrap())
        .collect();
    assert!(
        p.windows(2).all(|w| w[0] <= w[1]),
        "{name}: percentiles not monotone {p:?}"
    );
    assert!(p[0] > 0.0);
    let (s, m, t) = (
        v["steady_fps"].as_u64().unwrap(),
        v["mostly_steady_fps"].as_u64().unwrap(),
        v["typical_fps"].as_u64().unwrap(),
    );
    assert!(
        s <= m && m <= t,
        "{name}: steady {s} mostly {m} typical {t}"
    );
    let low1 = v["low_1pct_fps"].as_f64().unwrap();
    let low01 = v["low_0_1pct_fps"].as_f64().unwrap();
    assert!(
        low01 <= low1 && low1 <= got,
        "{name}: lows {low01} {low1} avg {got}"
    );
    let sf = v["stutter_frames"].as_array().unwrap();
    assert_eq!(sf.len() as u64, v["stutter_count"].as_u64().unwrap());
    assert!(sf
        .iter()
        .all(|i| (i.as_u64().unwrap() as usize) < exp.frames));
}

#[test]
fn every_shared_capture_parses_with_independently_checked_numbers() {
    // (file, frame-time column, unit → ms, expected format)
    let cases = [
        ("capframex-re2.csv", "MsBetweenPresents", 1.0, "capframex"),
        ("mangohud-0.6.8-vkcube.csv", "frametime", 1e-3, "mangohud"),
        (
            "ocat-metroexodus.csv",
            "MsBetweenPresents",
            1.0,
            "capframex",
        ),
        (
            "presentmon-test_case_0.csv",
            "MsBetweenPresents",
            1.0,
            "presentmon",
        ),
        (
            "presentmon-test_case_0_v1.csv",
            "msBetweenPresents",
            1.0,
            "presentmon",
        ),
        (
            "presentmon-test_case_0_v2.csv",
            "FrameTime",
            1.0,
            "presentmon",
        ),
        (
            "presentmon-test_case_3.csv",
            "MsBetweenPresents",
            1.0,
            "presentmon",
        ),
        (
            "presentmon1-csgo.csv",
            "MsBetweenPresents",
            1.0,
            "presentmon",
        ),
    ];
    // Every file in the folder is covered.
    let mut on_disk: Vec<String> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = cases.iter().map(|c| c.0.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "a capture in shared/data is not covered");

    for (file, column, unit, format) in cases {
        let path = data_dir().join(file);
        let v = json_of(&path, &[]);
        let exp = expected_from_csv(&path, column, unit);
        check_sane(&v, &exp, file);
        assert_eq!(v["format"], format, "{file}");
        assert_eq!(v["column"], column, "{file}");
        if !exp.app.is_empty() {
            assert!(
                v["source"].as_str().unwrap().starts_with(&exp.app),
                "{file}: {}",
                v["source"]
            );
        }
        // The table form works too and names the format and source.
        let out = analyze(&[path.to_str().unwrap()]);
        assert!(out.status.success());
        let table = String::from_utf8(out.stdout).unwrap();
        for label in [
            "Frames",
            "Average FPS",
            "P99.9",
            "Steady FPS",
            "Mostly Steady FPS",
            "Typical FPS",
            "Stutters",
            "OSC",
        ] {
            assert!(
                table.contains(label),
                "{file}: table lacks {label}:\n{table}"
            );
        }
        assert!(table.contains(&format!("{:<18}", "Frames").trim_end().to_string()));
        assert!(table.contains(&exp.frames.to_string()));
    }
}

/// The shared captures the time-share tests read: file, frame-time column,
/// its unit in ms.
const SHARED_CAPTURES: [(&str, &str, f64); 5] = [
    ("capframex-re2.csv", "MsBetweenPresents", 1.0),
    ("mangohud-0.6.8-vkcube.csv", "frametime", 1e-3),
    ("ocat-metroexodus.csv", "MsBetweenPresents", 1.0),
    ("presentmon-test_case_0.csv", "MsBetweenPresents", 1.0),
    ("presentmon1-csgo.csv", "MsBetweenPresents", 1.0),
];

/// `stutter_time_pct` (docs/metrics.md, "Stutter time") is the share of the
/// session's time spent in its stutter frames: checked on every shared
/// capture against the rule and the sum done here from the raw file, in
/// `analyze --json` and in `analyze`'s table; and `merge` of two captures'
/// `summarize --json` rows weighs each by its duration, exactly.
#[test]
fn stutter_time_pct_is_the_share_of_time_in_stutter_frames() {
    let cases = SHARED_CAPTURES;
    let mut seen_stutters = 0;
    let mut by_hand = Vec::new();
    for (file, column, unit) in cases {
        let path = data_dir().join(file);
        let v = json_of(&path, &[]);
        let exp = expected_from_csv(&path, column, unit);
        let stutters = stutters_by_hand(&exp.frames_ms, 4.0);
        let got: Vec<usize> = v["stutter_frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(got, stutters, "{file}: stutter frames");
        let in_stutters: f64 = stutters.iter().map(|&i| exp.frames_ms[i]).sum();
        let want = 100.0 * in_stutters / exp.total_ms;
        let pct = v["stutter_time_pct"].as_f64().unwrap();
        assert!((pct - want).abs() < 1e-9, "{file}: {pct} vs {want}");
        seen_stutters += stutters.len();
        by_hand.push((path.clone(), want, exp.total_ms));
        let table = String::from_utf8(analyze(&[path.to_str().unwrap()]).stdout).unwrap();
        let line = table
            .lines()
            .find(|l| l.starts_with("Stutter time"))
            .unwrap_or_else(|| panic!("{file}: no stutter time row:\n{table}"));
        assert!(line.ends_with(&format!("{want:.2} %")), "{file}: {line}");
    }
    assert!(seen_stutters > 0, "the captures have stutters to weigh");

    merge_weighs_by_duration("stutter_time_pct", &by_hand[0], &by_hand[1]);
}

/// `merge` of two captures' `summarize --json` rows gives `key`, a share of
/// time, as Σ share × duration / Σ duration over the inputs, exactly; each
/// input is (capture, its share by hand, its duration in ms).
fn merge_weighs_by_duration(key: &str, a: &(PathBuf, f64, f64), b: &(PathBuf, f64, f64)) {
    let tmp = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for (k, (path, _, _)) in [a, b].into_iter().enumerate() {
        let rows = steadyhud_stdout(&["summarize".as_ref(), "--json".as_ref(), path.as_os_str()]);
        let f = tmp.path().join(format!("rows-{k}.json"));
        std::fs::write(&f, rows).unwrap();
        inputs.push(f);
    }
    let merged = steadyhud_stdout(&[
        "merge".as_ref(),
        "--json".as_ref(),
        inputs[0].as_os_str(),
        inputs[1].as_os_str(),
    ]);
    let merged: Value = serde_json::from_str(&merged).unwrap();
    let want = (a.1 * a.2 + b.1 * b.2) / (a.2 + b.2);
    let got = merged[key].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9, "merge {key}: {got} vs {want}");
}

/// The share of the time in frames longer than 1/f s, by hand from the
/// frame times in ms (a frame exactly on budget is not over it).
fn over_budget_by_hand(frames_ms: &[f64], total_ms: f64, f: u32) -> f64 {
    // fold from +0 (an empty f64 `sum` is −0, printed "-0.00").
    let over = frames_ms
        .iter()
        .filter(|&&d| d * f64::from(f) > 1000.0)
        .fold(0.0, |a, d| a + d);
    100.0 * over / total_ms
}

/// Runs the steadyhud binary; stdout, or a panic with stderr.
fn steadyhud_stdout(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "steadyhud {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `time_over_budget_pct` (docs/metrics.md, "Time over budget") is the
/// share of the session's time in frames longer than 1/target s: checked
/// on every shared capture against the sum done here from the raw file,
/// for the default target (60: the captures record none) and two given
/// with `--target-fps`, in `analyze --json` (with the `target_fps` it
/// used) and its table; `summarize`, `compare` and `report` carry it, and
/// `merge` of two captures' `summarize --json` rows weighs each by its
/// duration, exactly.
#[test]
fn time_over_budget_pct_is_the_share_of_time_over_the_budget() {
    let cases = SHARED_CAPTURES;
    let mut strictly_between = 0;
    let mut by_hand = Vec::new();
    for (file, column, unit) in cases {
        let path = data_dir().join(file);
        let exp = expected_from_csv(&path, column, unit);
        for (target, args) in [
            (60, vec![]),
            (30, vec!["--target-fps", "30"]),
            (144, vec!["--target-fps", "144"]),
        ] {
            let v = json_of(&path, &args);
            let want = over_budget_by_hand(&exp.frames_ms, exp.total_ms, target);
            let got = v["time_over_budget_pct"].as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-9,
                "{file} at {target}: {got} vs {want}"
            );
            assert_eq!(v["target_fps"], target, "{file}");
            if want > 0.0 && want < 100.0 {
                strictly_between += 1;
            }
            if target == 60 {
                by_hand.push((path.clone(), want, exp.total_ms));
                let table = String::from_utf8(analyze(&[path.to_str().unwrap()]).stdout).unwrap();
                let line = table
                    .lines()
                    .find(|l| l.starts_with("Time over budget"))
                    .unwrap_or_else(|| panic!("{file}: no time over budget row:\n{table}"));
                assert!(
                    line.contains(&format!(
                        "{want:.2} % (frames over 16.67 ms, the budget of 60 fps)"
                    )),
                    "{file}: {line} vs {want}"
                );
            }
        }
    }
    assert!(
        strictly_between >= 5,
        "the captures have frames on both sides of the budgets"
    );

    // summarize: the column, judged against --target-fps too.
    let (a, b) = (&by_hand[0], &by_hand[2]);
    let csv = steadyhud_stdout(&["summarize".as_ref(), "--csv".as_ref(), a.0.as_os_str()]);
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let header = r.headers().unwrap().clone();
    let col = header
        .iter()
        .position(|h| h == "time_over_budget_pct")
        .expect("the column");
    let row = r.records().next().unwrap().unwrap();
    let got: f64 = row[col].parse().unwrap();
    assert!((got - a.1).abs() < 1e-9, "summarize: {got} vs {}", a.1);
    let table = steadyhud_stdout(&[
        "summarize".as_ref(),
        "--target-fps".as_ref(),
        "30".as_ref(),
        a.0.as_os_str(),
    ]);
    assert!(
        table.lines().next().unwrap().contains("Over budget %"),
        "{table}"
    );

    // compare: a row with both values.
    let text = steadyhud_stdout(&["compare".as_ref(), a.0.as_os_str(), b.0.as_os_str()]);
    let line = text
        .lines()
        .find(|l| l.starts_with("Time over budget"))
        .unwrap_or_else(|| panic!("compare: no time over budget row:\n{text}"));
    for want in [a.1, b.1] {
        assert!(line.contains(&format!("{want:.2}")), "compare: {line}");
    }

    // report: the row in the metrics table.
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("r.html");
    steadyhud_stdout(&[
        "report".as_ref(),
        a.0.as_os_str(),
        b.0.as_os_str(),
        "-o".as_ref(),
        html.as_os_str(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Time over budget"), "report lacks the row");

    merge_weighs_by_duration("time_over_budget_pct", a, b);
}

/// A steadyhud session log that records its target (`# target_fps: N`)
/// is judged against it; `--target-fps` overrides it.
#[test]
fn a_session_log_is_judged_against_the_target_it_records() {
    use std::time::{Duration, UNIX_EPOCH};
    let dir = tempfile::tempdir().unwrap();
    let layout = steadyhud_log::Layout {
        target_fps: Some(144),
        ..steadyhud_log::Layout::default()
    };
    let mut log = steadyhud_log::SessionLog::create(
        dir.path(),
        "g",
        UNIX_EPOCH + Duration::from_secs(1),
        &layout,
    )
    .unwrap();
    // 90 frames of 10 ms (over 144's 6.94 ms, within 60's 16.67) and 10 of 20 ms: T = 1.1 s.
    let mut t = 0;
    for i in 0..100u64 {
        let d = if i % 10 == 9 { 20_000_000 } else { 10_000_000 };
        t += d;
        log.write_frame(i, t, d).unwrap();
    }
    log.flush().unwrap();
    let path = log.path().to_path_buf();
    drop(log);
    let v = json_of(&path, &[]);
    assert_eq!(v["target_fps"], 144);
    assert_eq!(v["time_over_budget_pct"], 100.0);
    let v = json_of(&path, &["--target-fps", "60"]);
    assert_eq!(v["target_fps"], 60);
    let want = 100.0 * 0.2 / 1.1;
    let got = v["time_over_budget_pct"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    // Out of range: clap refuses it (exit 2).
    let out = analyze(&[path.to_str().unwrap(), "--target-fps", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn presentmon_multi_process_picks_the_biggest_swapchain() {
    let path = data_dir().join("presentmon-test_case_0.csv");
    let v = json_of(&path, &[]);
    assert_eq!(v["source"], "dwm.exe (pid 1268, swapchain 0x224B280A1C0)");
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("9 other process/swapchain group(s)")),
        "{notes:?}"
    );
    // Told otherwise, it analyses that one.
    let v = json_of(&path, &["--process", "10792"]);
    assert!(v["source"]
        .as_str()
        .unwrap()
        .starts_with("Presenter.exe (pid 10792"));
    let exp_rows = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| l.contains(",10792,"))
        .count();
    assert_eq!(v["frames"].as_u64().unwrap() as usize, exp_rows);
    let out = analyze(&[path.to_str().unwrap(), "--process", "nosuch.exe"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no rows for process nosuch.exe"));
    // test_case_3: dwm.exe has 61 frames, each Presenter.exe 18.
    let v = json_of(&data_dir().join("presentmon-test_case_3.csv"), &[]);
    assert!(v["source"]
        .as_str()
        .unwrap()
        .starts_with("dwm.exe (pid 1252"));
    assert_eq!(v["frames"], 61);
}

#[test]
fn mangohud_units_are_detected() {
    // 0.6.8 logs µs: 2373 with fps 421.4 is 2.373 ms.
    let v = json_of(&data_dir().join("mangohud-0.6.8-vkcube.csv"), &[]);
    assert!(v["format_detail"].as_str().unwrap().contains("µs"));
    assert!(
        v["p50_ms"].as_f64().unwrap() > 1000.0,
        "the 194 s first sample dominates by time"
    );
    // The same data in ms, as newer MangoHud writes it, gives the same numbers.
    let text = std::fs::read_to_string(data_dir().join("mangohud-0.6.8-vkcube.csv")).unwrap();
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        if i < 3 {
            out.push_str(l);
        } else {
            let mut f: Vec<String> = l.split(',').map(str::to_string).collect();
            f[1] = format!("{}", f[1].parse::<f64>().unwrap() / 1000.0);
            out.push_str(&f.join(","));
        }
        out.push('\n');
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mangohud-new.csv");
    std::fs::write(&p, out).unwrap();
    let w = json_of(&p, &[]);
    assert!(w["format_detail"].as_str().unwrap().contains("in ms"));
    for k in [
        "frames",
        "average_fps",
        "p50_ms",
        "p99_ms",
        "steady_fps",
        "typical_fps",
        "stutter_frames",
    ] {
        assert_eq!(v[k], w[k], "{k}");
    }
}

fn plain_with_stutter(dir: &Path) -> PathBuf {
    let mut s = String::from("# frame times in ms\n\n");
    for i in 0..300 {
        s.push_str(if i == 137 { "50.0\n" } else { "16.667\n" });
    }
    let p = dir.join("plain.txt");
    std::fs::write(&p, s).unwrap();
    p
}

#[test]
fn plain_text_stutter_is_found_at_its_frame() {
    let dir = tempfile::tempdir().unwrap();
    let p = plain_with_stutter(dir.path());
    let v = json_of(&p, &[]);
    assert_eq!(v["format"], "plain");
    assert_eq!(v["frames"], 300);
    assert_eq!(v["stutter_frames"], serde_json::json!([137]));
    let avg = 300.0 / ((299.0 * 16.667 + 50.0) / 1000.0);
    assert!((v["average_fps"].as_f64().unwrap() - avg).abs() / avg < 1e-9);
    // (50 − 16.667) / 16.667 = 2.0: a threshold of 2.5 lets it pass.
    let v = json_of(&p, &["--stutter-threshold", "2.5"]);
    assert_eq!(v["stutter_count"], 0);
    let out = analyze(&[p.to_str().unwrap()]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("frame 137 at 2.283 s: 50.000 ms"), "{table}");
}

#[test]
fn steadyhud_session_log_analyzed_even_when_cut_off() {
    use std::time::{Duration, UNIX_EPOCH};
    let dir = tempfile::tempdir().unwrap();
    let mut log = steadyhud_log::SessionLog::create(
        dir.path(),
        "vkcube",
        UNIX_EPOCH + Duration::from_secs(1),
        &steadyhud_log::Layout::default(),
    )
    .unwrap();
    let mut t = 0;
    for i in 0..500u64 {
        let d = if i == 250 { 100_000_000 } else { 16_666_667 };
        t += d;
        log.write_frame(i, t, d).unwrap();
    }
    log.flush().unwrap();
    let path = log.path().to_path_buf();
    drop(log);
    let v = json_of(&path, &[]);
    assert_eq!(
        (v["format"].as_str(), v["source"].as_str()),
        (Some("steadyhud"), Some("vkcube"))
    );
    assert_eq!(v["frames"], 500);
    assert_eq!(v["stutter_frames"], serde_json::json!([250]));
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
    let v = json_of(&path, &[]);
    assert_eq!(v["frames"], 499);
    assert!(
        v["notes"][0].as_str().unwrap().contains("cut off"),
        "{}",
        v["notes"]
    );
}

/// Runs analyze on `content`, expects exit 2 and `steadyhud: <file>:<line>:<col>: <what>`.
fn expect_error(name: &str, content: &[u8], extra: &[&str], line_col: &str, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, content).unwrap();
    let mut args = vec![p.to_str().unwrap()];
    args.extend_from_slice(extra);
    for json in [false, true] {
        let mut a = args.clone();
        if json {
            a.push("--json");
        }
        let out = analyze(&a);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(out.stdout.is_empty(), "{name}: stdout not empty");
        let want = format!("steadyhud: {}:{line_col}: ", p.display());
        assert!(
            stderr.starts_with(&want),
            "{name}: want {want:?}, got {stderr:?}"
        );
        assert!(stderr.contains(what), "{name}: want {what:?} in {stderr:?}");
        assert_eq!(stderr.lines().count(), 1, "{name}: one line: {stderr:?}");
    }
}

const PM_HEAD: &str =
    "Application,ProcessID,SwapChainAddress,Runtime,MsBetweenPresents,MsInPresentAPI\n";

#[test]
fn bad_input_gives_exit_2_and_file_line_col() {
    expect_error("empty.csv", b"", &[], "1:1", "empty file");
    expect_error("blank.txt", b"\n  \n", &[], "1:1", "empty file");
    expect_error(
        "nocol.csv",
        b"time,fps,gpu\n1,2,3\n",
        &[],
        "1:1",
        "no frame-time column",
    );
    expect_error(
        "nocol-pm.csv",
        b"Application,ProcessID,Foo\na,1,2\n",
        &[],
        "1:1",
        "no frame-time column",
    );
    expect_error(
        "word.txt",
        b"16.6\n16.7\n  fast\n",
        &[],
        "3:3",
        "expected a frame time in ms, found \"fast\"",
    );
    expect_error(
        "zero.txt",
        b"16.6\n0\n",
        &[],
        "2:1",
        "expected a frame time > 0, found 0",
    );
    expect_error("neg.txt", b"16.6\n-5\n", &[], "2:1", "> 0, found -5");
    expect_error("nan.txt", b"16.6\nNaN\n", &[], "2:1", "finite");
    expect_error("inf.txt", b"inf\n", &[], "1:1", "finite");
    let neg = format!("{PM_HEAD}g.exe,1,0x1,DXGI,16.6,0.1\ng.exe,1,0x1,DXGI,-16.6,0.1\n");
    expect_error(
        "neg.csv",
        neg.as_bytes(),
        &[],
        "3:18",
        "MsBetweenPresents: expected a frame time > 0, found -16.6",
    );
    let crlf = neg.replace('\n', "\r\n");
    expect_error(
        "neg-crlf.csv",
        crlf.as_bytes(),
        &[],
        "3:18",
        "MsBetweenPresents: expected a frame time > 0, found -16.6",
    );
    let word = format!("{PM_HEAD}g.exe,1,0x1,DXGI,abc,0.1\n");
    expect_error(
        "word.csv",
        word.as_bytes(),
        &[],
        "2:18",
        "MsBetweenPresents: expected a frame time in ms, found \"abc\"",
    );
    let trunc =
        format!("{PM_HEAD}g.exe,1,0x1,DXGI,16.6,0.1\ng.exe,1,0x1,DX\ng.exe,1,0x1,DXGI,16.6,0.1\n");
    expect_error(
        "trunc.csv",
        trunc.as_bytes(),
        &[],
        "3:15",
        "truncated row: expected at least 5",
    );
    expect_error(
        "header-only.csv",
        PM_HEAD.as_bytes(),
        &[],
        "1:1",
        "no frames",
    );
    let nul = format!("{PM_HEAD}g.exe,1,0x1,DXGI,16.6,0.1\ng.e\0e,1,0x1,DXGI,16.6,0.1\n");
    expect_error(
        "nul.csv",
        nul.as_bytes(),
        &[],
        "3:4",
        "binary data (NUL byte)",
    );
    expect_error(
        "elf.bin",
        b"\x7fELF\x02\x01\x01\x00\x00\x00",
        &[],
        "1:8",
        "binary data",
    );
    expect_error("latin1.txt", b"16.6\n1\xe96\n", &[], "2:2", "invalid UTF-8");
    let mut utf = format!("{PM_HEAD}g.exe,1,0x1,DXGI,16.6,0.1\n").into_bytes();
    utf.extend_from_slice(b"g\xffx,1,0x1,DXGI,16.6,0.1\n");
    expect_error("utf8.csv", &utf, &[], "3:2", "invalid UTF-8");
    let mango = b"os,cpu\nLinux,x\nfps,frametime\n60,16666\n60,-3\n";
    expect_error(
        "mango.csv",
        mango,
        &[],
        "5:4",
        "frametime: expected a frame time > 0",
    );
    let cut_mid = b"# steadyhud 0.1.0 session log\nframe,present_ns,frametime_ms\n0,1,16.000000\n1,2\n2,3,16.000000\n";
    expect_error(
        "cut.csv",
        cut_mid,
        &[],
        "4:4",
        "truncated row: expected 3 fields, found 2",
    );
    // A format forced on the wrong file.
    let pm = std::fs::read(data_dir().join("presentmon1-csgo.csv")).unwrap();
    expect_error(
        "forced.csv",
        &pm,
        &["--format", "plain"],
        "1:1",
        "expected a frame time in ms",
    );
}

#[test]
fn missing_file_and_bad_options_exit_2() {
    let out = analyze(&["/nonexistent/frames.csv"]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.starts_with("steadyhud: /nonexistent/frames.csv: cannot read:"),
        "{e}"
    );
    let data = data_dir();
    let out = analyze(&[data.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
    let out = analyze(&["x.csv", "--stutter-threshold", "-1"]);
    assert_eq!(out.status.code(), Some(2));
    let out = analyze(&["x.csv", "--format", "excel"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A log's `# exe:` line and marks are text whoever wrote the log chose:
/// an escape sequence in them (retitle the terminal, clear it, hide what
/// follows) is printed escaped, never sent to the terminal as is.
#[test]
fn escape_sequences_in_a_logs_text_are_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("evil.csv");
    let mut log = String::from(
        "# steadyhud 0.1.0 session log\n# exe: game\u{1b}]0;owned\u{7}\u{1b}[2J\n# start: x\n\
         frame,present_ns,frametime_ms\n",
    );
    for i in 0..20u64 {
        log.push_str(&format!("{i},{},16.666667\n", (i + 1) * 16_666_667));
        if i == 9 {
            log.push_str("# mark: boss\u{1b}[8m at frame 10\n");
        }
    }
    std::fs::write(&path, log).unwrap();
    let out = analyze(&[path.to_str().unwrap(), "--segments"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
    assert!(stdout.contains("game\\u{1b}]0;owned\\u{7}"), "{stdout}");
    assert!(stdout.contains("boss\\u{1b}[8m"), "{stdout}");
}
