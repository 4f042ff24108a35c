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

pub(super) fn csv_in(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "csv"))
        .expect("csv written")
}

pub(super) fn read_json(p: &std::path::Path) -> serde_json::Value {
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

/// A window's displayed frames: frame i (of `frames.len()`), presented
/// `frames[i]` ns after the one before, gets `fate(i, present)`; driven
/// through a stream with display times (a periodic rewrite midway, when
/// the log's rows so far are copied). Returns the final summary, the
/// midway one and the copy's path, and the final log's path.
pub(super) fn display_session(
    dir: &std::path::Path,
    frames: &[u64],
    fate: impl Fn(usize, u64) -> steadyhud_log::display::Shown,
) -> (serde_json::Value, serde_json::Value, std::path::PathBuf) {
    use crate::client_state::ClientState;
    use crate::rings::Answer;
    let (stream, (cons, _, dcons)) = Stream::with_display(1, 0, None, true);
    let log = Log::pending(Some(dir.to_path_buf()));
    let mut a = StreamAnalysis::with_counters(
        stream.clone(),
        (cons, None, None, dcons),
        log,
        10.0,
        Options::default(),
        ClientState::for_tests(),
        std::sync::Arc::default(),
    );
    let mut w = upkeep::Writer::default();
    let mut buf = vec![0u64; 4096];
    let mut t = 1_000 * MS;
    let mut midway = serde_json::Value::Null;
    let copy = dir.join("midway").join("copy.csv");
    for (i, &d) in std::iter::once(&0).chain(frames).enumerate() {
        t += d;
        let key = stream.record_with(t, None).expect("the ring has room");
        // Present i ends frame i - 1: its answer is that row's.
        let shown = fate(i.saturating_sub(1), key);
        stream.answer(Answer {
            present_t: key,
            shown,
        });
        if i % 2_000 == 0 {
            a.drain(&mut buf);
        }
        if i == frames.len() / 2 {
            a.drain(&mut buf);
            a.flush_log();
            a.keep_summary(Instant::now(), &mut w, 1);
            w.stop();
            let csv = csv_in(dir);
            midway = read_json(&steadyhud_log::summary_path_for(&csv));
            std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
            std::fs::copy(&csv, &copy).unwrap();
        }
    }
    a.finish(&mut buf, 1);
    (
        read_json(&steadyhud_log::summary_path_for(&csv_in(dir))),
        midway,
        copy,
    )
}

/// The summary's `display` block against `analyze --display --json`'s of
/// the log at `csv` (`steadyhud_formats::read_path` and
/// `DisplayStats::of`, as `analyze` runs them): the counts and sources
/// exactly, the shares and latency sums to the last bit (1e-15: serde's
/// reading of a float), the intervals' catalog metrics and the latency's
/// P99 at the catalog's precision, the stutter frames exactly.
pub(super) fn assert_display_as_analyze(json: &serde_json::Value, csv: &std::path::Path) {
    use steadyhud_metrics::catalog::{metric, Value};
    use steadyhud_metrics::display::{intervals_ns, DisplayStats};
    let log = steadyhud_formats::read_path(csv, &Default::default()).unwrap();
    let n = json["frames_so_far"].as_u64().unwrap() as usize;
    assert_eq!(
        log.durations_ns.len(),
        n,
        "the summary covers the log's rows"
    );
    let c = log.meta.display.as_ref().expect("display columns");
    let want = DisplayStats::of(&log.durations_ns, c, &Options::default());
    let mut got: DisplayStats = serde_json::from_value(json["display"].clone()).unwrap();
    let mut want_v = want.clone();
    let close = |a: f64, b: f64, what: &str| {
        assert!((a - b).abs() <= 1e-15 * b.abs(), "{what}: {a} vs {b}");
    };
    close(
        got.dropped_time_pct,
        want.dropped_time_pct,
        "dropped_time_pct",
    );
    got.dropped_time_pct = want.dropped_time_pct;
    let (g, w) = (got.intervals.take(), want_v.intervals.take());
    let (g, w) = (g.expect("intervals"), w.expect("intervals"));
    let sorted = SortedDurations::new(&intervals_ns(c));
    for m in METRICS {
        let (a, b) = (m.of(&g), m.of(&w));
        assert!(
            m.agrees_as_printed(a, b, &sorted),
            "display {}: {a:?} vs {b:?}",
            m.key
        );
    }
    assert_eq!(g.stutter_frames, w.stutter_frames);
    assert!(!w.stutter_frames.is_empty(), "the intervals stutter");
    let key = "present_to_display";
    let (gl, wl) = (
        got.latency.get_mut(key).unwrap().take().unwrap(),
        want_v.latency.get_mut(key).unwrap().take().unwrap(),
    );
    let p99 = |v: f64| metric("p99_ms").unwrap().text(Value::Float(v));
    assert_eq!(p99(gl.p99_ms), p99(wl.p99_ms), "latency P99");
    assert_eq!((gl.frames, &gl.column), (wl.frames, &wl.column));
    close(gl.time_s, wl.time_s, "latency time_s");
    close(gl.mean_ms, wl.mean_ms, "latency mean_ms");
    assert_eq!(got, want_v, "the rest of the block");
}

/// A window with display times: the summary's `display` block is
/// `analyze`'s of its own log at the printed precision (issue 52), at the
/// end and in a rewrite midway: 300,000 frames of about 6.9 ms shown
/// 2.4–3.4 ms after their present (latencies on microsecond edges and
/// rounding ties among them), every 13th dropped, every 1,001st without
/// an answer, a 90 ms hitch every 4,999 frames and a 10-minute one.
#[test]
fn the_display_block_is_analyze_of_its_own_log() {
    use steadyhud_log::display::{Shown, Source};
    let dir = tempfile::tempdir().unwrap();
    let mut frames: Vec<u64> = (0..300_000u64)
        .map(|i| 6_900_000 + (i.wrapping_mul(2_654_435_761) % 400_000))
        .collect();
    for i in (1_000..frames.len()).step_by(4_999) {
        frames[i] = 90 * MS;
    }
    frames[200_000] = 600_000 * MS;
    let fate = |i: usize, present: u64| {
        let latency = match i % 7 {
            0 => 2_415_000,
            1 => 2_405_000 + (i as u64 % 3) * 1_000,
            _ => 2_400_000 + (i as u64).wrapping_mul(40_503) % 1_000_000,
        };
        if i % 13 == 5 {
            Shown::Dropped {
                source: Source::Wayland,
            }
        } else if i % 1_001 == 7 {
            Shown::Unknown
        } else {
            Shown::At {
                source: Source::Wayland,
                displayed_ns: present + latency,
                refresh_ns: 0,
            }
        }
    };
    let (summary, midway, copy) = display_session(dir.path(), &frames, fate);
    assert_eq!(summary["complete"], true);
    assert_display_as_analyze(&summary, &csv_in(dir.path()));
    assert_display_as_analyze(&midway, &copy);
}
