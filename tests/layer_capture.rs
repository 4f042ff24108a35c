//! Issue 3, ground truth: the scripted test app runs with the steadyhud layer
//! and its session log must hold exactly the frames presented, flag exactly
//! the scripted stutters, and agree with the metrics core; a killed app
//! leaves a readable CSV; an app that leaves main without destroying its
//! device still gets its summary.

mod common;
use common::*;
use std::time::Duration;

use steadyhud_metrics::{stk_curve, summarize, Options, StkPoint, Summary};

/// Two scripted stutters (frames 200 and 401) in an otherwise steady 60 fps run.
const PATTERN: &str = "16.6ms*200,120ms*1,16.6ms*200,90ms*1,16.6ms*100";
const SCRIPTED_STUTTERS: [usize; 2] = [200, 401];

/// Runs repeated when the app itself presented off-script (machine load).
const ATTEMPTS: usize = 3;

/// Frame durations from the app's `--timestamps` file (one CLOCK_MONOTONIC ns
/// per present call).
fn read_app_durations(path: &std::path::Path) -> Vec<u64> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let t: Vec<u64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            l.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{}: bad line {l:?}", path.display()))
        })
        .collect();
    t.windows(2).map(|w| w[1] - w[0]).collect()
}

fn summary_of(v: &serde_json::Value, what: &str) -> Summary {
    serde_json::from_value(v.clone())
        .unwrap_or_else(|e| panic!("{what} lacks docs/metrics.md#the-json-keys ({e}): {v}"))
}

/// Integer metrics equal, float metrics equal to 1e-6 relative (a log that
/// stores ms with limited decimals can differ in the last digits).
fn assert_same_metrics(a: &Summary, b: &Summary, what: &str) {
    assert_eq!(a.frames, b.frames, "{what}: frames");
    assert_eq!(a.stutter_frames, b.stutter_frames, "{what}: stutter_frames");
    assert_eq!(a.stutter_count, b.stutter_count, "{what}: stutter_count");
    assert_eq!(a.osc, b.osc, "{what}: osc");
    assert_eq!(a.steady_fps, b.steady_fps, "{what}: steady_fps");
    assert_eq!(
        a.mostly_steady_fps, b.mostly_steady_fps,
        "{what}: mostly_steady_fps"
    );
    assert_eq!(a.typical_fps, b.typical_fps, "{what}: typical_fps");
    for (name, x, y) in [
        ("duration_s", a.duration_s, b.duration_s),
        ("average_fps", a.average_fps, b.average_fps),
        ("low_1pct_fps", a.low_1pct_fps, b.low_1pct_fps),
        ("low_0_1pct_fps", a.low_0_1pct_fps, b.low_0_1pct_fps),
        ("p50_ms", a.p50_ms, b.p50_ms),
        ("p90_ms", a.p90_ms, b.p90_ms),
        ("p95_ms", a.p95_ms, b.p95_ms),
        ("p99_ms", a.p99_ms, b.p99_ms),
        ("p99_9_ms", a.p99_9_ms, b.p99_9_ms),
    ] {
        assert!(
            (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0),
            "{what}: {name} {x} vs {y}"
        );
    }
}

/// Whether frame `i` is so close to a threshold of the stutter rule that
/// moving every duration by up to `skew` ns could flip it: d − m moves by up
/// to 2·skew (the frame and its median), θ·m by up to θ·skew.
fn within_skew_of_threshold(d: &[u64], i: usize, skew: u64, theta: f64) -> bool {
    let mut w: Vec<u64> = d[i.saturating_sub(9)..=(i + 9).min(d.len() - 1)].to_vec();
    w.sort_unstable();
    let n = w.len();
    let m = if n % 2 == 1 {
        w[n / 2] as f64
    } else {
        (w[n / 2 - 1] + w[n / 2]) as f64 / 2.0
    };
    let excess = d[i] as f64 - m;
    let skew = skew as f64;
    (excess - 4e6).abs() <= 2.0 * skew || (excess - theta * m).abs() <= (2.0 + theta) * skew
}

#[test]
fn scripted_stutters_are_captured_exactly() {
    let _serial = serial();
    let h = Harness::new();
    h.assert_layer_inserted();
    let ideal = script_durations_ns(PATTERN);
    let opts = Options::default();
    let ideal_summary = summarize(&ideal, &opts).expect("non-empty script");
    // The script itself has exactly the intended stutters (guards the constants).
    assert_eq!(ideal_summary.stutter_frames, SCRIPTED_STUTTERS.to_vec());

    // Ground truth = what the app really presented: it stamps CLOCK_MONOTONIC
    // right before each vkQueuePresentKHR. On a loaded machine the app can be
    // preempted and present off-script (its own durations then show other
    // stutters): the run is repeated. If it stays off-script in every attempt,
    // the test checks the last run against what the app presented instead of
    // the script (the layer must flag exactly the app's real stutters, which
    // include every scripted one) and says so.
    let stamps_file = h.root.path().join("app_presents.txt");
    let mut attempt = 0;
    let (out, app_durations, app_stutters) = loop {
        attempt += 1;
        h.clear_logs();
        let out = run(h
            .testapp(&["--pattern", PATTERN, "--timestamps"])
            .arg(&stamps_file)
            .layer());
        out.assert_success("testapp with layer");
        let app_durations = read_app_durations(&stamps_file);
        assert_eq!(app_durations.len(), ideal.len(), "app timestamps");
        let app_stutters = summarize(&app_durations, &opts)
            .expect("non-empty")
            .stutter_frames;
        if app_stutters == SCRIPTED_STUTTERS || attempt == ATTEMPTS {
            break (out, app_durations, app_stutters);
        }
        eprintln!(
            "attempt {attempt}: the app presented off-script (stutters {app_stutters:?} by its own clock; {}); retrying",
            out.stdout.lines().find(|l| l.contains("late presents")).unwrap_or("")
        );
    };
    let on_script = app_stutters == SCRIPTED_STUTTERS;
    if !on_script {
        eprintln!(
            "NOTE: in all {ATTEMPTS} attempts the app presented off-script (stutters {app_stutters:?}, scripted \
             {SCRIPTED_STUTTERS:?}): machine overloaded, or a vkQueuePresentKHR through the layer blocked \
             longer than a frame (`steadyhud-testapp --trace`); checking the capture against what the app \
             presented"
        );
    }
    for s in SCRIPTED_STUTTERS {
        assert!(
            app_stutters.contains(&s),
            "scripted stutter {s} not among the app's own {app_stutters:?}"
        );
    }
    let presents = out.presented().expect("testapp: presented N frames");
    assert_eq!(presents as usize, ideal.len() + 1);

    let log = h.only_session_log();
    // Log rows == frames presented: N presents -> N-1 frames.
    let logged = logged_durations_ns(&log.csv);
    assert_eq!(
        logged.len() as u64,
        presents - 1,
        "rows in {}",
        log.csv.display()
    );
    assert!(
        logged.iter().all(|&d| d > 0),
        "zero/negative duration in the log"
    );

    // The metrics core over the LOGGED durations is the expectation for
    // everything steadyhud reports about this session.
    let core = summarize(&logged, &opts).expect("non-empty log");

    // Each logged frame is the app's own present-to-present time: the layer
    // stamps the same calls a few µs later. 4 ms is the stutter rule's
    // absolute threshold, so a capture error below it cannot make a stutter.
    // A loaded machine may preempt the app's thread between its stamp and
    // ours (a full-suite run beside two builds: 5.0 ms once in 300 frames):
    // then one stamp is late, its frame long and the next short by as much.
    // Only that is allowed, and rarely: a frame off by 4 ms or more must be
    // half of such a pair (the two sum to the app's within 4 ms), in at
    // most 1 % of frames (at least 2). A lost, doubled or misplaced stamp
    // shifts every later frame, or leaves a pair that does not sum.
    let diff = |i: usize| i128::from(logged[i]) - i128::from(app_durations[i]);
    let off: Vec<usize> = (0..logged.len())
        .filter(|&i| diff(i).unsigned_abs() >= 4_000_000)
        .collect();
    for &i in &off {
        let paired = [i.checked_sub(1), Some(i + 1)]
            .into_iter()
            .flatten()
            .filter(|&j| j < logged.len())
            .any(|j| (diff(i) + diff(j)).unsigned_abs() < 4_000_000);
        assert!(
            paired,
            "frame {i}: logged {} ns, the app presented {} ns apart, and no neighbour makes up for it",
            logged[i], app_durations[i]
        );
    }
    assert!(
        off.len() <= (logged.len() / 100).max(2),
        "{} frames off by 4 ms or more: {off:?}",
        off.len()
    );
    if !off.is_empty() {
        eprintln!(
            "NOTE: frames {off:?} stamped late by the machine (each made up by its neighbour)"
        );
    }
    let worst = logged
        .iter()
        .zip(&app_durations)
        .map(|(&l, &a)| l.abs_diff(a))
        .enumerate()
        .max_by_key(|&(_, d)| d)
        .expect("frames");

    // Every stutter the app presented is flagged at its frame, and no other
    // (on script: exactly the scripted ones). The layer's stamps differ from
    // the app's by at most `worst.1`, so a frame whose margin to either
    // threshold of the rule is within that skew may legitimately fall on the
    // other side; every other frame must agree.
    for &s in &SCRIPTED_STUTTERS {
        assert!(
            core.stutter_frames.contains(&s),
            "scripted stutter {s} not in the log's {:?}",
            core.stutter_frames
        );
    }
    let disagree: Vec<usize> = core
        .stutter_frames
        .iter()
        .filter(|i| !app_stutters.contains(i))
        .chain(
            app_stutters
                .iter()
                .filter(|i| !core.stutter_frames.contains(i)),
        )
        .copied()
        .collect();
    for &i in &disagree {
        assert!(
            within_skew_of_threshold(&app_durations, i, worst.1, opts.stutter_threshold),
            "frame {i}: stutter in only one of log {:?} / app {app_stutters:?}, and not a borderline frame",
            core.stutter_frames
        );
    }
    if !disagree.is_empty() {
        eprintln!("NOTE: borderline frames {disagree:?} flagged on one side only (within the {} ns stamp skew)", worst.1);
    }

    let analyzed = summary_of(&h.analyze(&log.csv), "analyze --json");
    assert_same_metrics(&analyzed, &core, "analyze(csv) vs summarize(logged)");

    let summary_json = log.summary_json();
    // The layer's summary comes from its fixed-size whole-session state
    // (issue 52): every metric is `analyze --json`'s of its own log at the
    // printed precision (docs/metrics.md, "The summary of a running
    // session"), no longer to 1e-6 in the percentiles and lows.
    assert_as_printed(
        &summary_json,
        &h.analyze(&log.csv),
        &logged,
        "layer summary.json",
    );
    // The STK curves in the summary are the core's curves of the logged frames.
    let curve: Vec<StkPoint> = serde_json::from_value(summary_json["stk_curve"].clone())
        .unwrap_or_else(|e| {
            panic!(
                "summary.json stk_curve ({e}): {}",
                summary_json["stk_curve"]
            )
        });
    let max_fps = curve
        .iter()
        .map(|p| p.fps)
        .max()
        .expect("non-empty stk_curve");
    assert!(
        max_fps > core.typical_fps,
        "stk_curve stops at {max_fps} fps, below Typical FPS"
    );
    let want = stk_curve(&logged, max_fps);
    assert_eq!(curve.len(), want.len(), "stk_curve points");
    for (got, want) in curve.iter().zip(&want) {
        assert_eq!(got.fps, want.fps);
        assert!(
            (got.slow - want.slow).abs() < 1e-9 && (got.excess - want.excess).abs() < 1e-9,
            "{got:?} vs {want:?}"
        );
    }

    // And the logged session is the script, not just self-consistent: the
    // captured stutters have their scripted length (±2 ms) and Steady FPS is
    // the script's. Real presents jitter by tens of µs, so exact equality with
    // the ideal script is not guaranteed in general; this script keeps every
    // threshold far from the jitter (Steady FPS 8 is set by the 120 ms frame:
    // f=8 allows 125 ms, f=9 only 111 ms), and we accept ±1 fps. Off script,
    // the reference is the app's own durations.
    let reference = if on_script {
        for (&i, want_ms) in SCRIPTED_STUTTERS.iter().zip([120.0, 90.0]) {
            let got_ms = logged[i] as f64 / 1e6;
            assert!(
                (got_ms - want_ms).abs() < 2.0,
                "frame {i}: logged {got_ms:.3} ms, scripted {want_ms} ms"
            );
        }
        ideal_summary
    } else {
        summarize(&app_durations, &opts).expect("non-empty")
    };
    let against = if on_script {
        "script"
    } else {
        "app's own durations"
    };
    for (key, got, want) in [
        ("steady_fps", core.steady_fps, reference.steady_fps),
        ("typical_fps", core.typical_fps, reference.typical_fps),
    ] {
        assert!(
            got.abs_diff(want) <= 1,
            "{key} from the log {got} vs {against} {want}"
        );
    }
}

#[test]
fn sigkill_mid_run_leaves_a_csv_analyze_reads() {
    let _serial = serial();
    let h = Harness::new();
    let out = run_killed_after(
        h.testapp(&["--frames", "1000", "--interval", "10ms", "--progress"])
            .layer(),
        Duration::from_millis(3500),
    );
    let killed_at = out.killed_at.expect("killed");
    assert!(
        out.presented().is_none(),
        "the app finished before the kill:\n{}",
        out.stdout
    );
    // Presents the app had made 1 s before the kill: the layer flushes at least
    // once a second, so at least their frames are on disk.
    let by = out.presents_by(killed_at.saturating_sub(Duration::from_secs(1)));
    assert!(
        by >= 50,
        "the app presented only {by} times by 1 s before the kill: the test proves nothing"
    );
    let at_kill = out.presents_by(killed_at + Duration::from_secs(1));

    let log = h.only_session_log();
    let a = h.analyze(&log.csv);
    let frames = a["frames"].as_u64().expect("frames");
    eprintln!("killed at {killed_at:?}: CSV frames {frames}, presents {by} at kill-1s, {at_kill} at the kill");
    assert!(
        // A present may have been stamped by the layer but not yet reported by
        // the app when the kill landed: at most at_kill + 1 presents, so at
        // most at_kill frames.
        frames + 1 >= by && frames <= at_kill,
        "CSV of the killed app has {frames} frames; presents were {by} at kill-1s and {at_kill} at the kill"
    );
}

#[test]
fn leaving_main_without_destroy_still_writes_the_log_and_summary() {
    let h = Harness::new();
    let out = run(h
        .testapp(&["--frames", "60", "--interval", "5ms", "--no-destroy"])
        .layer());
    out.assert_success("testapp --no-destroy with layer");
    assert_eq!(out.presented(), Some(61));
    let log = h.only_session_log();
    assert_eq!(logged_durations_ns(&log.csv).len(), 60);
    let s = summary_of(&log.summary_json(), "summary.json");
    assert_eq!(s.frames, 60);
}

#[test]
fn layer_is_off_without_steadyhud_1_and_with_disable_steadyhud() {
    let h = Harness::new();
    let args = ["--frames", "10", "--interval", "5ms"];
    // Positive control: with STEADYHUD=1 a log appears.
    run(h.testapp(&args).layer()).assert_success("testapp with layer");
    assert_eq!(
        h.session_logs().len(),
        1,
        "STEADYHUD=1 wrote no log: {:?}",
        list_dir(&h.log_dir)
    );
    h.clear_logs();
    run(&mut h.testapp(&args)).assert_success("testapp without STEADYHUD");
    assert!(
        h.session_logs().is_empty(),
        "a log without STEADYHUD=1: {:?}",
        list_dir(&h.log_dir)
    );
    run(h.testapp(&args).layer().env("DISABLE_STEADYHUD", "1"))
        .assert_success("testapp with DISABLE_STEADYHUD=1");
    assert!(
        h.session_logs().is_empty(),
        "a log despite DISABLE_STEADYHUD=1: {:?}",
        list_dir(&h.log_dir)
    );
}
