//! The test app and the harness on their own, without the steadyhud layer:
//! the app really draws its band pattern into an X11 window, follows its
//! script's present count in every mode, and is validation-clean. If these
//! fail, the layer tests cannot be trusted.

mod common;
use common::*;
use std::time::Duration;

#[test]
fn testapp_draws_bands_in_a_real_window() {
    let h = Harness::new();
    let mut app = spawn(&mut h.testapp(&["--frames", "5", "--hold", "10", "--progress"]));
    app.wait_presents(3, Duration::from_secs(30));
    let shot = h.screenshot();
    drop(app.kill());
    // Window at (0,0), 320x240: bands of 16 px alternating A, B.
    for band in 0..20u32 {
        let x = band * BAND_WIDTH + BAND_WIDTH / 2;
        let want = if band % 2 == 0 {
            BAND_A_UNORM
        } else {
            BAND_B_UNORM
        };
        for y in [2, 120, 237] {
            let px = shot.pixel(x, y);
            if !close(px, want, 3) {
                let p = h.root.path().join("bands.png");
                shot.save_png(&p);
                panic!("pixel ({x},{y}) = {px:?}, expected band colour {want:?}");
            }
        }
    }
    // Outside the window: the black root.
    assert!(
        close(shot.pixel(400, 300), [0, 0, 0], 0),
        "root at (400,300) is {:?}",
        shot.pixel(400, 300)
    );
}

#[test]
fn testapp_counts_presents_in_every_mode_and_is_validation_clean() {
    let h = Harness::new();
    h.assert_validation_active();
    let cases: &[(&[&str], u64, &[u64])] = &[
        (&["--pattern", "5ms*10,30ms,5ms*9"], 21, &[21]),
        (&["--frames", "12", "--swapchains", "2"], 26, &[13, 13]),
        (
            &["--frames", "12", "--swapchains", "2", "--multi-present"],
            13,
            &[13, 13],
        ),
        (&["--frames", "12", "--threads", "2"], 26, &[13, 13]),
        (
            &[
                "--frames",
                "12",
                "--resize-at",
                "4:200x160",
                "--resize-at",
                "8:260x200",
            ],
            13,
            &[13],
        ),
        (
            &[
                "--frames",
                "8",
                "--format",
                "srgb",
                "--present-mode",
                "fifo",
            ],
            9,
            &[9],
        ),
        (
            &["--frames", "8", "--resize-at", "3:100x80", "--resize-lazy"],
            9,
            &[9],
        ),
        (
            &["--frames", "8", "--present-mode", "mailbox", "--no-destroy"],
            9,
            &[9],
        ),
        (&["--frames", "50", "--uncapped"], 51, &[51]),
        (&["--frames", "10", "--devices", "2"], 22, &[11, 11]),
        (
            &["--frames", "10", "--devices", "2", "--threads", "2"],
            22,
            &[11, 11],
        ),
        (
            &[
                "--frames",
                "5",
                "--repeat",
                "3",
                "--swapchains",
                "2",
                "--multi-present",
            ],
            18,
            &[18, 18],
        ),
        (
            &[
                "--frames",
                "12",
                "--pipelines-at",
                "4:3",
                "--alloc-at",
                "6:8",
                "--swapchains",
                "2",
            ],
            26,
            &[13, 13],
        ),
    ];
    for (args, presents, per) in cases {
        let out = run(h.testapp(args).validation());
        let what = format!("testapp {args:?} with validation");
        out.assert_success(&what).assert_no_vuid(&what);
        assert_eq!(
            out.presented(),
            Some(*presents),
            "{what}: stdout:\n{}",
            out.stdout
        );
        assert_eq!(out.swapchain_presents(), per.to_vec(), "{what}");
        let resizes = args.iter().filter(|a| **a == "--resize-at").count() as u64;
        let recreations = out.swapchain_recreations().expect("recreations line");
        assert!(
            recreations >= resizes,
            "{what}: {recreations} swapchain recreations for {resizes} resizes"
        );
    }
}

#[test]
fn testapp_rejects_bad_options_with_a_clear_error() {
    let h = Harness::new();
    for (args, needle) in [
        (&["--pattern", "16ms*x"][..], "count"),
        (&["--pattern", ""][..], "empty"),
        (&["--swapchains", "0"][..], "at least 1"),
        (
            &["--threads", "2", "--multi-present"][..],
            "cannot be combined",
        ),
        (
            &["--devices", "2", "--multi-present"][..],
            "cannot be combined",
        ),
        (&["--repeat", "2", "--no-destroy"][..], "cannot be combined"),
        (&["--pipelines-at", "3"][..], "FRAME:N"),
    ] {
        let out = run(&mut h.testapp(args));
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains(needle),
            "{args:?}: stderr lacks {needle:?}:\n{}",
            out.stderr
        );
    }
    // No X server: clear message, exit 1.
    let out = run(h.testapp(&["--frames", "1"]).env("DISPLAY", ":1999"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.contains("cannot open X display"),
        "{}",
        out.stderr
    );
}

#[test]
fn harness_kill_records_progress() {
    let h = Harness::new();
    let out = run_killed_after(
        &mut h.testapp(&["--frames", "1000", "--interval", "10ms", "--progress"]),
        Duration::from_millis(2500),
    );
    assert!(out.killed_at.is_some());
    assert!(!out.status.success());
    assert_eq!(
        out.presented(),
        None,
        "killed app must not print its final line"
    );
    assert!(
        out.presents_by(out.killed_at.unwrap()) > 10,
        "progress lines: {}",
        out.stdout_lines.len()
    );
}

/// Median gap (ms) between consecutive present calls in a `--timestamps` file.
fn median_frame_ms(file: &std::path::Path) -> f64 {
    let text = std::fs::read_to_string(file).expect("read --timestamps file");
    let t: Vec<u64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.parse().expect("timestamp line"))
        .collect();
    let mut gaps: Vec<f64> = t.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e6).collect();
    assert!(!gaps.is_empty(), "no present gaps in {}", file.display());
    gaps.sort_by(f64::total_cmp);
    gaps[gaps.len() / 2]
}

/// Runs the test app with `--gpu-work`; returns its GPU work line and the
/// median present-to-present time.
fn run_gpu_work(h: &Harness, args: &[&str]) -> (GpuWorkLine, f64) {
    let stamps = h.root.path().join("gpu-work-stamps.txt");
    let out = run(h
        .testapp(args)
        .arg("--timestamps")
        .arg(&stamps)
        .arg("--trace"));
    let what = format!("testapp {args:?}");
    out.assert_success(&what);
    let work = gpu_work_line(&out)
        .unwrap_or_else(|| panic!("{what}: no gpu work line:\n{}", tail(&out.stdout, 20)));
    (work, median_frame_ms(&stamps))
}

/// `--gpu-work 8` at a 4 ms schedule: each frame's measured GPU work is
/// 8 ms (median within 25 %, the count being calibrated and adapted against
/// measured time), and the GPU sets the pace: frames take about the GPU
/// work (125 fps), not the scheduled 4 ms (250 fps).
#[test]
fn testapp_gpu_work_8ms_at_4ms_interval_is_gpu_bound() {
    let _serial = serial();
    let h = Harness::new();
    let args = ["--gpu-work", "8", "--interval", "4ms", "--frames", "60"];
    let (work, frame) = run_gpu_work(&h, &args);
    eprintln!("--gpu-work 8 --interval 4ms: {work:?}, frame median {frame:.3} ms");
    assert_eq!(work.frames, 61, "one measurement per present: {work:?}");
    assert_eq!(work.requested, 8.0);
    assert!(
        (6.0..=10.0).contains(&work.median),
        "median GPU work {:.3} ms, wanted 8 ms ± 25 %: {work:?}",
        work.median
    );
    assert!(
        work.p10 <= work.median && work.median <= work.p90,
        "{work:?}"
    );
    // A frame cannot be shorter than its GPU work; it is not paced by the
    // 4 ms schedule; and little else than the GPU work (the present's copy,
    // the CPU's share on a loaded machine) adds to it.
    assert!(
        frame >= 0.8 * work.median && frame >= 6.0,
        "frame median {frame:.3} ms: not GPU-bound (GPU work median {:.3} ms, schedule 4 ms)",
        work.median
    );
    assert!(
        frame <= 3.0 * work.median,
        "frame median {frame:.3} ms is far above the GPU work median {:.3} ms",
        work.median
    );
}

/// `--gpu-work 1` at a 20 ms schedule: the schedule sets the pace (frames
/// of 20 ms), each frame's GPU work is about 1 ms.
#[test]
fn testapp_gpu_work_1ms_at_20ms_interval_follows_the_schedule() {
    let _serial = serial();
    let h = Harness::new();
    let args = ["--gpu-work", "1", "--interval", "20ms", "--frames", "30"];
    let (work, frame) = run_gpu_work(&h, &args);
    eprintln!("--gpu-work 1 --interval 20ms: {work:?}, frame median {frame:.3} ms");
    assert_eq!(work.frames, 31, "one measurement per present: {work:?}");
    assert!(
        (0.5..=1.5).contains(&work.median),
        "median GPU work {:.3} ms, wanted about 1 ms: {work:?}",
        work.median
    );
    assert!(
        (18.0..=22.0).contains(&frame),
        "frame median {frame:.3} ms, scheduled 20 ms"
    );
}

/// `--gpu-work` with the other modes (several swapchains in one present or
/// from threads, several devices, resizes, a submit thread, rounds, the
/// fence-only teardown, `0`) is clean under validation with synchronization
/// validation on, and measures every submitted frame; bad values are refused.
#[test]
fn testapp_gpu_work_is_validation_clean_in_every_mode() {
    let _serial = serial();
    let h = Harness::new();
    h.assert_sync_validation_active();
    let cases: &[(&[&str], u64)] = &[
        (
            &[
                "--frames",
                "12",
                "--swapchains",
                "2",
                "--multi-present",
                "--resize-every",
                "4",
            ],
            26,
        ),
        (&["--frames", "8", "--threads", "2"], 18),
        (&["--frames", "8", "--devices", "2", "--fence-teardown"], 18),
        (&["--frames", "8", "--submit-thread", "--repeat", "2"], 18),
        (
            &["--frames", "8", "--resize-at", "3:200x150", "--resize-lazy"],
            9,
        ),
    ];
    for (ms, (args, frames)) in ["2", "0.5", "1", "1", "0"].into_iter().zip(cases) {
        let out = run(h.testapp(&["--gpu-work", ms]).args(*args).sync_validation());
        let what = format!("testapp --gpu-work {ms} {args:?} with synchronization validation");
        out.assert_success(&what)
            .assert_no_validation_error(&what)
            .assert_no_vuid(&what);
        let work = gpu_work_line(&out)
            .unwrap_or_else(|| panic!("{what}: no gpu work line:\n{}", tail(&out.stdout, 20)));
        assert_eq!(work.frames, *frames, "{what}: {work:?}");
        assert!(work.median > 0.0, "{what}: {work:?}");
    }
    for (value, needle) in [
        ("-1", "between 0 and"),
        ("abc", "not a number"),
        ("nan", "between 0 and"),
        ("5000", "between 0 and"),
        ("", "not a number"),
    ] {
        let out = run(&mut h.testapp(&["--frames", "1", "--gpu-work", value]));
        assert_eq!(
            out.status.code(),
            Some(1),
            "--gpu-work {value:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("--gpu-work") && out.stderr.contains(needle),
            "--gpu-work {value:?}: stderr lacks {needle:?}:\n{}",
            out.stderr
        );
    }
}
