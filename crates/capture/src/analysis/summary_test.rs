//! A session's summary equals `analyze` of its own log at the printed
//! precision (issue 52; docs/metrics.md, "The summary of a running
//! session"): frames of known durations (10⁶ frames of 1 ms around a
//! 10-minute frame, stutters, frames on a budget) driven through a
//! stream's analysis, the summary it wrote against the per-frame
//! computation `steadyhud analyze` runs on the CSV it wrote
//! (`steadyhud_formats::read_path` and `steadyhud_metrics::summarize`, as
//! `analyze_path` does).

use super::session::Log;
use super::stream::StreamAnalysis;
use super::upkeep;
use crate::rings::Stream;
use std::time::Instant;
use steadyhud_metrics::catalog::METRICS;
use steadyhud_metrics::{stk_curve, summarize, Options, SortedDurations, StkPoint, Summary};

const MS: u64 = 1_000_000;

/// Drives `frames` through a stream (a periodic rewrite midway) and returns
/// its log's durations as read back, the summary JSON and the summary of
/// the rewrite.
fn session(frames: &[u64]) -> (Vec<u64>, serde_json::Value, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let (stream, cons) = Stream::new(1, 0);
    let log = Log::pending(Some(dir.path().to_path_buf()));
    let mut a = StreamAnalysis::new(stream.clone(), cons, log, 10.0, Options::default());
    let mut w = upkeep::Writer::default();
    let mut buf = vec![0u64; 4096];
    let mut t = 1_000 * MS;
    stream.record(t);
    let mut midway = serde_json::Value::Null;
    for (i, &d) in frames.iter().enumerate() {
        t += d;
        stream.record(t);
        if i.is_multiple_of(50_000) {
            a.drain(&mut buf);
        }
        if i == frames.len() / 2 {
            a.drain(&mut buf);
            a.keep_summary(Instant::now(), &mut w, 1);
            w.stop();
            let csv = csv_in(dir.path());
            midway = read_json(&steadyhud_log::summary_path_for(&csv));
        }
    }
    a.finish(&mut buf, 1);
    let csv = csv_in(dir.path());
    let log = steadyhud_formats::read_path(&csv, &Default::default()).unwrap();
    let summary = read_json(&steadyhud_log::summary_path_for(&csv));
    (log.durations_ns, summary, midway)
}

fn csv_in(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "csv"))
        .expect("csv written")
}

fn read_json(p: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Every catalog metric of `json` against `analyze`'s of `logged` at its
/// printed decimals (the classic lows within their stated bound: 1 µs per
/// frame of the k longest), the stutter list, the STK curve and the
/// histogram bit for bit.
fn assert_as_analyze(json: &serde_json::Value, logged: &[u64]) {
    let opts = Options::default();
    let want = summarize(logged, &opts).unwrap();
    let got: Summary = serde_json::from_value(json.clone()).unwrap();
    let sorted = SortedDurations::new(logged);
    for m in METRICS {
        let (a, b) = (m.of(&got), m.of(&want));
        let agree = m.agrees_as_printed(a, b, &sorted);
        assert!(agree, "{}: {a:?} vs {b:?}", m.key);
    }
    assert_eq!(got.stutter_frames, want.stutter_frames);
    let curve: Vec<StkPoint> = serde_json::from_value(json["stk_curve"].clone()).unwrap();
    assert!(!curve.is_empty());
    // Bit for bit as computed; serde_json's reading of a float may be off
    // in the last bit, hence the 1e-15.
    let want = stk_curve(logged, curve.len() as u32);
    assert_eq!(curve.len(), want.len());
    for (a, b) in curve.iter().zip(&want) {
        assert_eq!(a.fps, b.fps);
        for (x, y) in [(a.slow, b.slow), (a.excess, b.excess)] {
            assert!((x - y).abs() <= 1e-15 * y.abs(), "{a:?} vs {b:?}");
        }
    }
    let h = steadyhud_metrics::histogram::TimeHistogram::from_durations(logged);
    assert_eq!(json["histogram"], serde_json::to_value(h).unwrap());
}

/// 10⁶ frames of 1 ms with a 10-minute frame at the middle, stutters of
/// 30 ms, and frames of 16,666,666 and 16,666,667 ns (either side of the
/// 60 fps budget, inside one microsecond).
#[test]
fn the_summary_is_analyze_of_its_own_log() {
    let mut frames = vec![MS; 1_000_000];
    frames[400_000] = 600_000 * MS;
    for i in (1_000..1_000_000).step_by(7_919) {
        frames[i] = 30 * MS;
    }
    for i in 0..2_000 {
        frames[800_000 + i] = 16_666_666 + (i as u64 % 2);
    }
    let (logged, summary, midway) = session(&frames);
    assert_eq!(logged, frames, "the log holds the frames as presented");
    assert_eq!(summary["complete"], true);
    assert_as_analyze(&summary, &logged);
    // The rewrite midway: `analyze` of the rows it covers.
    let n = midway["frames_so_far"].as_u64().unwrap() as usize;
    assert!(n > 400_000, "{n}");
    assert_as_analyze(&midway, &logged[..n]);
    assert_eq!(summary["p99_9_ms"], 600_000.0);
}
