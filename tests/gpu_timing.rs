//! GPU timing in real apps (issue 12): every frame of vkcube and
//! vkd3d-gears gets a GPU busy time, the per-frame busy times never add up
//! to more than the time elapsed, and the layer's timestamp command buffers
//! stay clean under synchronization validation. Lavapipe is a CPU device,
//! where the default `gpu_timing=auto` leaves GPU timing off: the tests that
//! need it set `gpu_timing=1`.

mod common;
mod require;

use common::*;
use std::path::Path;
use std::time::Duration;

/// The named columns of a steadyhud session CSV, one Vec per column, rows
/// in order (comment lines skipped, a cut-off last line ignored).
fn columns(csv: &Path, names: &[&str]) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(csv).expect("session log readable");
    let mut lines = text
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n') && !l.starts_with('#'));
    let header: Vec<&str> = lines
        .next()
        .expect("a header line")
        .trim_end()
        .split(',')
        .collect();
    // The layer writes its columns in the order steadyhud_log declares
    // them (docs/metrics.md#session-log-columns).
    let declared: Vec<&str> = steadyhud_log::columns::all().map(|c| c.name).collect();
    let at: Vec<usize> = header
        .iter()
        .map(|h| {
            declared
                .iter()
                .position(|d| d == h)
                .unwrap_or_else(|| panic!("{}: column {h} is not declared", csv.display()))
        })
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "{}: header {header:?} is not in the declared order {declared:?}",
        csv.display()
    );
    let idx: Vec<usize> = names
        .iter()
        .map(|n| {
            header
                .iter()
                .position(|h| h == n)
                .unwrap_or_else(|| panic!("{}: no column {n} in {header:?}", csv.display()))
        })
        .collect();
    let mut out = vec![Vec::new(); names.len()];
    for l in lines {
        let f: Vec<&str> = l.trim_end().split(',').collect();
        for (o, &i) in out.iter_mut().zip(&idx) {
            o.push(f[i].parse().expect("a number"));
        }
    }
    out
}

/// What a log says of its GPU side: frames, frames with GPU busy > 0 (in
/// all, and among the last tenth), the session's duration, its GPU busy
/// total and its longest frame (ms).
struct GpuColumns {
    frames: usize,
    busy_frames: usize,
    busy_frames_last_tenth: usize,
    duration_ms: f64,
    busy_ms: f64,
    longest_ms: f64,
}

fn gpu_columns(csv: &Path) -> GpuColumns {
    let c = columns(csv, &["frametime_ms", "gpu_busy_ms", "gpu_wait_ms"]);
    let (ft, busy, wait) = (&c[0], &c[1], &c[2]);
    assert!(
        wait.iter().all(|&w| w >= 0.0),
        "{}: negative gpu_wait_ms",
        csv.display()
    );
    GpuColumns {
        frames: ft.len(),
        busy_frames: busy.iter().filter(|&&b| b > 0.0).count(),
        busy_frames_last_tenth: busy[busy.len() - busy.len() / 10..]
            .iter()
            .filter(|&&b| b > 0.0)
            .count(),
        duration_ms: ft.iter().sum(),
        busy_ms: busy.iter().sum(),
        longest_ms: ft.iter().copied().fold(0.0, f64::max),
    }
}

/// GPU time keeps coming to the end of the log, and the session's GPU busy
/// time is at most its duration plus one frame (the last frame's work may
/// run past the last present).
///
/// Not every row has GPU time, and how many do is timing: a frame's busy
/// time is the GPU work that ran within its span, and a capped app's span
/// can pass with none (the work submitted just before one present ran
/// before it, the next just before the next): 88–100 % of vkcube's rows at
/// 100 fps beside two busy loops. What the layer owes is that results
/// never stop coming (when lavapipe's results were read from the analysis
/// thread they sometimes stopped for good: 4, 25, 87 or 116 rows of 199
/// had GPU time, the rest none): a third of the rows at least, and some of
/// the last tenth. [`assert_every_result_came`] is the exact check.
fn assert_gpu_columns_sane(what: &str, g: &GpuColumns) {
    assert!(g.frames >= 10, "{what}: only {} rows", g.frames);
    assert!(
        g.busy_frames * 3 >= g.frames && g.busy_frames_last_tenth > 0,
        "{what}: {} of {} rows have gpu_busy_ms > 0, {} of the last tenth",
        g.busy_frames,
        g.frames,
        g.busy_frames_last_tenth
    );
    assert!(
        g.busy_ms <= g.duration_ms + g.longest_ms,
        "{what}: GPU busy {:.3} ms > duration {:.3} ms + one frame {:.3} ms",
        g.busy_ms,
        g.duration_ms,
        g.longest_ms
    );
}

/// vkcube (200 frames) and vkd3d-gears (killed after 4 s) with the layer and
/// synchronization validation: clean, and their GPU columns hold up; the
/// summary's GPU keys agree with vkcube's rows.
#[test]
fn real_apps_get_gpu_busy_per_frame_under_sync_validation() {
    let _serial = serial();
    assert!(have("vkcube"), "vkcube missing: install vulkan-tools");
    let h = Harness::new();
    h.assert_sync_validation_active();

    // Capped at 100 fps, as vkd3d-gears below: a steady pace a game with a
    // limiter has (the frames' GPU time is then a small part of each).
    let what = "vkcube --c 200 (100 fps cap) with steadyhud + synchronization validation";
    let out = run(h
        .command("vkcube")
        .args(["--c", "200"])
        .layer()
        .sync_validation()
        .env("STEADYHUD_CONFIG", "gpu_timing=1,fps_limit=100"));
    out.assert_success(what).assert_no_validation_error(what);
    assert_no_cpu_device_note(what, &out);
    let log = h.only_session_log();
    let g = gpu_columns(&log.csv);
    assert_gpu_columns_sane(what, &g);
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(log.summary.as_ref().expect("a summary")).expect("readable"),
    )
    .expect("summary JSON");
    let avg = summary["gpu_busy_ms_avg"]
        .as_f64()
        .expect("gpu_busy_ms_avg");
    // The CSV has six decimals: the mean of the rows matches to 1e-5 ms.
    assert!(
        (avg - g.busy_ms / g.frames as f64).abs() < 1e-5,
        "{what}: summary gpu_busy_ms_avg {avg} vs rows {}",
        g.busy_ms / g.frames as f64
    );
    let pct = summary["gpu_bound_pct"].as_f64().expect("gpu_bound_pct");
    assert!((0.0..=100.0).contains(&pct), "{what}: gpu_bound_pct {pct}");
    assert_every_result_came(what, &summary);
    eprintln!(
        "{what}: {} rows, {} with GPU time, GPU busy {:.1} of {:.1} ms, {pct:.1} % GPU-bound, {avg:.3} ms/frame",
        g.frames, g.busy_frames, g.busy_ms, g.duration_ms
    );
    h.clear_logs();

    if !require::program("vkd3d-gears", "vkd3d-demos") {
        return;
    }
    // Capped at 100 fps, as vkcube above. Killed: the summary is an early
    // one, so only the rows are checked.
    let what = "vkd3d-gears (4 s, 100 fps cap) with steadyhud + synchronization validation";
    let out = run_killed_after(
        h.command("vkd3d-gears")
            .layer()
            .sync_validation()
            .env("STEADYHUD_CONFIG", "gpu_timing=1,fps_limit=100"),
        Duration::from_secs(4),
    );
    out.assert_no_validation_error(what);
    for log in h.session_logs() {
        let g = gpu_columns(&log.csv);
        assert_gpu_columns_sane(what, &g);
        eprintln!(
            "{what}: {} rows, {} with GPU time, GPU busy {:.1} of {:.1} ms",
            g.frames, g.busy_frames, g.busy_ms, g.duration_ms
        );
    }
}

/// `gpu_timing=0` leaves the columns out (and submits untouched), without
/// the line `auto` prints on a CPU device (the user chose it).
#[test]
fn gpu_timing_off_has_no_gpu_columns() {
    let _serial = serial();
    let h = Harness::new();
    let what = "testapp with gpu_timing=0";
    let out = run(h
        .testapp(&["--frames", "20"])
        .layer()
        .env("STEADYHUD_CONFIG", "gpu_timing=0"));
    out.assert_success(what);
    assert_no_cpu_device_note(what, &out);
    let text = std::fs::read_to_string(h.only_session_log().csv).expect("log");
    let header = text
        .lines()
        .find(|l| l.starts_with("frame,"))
        .expect("header");
    assert!(
        header.contains("submit_ms") && !header.contains("gpu_busy_ms"),
        "{what}: header {header}"
    );
}

/// The `steadyhud:` lines saying `auto` turned GPU timing off on a CPU
/// device.
fn cpu_device_notes(out: &RunOutput) -> Vec<&str> {
    out.stderr
        .lines()
        .filter(|l| l.starts_with(CPU_DEVICE_NOTE))
        .collect()
}

fn assert_no_cpu_device_note(what: &str, out: &RunOutput) {
    let notes = cpu_device_notes(out);
    assert!(notes.is_empty(), "{what}: {notes:?}");
}

/// The session log's header line.
fn header(csv: &Path) -> String {
    let text = std::fs::read_to_string(csv).expect("log");
    text.lines()
        .find(|l| l.starts_with("frame,"))
        .expect("header")
        .to_string()
}

/// Lavapipe is a `VK_PHYSICAL_DEVICE_TYPE_CPU` device: with the default
/// config (`gpu_timing=auto`) the layer does not time its submits (its
/// timestamps would run on the app's own cores): no GPU columns, no GPU
/// summary keys, and exactly one line on stderr naming the device and the
/// way to force it. `gpu_timing=1` forces it: the columns are there, with
/// GPU busy time, and no such line.
#[test]
fn auto_leaves_gpu_timing_off_on_a_cpu_device_and_1_forces_it() {
    let _serial = serial();
    let h = Harness::new();
    let what = "testapp on lavapipe with the default config";
    let out = run(h.testapp(&["--frames", "20"]).layer());
    out.assert_success(what);
    let notes = cpu_device_notes(&out);
    assert_eq!(notes.len(), 1, "{what}: stderr:\n{}", out.stderr);
    assert_eq!(
        notes[0],
        "steadyhud: GPU timing off on a CPU device (llvmpipe): its timestamps would run on the game's cores; gpu_timing=1 forces it",
        "{what}"
    );
    let log = h.only_session_log();
    let head = header(&log.csv);
    assert!(
        head.contains("submit_ms")
            && !head.contains("gpu_busy_ms")
            && !head.contains("gpu_wait_ms"),
        "{what}: header {head}"
    );
    let summary = log.summary_json();
    for key in ["gpu_bound_pct", "gpu_busy_ms_avg", "gpu_timing"] {
        assert!(
            summary.get(key).is_none(),
            "{what}: summary has {key}: {summary}"
        );
    }
    h.clear_logs();

    let what = "testapp on lavapipe with gpu_timing=1";
    let out = run(h
        .testapp(&["--frames", "20"])
        .layer()
        .env("STEADYHUD_CONFIG", "gpu_timing=1"));
    out.assert_success(what);
    assert_no_cpu_device_note(what, &out);
    let log = h.only_session_log();
    let g = gpu_columns(&log.csv);
    assert_gpu_columns_sane(what, &g);
    let summary = log.summary_json();
    assert_every_result_came(what, &summary);
    assert!(
        summary["gpu_busy_ms_avg"].as_f64().is_some_and(|v| v > 0.0)
            && summary["gpu_timing"]["frames"]
                .as_u64()
                .is_some_and(|n| n > 0),
        "{what}: {summary}"
    );
}

/// The summary says every frame was decided with all of its GPU results:
/// none late, no batch given up, none untimed for a full ring.
fn assert_every_result_came(what: &str, summary: &serde_json::Value) {
    let t = &summary["gpu_timing"];
    for key in ["late_frames", "given_up_batches", "ring_full_batches"] {
        assert_eq!(t[key].as_u64(), Some(0), "{what}: gpu_timing {t}");
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The test app with a known GPU load per frame (`--gpu-work`, timed by the
/// app itself with timestamps in its own command buffer): 16 ms of GPU work
/// at a 4 ms pace is GPU-bound (≥ 80 % of the time) and the layer's median
/// `gpu_busy_ms` is within 25 % of the app's own median; 1 ms of work at a
/// 20 ms pace is not (≤ 10 %), and the layer's median is at least 90 % of
/// the app's (the layer's span holds the app's command buffer). Above it,
/// the light load is not held to 25 %: the layer's span also holds the
/// queue thread's step from our command buffer into the app's and out
/// again, which on lavapipe is CPU scheduling; a loaded 2-core CI machine
/// stretched it to +0.48 ms (1.305 ms vs the app's 0.822), half of a 1 ms
/// load but 3 % of the 16 ms one. No validation here (it slows the frames),
/// and the HUD hidden: its own drawing is GPU work of the layer's, not the
/// app's, so it is not in `gpu_busy_ms` but it does lengthen the frames.
/// 16 rather than 8 ms: each lavapipe frame also has ~0.6 ms of CPU-only
/// present work, which a loaded 2-core machine stretches; at 8 ms that
/// leaves the verdict at 76–87 % here, at 16 ms 96 %.
#[test]
fn known_gpu_load_gives_the_verdict() {
    let _serial = serial();
    let h = Harness::new();
    for (work, interval, frames, bound) in [("16", "4ms", "90", true), ("1", "20ms", "60", false)] {
        let args = [
            "--gpu-work",
            work,
            "--interval",
            interval,
            "--frames",
            frames,
        ];
        let what = format!("testapp {args:?} with steadyhud");
        let out = run(h
            .testapp(&args)
            .layer()
            .env("STEADYHUD_CONFIG", "hud_hidden=1,gpu_timing=1"));
        out.assert_success(&what);
        let own = gpu_work_line(&out)
            .unwrap_or_else(|| panic!("{what}: no gpu work line:\n{}", out.stdout));
        let log = h.only_session_log();
        let mut busy = columns(&log.csv, &["gpu_busy_ms"]).remove(0);
        let layer_median = median(&mut busy);
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(log.summary.as_ref().expect("a summary")).expect("readable"),
        )
        .expect("summary JSON");
        let pct = summary["gpu_bound_pct"].as_f64().expect("gpu_bound_pct");
        eprintln!(
            "{what}: app's GPU median {:.3} ms, layer's gpu_busy median {layer_median:.3} ms, gpu_bound_pct {pct:.1}",
            own.median
        );
        assert!(
            layer_median >= 0.9 * own.median,
            "{what}: layer's median gpu_busy_ms {layer_median:.3} misses the app's own {:.3}",
            own.median
        );
        if bound {
            assert!(
                (layer_median - own.median).abs() <= 0.25 * own.median,
                "{what}: layer's median gpu_busy_ms {layer_median:.3} vs the app's own {:.3}",
                own.median
            );
            assert!(pct >= 80.0, "{what}: gpu_bound_pct {pct:.1} < 80");
        } else {
            assert!(pct <= 10.0, "{what}: gpu_bound_pct {pct:.1} > 10");
        }
        h.clear_logs();
    }
}
