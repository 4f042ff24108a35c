//! Displayed-frame timing on Wayland (issue 42), on headless Weston 10:
//! the compositor here that answers presentation feedback
//! (../shared/TESTBED.md; tests/common/wayland.rs `WaylandBed::weston`).
//!
//! A real Vulkan game (`vkcube-wayland`, through the layer) and a real
//! GLES one (`es2gears_wayland`, through the GL library) run on that bed:
//! every frame they present is logged, and the compositor's answers reach
//! the log's display columns (`displayed_ns` moving forward).
//!
//! Skipped (with a line saying so) where weston, vkcube-wayland or
//! es2gears_wayland are missing; a failure under
//! `STEADYHUD_REQUIRE_TOOLS=1` (tests/require). CI installs them.

mod common;
mod require;

use common::gl::{gl_library, mesa_util, preload};
use common::wayland::{WaylandBed, WESTON_PROGRAMS};
use common::*;
use std::time::{Duration, Instant};

/// Waits until the bed's log folder holds a session log with at least
/// `rows` frames, or `secs` pass; returns the frames seen (the log is read
/// with the crate's reader once it has a row: a log just opened has only
/// its header).
fn wait_for_rows(bed: &WaylandBed, rows: usize, secs: u64) -> usize {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let has_rows = |csv: &std::path::Path| {
        std::fs::read_to_string(csv).is_ok_and(|t| {
            t.lines()
                .any(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        })
    };
    loop {
        let seen = session_logs_in(&bed.log_dir)
            .first()
            .filter(|l| has_rows(&l.csv))
            .map_or(0, |l| logged_durations_ns(&l.csv).len());
        if seen >= rows || Instant::now() > deadline {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs `program` (needing `package`) on a headless Weston bed, started by
/// `start` (the layer, or the GL library preloaded), and checks that its
/// session log gets 60 frames within 30 s. Skipped without the tools.
fn logged_on_weston(program: &str, package: &str, start: impl FnOnce(&WaylandBed) -> Running) {
    let _s = serial();
    let mut tools = WESTON_PROGRAMS.to_vec();
    tools.push((program, package));
    if !require::programs(&tools) {
        return;
    }
    let bed = WaylandBed::weston(640, 480);
    let game = start(&bed);
    let seen = wait_for_rows(&bed, 60, 30);
    let out = game.kill();
    assert!(
        seen >= 60,
        "{program} on Weston: {seen} frames logged in 30 s:\n{}\n{}",
        out.stderr,
        bed.compositor_log()
    );
    let log = &session_logs_in(&bed.log_dir)[0];
    let text = std::fs::read_to_string(&log.csv).expect("log");
    let shown = displayed_rows(&text);
    assert!(
        shown.len() >= 30,
        "{program} on Weston: only {} of {seen} rows were answered as shown:\n{}\n{}",
        shown.len(),
        text.lines().take(30).collect::<Vec<_>>().join("\n"),
        out.stderr
    );
    for w in shown.windows(2) {
        assert!(w[1] > w[0], "{program}: displayed_ns goes back: {w:?}");
    }
}

/// The `displayed_ns` of every row the compositor answered as shown
/// (`display_source` = `wayland` and a time), in order.
fn displayed_rows(text: &str) -> Vec<i64> {
    let header = text
        .lines()
        .find(|l| l.starts_with("frame,"))
        .expect("a header");
    let cols: Vec<&str> = header.split(',').collect();
    let at = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no {name} column in {header}"))
    };
    let (displayed, source) = (at("displayed_ns"), at("display_source"));
    text.lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c.get(source) == Some(&"wayland") && !c[displayed].is_empty())
        .map(|c| c[displayed].parse().expect("displayed_ns"))
        .collect()
}

#[test]
fn vkcube_wayland_is_logged_on_weston() {
    logged_on_weston("vkcube-wayland", "vulkan-tools", |bed| {
        bed.spawn_app("vkcube-wayland", &[])
    });
}

#[test]
fn es2gears_wayland_is_logged_on_weston() {
    let gears = mesa_util("es2gears_wayland");
    logged_on_weston(&gears, "mesa-utils", |bed| {
        let gl = bed.install(&gl_library());
        let mut cmd = bed.command(&gears);
        preload(&mut cmd, &[&gl]);
        spawn(&mut cmd)
    });
}
