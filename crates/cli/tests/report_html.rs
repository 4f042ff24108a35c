//! `steadyhud report` end to end: real logs → one HTML file, rendered by
//! headless Chromium; the charts must be drawn (non-empty paths in the DOM,
//! the expected labels, the series colours present in the screenshot), and
//! no text may overlap another, be cut by its chart or stick out of the
//! page (the probe of `report_probe`), under each font setup of
//! [`Fonts::ALL`] (DejaVu alone, Noto alone). At 100 logs the many-runs layout
//! must rank the runs exactly as the metrics do.

#[path = "../../../tests/data/mod.rs"]
mod data;
mod report_probe;
use data::shared_data;
use report_probe::{count_colour, measure, screenshot, Fonts};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Window width of the few-runs layout (its page is 1000 px wide) and of
/// the many-runs layout (1240 px, for a table of 17 columns).
const NARROW: u32 = 1040;
const WIDE: u32 = 1280;

fn report(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg("report")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `<svg id="{id}">…</svg>` element of `html`.
fn svg<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<svg id=\"{id}\""))
        .unwrap_or_else(|| panic!("no svg {id}"));
    &html[start..start + html[start..].find("</svg>").unwrap()]
}

fn assert_self_contained(html: &str) {
    for banned in ["<script", "src=", "href=", "url(", "@import"] {
        assert!(
            !html.contains(banned),
            "report is not self-contained: has {banned:?}"
        );
    }
}

#[test]
fn report_of_two_logs_renders_its_charts_in_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report.html");
    report(&[
        shared_data("presentmon-test_case_0.csv").as_os_str(),
        shared_data("capframex-re2.csv").as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    let html = std::fs::read_to_string(&out).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("<body class=\"overlay\">"));
    for label in [
        "Frame time over the run",
        "target FPS",
        "Steady ",
        "Typical ",
        "share of time (%)",
        "presentmon-test_case_0.csv (baseline)",
        "capframex-re2.csv",
    ] {
        assert!(html.contains(label), "report lacks {label:?}");
    }

    let profile = tmp.path().join("profile");
    let url = format!("file://{}", out.display());
    let dom = report_probe::chromium_cmd(&profile, Fonts::DejaVu)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    for id in ["frametimes", "stk-slow", "stk-excess", "percentiles"] {
        // two logs → two series paths, each with many points
        let series: Vec<&str> = svg(&dom, id)
            .split("class=\"series\" d=\"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        assert_eq!(series.len(), 2, "{id}: expected one series per log");
        for d in series {
            assert!(
                d.matches('L').count() >= 10,
                "{id}: a series path is nearly empty: {d:.80}"
            );
        }
    }
    for fonts in Fonts::ALL {
        measure(&out, &profile, NARROW, fonts).assert_readable(&format!("two logs, {fonts}"));
        let shot = tmp.path().join(format!("shot-{fonts:?}.png"));
        screenshot(&out, &profile, &shot, NARROW, 1900, fonts);
        // The first two palette colours are the two series; both must be drawn.
        let blue = count_colour(&shot, [0x00, 0x72, 0xb2]);
        let orange = count_colour(&shot, [0xd5, 0x5e, 0x00]);
        assert!(
            blue > 500 && orange > 500,
            "{fonts}: series pixels: blue {blue}, orange {orange}"
        );
    }
}

/// The probe must see what it is there to catch, under each font setup:
/// overlapping labels, a label cut by its chart, a page wider than the
/// window. (If Chromium stopped running the probe, or the boxes came back
/// empty, this fails.) And the font pin must take effect: the same text
/// is laid out at different widths under DejaVu and under Noto.
#[test]
fn the_layout_probe_catches_overlap_clipping_and_overflow() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        r#"<!DOCTYPE html><html><body style="margin:0">
<svg id="a" width="300" height="100"><text x="10" y="30">Steady 58</text><text x="14" y="32">Mostly 60</text><text x="270" y="80">Typical 144</text></svg>
<p>fine</p><p>also fine</p>
<table><tr><td style="white-space:nowrap">a table cell that runs off the side of the page {}</td></tr></table>
</body></html>"#
            .replace("{}", &"wide ".repeat(400)),
    )
    .unwrap();
    let mut widths = Vec::new();
    for fonts in Fonts::ALL {
        let layout = measure(&page, &tmp.path().join("profile"), 200, fonts);
        let pairs: Vec<(&str, &str)> = layout
            .overlaps()
            .iter()
            .map(|(a, b)| (a.text.as_str(), b.text.as_str()))
            .collect();
        assert_eq!(pairs, [("Steady 58", "Mostly 60")], "{fonts}");
        let clipped: Vec<&str> = layout.clipped().iter().map(|b| b.text.as_str()).collect();
        assert_eq!(clipped, ["Typical 144"], "{fonts}");
        assert!(
            layout.scroll_width > layout.inner_width,
            "{fonts}: {} px page in a {} px window",
            layout.scroll_width,
            layout.inner_width
        );
        assert_eq!(layout.off_page().len(), 1, "{fonts}");
        assert_eq!(
            layout.problems().len(),
            3,
            "{fonts}: {:?}",
            layout.problems()
        );
        widths.push(layout.widest_text());
    }
    assert!(
        (widths[0] - widths[1]).abs() > 50.0,
        "the long cell is as wide under DejaVu as under Noto ({widths:?} px): the font pin did not take effect"
    );
}

/// One generated log: a real capture, resampled from a per-log offset,
/// scaled and with extra stutters, so that 100 logs rank differently.
struct Generated {
    path: PathBuf,
    name: String,
    durations_ns: Vec<u64>,
}

/// `n` logs of `frames` frames each in `dir`, written as plain text (one
/// frame time in ms per line, 6 decimals: exact in ns), named like a
/// reviewer's runs, some long enough to be cut in the bar chart.
fn generate_logs(dir: &Path, n: usize, frames: usize) -> Vec<Generated> {
    let bases: Vec<(&str, Vec<u64>)> = [
        "presentmon-test_case_0.csv",
        "capframex-re2.csv",
        "ocat-metroexodus.csv",
        "presentmon1-csgo.csv",
        "presentmon-test_case_3.csv",
    ]
    .iter()
    .map(|name| {
        let log = steadyhud_formats::read_path(&shared_data(name), &Default::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        (name.trim_end_matches(".csv"), log.durations_ns)
    })
    .collect();
    let gpus = [
        "rx7900xtx",
        "rtx4090",
        "arc-a770",
        "rtx3060ti",
        "steamdeck-apu",
    ];
    let presets = [
        "low",
        "medium",
        "high",
        "ultra-raytracing-on-upscaler-quality",
    ];
    (0..n)
        .map(|k| {
            let (base_name, base) = &bases[k % bases.len()];
            // Speed: 0.6× to 1.6× the capture's frame times, spread over the runs.
            let scale = 0.6 + ((k * 37) % 101) as f64 / 100.0;
            let offset = (k * 7919) % base.len();
            let every = 150 + (k * 13) % 700;
            let spike = 2 + (k % 4) as u64;
            let durations_ns: Vec<u64> = (0..frames)
                .map(|i| {
                    let d = (base[(offset + i) % base.len()] as f64 * scale) as u64;
                    (if i % every == every - 1 { d * spike } else { d }).max(1)
                })
                .collect();
            let name = format!(
                "{}-{}-{base_name}-run{k:03}.txt",
                gpus[(k / 5) % gpus.len()],
                presets[(k / 25) % presets.len()]
            );
            let mut text = String::with_capacity(frames * 12);
            for d in &durations_ns {
                text.push_str(&format!("{}.{:06}\n", d / 1_000_000, d % 1_000_000));
            }
            let path = dir.join(&name);
            std::fs::write(&path, text).unwrap();
            Generated {
                path,
                name,
                durations_ns,
            }
        })
        .collect()
}

/// The cells of the `<table id="runs">` rows, tags stripped to their text.
struct TableRow {
    class: String,
    cells: Vec<String>,
}

/// The header cells of the many-runs table (the column's name, without
/// its unit line).
fn runs_header(html: &str) -> Vec<String> {
    let start = html.find("<table id=\"runs\">").expect("runs table");
    let table = &html[start..start + html[start..].find("</thead>").unwrap()];
    table
        .split("<th>")
        .skip(1)
        .map(|th| {
            let th = &th[..th.find("</th>").unwrap()];
            th.split("<br>").next().unwrap().trim().to_string()
        })
        .collect()
}

fn runs_table(html: &str) -> Vec<TableRow> {
    let start = html.find("<table id=\"runs\">").expect("runs table");
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    let body = &table[table.find("<tbody>").unwrap()..];
    body.split("<tr class=\"")
        .skip(1)
        .map(|tr| {
            let class = tr[..tr.find('"').unwrap()].to_string();
            let cells = tr
                .split("<td")
                .skip(1)
                .map(|td| {
                    let inner = &td[td.find('>').unwrap() + 1..td.find("</td>").unwrap()];
                    // Text only, <br> as a space: "58 +3.2%".
                    let mut text = String::new();
                    let mut in_tag = false;
                    for c in inner.replace("<br>", " ").chars() {
                        match c {
                            '<' => in_tag = true,
                            '>' => in_tag = false,
                            c if !in_tag => text.push(c),
                            _ => {}
                        }
                    }
                    text.trim().to_string()
                })
                .collect();
            TableRow { class, cells }
        })
        .collect()
}

#[test]
fn report_of_100_logs_ranks_every_run_and_reads_in_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = generate_logs(tmp.path(), 100, 10_000);
    let opts = steadyhud_metrics::Options::default();
    let summaries: Vec<_> = logs
        .iter()
        .map(|g| steadyhud_metrics::summarize(&g.durations_ns, &opts).unwrap())
        .collect();
    // Expected order: Steady FPS, then the looser metrics, then name.
    let mut expected: Vec<usize> = (0..logs.len()).collect();
    expected.sort_by(|&a, &b| {
        let (x, y) = (&summaries[a], &summaries[b]);
        (y.steady_fps, y.mostly_steady_fps, y.typical_fps)
            .cmp(&(x.steady_fps, x.mostly_steady_fps, x.typical_fps))
            .then(y.average_fps.total_cmp(&x.average_fps))
            .then(logs[a].name.cmp(&logs[b].name))
    });
    let steadies: Vec<u32> = expected.iter().map(|&i| summaries[i].steady_fps).collect();
    assert!(
        steadies[0] > steadies[99] + 10,
        "the generated runs should spread: {steadies:?}"
    );
    // A baseline that is neither best, median nor worst: five curves… four.
    let baseline = expected[24];

    let out = tmp.path().join("report.html");
    let mut args: Vec<&std::ffi::OsStr> = logs.iter().map(|g| g.path.as_os_str()).collect();
    args.extend([
        "--baseline".as_ref(),
        logs[baseline].path.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    let t = Instant::now();
    report(&args);
    let took = t.elapsed();
    let html = std::fs::read_to_string(&out).unwrap();
    let size = html.len();
    eprintln!(
        "100 logs × 10,000 frames: report in {:.2} s, {} KiB",
        took.as_secs_f64(),
        size / 1024
    );
    assert_self_contained(&html);
    assert!(html.contains("<body class=\"many-runs\">"));
    assert!(size < 600 * 1024, "report of 100 logs is {size} bytes");

    // One row per run, in exactly the metrics' order, with the metrics' values.
    let rows = runs_table(&html);
    assert_eq!(rows.len(), 100);
    let header = runs_header(&html);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}: {header:?}"))
    };
    for (k, (row, &i)) in rows.iter().zip(&expected).enumerate() {
        let s = &summaries[i];
        assert_eq!(row.cells[0], (k + 1).to_string());
        assert!(
            row.cells[1].starts_with(&logs[i].name),
            "rank {}: {} instead of {}",
            k + 1,
            row.cells[1],
            logs[i].name
        );
        let value = |c: usize| row.cells[c].split(' ').next().unwrap().to_string();
        assert_eq!(value(2), s.steady_fps.to_string(), "{}", logs[i].name);
        assert_eq!(value(3), s.mostly_steady_fps.to_string());
        assert_eq!(value(4), s.typical_fps.to_string());
        assert_eq!(value(col("Stutters")), s.stutter_count.to_string());
        assert_eq!(value(col("Frames")), s.frames.to_string());
        // Deltas against the baseline, green when better.
        if i == baseline {
            assert!(row.class.contains("baseline"));
            assert!(!row.cells[2].contains('%'), "baseline row has deltas");
        } else {
            let b = summaries[baseline].steady_fps as f64;
            let pct = (s.steady_fps as f64 - b) / b * 100.0;
            let shown: f64 = row.cells[2]
                .split(' ')
                .nth(1)
                .unwrap()
                .trim_end_matches('%')
                .parse()
                .unwrap();
            assert!((shown - pct).abs() <= 0.5, "{shown} vs {pct}");
        }
    }
    assert!(rows[0].class.contains("best") && rows[99].class.contains("worst"));
    assert!(rows[49].class.contains("median"));
    assert!(html.contains("<small class=\"better\">") && html.contains("<small class=\"worse\">"));

    // The ranking: one row of three bars per run; the curves: four runs.
    assert_eq!(svg(&html, "ranking").matches("class=\"bar\"").count(), 300);
    for id in ["stk-slow", "stk-excess", "percentiles"] {
        assert_eq!(
            svg(&html, id).matches("class=\"series\"").count(),
            4,
            "{id}: best, median, worst and baseline"
        );
    }
    for role in ["best: ", "median: ", "worst: ", "baseline: "] {
        assert!(html.contains(role), "legend lacks {role:?}");
    }
    assert!(
        !html.contains("<svg id=\"frametimes"),
        "frame-time charts only on request"
    );

    // In Chromium: nothing overlaps, nothing is cut, nothing sticks out.
    let profile = tmp.path().join("profile");
    let mut height = 0.0;
    for fonts in Fonts::ALL {
        let layout = measure(&out, &profile, WIDE, fonts);
        height = f64::max(height, layout.height);
        layout.assert_readable(&format!("100 logs, {fonts}"));
        // Every table cell was measured: the check above was not vacuous.
        assert!(
            layout.boxes.len() > 100 * 30,
            "{fonts}: {} texts",
            layout.boxes.len()
        );
        let ids: Vec<&str> = layout.svgs.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["ranking", "stk-slow", "stk-excess", "percentiles"]);
    }
    let shot = tmp.path().join("report-100.png");
    screenshot(
        &out,
        &profile,
        &shot,
        WIDE,
        height.ceil() as u32,
        Fonts::DejaVu,
    );
    for (what, rgb, min) in [
        ("Steady bars", [0x00, 0x72, 0xb2], 5_000),
        ("best row", [0xd9, 0xf0, 0xde], 5_000),
        ("worst row", [0xfa, 0xdc, 0xdc], 5_000),
        ("baseline row", [0xff, 0xf1, 0xc2], 5_000),
    ] {
        let n = count_colour(&shot, rgb);
        assert!(n >= min, "{what}: {n} pixels");
    }
    // `STEADYHUD_REPORT_SCREENSHOT=docs/report-100.png` keeps the screenshot
    // (how the README's picture is made).
    if let Some(keep) = std::env::var_os("STEADYHUD_REPORT_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

#[test]
fn report_and_compare_work_on_every_shared_capture() {
    let dir = data::data_dir();
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    logs.sort();
    assert!(
        logs.len() >= 8,
        "expected the shared captures in {}",
        dir.display()
    );
    // All but the last as logs, the last as a baseline from outside them:
    // it joins the report, which has more than 6 runs.
    let (baseline, rest) = logs.split_last().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("all.html");
    let mut args: Vec<&std::ffi::OsStr> = rest.iter().map(|p| p.as_os_str()).collect();
    args.extend([
        "--baseline".as_ref(),
        baseline.as_os_str(),
        "--frame-times".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    report(&args);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<body class=\"many-runs\">"));
    assert_eq!(runs_table(&html).len(), logs.len());
    let name = baseline.file_name().unwrap().to_string_lossy();
    assert!(runs_table(&html)
        .iter()
        .any(|r| r.class.contains("baseline") && r.cells[1].starts_with(&*name)));
    // One frame-time strip per run, each drawing its run.
    for rank in 1..=logs.len() {
        let strip = svg(&html, &format!("frametimes-{rank}"));
        assert_eq!(strip.matches("class=\"series\"").count(), 1);
        assert!(strip.contains(&format!(">#{rank} ")));
    }
    for id in ["stk-slow", "stk-excess", "percentiles"] {
        let n = svg(&html, id).matches("class=\"series\"").count();
        assert!((3..=4).contains(&n), "{id}: {n} series");
    }
    for fonts in Fonts::ALL {
        measure(&out, &tmp.path().join("profile"), WIDE, fonts)
            .assert_readable(&format!("shared captures, {fonts}"));
    }

    for pair in logs.windows(2) {
        let st = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
            .arg("compare")
            .args(pair)
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "compare {pair:?}: {}",
            String::from_utf8_lossy(&st.stderr)
        );
    }
}

/// Runs `steadyhud report ARGS`: wall seconds and the child's own peak RSS
/// in MiB (`wait4` reports the rusage of that child alone).
// wait4 reaps the child, which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn report_measured(args: &[&std::ffi::OsStr]) -> (f64, f64) {
    let t = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg("report")
        .args(args)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: plain syscall on our own child, with valid out-pointers.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let took = t.elapsed().as_secs_f64();
    assert!(
        pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "report failed: {status:#x}"
    );
    (took, usage.ru_maxrss as f64 / 1024.0)
}

/// The issue's scale, 100 logs of 100,000 frames: time and size of the
/// report with and without per-run frame-time charts. Run by
/// `scripts/report-100.sh` (about a minute on 2 cores), not by the suite.
#[test]
#[ignore]
fn report_of_100_logs_of_100k_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = generate_logs(tmp.path(), 100, 100_000);
    for extra in [None, Some("--frame-times")] {
        let out = tmp.path().join("report.html");
        let mut args: Vec<&std::ffi::OsStr> = logs.iter().map(|g| g.path.as_os_str()).collect();
        args.extend(["-o".as_ref(), out.as_os_str()]);
        args.extend(extra.map(std::ffi::OsStr::new));
        let (took, rss_mib) = report_measured(&args);
        let size = std::fs::metadata(&out).unwrap().len();
        println!(
            "report of 100 logs × 100,000 frames{}: {took:.2} s, {size} bytes ({:.0} KiB), max RSS {rss_mib:.0} MiB",
            extra.map_or(String::new(), |e| format!(" {e}")),
            size as f64 / 1024.0
        );
        if extra.is_none() {
            for fonts in Fonts::ALL {
                measure(&out, &tmp.path().join("profile"), WIDE, fonts)
                    .assert_readable(&format!("100 × 100k, {fonts}"));
            }
        }
    }
}

/// `compare A… --vs B… --html`: per compared metric a chart with each
/// side's estimate, its interval and one dot per run, and the table of
/// verdicts; readable in Chromium under each font setup.
#[test]
fn comparison_of_runs_draws_intervals_and_runs_readably() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("compare.html");
    let a = [
        shared_data("presentmon-test_case_0.csv"),
        shared_data("presentmon-test_case_0_v1.csv"),
        shared_data("presentmon-test_case_0_v2.csv"),
    ];
    let b = [
        shared_data("ocat-metroexodus.csv"),
        shared_data("presentmon1-csgo.csv"),
    ];
    let st = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .args(&b)
        .arg("--html")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    assert_self_contained(&html);
    for key in steadyhud_metrics::bootstrap::COMPARED {
        let chart = svg(&html, &format!("ci-{key}"));
        // Two estimates, two intervals, one dot per run.
        assert_eq!(chart.matches("class=\"estimate\"").count(), 2, "{key}");
        assert_eq!(chart.matches("class=\"interval\"").count(), 2, "{key}");
        assert_eq!(chart.matches("class=\"run\"").count(), 5, "{key}");
    }
    assert_eq!(html.matches("<tr><td>A</td>").count(), 3);
    assert!(html.contains("better</td>"));
    let profile = tmp.path().join("profile");
    for fonts in Fonts::ALL {
        measure(&out, &profile, NARROW, fonts).assert_readable(&format!("comparison, {fonts}"));
        let shot = tmp.path().join(format!("cmp-{fonts:?}.png"));
        screenshot(&out, &profile, &shot, NARROW, 2000, fonts);
        // Side A's and side B's colours are both drawn.
        let blue = count_colour(&shot, [0x00, 0x72, 0xb2]);
        let orange = count_colour(&shot, [0xd5, 0x5e, 0x00]);
        assert!(
            blue > 300 && orange > 300,
            "{fonts}: blue {blue}, orange {orange}"
        );
    }
}
