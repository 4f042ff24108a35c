//! `steadyhud report` end to end: two real logs → one HTML file, rendered by
//! headless Chromium; the charts must be drawn (non-empty paths in the DOM,
//! the expected labels, and the series colours present in the screenshot).

mod data;
use data::shared_data;

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn chromium_cmd(exe: &Path, profile: &Path) -> Command {
    let mut c = Command::new(exe);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Pixels of the screenshot within a small distance of `rgb`.
fn count_colour(png_path: &Path, rgb: [u8; 3]) -> usize {
    let decoder = png::Decoder::new(std::fs::File::open(png_path).expect("screenshot"));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png data");
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| {
            p[..3]
                .iter()
                .zip(rgb)
                .all(|(&a, b)| (a as i32 - b as i32).abs() <= 24)
        })
        .count()
}

#[test]
fn report_of_two_logs_renders_its_charts_in_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report.html");
    let status = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg("report")
        .arg(shared_data("presentmon-test_case_0.csv"))
        .arg(shared_data("capframex-re2.csv"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(&out).unwrap();
    // self-contained: nothing fetched, nothing run
    for banned in ["<script", "src=", "href=", "url(", "@import"] {
        assert!(
            !html.contains(banned),
            "report is not self-contained: has {banned:?}"
        );
    }
    for label in [
        "Frame time over the run",
        "target FPS",
        "Steady ",
        "Typical ",
        "share of time (%)",
        "presentmon-test_case_0.csv",
        "capframex-re2.csv",
    ] {
        assert!(html.contains(label), "report lacks {label:?}");
    }

    let Some(exe) = chromium() else {
        panic!("chromium is not installed: .ci/run installs it (apt-get install chromium)");
    };
    let profile = tmp.path().join("profile");
    let url = format!("file://{}", out.display());
    let dom = chromium_cmd(&exe, &profile)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    for id in ["frametimes", "stk-slow", "stk-excess", "percentiles"] {
        let start = dom
            .find(&format!("<svg id=\"{id}\""))
            .unwrap_or_else(|| panic!("no svg {id} in the rendered DOM"));
        let svg = &dom[start..start + dom[start..].find("</svg>").unwrap()];
        // two logs → two series paths, each with many points
        let series: Vec<&str> = svg
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

    let shot = tmp.path().join("shot.png");
    let st = chromium_cmd(&exe, &profile)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1040,1900")
        .arg(&url)
        .status()
        .unwrap();
    assert!(st.success() && shot.exists(), "chromium took no screenshot");
    // The first two palette colours are the two series; both must be drawn.
    let blue = count_colour(&shot, [0x00, 0x72, 0xb2]);
    let orange = count_colour(&shot, [0xd5, 0x5e, 0x00]);
    assert!(
        blue > 500 && orange > 500,
        "series pixels: blue {blue}, orange {orange}"
    );
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
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("all.html");
    let st = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg("report")
        .args(&logs)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    for id in ["frametimes", "stk-slow", "stk-excess", "percentiles"] {
        let start = html.find(&format!("<svg id=\"{id}\"")).unwrap();
        let svg = &html[start..start + html[start..].find("</svg>").unwrap()];
        assert_eq!(
            svg.matches("class=\"series\"").count(),
            logs.len(),
            "{id}: one series per log"
        );
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
