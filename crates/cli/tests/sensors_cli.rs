//! System readings through the real binary: `analyze` of the real MangoHud
//! log in `../shared/data/`, of a PresentMon 2 capture with the documented
//! sensor columns (the shared captures have none, so the test adds them to
//! a real one), and of the worked example of docs/metrics.md
//! (`tests/data/sensors-steadyhud.csv`); stutters named by a clock drop;
//! `compare` and `report` showing frames per joule. Every expected number
//! is computed here from the raw files, or worked by hand in the docs.

mod cli_run;
#[path = "../../../tests/data/mod.rs"]
mod data;
use cli_run::{steadyhud, steadyhud_ok};
use data::shared_data;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn ok(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn analyze_json(path: &Path) -> Value {
    let text = ok(&steadyhud(&["analyze", path.to_str().unwrap(), "--json"]));
    serde_json::from_str(&text).expect("one JSON object")
}

fn analyze_text(path: &Path) -> String {
    ok(&steadyhud(&["analyze", path.to_str().unwrap()]))
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/sensors-steadyhud.csv")
}

fn close(got: &Value, want: f64, what: &str) {
    let g = got
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {got}"));
    assert!(
        (g - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: {g} vs {want}"
    );
}

/// Time-weighted mean, max, frames and coverage (%) of (duration, reading)
/// pairs, written out directly.
fn weighted(pairs: &[(f64, Option<f64>)]) -> (f64, f64, u64, f64) {
    let total: f64 = pairs.iter().map(|p| p.0).sum();
    let known: Vec<(f64, f64)> = pairs
        .iter()
        .filter_map(|&(d, v)| v.map(|v| (d, v)))
        .collect();
    let time: f64 = known.iter().map(|k| k.0).sum();
    let mean = known.iter().map(|k| k.0 * k.1).sum::<f64>() / time;
    let max = known.iter().map(|k| k.1).fold(f64::MIN, f64::max);
    (mean, max, known.len() as u64, time / total * 100.0)
}

fn check_reading(v: &Value, column: &str, pairs: &[(f64, Option<f64>)]) {
    let r = &v["sensors"]["readings"][column];
    assert!(r.is_object(), "no {column} in {}", v["sensors"]);
    let (mean, max, frames, coverage) = weighted(pairs);
    close(&r["mean"], mean, column);
    close(&r["max"], max, column);
    assert_eq!(r["frames"].as_u64(), Some(frames), "{column} frames");
    close(&r["coverage_pct"], coverage, column);
}

/// The worked example of docs/metrics.md, number by number.
#[test]
fn steadyhud_example_gives_the_hand_worked_numbers_of_the_docs() {
    let v = analyze_json(&example());
    let s = &v["sensors"];
    let r = &s["readings"];
    close(&r["gpu_load_pct"]["mean"], 5500.0 / 60.0, "GPU load mean");
    close(&r["gpu_load_pct"]["max"], 95.0, "GPU load max");
    close(&r["cpu_load_pct"]["mean"], 44.0, "CPU load mean");
    close(
        &r["cpu_load_pct"]["coverage_pct"],
        50.0 / 60.0 * 100.0,
        "CPU cov",
    );
    close(&r["gpu_mhz"]["mean"], 2300.0, "GPU clock mean");
    let e = &s["energy"];
    close(&e["gpu"]["joules"], 11.0, "GPU J");
    close(&e["gpu"]["frames_per_joule"], 4.0 / 11.0, "GPU frames/J");
    close(&e["gpu"]["joules_per_frame"], 2.75, "GPU J/frame");
    close(&e["gpu"]["mean_w"], 220.0, "GPU W");
    assert_eq!(e["gpu"]["frames"], 4);
    close(&e["cpu"]["joules"], 1.6, "CPU J");
    close(&e["cpu"]["frames_per_joule"], 2.5, "CPU frames/J");
    close(&e["cpu"]["joules_per_frame"], 0.4, "CPU J/frame");
    close(&e["total"]["joules"], 12.6, "total J");
    close(
        &e["total"]["frames_per_joule"],
        4.0 / 12.6,
        "total frames/J",
    );
    close(&e["total"]["joules_per_frame"], 3.15, "total J/frame");
    close(
        &s["gpu_throttle"]["time_pct"],
        20.0 / 60.0 * 100.0,
        "throttle",
    );
    // The sensor columns are not counters (no counter section) and the
    // stutter of frame 2 is named by its throttling.
    assert!(v.get("stutter_causes").is_none(), "{v}");
    assert_eq!(v["stutter_frames"], serde_json::json!([2]));
    assert_eq!(v["sensor_causes"][0]["frame"], 2);
    assert_eq!(v["sensor_causes"][0]["text"], "GPU throttle: power");
    // The docs state the same numbers.
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/metrics.md"),
    )
    .unwrap();
    for worked in [
        "5500 / 60 = 91.667 %",
        "= 11 J over 4",
        "4 / 11 = 0.3636 frames/J, 11 / 4 = 2.75 J/frame",
        "0.4 J/frame",
        "4 / 12.6 = 0.3175",
        "3.15 J/frame",
    ] {
        assert!(docs.contains(worked), "docs/metrics.md lacks {worked:?}");
    }
    let t = analyze_text(&example());
    assert!(t.contains("System readings"), "{t}");
    assert!(
        t.contains(
            "frame 2 at 0.020 s: 20.000 ms (+10.000 ms over its median); GPU throttle: power"
        ),
        "{t}"
    );
    assert!(t.contains("0.364 frames/J, 2.7500 J/frame"), "{t}");
}

/// The real MangoHud 0.6.8 log: `cpu_load` and `ram_used` (GiB) are read,
/// the GPU columns (0 in every row on lavapipe) are left out with a note.
#[test]
fn mangohud_log_sensor_summary_matches_a_direct_computation() {
    let path = shared_data("mangohud-0.6.8-vkcube.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines().skip_while(|l| !l.starts_with("fps,"));
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (ft, load, ram) = (col("frametime"), col("cpu_load"), col("ram_used"));
    let rows: Vec<Vec<f64>> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|f| f.trim().parse().unwrap()).collect())
        .collect();
    assert!(rows.len() > 20);
    // frametime in µs (MangoHud 0.6), weights in any consistent unit.
    let pairs = |c: usize, k: f64| -> Vec<(f64, Option<f64>)> {
        rows.iter().map(|r| (r[ft], Some(r[c] * k))).collect()
    };
    let v = analyze_json(&path);
    check_reading(&v, "cpu_load_pct", &pairs(load, 1.0));
    check_reading(&v, "ram_used_mb", &pairs(ram, 1024.0));
    assert_eq!(
        v["sensors"]["readings"]["cpu_load_pct"]["source"],
        "cpu_load"
    );
    let readings = v["sensors"]["readings"].as_object().unwrap();
    assert_eq!(readings.len(), 2, "{readings:?}");
    assert!(v["sensors"]["energy"]["gpu"].is_null());
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("gpu_power") && notes.contains("0 or empty"),
        "{notes}"
    );
    let t = analyze_text(&path);
    assert!(
        t.contains("  CPU load") && t.contains("from cpu_load"),
        "{t}"
    );
}

/// Sensor value of row k of the generated capture (`None`: written `NA`).
fn synthetic(col: &str, k: usize) -> Option<f64> {
    let k = k as f64;
    let v = match col {
        "GPUPower" => 120.0 + (k * 37.0) % 50.0,
        "CPUPower" => 30.0 + (k * 13.0) % 20.0,
        "GPUFrequency" => 2000.0 + (k * 101.0) % 500.0,
        "CPUFrequency" => 4000.0 + (k * 7.0) % 300.0,
        "GPUTemperature" => 60.0 + (k * 3.0) % 15.0,
        "CPUTemperature" => 55.0 + (k * 5.0) % 20.0,
        "GPUUtilization" => (k * 17.0) % 100.0,
        "CPUUtilization" => (k * 29.0) % 100.0,
        // Bytes: 4 GiB plus k MiB.
        "GPUMemorySizeUsed" => 4.0 * 1073741824.0 + k * 1048576.0,
        _ => unreachable!(),
    };
    // Every 7th power reading is missing.
    (!(col.ends_with("Power") && (k as usize) % 7 == 3)).then_some(v)
}

const PM_SENSORS: [(&str, &str, f64); 9] = [
    ("GPUPower", "gpu_power_w", 1.0),
    ("CPUPower", "cpu_power_w", 1.0),
    ("GPUFrequency", "gpu_mhz", 1.0),
    ("CPUFrequency", "cpu_mhz", 1.0),
    ("GPUTemperature", "gpu_temp_c", 1.0),
    ("CPUTemperature", "cpu_temp_c", 1.0),
    ("GPUUtilization", "gpu_load_pct", 1.0),
    ("CPUUtilization", "cpu_load_pct", 1.0),
    ("GPUMemorySizeUsed", "vram_used_mb", 1.0 / 1048576.0),
];

/// No shared PresentMon capture has sensor columns: the real
/// `presentmon-test_case_0.csv` (several processes, NA rows) gets the
/// columns PresentMon's capture application documents, and `analyze`
/// must pair each reading with the kept frames of the analysed group.
#[test]
fn presentmon2_capture_with_sensor_columns_matches_a_direct_computation() {
    let src = std::fs::read_to_string(shared_data("presentmon-test_case_0.csv")).unwrap();
    let src = src.trim_start_matches('\u{feff}');
    let mut lines = src.lines();
    let header = lines.next().unwrap();
    let names: Vec<&str> = header.split(',').collect();
    let pos = |n: &str| names.iter().position(|h| *h == n).unwrap();
    let (pid, sc, ft) = (
        pos("ProcessID"),
        pos("SwapChainAddress"),
        pos("MsBetweenPresents"),
    );
    let mut out = String::from(header);
    for (c, _, _) in PM_SENSORS {
        out.push(',');
        out.push_str(c);
    }
    out.push_str(",GPUPowerLimited\n");
    // Per (pid, swapchain) group: (duration ms, row index) of the kept frames.
    type Frames = Vec<(f64, usize)>;
    let mut groups: Vec<((String, String), Frames)> = Vec::new();
    for (k, line) in lines.filter(|l| !l.trim().is_empty()).enumerate() {
        out.push_str(line);
        for (c, _, _) in PM_SENSORS {
            out.push(',');
            match synthetic(c, k) {
                Some(v) => out.push_str(&v.to_string()),
                None => out.push_str("NA"),
            }
        }
        out.push_str(if k % 5 == 0 { ",1\n" } else { ",0\n" });
        let f: Vec<&str> = line.split(',').collect();
        let key = (f[pid].to_string(), f[sc].to_string());
        let Ok(ms) = f[ft].trim().parse::<f64>() else {
            continue; // NA frame time: not a frame
        };
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push((ms, k)),
            None => groups.push((key, vec![(ms, k)])),
        }
    }
    let best = groups
        .iter()
        .rev()
        .max_by_key(|g| g.1.len())
        .unwrap()
        .1
        .clone();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pm2-sensors.csv");
    std::fs::write(&path, out).unwrap();
    let v = analyze_json(&path);
    assert_eq!(v["frames"].as_u64().unwrap() as usize, best.len());
    for (c, key, k) in PM_SENSORS {
        let pairs: Vec<(f64, Option<f64>)> = best
            .iter()
            .map(|&(d, row)| (d, synthetic(c, row).map(|v| v * k)))
            .collect();
        check_reading(&v, key, &pairs);
        assert_eq!(v["sensors"]["readings"][key]["source"], c);
    }
    // Energy: Σ P·d over frames with a reading, d in ms → s.
    let energy = |c: &str| -> (f64, usize) {
        let known: Vec<(f64, f64)> = best
            .iter()
            .filter_map(|&(d, row)| synthetic(c, row).map(|p| (d, p)))
            .collect();
        (known.iter().map(|(d, p)| p * d / 1000.0).sum(), known.len())
    };
    let (gpu_j, gpu_n) = energy("GPUPower");
    close(&v["sensors"]["energy"]["gpu"]["joules"], gpu_j, "GPU J");
    close(
        &v["sensors"]["energy"]["gpu"]["frames_per_joule"],
        gpu_n as f64 / gpu_j,
        "GPU frames/J",
    );
    let (cpu_j, _) = energy("CPUPower");
    // GPU and CPU power are missing on the same rows: total = sum.
    close(
        &v["sensors"]["energy"]["total"]["joules"],
        gpu_j + cpu_j,
        "total J",
    );
    let throttled: f64 = best
        .iter()
        .filter(|&&(_, row)| row % 5 == 0)
        .map(|&(d, _)| d)
        .sum();
    let all: f64 = best.iter().map(|&(d, _)| d).sum();
    close(
        &v["sensors"]["gpu_throttle"]["time_pct"],
        throttled / all * 100.0,
        "throttled share",
    );
}

/// A steadyhud log of `n` 10 ms frames with a 40 ms stutter at frame 40,
/// whose GPU clock falls from 2400 to 1100 MHz (frames 40 and 41), with
/// GPU power `watts`.
fn clock_drop_log(watts: f64) -> String {
    let mut s = String::from(
        "# steadyhud\nframe,present_ns,frametime_ms,gpu_mhz,cpu_mhz,gpu_power_w,gpu_throttle\n",
    );
    let mut t = 0u64;
    for i in 0..60u64 {
        let ms = if i == 40 { 40 } else { 10 };
        t += ms * 1_000_000;
        let mhz = if i == 40 || i == 41 { 1100 } else { 2400 };
        s.push_str(&format!("{i},{t},{ms}.000000,{mhz},4200,{watts},\n"));
    }
    s.push_str("# end: complete\n");
    s
}

#[test]
fn a_stutter_with_a_clock_drop_is_named_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("drop.csv");
    std::fs::write(&path, clock_drop_log(200.0)).unwrap();
    let v = analyze_json(&path);
    assert_eq!(v["stutter_frames"], serde_json::json!([40]));
    let c = &v["sensor_causes"];
    assert_eq!(c.as_array().unwrap().len(), 1, "{c}");
    assert_eq!(c[0]["text"], "GPU clock 2.4→1.1 GHz");
    assert_eq!(c[0]["reasons"][0]["kind"], "clock_drop");
    close(&c[0]["reasons"][0]["baseline_mhz"], 2400.0, "baseline");
    close(&c[0]["reasons"][0]["at_mhz"], 1100.0, "at");
    let t = analyze_text(&path);
    assert!(
        t.contains(
            "frame 40 at 0.400 s: 40.000 ms (+30.000 ms over its median); GPU clock 2.4→1.1 GHz"
        ),
        "{t}"
    );
}

/// Half the power for the same frames: twice the frames per joule, shown
/// as better by `compare` and in the report's table.
#[test]
fn compare_and_report_show_performance_per_watt() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    std::fs::write(&a, clock_drop_log(200.0)).unwrap();
    std::fs::write(&b, clock_drop_log(100.0)).unwrap();
    // 60 frames, 0.63 s: at 200 W 126 J → 60/126 frames/J; at 100 W 63 J.
    let (fa, fb) = (60.0 / 126.0, 60.0 / 63.0);
    let out = ok(&steadyhud(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]));
    let row = out
        .lines()
        .find(|l| l.starts_with("Frames per joule, GPU (frames/J)"))
        .unwrap_or_else(|| panic!("{out}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert!(
        cells.ends_with(&[
            &format!("{fa:.3}"),
            &format!("{fb:.3}"),
            "+100.0%",
            "better"
        ]),
        "{row}"
    );
    let jpf = out
        .lines()
        .find(|l| l.starts_with("Joules per frame, GPU (J)"))
        .unwrap();
    assert!(jpf.contains("-50.0%") && jpf.ends_with("better"), "{jpf}");
    assert!(out.contains("GPU power (mean) (W)"), "{out}");
    let html = dir.path().join("r.html");
    steadyhud_ok(&[
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    let at = page
        .find("<td>Frames per joule, GPU (frames/J)</td>")
        .unwrap_or_else(|| panic!("no frames/J row"));
    let row = &page[at..at + page[at..].find("</tr>").unwrap()];
    assert!(
        row.contains(&format!("<td>{fa:.3}</td>")) && row.contains(&format!("<td>{fb:.3}</td>")),
        "{row}"
    );
    assert!(row.contains("class=\"better\">+100.0%"), "{row}");
}

/// More than 6 logs get the many-runs layout: a per-run table of frames per
/// joule and the sensor means.
#[test]
fn many_runs_report_has_a_per_watt_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec!["report".into()];
    for k in 1..=7 {
        let p = dir.path().join(format!("w{k}.csv"));
        std::fs::write(&p, clock_drop_log(100.0 * k as f64)).unwrap();
        args.push(p.to_str().unwrap().into());
    }
    let html = dir.path().join("many.html");
    args.extend(["-o".into(), html.to_str().unwrap().into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    steadyhud_ok(&args);
    let page = std::fs::read_to_string(&html).unwrap();
    let at = page.find("<table id=\"sensors\">").expect("sensors table");
    let table = &page[at..at + page[at..].find("</table>").unwrap()];
    assert!(
        table.contains("<th>Frames per joule, GPU (frames/J)</th>"),
        "{table}"
    );
    for k in 1..=7 {
        // 60 frames over 0.63 s at 100·k W.
        let fpj = 60.0 / (100.0 * k as f64 * 0.63);
        let row_at = table
            .find(&format!(">w{k}.csv</td>"))
            .unwrap_or_else(|| panic!("no row for w{k}"));
        let row = &table[row_at..row_at + table[row_at..].find("</tr>").unwrap()];
        assert!(row.contains(&format!("<td>{fpj:.3}")), "w{k}: {row}");
    }
}
