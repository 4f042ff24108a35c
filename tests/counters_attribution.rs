//! Statistics counters end to end (Xvfb + lavapipe): the test app creates
//! real graphics pipelines mid-run and sleeps through a scripted long frame;
//! the layer's session log must blame pipeline creation for the first kind
//! of stutter and not for the second, carry the counter columns, and stay
//! validation-clean with the counter hooks in the call chain.

mod common;
mod data;
use common::*;

/// Pipelines created at each compile point: enough that lavapipe's compile
/// time makes the frame a stutter (> 4 ms and > 20% over its neighbours).
const PIPELINES: &str = "24";
/// Present numbers before which pipelines are created: frames 39 and 119 stutter.
const COMPILE_AT: [u64; 2] = [40, 120];
/// Frame 80 is a scripted 90 ms sleep.
const SLEEP_FRAME: u64 = 80;
const PATTERN: &str = "16.6ms*80,90ms,16.6ms*79";

fn column(csv: &str, name: &str) -> Vec<f64> {
    let mut lines = csv.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    lines
        .map(|l| l.split(',').nth(col).unwrap().parse::<f64>().unwrap())
        .collect()
}

#[test]
fn pipeline_stutters_are_blamed_on_pipeline_creation_and_sleeps_are_not() {
    let _s = serial();
    let h = Harness::new();
    let mut args = vec!["--pattern", PATTERN];
    let at: Vec<String> = COMPILE_AT
        .iter()
        .map(|f| format!("{f}:{PIPELINES}"))
        .collect();
    for a in &at {
        args.push("--pipelines-at");
        args.push(a);
    }
    let out = run(h.testapp(&args).layer().validation());
    out.assert_success("testapp with pipelines")
        .assert_no_vuid("testapp with counters and validation");
    let log = h.only_session_log();
    let csv = std::fs::read_to_string(&log.csv).unwrap();

    // The per-frame columns: pipeline work lands in exactly the frames it happened in.
    let pipelines = column(&csv, "pipelines");
    let compile_ms = column(&csv, "pipeline_create_ms");
    let submits = column(&csv, "submits");
    for (i, n) in pipelines.iter().enumerate() {
        let want = if COMPILE_AT.contains(&(i as u64 + 1)) {
            24.0
        } else {
            0.0
        };
        assert_eq!(*n, want, "pipelines created in frame {i}");
        assert_eq!(
            compile_ms[i] > 0.0,
            want > 0.0,
            "pipeline time in frame {i}"
        );
    }
    assert!(
        submits.iter().all(|&s| s >= 1.0),
        "the app submits every frame: {submits:?}"
    );
    let frames = column(&csv, "frametime_ms");
    let busy = column(&csv, "cpu_busy_ms");
    let inp = column(&csv, "in_present_ms");
    for i in 0..frames.len() {
        assert!(
            (busy[i] + inp[i] - frames[i]).abs() < 1e-5,
            "latency split adds up in frame {i}"
        );
    }

    let s = log.summary_json();
    let causes = s["stutter_causes"].as_array().expect("stutter_causes");
    let text = s["stutter_causes_text"]
        .as_array()
        .expect("stutter_causes_text");
    let stutters: Vec<u64> = s["stutter_frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(causes.len(), stutters.len(), "one cause entry per stutter");
    let names = |c: &serde_json::Value| -> Vec<String> {
        c["counters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["name"].as_str().unwrap().to_string())
            .collect()
    };
    for f in COMPILE_AT.map(|p| p - 1) {
        let c = causes.iter().find(|c| c["frame"] == f).unwrap_or_else(|| {
            panic!("frame {f} (pipeline creation) is no stutter; causes: {text:?}")
        });
        let n = names(c);
        assert_eq!(
            n.first().map(String::as_str),
            Some("pipeline_create_ms"),
            "frame {f}: {text:?}"
        );
        assert!(n.contains(&"pipelines".to_string()), "frame {f}: {text:?}");
    }
    let sleep = causes
        .iter()
        .find(|c| c["frame"] == SLEEP_FRAME)
        .unwrap_or_else(|| panic!("the 90 ms sleep frame is no stutter: {text:?}"));
    assert!(
        !names(sleep).iter().any(|n| n.starts_with("pipeline")),
        "sleep blamed on pipelines: {text:?}"
    );
    // No stutter other than the compile frames is blamed on pipeline creation.
    for c in causes {
        let f = c["frame"].as_u64().unwrap();
        if !COMPILE_AT.contains(&(f + 1)) {
            assert!(
                !names(c).iter().any(|n| n.starts_with("pipeline")),
                "frame {f}: {text:?}"
            );
        }
    }
    eprintln!("stutter causes: {text:#?}");
    let line = text
        .iter()
        .find(|t| t.as_str().unwrap().starts_with("frame 39 +"))
        .unwrap();
    assert!(
        line.as_str().unwrap().contains(": pipeline creation "),
        "{line}"
    );
    // Totals and the latency split are in the summary; `analyze` still reads the log.
    let totals = s["counters"].as_array().unwrap();
    let total = |n: &str| {
        totals.iter().find(|c| c["name"] == n).unwrap()["total"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(total("pipelines"), 48.0);
    assert_eq!(
        s["latency"]["present_to_display_ms"]
            .as_str()
            .map(|t| t.starts_with("n/a")),
        Some(true)
    );
    // `analyze` reads the counter columns back and finds the same causes.
    let a = h.analyze(&log.csv);
    assert_eq!(a["frames"], s["frames"]);
    assert_eq!(a["stutter_causes_text"], s["stutter_causes_text"]);
    assert_eq!(a["stutter_causes"], s["stutter_causes"]);
    assert_eq!(a["stutters_by_cause"], s["stutters_by_cause"]);
    let by = s["stutters_by_cause"]
        .as_array()
        .expect("stutters_by_cause");
    let pipeline_group = by
        .iter()
        .find(|g| g["label"] == "pipeline creation")
        .expect("a pipeline creation group");
    assert_eq!(pipeline_group["stutters"], 2, "{by:?}");
    assert_eq!(
        by.iter()
            .map(|g| g["stutters"].as_u64().unwrap())
            .sum::<u64>(),
        causes.len() as u64
    );
    let table = run(&mut h.steadyhud(&["analyze", log.csv.to_str().unwrap()]));
    table.assert_success("analyze table");
    let why = table
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Why (counters)"))
        .collect::<Vec<_>>();
    assert!(
        why.iter()
            .any(|l| l.contains("frame 39 +") && l.contains(": pipeline creation ")),
        "{}",
        table.stdout
    );
    assert!(
        why.iter()
            .any(|l| l.starts_with("  by main cause") && l.contains("pipeline creation 2 (+")),
        "{}",
        table.stdout
    );

    // `compare` and `report` group stutters by main cause; a log without
    // counter columns (a MangoHud capture) reads n/a.
    let csv_arg = log.csv.to_str().unwrap();
    let other = data::shared_data("mangohud-0.6.8-vkcube.csv");
    let cmp = run(&mut h.steadyhud(&["compare", csv_arg, other.to_str().unwrap()]));
    cmp.assert_success("compare with counters");
    let cause_row = |label: &str| -> Vec<String> {
        let line = cmp
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with(label));
        line.unwrap_or_else(|| panic!("no {label} row:\n{}", cmp.stdout))
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    assert!(
        cmp.stdout.contains("\nStutters by main cause (counters)\n"),
        "{}",
        cmp.stdout
    );
    let compiles = causes
        .iter()
        .filter(|c| names(c).first().map(String::as_str) == Some("pipeline_create_ms"))
        .count();
    assert_eq!(compiles, 2, "{text:?}");
    assert_eq!(
        cause_row("pipeline creation")[2..],
        ["2".to_string(), "n/a".to_string()],
        "{}",
        cmp.stdout
    );
    assert_eq!(
        cause_row("no counter spiked").last().map(String::as_str),
        Some("n/a"),
        "{}",
        cmp.stdout
    );
    let html_path = h.root.path().join("report.html");
    let rep = run(&mut h.steadyhud(&[
        "report",
        csv_arg,
        other.to_str().unwrap(),
        "-o",
        html_path.to_str().unwrap(),
    ]));
    rep.assert_success("report with counters");
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("<table id=\"causes\">"), "no causes table");
    assert!(
        html.contains("<tr><td>pipeline creation</td><td>2</td><td>n/a</td><td></td></tr>"),
        "{html}"
    );
    let first = text[0].as_str().unwrap();
    assert!(
        html.contains(&format!("<li>{first}</li>")),
        "first stutter sentence {first:?} not listed"
    );
}

#[test]
fn counters_off_keeps_the_old_log_layout() {
    let _s = serial();
    let h = Harness::new();
    // Without the system readings' columns too (`sensor_hz`, on by default).
    h.write_config("counters=0\nsensor_hz=0\n");
    let out = run(h
        .testapp(&["--frames", "20", "--pipelines-at", "10:2"])
        .layer()
        .validation());
    out.assert_success("testapp counters=0")
        .assert_no_vuid("counters=0");
    let log = h.only_session_log();
    let csv = std::fs::read_to_string(&log.csv).unwrap();
    assert!(csv.contains("\nframe,present_ns,frametime_ms\n"), "{csv}");
    let s = log.summary_json();
    assert!(s.get("stutter_causes").is_none());
    assert!(h.analyze(&log.csv).get("stutter_causes").is_none());
    assert_eq!(s["frames"], 20);
}

/// Issue 11: the layer's own setup is booked as `layer_setup_ms`, in the
/// frames it happened in: the first present (the HUD's font upload and
/// first panel, after the real present, which no longer waits for them:
/// issue 41) and each swapchain recreation (the HUD's views and
/// framebuffers, then the new swapchain's first panel); no other frame
/// carries any.
#[test]
fn layer_setup_is_booked_as_the_layers_own_where_it_happened() {
    let _s = serial();
    let h = Harness::new();
    // Resize before present 60: the swapchain made there belongs to frame 59.
    let out = run(h
        .testapp(&[
            "--frames",
            "100",
            "--interval",
            "10ms",
            "--resize-at",
            "60:400x300",
        ])
        .layer()
        .validation());
    out.assert_success("testapp with a resize")
        .assert_no_vuid("testapp with a resize");
    let csv = std::fs::read_to_string(h.only_session_log().csv).unwrap();
    let setup = column(&csv, "layer_setup_ms");
    let present = column(&csv, "present_ms");
    assert_eq!(setup.len(), 100);
    assert!(
        setup[0] > 0.0,
        "the first present's HUD setup is in frame 0: {:?}",
        &setup[..3]
    );
    assert!(
        present[0] > 0.0,
        "frame 0's real present is the driver's (present_ms), the set-up after it the layer's: {:?}",
        &present[..3]
    );
    assert!(
        setup[59] > 0.0,
        "the recreation's HUD setup is in frame 59: {:?}",
        &setup[57..62]
    );
    for (i, &v) in setup.iter().enumerate() {
        if i != 0 && i != 59 && i != 60 {
            assert_eq!(v, 0.0, "frame {i} has layer setup time: {setup:?}");
        }
    }
    eprintln!(
        "layer_setup_ms: first present {:.2} ms, recreation {:.2} ms + {:.2} ms",
        setup[0], setup[59], setup[60]
    );
}
