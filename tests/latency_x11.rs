//! PC latency's input times on X11 (docs/metrics.md, "PC latency"): a
//! test program on Xvfb reads the presses in its window at each frame's
//! start (`--input-out`), as a game does: the Vulkan test app with the
//! layer, and the GL one (GLX) with the GL library ([`Program`]); clicks
//! and keys come from xdotool (XTest). The layer's log is held against the program's
//! record, input by input: the same frame takes each one (or, where the
//! input's millisecond holds the frame's start, the frame before: the X
//! server stamps milliseconds), I2FS the program's within that
//! millisecond; on every frame our frame start and present lie between
//! the program's stamps around them, and FS2P is the program's within
//! 0.1 ms (at the median: the machine preempts threads between the
//! program's stamps and ours, more so under load).
//! Once on a quiet machine and once beside two busy loops.

mod common;
mod require;

use common::gl::{gl_library, gltest_exe, mesa_util, preload};
use common::*;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

/// The program held against its own record, and what measures it.
#[derive(Clone, Copy, Debug)]
enum Program {
    /// `steadyhud-testapp` with the Vulkan layer.
    Vulkan,
    /// `steadyhud-gltest` (GLX, a compatibility context) with the GL
    /// library preloaded.
    Gl,
}

impl Program {
    /// The program swapping 240 frames at 60 fps, writing its record to `out`.
    fn command(self, h: &Harness, out: &str) -> Command {
        match self {
            Program::Vulkan => {
                let mut c = h.testapp(&["--frames", "240", "--progress", "--input-out", out]);
                c.layer();
                c
            }
            Program::Gl => {
                let mut c = h.command(gltest_exe());
                c.args(["--frames", "240", "--fps", "60", "--input-out", out]);
                preload(&mut c, &[&gl_library()]);
                c
            }
        }
    }

    /// Waits until frames flow (a press before the first present has no
    /// frame of the log to take it); whether they do.
    fn flowing(self, app: &mut Running) -> bool {
        match self {
            Program::Vulkan => {
                app.wait_for_line(Duration::from_secs(60), |l| l == "testapp: present 30")
            }
            Program::Gl => {
                app.wait_for_line(Duration::from_secs(60), |l| l.starts_with("gltest: ready"))
            }
        }
    }
}

/// Presses sent, one every [`GAP`].
const PRESSES: usize = 6;
const GAP: Duration = Duration::from_millis(300);

/// The program's record (`--input-out`).
#[derive(Default, Debug)]
struct Record {
    /// Present k: (frame start, present call), CLOCK_MONOTONIC ns.
    frames: Vec<(u64, u64)>,
    /// (server ms, the present that carried the frame that read it).
    inputs: Vec<(u32, usize)>,
}

fn record(text: &str) -> Record {
    let mut r = Record::default();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.as_slice() {
            ["frame", k, start, present] => {
                assert_eq!(k.parse::<usize>().unwrap(), r.frames.len(), "{l}");
                r.frames
                    .push((start.parse().unwrap(), present.parse().unwrap()));
            }
            ["input", _, ms, _, k] => r.inputs.push((ms.parse().unwrap(), k.parse().unwrap())),
            _ => panic!("a line of --input-out: {l:?}"),
        }
    }
    r
}

fn clicks_and_keys_are_taken_by_the_programs_frames(program: Program, busy: bool) {
    let h = Harness::new();
    let _loops = busy.then(CpuLoad::start);
    let out_path = h.root.path().join("inputs.txt");
    let out = out_path.to_str().unwrap().to_string();
    let mut app = spawn(&mut program.command(&h, &out));
    // Presses once frames flow, and our reader is up.
    assert!(
        program.flowing(&mut app),
        "{program:?}: the program presents"
    );
    std::thread::sleep(Duration::from_millis(500));
    h.click_and_type(PRESSES, GAP);
    let run = app.wait();
    assert!(
        run.status.success(),
        "{program:?}: the program failed: {}",
        run.stderr
    );
    let rec = record(&std::fs::read_to_string(&out_path).expect("the program's record"));
    assert_eq!(
        rec.inputs.len(),
        PRESSES,
        "the program read every press: {rec:?}"
    );
    let (origin, rows) = latency_rows(&h.only_session_log().csv);
    assert_eq!(rows.len() + 1, rec.frames.len(), "a row per frame");
    // The server's millisecond as CLOCK_MONOTONIC (its low 32 bits); the
    // layer's present 0, which input_ns counts from.
    let present0 = origin;
    let t_of = |ms: u32, k: usize| {
        let read = rec.frames[k].0 / 1_000_000;
        (read - u64::from((read as u32).wrapping_sub(ms))) * 1_000_000
    };
    // Where our stamps say each frame started (the previous present's
    // return): present − FS2P.
    let starts: Vec<u64> = rows
        .iter()
        .map(|r| {
            let fs2p = r.fs2p_ms.expect("FS2P on every frame");
            origin + r.present_ns - (fs2p * 1e6).round() as u64
        })
        .collect();
    // Each press where the rule puts it on our stamps (the first frame
    // starting at or after it), which must be the program's frame.
    let mut expected: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    let mut i2fs_gaps = Vec::new();
    for &(ms, k) in &rec.inputs {
        let t = t_of(ms, k);
        let r = starts
            .iter()
            .position(|&s| s >= t)
            .expect("a frame starts after each press");
        // Row r is the frame present r+1 ends; the program's frame k is
        // the one present k ends. The server stamps milliseconds: the
        // frame before may take the press when its start lies in the
        // press's millisecond, the next when the press came in the µs
        // between our stamp of the return and the program's read.
        let same = r + 1 == k;
        let before = r + 2 == k && rec.frames[k - 1].0 < t + 1_200_000;
        let after = r == k && rec.frames[k].0 < t + 200_000;
        assert!(
            same || before || after,
            "press at {ms} ms: the program's frame {k}, ours {}",
            r + 1
        );
        if same {
            let program = (rec.frames[k].0 as f64 - t as f64) / 1e6;
            let layer = (starts[r] as f64 - t as f64) / 1e6;
            // Our start is the return, the program's its read right after
            // it (later by as much as the machine preempted it between).
            assert!(
                layer <= program + 0.01,
                "press at {ms} ms: I2FS {layer} ms, the program's {program} ms"
            );
            i2fs_gaps.push(program - layer);
        }
        expected.entry(r).or_default().push(t);
    }
    assert!(
        median(&mut i2fs_gaps) <= 1.0,
        "I2FS the program's within 1 ms at the median: {i2fs_gaps:?}"
    );
    // The log holds exactly that: the rows that took presses, each with
    // its earliest and its mean I2FS.
    let taken: BTreeMap<usize, (i64, f64)> = rows
        .iter()
        .enumerate()
        .filter_map(|(r, row)| Some((r, (row.input_ns?, row.i2fs_ms.expect("I2FS with an input")))))
        .collect();
    assert_eq!(
        taken.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the rows that took presses: {taken:?}"
    );
    for (r, ts) in &expected {
        let (input_ns, i2fs) = taken[r];
        let earliest = *ts.iter().min().unwrap() as i64 - present0 as i64;
        assert!(
            (input_ns - earliest).abs() <= 1_000,
            "row {r}: input_ns {input_ns}, the earliest press {earliest}"
        );
        let mean = ts
            .iter()
            .map(|&t| (starts[*r] - t) as f64 / 1e6)
            .sum::<f64>()
            / ts.len() as f64;
        assert!(
            (i2fs - mean).abs() <= 0.01,
            "row {r}: I2FS {i2fs} ms, its presses' mean {mean} ms"
        );
    }
    // FS2P on every frame, against the program's own. Where the machine
    // preempted a thread between the program's stamp and ours they
    // differ; what holds whatever the load: our frame start lies between
    // the program's previous present call and its start, our present
    // between its present call and its next start.
    let slack = 2_000; // ns: the log's printed digits
    let mut off = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let (start, present) = rec.frames[r + 1];
        let layer_present = origin + row.present_ns;
        let fs2p = row.fs2p_ms.expect("FS2P on every frame");
        let layer_start = layer_present - (fs2p * 1e6).round() as u64;
        assert!(
            rec.frames[r].1 <= layer_start + slack && layer_start <= start + slack,
            "row {r}: our frame start {layer_start} is not between the program's present {} and its start {start}",
            rec.frames[r].1
        );
        let next = rec.frames.get(r + 2).map_or(u64::MAX, |f| f.0);
        assert!(
            present <= layer_present + slack && layer_present <= next.saturating_add(slack),
            "row {r}: our present {layer_present} is not between the program's {present} and its next start {next}"
        );
        let program = (present - start) as f64 / 1e6;
        if (fs2p - program).abs() > 0.1 {
            off.push((r, fs2p, program));
        }
    }
    // FS2P is the program's within 0.1 ms at the median (the machine
    // preempts threads between the program's stamps and ours, more so
    // beside busy loops or other tests).
    assert!(
        off.len() <= rows.len() / 2,
        "FS2P off by more than 0.1 ms on {} of {} frames: {off:?}",
        off.len(),
        rows.len()
    );
}

/// The median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

#[test]
fn vulkan_x11_presses_are_taken_by_the_programs_frames() {
    clicks_and_keys_are_taken_by_the_programs_frames(Program::Vulkan, false);
}

#[test]
fn vulkan_x11_presses_are_taken_by_the_programs_frames_under_load() {
    clicks_and_keys_are_taken_by_the_programs_frames(Program::Vulkan, true);
}

#[test]
fn gl_x11_presses_are_taken_by_the_programs_frames() {
    clicks_and_keys_are_taken_by_the_programs_frames(Program::Gl, false);
}

#[test]
fn gl_x11_presses_are_taken_by_the_programs_frames_under_load() {
    clicks_and_keys_are_taken_by_the_programs_frames(Program::Gl, true);
}

/// A real program on X11 whose window lies under (`x`, `y`), clicked and
/// typed at (`key`) by xdotool once its log has `rows_first` rows: its log
/// takes each press once, with an I2FS no longer than the time between the
/// press and the frame's present.
fn real_program_logs_each_press_and_its_i2fs(
    h: &Harness,
    app: Running,
    [x, y]: [&str; 2],
    key: &str,
    rows_first: usize,
) {
    // Frames flow once the log has rows (a game that loads has its long
    // first frames behind it after `rows_first`).
    wait_for_rows(&h.log_dir, rows_first, Duration::from_secs(120));
    std::thread::sleep(Duration::from_millis(1000));
    h.xdotool(&["mousemove", x, y]);
    for i in 0..PRESSES {
        if i % 2 == 0 {
            h.xdotool(&["click", "1"]);
        } else {
            h.xdotool(&["key", key]);
        }
        std::thread::sleep(GAP);
    }
    std::thread::sleep(Duration::from_millis(500));
    let out = app.terminate();
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let (_, rows) = latency_rows(&h.only_session_log().csv);
    let taken: Vec<&LatencyRow> = rows.iter().filter(|r| r.input_ns.is_some()).collect();
    assert_eq!(
        taken.len(),
        PRESSES,
        "a frame per press took it: {taken:?}\n{}",
        out.stderr
    );
    for r in &taken {
        let i2fs = r.i2fs_ms.expect("I2FS with an input");
        // The press came before its frame's start, which came before the
        // frame's present.
        let input_to_present = (r.present_ns as i64 - r.input_ns.unwrap()) as f64 / 1e6;
        assert!(
            i2fs >= 0.0 && i2fs <= input_to_present + 0.001,
            "I2FS {i2fs} ms, the press {input_to_present} ms before the present: {r:?}"
        );
        eprintln!("latency_x11: a press taken, I2FS {i2fs:.3} ms, {input_to_present:.3} ms before the present");
    }
}

/// A real Vulkan program on X11: vkcube (an xcb surface) with the layer.
#[test]
fn vkcube_logs_each_press_and_its_i2fs() {
    if !require::programs(&[("vkcube", "vulkan-tools")]) {
        return;
    }
    let h = Harness::new();
    let app = spawn(h.command("vkcube").args(["--c", "100000"]).layer());
    // vkcube's window is 500×500 at (100, 100).
    real_program_logs_each_press_and_its_i2fs(&h, app, ["300", "300"], "b", 1);
}

/// A real GL program on X11: glxgears (GLX, an X window swapped directly)
/// with the GL library preloaded.
#[test]
fn glxgears_logs_each_press_and_its_i2fs() {
    let gears = mesa_util("glxgears");
    if !require::programs(&[(&gears, "mesa-utils")]) {
        return;
    }
    let h = Harness::new();
    let mut cmd = h.command(&gears);
    preload(&mut cmd, &[&gl_library()]);
    let app = spawn(&mut cmd);
    // glxgears's window is 300×300 at (0, 0); it ignores clicks and `b`.
    real_program_logs_each_press_and_its_i2fs(&h, app, ["150", "150"], "b", 1);
}

/// Where Debian installs SuperTuxKart.
const SUPERTUXKART: &str = "/usr/games/supertuxkart";

/// A real GL game on X11: SuperTuxKart 1.4 (SDL2, GLX; its first-run
/// screen, as a fresh home shows) with the GL library preloaded, clicked
/// in its window's corner (no button there) and typed at with Shift once
/// its loading frames (most of a second each on llvmpipe) are behind it.
/// It ignores SIGTERM (TESTBED): `terminate` kills it 20 s later, the
/// log's rows flushed by then.
#[test]
fn supertuxkart_logs_each_press_and_its_i2fs() {
    if skip_in_i686("Debian's supertuxkart is a 64-bit game") {
        return;
    }
    if !std::path::Path::new(SUPERTUXKART).is_file() {
        require::skip_or_fail("not installed: supertuxkart (apt-get install supertuxkart)");
        return;
    }
    let h = Harness::with_screen(800, 600);
    let home = h.root.path().join("stk-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = h.command(SUPERTUXKART);
    cmd.args(["--windowed", "--screensize=800x600"])
        .env("HOME", &home);
    preload(&mut cmd, &[&gl_library()]);
    let app = spawn(&mut cmd);
    real_program_logs_each_press_and_its_i2fs(&h, app, ["790", "590"], "shift", 300);
}
