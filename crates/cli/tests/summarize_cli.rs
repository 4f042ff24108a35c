//! `steadyhud summarize` and `steadyhud merge` as users run them: the real
//! binary on every capture in `../shared/data/` and on generated logs.
//! Rows must equal `analyze --json`, histograms must merge to the histogram
//! of all frames, a bad log must not stop the others, and the progress bar
//! must appear on a terminal only.

mod cli_run;
#[path = "../../../tests/data/mod.rs"]
mod data;
use cli_run::steadyhud;
use data::data_dir;
#[path = "../../../tests/require/mod.rs"]
mod require;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use steadyhud_formats::{read_path, ReadOptions};
use steadyhud_metrics::{summarize, Options, TimeHistogram};

fn ok(out: &Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    String::from_utf8(out.stdout.clone()).expect("UTF-8 stdout")
}

/// Every shared capture (any format).
fn captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .expect("../shared/data")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    v.sort();
    assert!(v.len() >= 5, "{v:?}");
    v
}

/// A log's name and its frame time (ms) by frame index.
type Shape = (&'static str, fn(usize) -> f64);

/// Plain-text logs with different frame-time shapes, in `dir`.
fn generated(dir: &Path) -> Vec<PathBuf> {
    let shapes: [Shape; 3] = [
        ("steady60.txt", |_| 16.666667),
        ("jittery.txt", |i| 10.0 + ((i * 7919) % 23) as f64 * 0.7),
        ("hitches.txt", |i| if i % 97 == 0 { 80.0 } else { 8.3 }),
    ];
    shapes
        .iter()
        .map(|(name, f)| {
            let p = dir.join(name);
            let text: String = (0..3000).map(|i| format!("{:.6}\n", f(i))).collect();
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect()
}

/// Equal up to the last bit serde_json's default float parser may lose.
fn same_f64(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 4.0 * f64::EPSILON * b.abs()
}

fn strs(paths: &[PathBuf]) -> Vec<&str> {
    paths.iter().map(|p| p.to_str().unwrap()).collect()
}

#[test]
fn csv_rows_equal_analyze_for_every_capture() {
    let logs = captures();
    let mut args = vec!["summarize", "--csv"];
    args.extend(strs(&logs));
    let text = ok(&steadyhud(&args), "summarize --csv");
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, steadyhud_cli::summarize::columns());
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), logs.len());
    for (row, log) in rows.iter().zip(&logs) {
        assert_eq!(&row[0], log.to_str().unwrap());
        let a: Value = serde_json::from_str(&ok(
            &steadyhud(&["analyze", log.to_str().unwrap(), "--json"]),
            "analyze",
        ))
        .unwrap();
        assert_eq!(&row[1], a["format"].as_str().unwrap());
        assert_eq!(&row[2], a["source"].as_str().unwrap_or(""));
        for (i, key) in header.iter().enumerate().skip(3) {
            let want = &a[key.as_str()];
            let got = &row[i];
            match want {
                Value::Bool(b) => assert_eq!(got, b.to_string(), "{key} of {}", log.display()),
                // Same f64 printed by both; serde_json's default parser
                // may round the last bit, Rust's does not.
                v => assert!(
                    same_f64(got.parse::<f64>().unwrap(), v.as_f64().unwrap()),
                    "{key} of {}: {got} vs {v}",
                    log.display()
                ),
            }
        }
    }
}

#[test]
fn histograms_merge_to_the_fleet_of_all_frames() {
    let dir = tempfile::tempdir().unwrap();
    let mut logs = captures();
    logs.extend(generated(dir.path()));
    let mut args = vec!["summarize", "--json"];
    args.extend(strs(&logs));
    let json_path = dir.path().join("summaries.json");
    std::fs::write(&json_path, ok(&steadyhud(&args), "summarize --json")).unwrap();
    let rows: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), logs.len());
    for row in rows {
        let h = &row["histogram"];
        assert_eq!(h["scheme"], "steadyhud-log-1pct-v1");
        let frames: u64 = h["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["frames"].as_u64().unwrap())
            .sum();
        assert_eq!(frames, row["frames"].as_u64().unwrap());
        assert!(row.get("stutter_frames").is_none());
    }

    let mut args = vec!["summarize", "--csv", "--histogram"];
    args.extend(strs(&logs));
    let csv_path = dir.path().join("histograms.csv");
    std::fs::write(&csv_path, ok(&steadyhud(&args), "summarize --histogram")).unwrap();

    let merge = |p: &Path| -> Value {
        serde_json::from_str(&ok(
            &steadyhud(&["merge", p.to_str().unwrap(), "--json"]),
            "merge",
        ))
        .unwrap()
    };
    let mut from_json = merge(&json_path);
    let from_csv = merge(&csv_path);
    // The rows carry each log's shares of time (in stutters, over the
    // budget), which merge weighs by duration; histogram rows carry none.
    // All else is the histogram's, the same either way.
    let shares = steadyhud_metrics::catalog::METRICS
        .iter()
        .filter(|m| m.merge == steadyhud_metrics::catalog::Merge::TimeShare);
    for m in shares {
        assert!(from_json[m.key].as_f64().is_some(), "{}", m.key);
        assert!(from_csv.get(m.key).is_none(), "{}", m.key);
        from_json.as_object_mut().unwrap().remove(m.key);
    }
    assert_eq!(from_json, from_csv.clone().tap_inputs(&from_json));
    assert_eq!(from_json["logs"], logs.len());

    // The same as the library's histogram of every frame of every log.
    let mut all = Vec::new();
    for l in &logs {
        all.extend(read_path(l, &ReadOptions::default()).unwrap().durations_ns);
    }
    let fleet = TimeHistogram::from_durations(&all).summary().unwrap();
    let fleet = serde_json::to_value(&fleet).unwrap();
    for (k, v) in fleet.as_object().unwrap() {
        let got = &from_json[k];
        if v.is_u64() {
            assert_eq!(got, v, "{k}");
        } else {
            assert!(
                same_f64(got.as_f64().unwrap(), v.as_f64().unwrap()),
                "{k}: {got} vs {v}"
            );
        }
    }
    // And within the documented bounds of the exact metrics of all frames.
    let exact = summarize(&all, &Options::default()).unwrap();
    let p99 = from_json["p99_ms"].as_f64().unwrap();
    assert!((p99 - exact.p99_ms).abs() <= 0.01 * exact.p99_ms);
    let steady = from_json["steady_fps"].as_f64().unwrap();
    assert!(
        (steady - f64::from(exact.steady_fps)).abs() < f64::from(exact.steady_fps) / 100.0 + 1.01
    );

    // A merge is itself mergeable: merging it with nothing changes nothing,
    // merging two copies doubles the time and keeps the shares.
    let merged_path = dir.path().join("merged.json");
    std::fs::write(&merged_path, serde_json::to_string(&from_json).unwrap()).unwrap();
    let again = merge(&merged_path);
    assert_eq!(again["frames"], from_json["frames"]);
    assert_eq!(again["steady_fps"], from_json["steady_fps"]);
    assert_eq!(again["logs"], logs.len());
    let twice: Value = serde_json::from_str(&ok(
        &steadyhud(&[
            "merge",
            merged_path.to_str().unwrap(),
            csv_path.to_str().unwrap(),
            "--json",
        ]),
        "merge twice",
    ))
    .unwrap();
    assert_eq!(twice["logs"], 2 * logs.len());
    assert_eq!(
        twice["frames"].as_u64().unwrap(),
        2 * from_json["frames"].as_u64().unwrap()
    );
    for k in [
        "p50_ms",
        "p99_ms",
        "steady_fps",
        "mostly_steady_fps",
        "typical_fps",
    ] {
        assert_eq!(twice[k], from_json[k], "{k}");
    }

    // The text form names the bounds.
    let text = ok(&steadyhud(&["merge", csv_path.to_str().unwrap()]), "merge");
    assert!(
        text.contains(&format!("Fleet of {} log(s)", logs.len())),
        "{text}"
    );
    assert!(text.contains("within 1 % + 1"), "{text}");
}

/// `inputs` differs between two merges of the same data: compare the rest.
trait TapInputs {
    fn tap_inputs(self, like: &Value) -> Value;
}
impl TapInputs for Value {
    fn tap_inputs(mut self, like: &Value) -> Value {
        self["inputs"] = like["inputs"].clone();
        self
    }
}

#[test]
fn a_bad_log_is_reported_and_the_others_still_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let good = generated(dir.path());
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "a,b\n1,2\n").unwrap();
    let negative = dir.path().join("negative.txt");
    std::fs::write(&negative, "16.6\n-3\n").unwrap();
    let missing = dir.path().join("missing.csv");
    let mut logs = vec![
        good[0].clone(),
        bad.clone(),
        good[1].clone(),
        negative.clone(),
        missing.clone(),
    ];
    logs.push(good[2].clone());
    let mut args = vec!["summarize", "--csv"];
    args.extend(strs(&logs));
    let out = steadyhud(&args);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(&format!("{}:1:1: no frame-time column", bad.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{}:2:1: frame time (ms): expected a frame time > 0",
            negative.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{}: cannot read", missing.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "3 of 6 logs could not be read and are left out: {}, {}, {}",
            bad.display(),
            negative.display(),
            missing.display()
        )),
        "{stderr}"
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let files: Vec<&str> = stdout
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(files, strs(&good));
}

#[test]
fn jobs_do_not_change_the_output_and_no_bar_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut logs = captures();
    logs.extend(generated(dir.path()));
    let run = |jobs: &str| {
        let mut args = vec!["summarize", "--json", "--jobs", jobs];
        args.extend(strs(&logs));
        let out = steadyhud(&args);
        // stderr is a pipe here: no progress bar, no control characters.
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ok(&out, "summarize")
    };
    assert_eq!(run("1"), run("3"));
    // The default table: one line per log plus the header.
    let mut args = vec!["summarize"];
    args.extend(strs(&logs));
    let table = ok(&steadyhud(&args), "summarize");
    assert_eq!(table.lines().count(), logs.len() + 1, "{table}");
    assert!(table.starts_with("file "), "{table}");
}

#[test]
fn progress_bar_on_a_terminal() {
    // `script` (util-linux) gives the command a pseudo-terminal.
    if !require::program("script", "util-linux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let logs = generated(dir.path());
    let cmd = format!(
        "{} summarize --csv {} > {}",
        env!("CARGO_BIN_EXE_steadyhud"),
        strs(&logs).join(" "),
        dir.path().join("out.csv").display()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("run script");
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(tty.contains("3/3 logs"), "{tty:?}");
    assert!(tty.contains(&format!("[{}]", "#".repeat(30))), "{tty:?}");
    // The bar is erased at the end, and stdout (the file) has no trace of it.
    assert!(tty.ends_with("\r\x1b[K"), "{tty:?}");
    let csv = std::fs::read_to_string(dir.path().join("out.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4);
    assert!(!csv.contains('\x1b'));
}

#[test]
fn bad_arguments_and_foreign_histograms_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let logs = generated(dir.path());
    let out = steadyhud(&["summarize", "--histogram", logs[0].to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--csv"));

    let hist = ok(
        &steadyhud(&[
            "summarize",
            "--csv",
            "--histogram",
            logs[1].to_str().unwrap(),
        ]),
        "summarize",
    );
    // Move the second row's bucket edge: a different layout must not sum.
    let mut lines: Vec<String> = hist.lines().map(String::from).collect();
    let mut f: Vec<String> = lines[2].split(',').map(String::from).collect();
    f[2] = (f[2].parse::<u64>().unwrap() + 1).to_string();
    lines[2] = f.join(",");
    let bad = dir.path().join("bad_hist.csv");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let out = steadyhud(&["merge", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}: line 3: bucket", bad.display())),
        "{stderr}"
    );
    assert!(stderr.contains("expected lo_ns"), "{stderr}");

    let not_hist = dir.path().join("x.json");
    std::fs::write(&not_hist, "[{\"frames\": 3}]").unwrap();
    let out = steadyhud(&["merge", not_hist.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("element 0 has no histogram"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
