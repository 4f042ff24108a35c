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

use common::feedback::{counts, Case, Program, Row};
use common::gl::{gl_library, mesa_util, preload};
use common::wayland::{WaylandBed, WESTON_PROGRAMS};
use common::*;
use std::time::{Duration, Instant};
use steadyhud_log::display::{Shown, Source};

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

/// A session log's display answers, row by row (row k: the frame present
/// k+1 ends), and its `# origin_monotonic_ns`.
fn logged_answers(text: &str) -> Vec<Shown> {
    let origin: i128 = text
        .lines()
        .find_map(|l| l.strip_prefix(steadyhud_log::ORIGIN_PREFIX))
        .expect("an origin line")
        .parse()
        .expect("origin");
    let header = text
        .lines()
        .find(|l| l.starts_with("frame,"))
        .expect("a header");
    let cols: Vec<&str> = header.split(',').collect();
    let at: Vec<usize> = steadyhud_log::columns::DISPLAY
        .iter()
        .map(|c| {
            cols.iter()
                .position(|n| *n == c.name)
                .unwrap_or_else(|| panic!("no {} column in {header}", c.name))
        })
        .collect();
    text.lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            Shown::parse([c[at[0]], c[at[1]], c[at[2]], c[at[3]]], origin)
                .unwrap_or_else(|| panic!("bad display cells in {l}"))
        })
        .collect()
}

/// Runs `program` in `case` on headless Weston through steadyhud (the
/// layer, or the GL library preloaded) and holds the session log's display
/// answers to the program's own feedback on the same commits, frame by
/// frame: log row k against the program's present k+1. Shown frames have
/// the same refresh and the same display time (the two offsets from
/// Weston's CLOCK_MONOTONIC_RAW are sampled apart, so within 20 µs; the
/// intervals between shown frames are exact), discarded ones are dropped,
/// unanswered ones unknown. Returns the program's rows and the log's.
fn same_as_own_feedback(program: Program, case: Case) -> Option<(Vec<Row>, Vec<Shown>)> {
    let _s = serial();
    if !require::programs(&WESTON_PROGRAMS) {
        return None;
    }
    let bed = WaylandBed::weston(640, 480);
    let gl = matches!(program, Program::Gl).then(|| bed.install(&gl_library()));
    let rows = program.run(
        &bed,
        |c| match &gl {
            Some(lib) => preload(c, &[lib]),
            None => {
                c.layer();
            }
        },
        case,
    );
    let what = format!("{} {case:?}", program.name());
    let logs = session_logs_in(&bed.log_dir);
    assert_eq!(logs.len(), 1, "{what}: one session log");
    let text = std::fs::read_to_string(&logs[0].csv).expect("log");
    let log = logged_answers(&text);
    assert_eq!(
        log.len() + 1,
        rows.len(),
        "{what}: a row per present but the first"
    );
    for (k, (shown, own)) in log.iter().zip(&rows[1..]).enumerate() {
        match (*shown, own.feedback.as_str()) {
            (
                Shown::At {
                    source: Source::Wayland,
                    displayed_ns,
                    refresh_ns,
                },
                "presented",
            ) => {
                let theirs = own.displayed_ns.expect("displayed_ns");
                assert!(
                    displayed_ns.abs_diff(theirs) <= 20_000,
                    "{what}: frame {k}: the log has it shown at {displayed_ns}, the program at {theirs}"
                );
                assert_eq!(
                    Some(refresh_ns),
                    own.refresh_ns,
                    "{what}: frame {k}: refresh"
                );
            }
            (
                Shown::Dropped {
                    source: Source::Wayland,
                },
                "discarded",
            ) => {}
            (Shown::Unknown, "none") => {}
            (s, f) => panic!("{what}: frame {k}: the log says {s:?}, the program {f}: {own:?}"),
        }
    }
    // The intervals between shown frames are exact.
    let dropped = log
        .iter()
        .filter(|s| matches!(s, Shown::Dropped { .. }))
        .count();
    let shown: Vec<(u64, u64)> = log
        .iter()
        .zip(&rows[1..])
        .filter_map(|(s, own)| match s {
            Shown::At { displayed_ns, .. } => Some((*displayed_ns, own.raw_ns?)),
            _ => None,
        })
        .collect();
    for w in shown.windows(2) {
        assert_eq!(
            w[1].0 - w[0].0,
            w[1].1 - w[0].1,
            "{what}: an interval between shown frames differs"
        );
    }
    eprintln!(
        "{what}: {} rows: {} shown, {dropped} dropped; the program (presented, discarded, none): {:?}",
        log.len(),
        shown.len(),
        counts(&rows)
    );
    // The summary counts the same.
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(logs[0].summary.as_ref().expect("a summary")).expect("summary"),
    )
    .expect("summary JSON");
    let d = &summary["display"];
    assert_eq!(d["displayed_frames"], shown.len(), "{what}: {d}");
    assert_eq!(d["dropped_frames"], dropped, "{what}: {d}");
    assert_eq!(
        d["unknown_frames"],
        log.len() - shown.len() - dropped,
        "{what}: {d}"
    );
    assert_eq!(
        d["sources"]["wayland"],
        shown.len() + dropped,
        "{what}: {d}"
    );
    assert_eq!(summary["display_timing"]["late_frames"], 0, "{what}");
    Some((rows, log))
}

/// How many of the log's rows are shown, dropped and unknown.
fn tally(log: &[Shown]) -> (usize, usize, usize) {
    let n = |f: fn(&Shown) -> bool| log.iter().filter(|s| f(s)).count();
    (
        n(|s| matches!(s, Shown::At { .. })),
        n(|s| matches!(s, Shown::Dropped { .. })),
        n(|s| matches!(s, Shown::Unknown)),
    )
}

/// FIFO at the compositor's pace: every frame shown (but perhaps the
/// last few, never answered).
fn fifo(program: Program) {
    let Some((_, log)) = same_as_own_feedback(program, Case::Fifo) else {
        return;
    };
    let (shown, dropped, _) = tally(&log);
    assert!(shown >= 116 && dropped == 0, "{log:?}");
}

/// Uncapped faster than the compositor repaints: frames replaced before a
/// repaint are dropped, and counted so.
fn mailbox(program: Program) {
    let Some((_, log)) = same_as_own_feedback(program, Case::Mailbox) else {
        return;
    };
    let (shown, dropped, _) = tally(&log);
    assert!(shown >= 1 && dropped >= 1, "{log:?}");
}

/// A surface never mapped: nothing shown, nothing invented.
fn unmapped(program: Program) {
    let Some((_, log)) = same_as_own_feedback(program, Case::Unmapped) else {
        return;
    };
    assert_eq!(tally(&log).0, 0, "{log:?}");
}

/// A resize at frame 60 (Vulkan: a new swapchain; GL: the wl_egl_window
/// resized): no gap and no shift across it.
fn resize(program: Program) {
    let Some((_, log)) = same_as_own_feedback(program, Case::Resize) else {
        return;
    };
    let after = tally(&log[60..]).0;
    assert!(after >= 55, "{after} shown after the resize: {log:?}");
}

#[test]
fn testapp_fifo_log_is_its_own_feedback() {
    fifo(Program::Vulkan);
}

#[test]
fn testapp_mailbox_log_is_its_own_feedback() {
    mailbox(Program::Vulkan);
}

#[test]
fn testapp_unmapped_log_is_its_own_feedback() {
    unmapped(Program::Vulkan);
}

#[test]
fn testapp_resize_log_is_its_own_feedback() {
    resize(Program::Vulkan);
}

#[test]
fn gltest_fifo_log_is_its_own_feedback() {
    fifo(Program::Gl);
}

#[test]
fn gltest_mailbox_log_is_its_own_feedback() {
    mailbox(Program::Gl);
}

#[test]
fn gltest_unmapped_log_is_its_own_feedback() {
    unmapped(Program::Gl);
}

#[test]
fn gltest_resize_log_is_its_own_feedback() {
    resize(Program::Gl);
}

/// Live, while vkcube-wayland runs through the layer on Weston: the
/// control socket's status has the window's display numbers (JSON and
/// text), and the exporter's gauges carry them, labelled by source.
#[test]
fn live_display_numbers_reach_ctl_status_and_the_exporter() {
    let _s = serial();
    let mut tools = WESTON_PROGRAMS.to_vec();
    tools.push(("vkcube-wayland", "vulkan-tools"));
    if !require::programs(&tools) {
        return;
    }
    let bed = WaylandBed::weston(640, 480);
    let game = bed.spawn_app("vkcube-wayland", &[]);
    let seen = wait_for_rows(&bed, 60, 30);
    assert!(seen >= 60, "{seen} frames logged");
    let steadyhud = bed.install(&steadyhud_exe());
    let run_as_bed = |args: &[&str]| {
        let out = bed
            .command(&steadyhud)
            .args(args)
            .output()
            .expect("run steadyhud");
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "steadyhud {args:?}: {said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        said
    };
    let status: serde_json::Value =
        serde_json::from_str(&run_as_bed(&["ctl", "--json", "status"])).expect("status JSON");
    let d = &status["windows"][0]["display"];
    assert_eq!(d["source"], "wayland", "{status}");
    let fps = d["displayed_fps"].as_f64().unwrap_or(0.0);
    assert!(fps > 1.0 && fps < 200.0, "displayed fps {fps}: {status}");
    assert!(
        d["latency_ms"].as_f64().is_some_and(|l| l > 0.0),
        "{status}"
    );
    let text = run_as_bed(&["ctl", "status"]);
    assert!(text.contains("display (wayland)"), "{text}");
    // Into the bed's log folder: its user may write there.
    let dir = bed.log_dir.clone();
    run_as_bed(&[
        "export",
        "--textfile",
        dir.to_str().expect("utf-8"),
        "--once",
    ]);
    let prom = std::fs::read_to_string(dir.join("steadyhud.prom")).expect("steadyhud.prom");
    let gauge = prom
        .lines()
        .find(|l| l.starts_with("steadyhud_displayed_fps{") && l.contains("source=\"wayland\""))
        .unwrap_or_else(|| panic!("no displayed fps gauge:\n{prom}"));
    let v: f64 = gauge
        .rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .expect("a value");
    assert!(v > 1.0, "{gauge}");
    assert!(
        prom.lines()
            .any(|l| l.starts_with("steadyhud_display_latency_seconds{")),
        "{prom}"
    );
    drop(game);
}
