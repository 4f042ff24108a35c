//! The test programs' own presentation feedback on headless Weston 10
//! (issue 42): `steadyhud-testapp --wayland` (Vulkan) and `steadyhud-gltest
//! --wayland` (EGL/GLES) ask `wp_presentation` for feedback on each of
//! their commits and write it down (`--feedback-out`; the format is in
//! test-programs/testapp/src/wayland.rs). That file is the independent reading the
//! layer's and the GL library's `displayed_ns` are checked against, so here
//! it is checked on its own, WITHOUT steadyhud (no `STEADYHUD=1`, and
//! `DISABLE_STEADYHUD=1`, no GL preload), in the four cases of the issue:
//!
//! - FIFO (Vulkan FIFO, GL swap interval 1): every present `presented`
//!   (but perhaps the last few, never answered), displayed times strictly
//!   increasing, `msc` never going back. Weston 10's headless backend
//!   repaints on a timer about every 25 ms while it reports a refresh of
//!   16.67 ms and an `msc` of 0 (measured here): the gaps are checked to be
//!   at least 1 ms with a median between 0.8 and 2 refreshes, not to equal
//!   the refresh;
//! - MAILBOX / interval 0, uncapped: frames replaced before a repaint are
//!   `discarded`, and no frame is shown before its present call;
//! - a surface never mapped (no role): nothing is `presented`;
//! - a resize at frame 60 (FIFO): presents go on and are still answered
//!   `presented` after it.
//!
//! Skipped (with a line saying so) where weston is missing; a failure under
//! `STEADYHUD_REQUIRE_TOOLS=1` (tests/require).

mod common;
mod require;

use common::feedback::{counts, Case, Program, Row};
use common::gl::gltest_exe;
use common::wayland::{WaylandBed, WESTON_PROGRAMS};
use common::*;
use std::path::PathBuf;

/// A Weston bed, or `None` (skipped) without weston.
fn weston() -> Option<WaylandBed> {
    if !require::programs(&WESTON_PROGRAMS) {
        return None;
    }
    Some(WaylandBed::weston(640, 480))
}

/// The program's rows in `case` on a fresh Weston bed, without steadyhud
/// (`None`: skipped without weston).
fn alone(program: Program, case: Case) -> Option<Vec<Row>> {
    let _s = serial();
    let bed = weston()?;
    Some(program.run(
        &bed,
        |c| {
            c.env("DISABLE_STEADYHUD", "1");
        },
        case,
    ))
}

/// What every presented row must hold: shown no earlier than its present
/// call, on CLOCK_MONOTONIC (1) or CLOCK_MONOTONIC_RAW (4, Weston's
/// headless backend) so that `displayed_ns` is filled, and displayed times
/// strictly increasing, `msc` never going back.
fn check_presented(rows: &[Row], what: &str) {
    let shown: Vec<&Row> = rows.iter().filter(|r| r.presented()).collect();
    for r in &shown {
        let displayed = r
            .displayed_ns
            .unwrap_or_else(|| panic!("{what}: no displayed_ns in {r:?}"));
        assert!(
            matches!(r.clock_id, Some(1 | 4)),
            "{what}: presentation clock {:?}",
            r.clock_id
        );
        assert!(r.raw_ns.is_some() && r.refresh_ns.is_some());
        assert!(
            displayed >= r.present_ns,
            "{what}: present {} shown {} ns before its present call",
            r.present,
            r.present_ns - displayed
        );
    }
    for w in shown.windows(2) {
        assert!(
            w[1].displayed_ns > w[0].displayed_ns,
            "{what}: displayed times not increasing: {:?} then {:?}",
            w[0],
            w[1]
        );
        assert!(
            w[1].msc >= w[0].msc,
            "{what}: msc went back: {:?} then {:?}",
            w[0],
            w[1]
        );
    }
}

/// FIFO: every present shown but perhaps the last few, paced by the
/// compositor's repaints (module docs).
fn fifo(program: Program) {
    let Some(rows) = alone(program, Case::Fifo) else {
        return;
    };
    let what = format!("{} FIFO", program.name());
    assert_eq!(rows.len(), 120, "{what}: one row per present");
    let (p, d, n) = counts(&rows);
    assert_eq!(d, 0, "{what}: nothing discarded under FIFO");
    let first_none = rows.iter().position(|r| r.feedback == "none");
    if let Some(i) = first_none {
        assert!(
            rows[i..].iter().all(|r| r.feedback == "none") && n <= 3,
            "{what}: only the last few presents may go unanswered ({n} none from {i})"
        );
    }
    assert!(p >= 117, "{what}: {p} presented");
    check_presented(&rows, &what);
    let shown: Vec<&Row> = rows.iter().filter(|r| r.presented()).collect();
    let mut gaps: Vec<u64> = shown
        .windows(2)
        .map(|w| w[1].displayed_ns.unwrap_or(0) - w[0].displayed_ns.unwrap_or(0))
        .collect();
    assert!(
        gaps.iter().all(|&g| g >= 1_000_000),
        "{what}: two frames shown less than 1 ms apart: {gaps:?}"
    );
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2] as f64;
    let refresh = shown[0].refresh_ns.unwrap_or(0) as f64;
    assert!(
        refresh > 0.0 && median >= 0.8 * refresh && median <= 2.0 * refresh,
        "{what}: median gap {:.2} ms against a refresh of {:.2} ms",
        median / 1e6,
        refresh / 1e6
    );
    eprintln!(
        "{what}: median gap between shown frames {:.2} ms, refresh {:.2} ms",
        median / 1e6,
        refresh / 1e6
    );
}

/// MAILBOX / interval 0 uncapped: frames replaced before a repaint are
/// discarded; none is shown before its present call.
fn mailbox(program: Program) {
    let Some(rows) = alone(program, Case::Mailbox) else {
        return;
    };
    let what = format!("{} MAILBOX", program.name());
    assert_eq!(rows.len(), 200, "{what}: one row per present");
    let (p, d, _) = counts(&rows);
    assert!(d >= 1, "{what}: nothing discarded");
    assert!(p >= 1, "{what}: nothing presented");
    check_presented(&rows, &what);
}

/// A surface never mapped: nothing presented.
fn unmapped(program: Program) {
    let Some(rows) = alone(program, Case::Unmapped) else {
        return;
    };
    let what = format!("{} unmapped", program.name());
    assert_eq!(rows.len(), 200, "{what}: one row per present");
    let (p, _, _) = counts(&rows);
    assert_eq!(p, 0, "{what}: a surface never mapped had frames presented");
}

/// A resize at frame 60 under FIFO: presents go on, and frames after it
/// are still shown.
fn resize(program: Program) {
    let Some(rows) = alone(program, Case::Resize) else {
        return;
    };
    let what = format!("{} resize", program.name());
    assert_eq!(rows.len(), 120, "{what}: one row per present");
    check_presented(&rows, &what);
    let after = rows[60..].iter().filter(|r| r.presented()).count();
    assert!(
        after >= 55,
        "{what}: {after} of the 60 presents after the resize presented"
    );
}

#[test]
fn testapp_fifo_feedback_on_weston() {
    fifo(Program::Vulkan);
}

#[test]
fn testapp_mailbox_feedback_on_weston() {
    mailbox(Program::Vulkan);
}

#[test]
fn testapp_unmapped_feedback_on_weston() {
    unmapped(Program::Vulkan);
}

#[test]
fn testapp_resize_feedback_on_weston() {
    resize(Program::Vulkan);
}

#[test]
fn gltest_fifo_feedback_on_weston() {
    fifo(Program::Gl);
}

#[test]
fn gltest_mailbox_feedback_on_weston() {
    mailbox(Program::Gl);
}

#[test]
fn gltest_unmapped_feedback_on_weston() {
    unmapped(Program::Gl);
}

#[test]
fn gltest_resize_feedback_on_weston() {
    resize(Program::Gl);
}

/// The programs refuse what the Wayland path cannot do, with a reason
/// (no compositor needed: the options are checked first).
#[test]
fn wayland_options_are_checked() {
    let _s = serial();
    let cases: [(PathBuf, &[&str], &str); 4] = [
        (
            testapp_exe(),
            &["--wayland-unmapped", "--present-mode", "fifo"],
            "frame callback",
        ),
        (
            testapp_exe(),
            &["--wayland", "--swapchains", "2"],
            "one window",
        ),
        (
            testapp_exe(),
            &["--feedback-out", "/nonexistent/x.csv"],
            "needs --wayland",
        ),
        (
            gltest_exe(),
            &["--wayland-unmapped", "--swap-interval", "1"],
            "frame callback",
        ),
    ];
    for (exe, args, says) in cases {
        let out = run(std::process::Command::new(&exe)
            .args(args)
            .env("WAYLAND_DISPLAY", "steadyhud-no-such-socket")
            .env("DISABLE_STEADYHUD", "1"));
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains(says),
            "{args:?} should say `{says}`: {}",
            out.stderr
        );
    }
}
