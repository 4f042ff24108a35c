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
