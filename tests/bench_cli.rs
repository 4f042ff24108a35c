//! `steadyhud bench` end to end under Xvfb: it runs the test app with the
//! layer, stops it, cuts warm-up and tail by present time, and its
//! recommendation is the Steady FPS of exactly that span of the log.

mod common;

use common::{layer_library, run, testapp_exe, Harness};
use steadyhud_formats::{self as formats, ReadOptions};
use steadyhud_metrics::{summarize, Options};

#[test]
fn bench_runs_the_test_app_and_recommends_the_steady_fps_of_the_measured_span() {
    let h = Harness::new();
    let mut cmd = h.steadyhud(&["bench", "--duration", "3", "--warmup", "1", "--lib"]);
    // `cargo test` leaves the library in deps/, not next to the CLI
    cmd.arg(layer_library())
        .arg("--")
        .arg(testapp_exe())
        .args(["--pattern", "20ms*100000"]);
    let out = run(&mut cmd);
    out.assert_success("steadyhud bench");
    assert!(
        out.stderr.contains("bench ["),
        "no progress shown:\n{}",
        out.stderr
    );

    // The app was stopped by bench, long before its 2000 s script ended.
    let log = h.only_session_log();
    let all = formats::read_path(&log.csv, &ReadOptions::default())
        .unwrap()
        .durations_ns;
    let logged_s = all.iter().sum::<u64>() as f64 / 1e9;
    assert!(
        logged_s < 60.0,
        "the program was not stopped: {logged_s} s logged"
    );

    // Independent cut: frames whose present lands in (1 s, 4 s] after the first.
    let mut end = 0u64;
    let span: Vec<u64> = all
        .iter()
        .copied()
        .filter(|&d| {
            end += d;
            end > 1_000_000_000 && end <= 4_000_000_000
        })
        .collect();
    let s = summarize(&span, &Options::default()).expect("frames in the measured span");
    let longest = *span.iter().max().unwrap() as f64 / 1e9;
    assert!(
        (s.duration_s - 3.0).abs() <= longest,
        "span of {} s",
        s.duration_s
    );
    assert!(
        out.stdout
            .contains(&format!("Frames                     {}", s.frames)),
        "bench analysed another span than (1 s, 4 s]:\n{}",
        out.stdout
    );
    let expected = format!("Recommended frame cap: {} FPS", s.steady_fps);
    if s.steady_fps > 0 {
        assert!(
            out.stdout.contains(&expected),
            "expected {expected:?} in:\n{}",
            out.stdout
        );
    }
    // 20 ms frames can never be steady above 50 FPS.
    assert!(s.steady_fps <= 50);
}

#[test]
fn bench_of_a_program_that_presents_nothing_fails_clearly() {
    let h = Harness::new();
    let mut cmd = h.steadyhud(&["bench", "--duration", "1", "--warmup", "0", "--lib"]);
    let out = run(cmd.arg(layer_library()).args(["--", "true"]));
    assert_eq!(out.status.code(), Some(2), "stderr:\n{}", out.stderr);
    assert!(
        out.stderr.contains("no session log"),
        "stderr:\n{}",
        out.stderr
    );
}
