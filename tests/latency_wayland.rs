//! PC latency's input times on Wayland (docs/metrics.md, "PC latency"),
//! held against the program's own record: a test program with `--wayland
//! --input-out` in a headless sway reads its own seat at every frame
//! start: `steadyhud-testapp` with the layer (Vulkan) and
//! `steadyhud-gltest` (EGL, GLES 3) with the GL library ([`Program`]);
//! `steadyhud-testapp --type-keys` types keys stamped
//! with the CLOCK_MONOTONIC ms they are sent at. Input by input: the
//! frame the rule gives (the first that starts at or after the input, by
//! the program's own frame starts) took it in the log, with the input's
//! own time, I2FS within the stamps' 1 ms and FS2P within 0.1 ms (quiet
//! run) of the program's; the summary counts them. Once on a quiet
//! machine and once beside two busy loops. And `wtype`'s keys, stamped 0,
//! are refused with one line.
//!
//! Skipped (with a line saying so) where sway, wtype or grim is missing,
//! unless `STEADYHUD_REQUIRE_TOOLS=1`.

mod common;
mod require;

use common::gl::{gl_library, gltest_exe, preload};
use common::wayland::{WaylandBed, BED_PROGRAMS};
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The program held against its own record, and what measures it.
#[derive(Clone, Copy, Debug)]
enum Program {
    /// `steadyhud-testapp` with the Vulkan layer (FIFO).
    Vulkan,
    /// `steadyhud-gltest` with the GL library preloaded (swap interval 1,
    /// 60 fps).
    Gl,
}

impl Program {
    /// The program in `bed`, 400 frames, writing its record to `record`.
    fn command(self, bed: &WaylandBed, record: &Path) -> Command {
        match self {
            Program::Vulkan => {
                let mut cmd = bed.command(bed.install(&testapp_exe()));
                cmd.layer()
                    .args([
                        "--wayland",
                        "--present-mode",
                        "fifo",
                        "--progress",
                        "--frames",
                        "400",
                        "--input-out",
                    ])
                    .arg(record);
                cmd
            }
            Program::Gl => {
                let mut cmd = bed.command(bed.install(&gltest_exe()));
                preload(&mut cmd, &[&bed.install(&gl_library())]);
                cmd.args(["--wayland", "--frames", "400", "--input-out"])
                    .arg(record);
                cmd
            }
        }
    }
}

const W: u32 = 640;
const H: u32 = 480;
/// Keys typed, one every [`KEY_GAP`].
const KEYS: usize = 5;
const KEY_GAP: Duration = Duration::from_millis(300);

fn have_tools() -> bool {
    require::programs(&BED_PROGRAMS)
}

/// Waits for the program's 30th present (the GL program, which prints no
/// progress: its window ready and 30 rows in its log in `bed`, then half a
/// second: our reader binds the seat at a swap after the analysis thread
/// loaded the Wayland libraries, and beside busy loops the first frames
/// take seconds); panics with its output if it does not get there.
fn started(app: &mut Running, program: Program, bed: &WaylandBed) {
    let ok = match program {
        Program::Vulkan => app.wait_for_line(Duration::from_secs(30), |l| {
            l.strip_prefix("testapp: present ")
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| n >= 30)
        }),
        Program::Gl => {
            let ready =
                app.wait_for_line(Duration::from_secs(30), |l| l.starts_with("gltest: ready"));
            let flowing = wait_for_rows(&bed.log_dir, 30, Duration::from_secs(60));
            std::thread::sleep(Duration::from_millis(500));
            ready && flowing
        }
    };
    if !ok {
        let out = std::mem::replace(app, spawn(&mut std::process::Command::new("true"))).kill();
        panic!(
            "the program did not present 30 frames:\n{}\n{}",
            out.stdout, out.stderr
        );
    }
}

/// The program's record (`--input-out`): each frame's start and present
/// call, by the present that ends it, and each press's own ms stamp.
struct Record {
    frames: std::collections::BTreeMap<u64, (u64, u64)>,
    /// (the press's ms stamp, the present that ended the frame that read it)
    presses: Vec<(u64, u64)>,
}

fn record(text: &str) -> Record {
    let mut r = Record {
        frames: Default::default(),
        presses: Vec::new(),
    };
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let n = |k: usize| f[k].parse::<u64>().expect("a number");
        match f.first() {
            Some(&"frame") => {
                r.frames.insert(n(1), (n(2), n(3)));
            }
            Some(&"input") => r.presses.push((n(2), n(4))),
            _ => {}
        }
    }
    r
}

/// The frame the rule gives an input at `t` ns (the first whose start, by
/// the program's clock, is at or after it): the present that ends it, its
/// start and present call, and whether a start lies within 50 µs of the
/// input (either frame may take it then: the layer's start is the
/// present's return inside the call, the program's a few µs later).
fn expected(r: &Record, t: u64) -> Option<(u64, u64, u64, bool)> {
    let close = r.frames.values().any(|&(s, _)| s.abs_diff(t) < 50_000);
    r.frames
        .iter()
        .find(|(_, &(s, _))| s >= t)
        .map(|(&k, &(s, p))| (k, s, p, close))
}

fn keys_are_taken_by_frames(program: Program, busy: bool) {
    if !have_tools() {
        return;
    }
    let _s = serial();
    let bed = WaylandBed::start(W, H);
    let _load = busy.then(CpuLoad::start);
    let exe = bed.install(&testapp_exe());
    let record_path = bed.log_dir.join("input.presses");
    let mut app = spawn(&mut program.command(&bed, &record_path));
    started(&mut app, program, &bed);
    let typed = run(bed.command(&exe).args([
        "--type-keys",
        &KEYS.to_string(),
        "--key-gap-ms",
        &KEY_GAP.as_millis().to_string(),
    ]));
    typed.assert_success("steadyhud-testapp --type-keys");
    let out = app.wait();
    out.assert_success(&format!("{program:?}: --wayland --input-out"));
    let what = if busy {
        format!("{program:?}, under two busy loops")
    } else {
        format!("{program:?}, quiet")
    };
    let own = record(&std::fs::read_to_string(&record_path).expect("the program's record"));
    assert_eq!(
        own.presses.len(),
        KEYS,
        "{what}: the program read every key: {:?}\n{}\n{}",
        own.presses,
        typed.stdout,
        out.stderr
    );
    let logs = session_logs_in(&bed.log_dir);
    assert_eq!(logs.len(), 1, "{what}: one session log\n{}", out.stderr);
    let (origin, rows) = latency_rows(&logs[0].csv);
    assert!(
        rows.iter().all(|r| r.fs2p_ms.is_some()),
        "{what}: FS2P on every frame"
    );
    let took: Vec<&LatencyRow> = rows.iter().filter(|r| r.input_ns.is_some()).collect();
    let summary =
        std::fs::read_to_string(logs[0].summary.as_ref().expect("a summary")).expect("summary");
    let summary: serde_json::Value = serde_json::from_str(&summary).expect("summary JSON");
    let inputs = &summary["latency"]["inputs"];
    // A press the compositor delivered so late that it reached the program
    // only after the frame the rule gives it had started, and our reader
    // after that frame was written (two of our pumps after its start; seen
    // on this shared machine for the first key of a new virtual keyboard),
    // is refused as `late` (docs/metrics.md): allowed, counted as such.
    let mut late = 0;
    for &(ms, k) in &own.presses {
        let t = ms * 1_000_000;
        let (present, start, call, close) = expected(&own, t).expect("a frame after the press");
        let Some(r) = took
            .iter()
            .find(|r| r.input_ns.unwrap() + origin as i64 == t as i64)
        else {
            assert!(
                k > present,
                "{what}: the press at {ms} ms, read by the program with its frame {k} (the rule's: {present}), is in no row: {took:?}\nthe program's: {:?}\ninputs: {inputs}\n{}",
                own.presses,
                out.stderr
            );
            late += 1;
            continue;
        };
        // Row k is the frame that present k+1 ends.
        if !close {
            assert_eq!(
                r.frame + 1,
                present,
                "{what}: the same frame took {ms}: {r:?}"
            );
        }
        let i2fs_own = (start - t) as f64 / 1e6;
        let i2fs = r.i2fs_ms.expect("an I2FS");
        let fs2p = r.fs2p_ms.expect("FS2P");
        let fs2p_own = (call - start) as f64 / 1e6;
        if !close {
            // The same millisecond stamp, the same frame start within µs.
            assert!(
                (i2fs - i2fs_own).abs() < 1.0,
                "{what}: I2FS {i2fs} vs the program's {i2fs_own}"
            );
            if !busy {
                assert!(
                    (fs2p - fs2p_own).abs() < 0.1,
                    "{what}: FS2P {fs2p} vs the program's {fs2p_own}"
                );
            }
        }
        eprintln!(
            "latency_wayland ({what}): frame {} took a key: I2FS {i2fs:.3} ms (the program {i2fs_own:.3}), FS2P {fs2p:.3} ms (the program {fs2p_own:.3})",
            r.frame
        );
    }
    assert_eq!(
        took.len() + late,
        KEYS,
        "{what}: one frame per key took it: {took:?}"
    );
    assert_eq!(inputs["counted"], KEYS - late, "{what}: {inputs}");
    assert_eq!(inputs["lost"], 0, "{what}: {inputs}");
    assert_eq!(inputs["rejected"]["late"], late, "{what}: {inputs}");
    let rejected = inputs["rejected"].as_object().expect("rejected");
    assert!(
        rejected.iter().all(|(k, v)| k == "late" || v == 0),
        "{what}: {inputs}"
    );
}

/// `wtype` stamps every key 0: an input time more than 2 s before it was
/// read, refused with one line in the log (none in the game's output);
/// the cells stay empty, the game runs on.
#[test]
fn wayland_keys_stamped_zero_are_refused_with_one_line() {
    if !have_tools() {
        return;
    }
    let _s = serial();
    let bed = WaylandBed::start(W, H);
    let exe = bed.install(&testapp_exe());
    let mut cmd = bed.command(&exe);
    cmd.layer().args([
        "--wayland",
        "--present-mode",
        "fifo",
        "--progress",
        "--frames",
        "300",
    ]);
    let mut app = spawn(&mut cmd);
    started(&mut app, Program::Vulkan, &bed);
    for _ in 0..3 {
        bed.press("a");
    }
    let out = app.wait();
    out.assert_success("steadyhud-testapp --wayland");
    let complaints = out.output_lines(is_layer_complaint);
    assert!(
        complaints.is_empty(),
        "the game's output is left alone: {complaints:?}"
    );
    let logs = session_logs_in(&bed.log_dir);
    let text = std::fs::read_to_string(&logs[0].csv).expect("log");
    let said: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(steadyhud_log::LATENCY_PREFIX))
        .collect();
    assert_eq!(said.len(), 1, "one line in the log: {said:?}");
    assert!(
        said[0].contains("more than 2 s before it was read (past)"),
        "{said:?}"
    );
    assert!(latency_rows(&logs[0].csv)
        .1
        .iter()
        .all(|r| r.input_ns.is_none()));
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(logs[0].summary.as_ref().expect("a summary")).expect("summary"),
    )
    .expect("summary JSON");
    let inputs = &summary["latency"]["inputs"];
    assert_eq!(inputs["rejected"]["past"], 3, "{inputs}");
    assert_eq!(inputs["counted"], 0, "{inputs}");
}

#[test]
fn wayland_keys_are_taken_by_frames() {
    keys_are_taken_by_frames(Program::Vulkan, false);
}

#[test]
fn wayland_keys_are_taken_by_frames_under_load() {
    keys_are_taken_by_frames(Program::Vulkan, true);
}

#[test]
fn gl_wayland_keys_are_taken_by_frames() {
    keys_are_taken_by_frames(Program::Gl, false);
}

#[test]
fn gl_wayland_keys_are_taken_by_frames_under_load() {
    keys_are_taken_by_frames(Program::Gl, true);
}

/// A real Vulkan program on Wayland: `vkcube-wayland` with the layer in a
/// headless sway, typed at by `steadyhud-testapp --type-keys` (keys
/// stamped with the CLOCK_MONOTONIC ms they are sent at, on evdev code
/// 30, `KEY_A`, which vkcube ignores: code 1 is its Escape). Its log has
/// one frame per key, each with the key's own time and an I2FS at least 0
/// and below the run's longest frame plus the stamps' 1 ms; the summary
/// counts them. Once quiet, once beside two busy loops.
fn vkcube_wayland_keys(busy: bool) {
    let mut tools = BED_PROGRAMS.to_vec();
    tools.push(("vkcube-wayland", "vulkan-tools"));
    if !require::programs(&tools) {
        return;
    }
    let _s = serial();
    let bed = WaylandBed::start(W, H);
    let _load = busy.then(CpuLoad::start);
    let what = if busy {
        "under two busy loops"
    } else {
        "quiet"
    };
    let typist = bed.install(&testapp_exe());
    let mut app = bed.spawn_app("vkcube-wayland", &["--c", "100000"]);
    // Frames flow once the log has rows.
    let flowing = wait_for_rows(&bed.log_dir, 30, Duration::from_secs(60));
    assert!(flowing, "{what}: vkcube-wayland presents");
    let typed = run(&mut typist_command(&bed, &typist));
    typed.assert_success("steadyhud-testapp --type-keys");
    let sent = typed_at(&typed.stdout);
    assert_eq!(sent.len(), KEYS, "{what}: {}", typed.stdout);
    std::thread::sleep(Duration::from_millis(500));
    // vkcube quits on Escape's release (evdev code 1): a clean exit, so
    // the layer writes the session's final summary.
    let mut escape = bed.command(&typist);
    escape.args(["--type-keys", "1", "--key-gap-ms", "1", "--key-code", "1"]);
    let escaped = run(&mut escape);
    escaped.assert_success("steadyhud-testapp --type-keys (Escape)");
    let escape_ms = typed_at(&escaped.stdout);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !app.has_exited() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let quit = app.has_exited();
    let out = app.terminate();
    assert!(
        quit,
        "{what}: vkcube-wayland quit on Escape\n{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{what}: {}", out.stderr);
    let logs = session_logs_in(&bed.log_dir);
    assert_eq!(logs.len(), 1, "{what}: one session log\n{}", out.stderr);
    let (origin, rows) = latency_rows(&logs[0].csv);
    assert!(
        rows.iter().all(|r| r.fs2p_ms.is_some()),
        "{what}: FS2P on every frame"
    );
    let longest_ms = std::iter::once(0)
        .chain(rows.iter().map(|r| r.present_ns))
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| (w[1] - w[0]) as f64 / 1e6)
        .fold(0.0, f64::max);
    // The frames that took the keys (one each, or two keys in one frame
    // when a frame outlasts the gap, as under load), and maybe the frame
    // that took Escape (if one was presented before vkcube quit): each
    // row's earliest input is a key's own stamp, and a key that is no
    // row's earliest came before the present of the row that took the
    // key before it.
    let took: Vec<&LatencyRow> = rows.iter().filter(|r| r.input_ns.is_some()).collect();
    let stamp = |r: &LatencyRow| (r.input_ns.unwrap() + origin as i64) as u64;
    assert!(
        !took.is_empty() && took.len() <= KEYS + 1,
        "{what}: frames took the keys: {took:?}\nsent at {sent:?}\n{}",
        out.stderr
    );
    for r in &took {
        let ms = stamp(r) / 1_000_000;
        assert!(
            stamp(r) % 1_000_000 == 0 && (sent.contains(&ms) || escape_ms.contains(&ms)),
            "{what}: a row's input is a key's own time: {r:?}, sent at {sent:?} and {escape_ms:?}"
        );
    }
    // A key the compositor delivered after the frame the rule gives it
    // was written is refused `late` (docs/metrics.md; seen beside two busy
    // loops): allowed, and counted as such in the summary.
    let summary = logs[0].summary_json();
    let inputs = &summary["latency"]["inputs"];
    let mut late = 0;
    for &ms in &sent {
        let t = ms * 1_000_000;
        let earliest = took.iter().any(|r| stamp(r) == t);
        let with_the_one_before = took
            .iter()
            .any(|r| stamp(r) < t && origin + r.present_ns > t);
        if !(earliest || with_the_one_before) {
            late += 1;
        }
    }
    // (Escape, typed as vkcube quits, may be refused late too.)
    let refused = inputs["rejected"]["late"].as_u64().expect("late");
    assert!(
        refused == late || refused == late + 1,
        "{what}: a key in no row is one refused late: {took:?}\nsent at {sent:?}\n{inputs}"
    );
    for r in &took {
        let i2fs = r.i2fs_ms.expect("an I2FS with an input");
        assert!(
            (0.0..longest_ms + 1.0).contains(&i2fs),
            "{what}: I2FS {i2fs} ms, the longest frame {longest_ms} ms: {r:?}"
        );
        eprintln!(
            "latency_wayland vkcube ({what}): frame {} took a key: I2FS {i2fs:.3} ms (longest frame {longest_ms:.1} ms)",
            r.frame
        );
    }
    let counted = inputs["counted"].as_u64().expect("inputs counted");
    let keys = KEYS as u64 - late;
    assert!(
        counted == keys || counted == keys + 1,
        "{what}: the keys not refused (and Escape) counted: {inputs}"
    );
    assert_eq!(inputs["lost"], 0, "{what}: {inputs}");
}

/// The ms stamps `steadyhud-testapp --type-keys` says it sent.
fn typed_at(stdout: &str) -> Vec<u64> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("testapp: typed ")?.split(" at ").nth(1))
        .map(|ms| ms.trim().parse().expect("a ms stamp"))
        .collect()
}

/// `steadyhud-testapp --type-keys` typing [`KEYS`] keys on `KEY_A`.
fn typist_command(bed: &WaylandBed, exe: &std::path::Path) -> std::process::Command {
    let mut c = bed.command(exe);
    c.args([
        "--type-keys",
        &KEYS.to_string(),
        "--key-gap-ms",
        &KEY_GAP.as_millis().to_string(),
        "--key-code",
        "30",
    ]);
    c
}

#[test]
fn vkcube_wayland_logs_keys_and_their_i2fs() {
    vkcube_wayland_keys(false);
}

#[test]
fn vkcube_wayland_logs_keys_and_their_i2fs_under_load() {
    vkcube_wayland_keys(true);
}
