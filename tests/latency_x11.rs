//! PC latency's input times on X11 (docs/metrics.md, "PC latency"): the
//! test app with the layer on Xvfb reads the presses in its window at each
//! frame's start (`--input-out`), as a game does; clicks and keys come
//! from xdotool (XTest). The layer's log is held against the program's
//! record, input by input: the same frame takes each one (or, where the
//! input's millisecond holds the frame's start, the frame before: the X
//! server stamps milliseconds), I2FS equal within that millisecond, and
//! FS2P equal within 0.1 ms on every frame (at most 1 % off by the
//! machine's preemption between the program's stamp and ours). Once on a
//! quiet machine and once beside two busy loops.

mod common;
mod require;

use common::*;
use std::time::Duration;

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

fn clicks_and_keys_are_taken_by_the_programs_frames(busy: bool) {
    let h = Harness::new();
    let _loops = busy.then(CpuLoad::start);
    let out_path = h.root.path().join("inputs.txt");
    let out = out_path.to_str().unwrap().to_string();
    let app = spawn(h.testapp(&["--frames", "240", "--input-out", &out]).layer());
    // The window is mapped and the layer's reader up once frames flow.
    std::thread::sleep(Duration::from_millis(1500));
    h.xdotool(&["mousemove", "100", "100"]);
    for i in 0..PRESSES {
        if i % 2 == 0 {
            h.xdotool(&["click", "1"]);
        } else {
            h.xdotool(&["key", "a"]);
        }
        std::thread::sleep(GAP);
    }
    let run = app.wait();
    assert!(run.status.success(), "testapp failed: {}", run.stderr);
    let rec = record(&std::fs::read_to_string(&out_path).expect("the program's record"));
    assert_eq!(
        rec.inputs.len(),
        PRESSES,
        "the program read every press: {rec:?}"
    );
    let rows = latency_rows(&h.only_session_log().csv);
    assert_eq!(rows.len() + 1, rec.frames.len(), "a row per frame");
    // The server's millisecond as CLOCK_MONOTONIC (its low 32 bits), and
    // the layer's present 0 (input_ns counts from it) from the program's.
    let present0 = rec.frames[0].1;
    let t_of = |ms: u32, k: usize| {
        let read = rec.frames[k].0 / 1_000_000;
        (read - u64::from((read as u32).wrapping_sub(ms))) * 1_000_000
    };
    let taken: Vec<(usize, &Row)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.input_ns.is_some())
        .collect();
    assert_eq!(
        taken.len(),
        PRESSES,
        "one row per press took an input: {taken:?}"
    );
    for (&(ms, k), &(r, row)) in rec.inputs.iter().zip(&taken) {
        let t = t_of(ms, k);
        let input_ns = row.input_ns.unwrap();
        // Row r is the frame present r+1 ends; the program's frame k is
        // the one present k ends.
        let (start, next_start) = (rec.frames[k - 1].0, rec.frames[k].0);
        let same = r + 1 == k;
        // The server stamps milliseconds: the frame before may take it
        // when its start lies in the input's millisecond, the next when
        // the input came in the µs between our stamp of the return and
        // the program's read.
        let before = r + 2 == k && start < t + 1_200_000;
        let after = r == k && next_start < t + 200_000;
        assert!(
            same || before || after,
            "press at {ms} ms: the program's frame {k}, the layer's row {r} (frame {})",
            r + 1
        );
        assert!(
            (input_ns - (t as i64 - present0 as i64)).abs() < 1_000_000,
            "press at {ms} ms: input_ns {input_ns}, the program's {}",
            t as i64 - present0 as i64
        );
        if same {
            let program = (next_start as f64 - t as f64) / 1e6;
            let layer = row.i2fs_ms.expect("I2FS where an input was taken");
            assert!(
                (layer - program).abs() <= 1.0,
                "press at {ms} ms: I2FS {layer} ms, the program's {program} ms"
            );
        }
    }
    // FS2P on every frame, against the program's own.
    let off: Vec<(usize, f64, f64)> = rows
        .iter()
        .enumerate()
        .filter_map(|(r, row)| {
            let (start, present) = rec.frames[r + 1];
            let program = (present - start) as f64 / 1e6;
            let layer = row.fs2p_ms.expect("FS2P on every frame");
            ((layer - program).abs() > 0.1).then_some((r, layer, program))
        })
        .collect();
    assert!(
        off.len() <= (rows.len() / 100).max(2),
        "FS2P off by more than 0.1 ms on {} of {} frames: {off:?}",
        off.len(),
        rows.len()
    );
}

/// A row of the log: its input (ns from the first present), I2FS and
/// FS2P (ms).
#[derive(Debug)]
struct Row {
    input_ns: Option<i64>,
    i2fs_ms: Option<f64>,
    fs2p_ms: Option<f64>,
}

fn latency_rows(csv: &std::path::Path) -> Vec<Row> {
    let text = std::fs::read_to_string(csv).expect("the session log");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let at = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no {name} column in {header:?}"))
    };
    let names = steadyhud_log::columns::LATENCY.map(|c| c.name);
    let (input, i2fs, fs2p) = (at(names[0]), at(names[1]), at(names[3]));
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let cell = |k: usize| f.get(k).copied().filter(|c| !c.is_empty());
            Row {
                input_ns: cell(input).map(|c| c.parse().expect("input_ns")),
                i2fs_ms: cell(i2fs).map(|c| c.parse().expect("I2FS")),
                fs2p_ms: cell(fs2p).map(|c| c.parse().expect("FS2P")),
            }
        })
        .collect()
}

#[test]
fn x11_presses_are_taken_by_the_programs_frames() {
    clicks_and_keys_are_taken_by_the_programs_frames(false);
}

#[test]
fn x11_presses_are_taken_by_the_programs_frames_under_load() {
    clicks_and_keys_are_taken_by_the_programs_frames(true);
}
