//! docs/metrics.md's PC latency worked example, replayed: the events of its
//! `text` block go through `LatencyTracker` and `LatencySummary`, and every
//! number of its three tables (rows with display times, the summary, rows
//! without display times) must be what they give.

use steadyhud_metrics::display::{Seen, ValueStats};
use steadyhud_metrics::latency::{
    InputLimits, InputSource, LatencyRow, LatencySummary, LatencyTracker, Markers, Present,
};

const WINDOW_NS: u64 = 10_000_000_000;

fn metrics_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/metrics.md");
    std::fs::read_to_string(path).expect("read docs/metrics.md")
}

/// The doc from the example's marker on.
fn example(doc: &str) -> &str {
    let at = doc
        .find("<!-- latency-example")
        .expect("docs/metrics.md has the latency example's marker");
    &doc[at..]
}

/// ms as written in the doc ("26.5", "2.833333") to ns.
fn ns(ms: &str) -> u64 {
    let (int, frac) = ms.split_once('.').unwrap_or((ms, ""));
    assert!(frac.len() <= 6, "{ms}: more than ns");
    let frac = format!("{frac:0<6}");
    int.parse::<u64>().unwrap() * 1_000_000 + frac.parse::<u64>().unwrap()
}

/// A table cell: "—" is no value.
fn cell(s: &str) -> Option<i64> {
    (s != "—").then(|| ns(s) as i64)
}

enum Event {
    Present(Present, Seen),
    Input(u64, InputSource),
}

fn events(ex: &str) -> Vec<Event> {
    let start = ex.find("```text\n").expect("the events block") + "```text\n".len();
    let end = start + ex[start..].find("```").unwrap();
    ex[start..end]
        .lines()
        .map(|line| {
            let w: Vec<&str> = line.split_whitespace().collect();
            match w[0] {
                "input" => {
                    let source = match w[2] {
                        "key" => InputSource::Key,
                        "button" => InputSource::Button,
                        "motion" => InputSource::Motion,
                        s => panic!("source {s}"),
                    };
                    Event::Input(ns(w[1]), source)
                }
                "present" => {
                    let mut p = Present {
                        id: w[1].parse().unwrap(),
                        call_ns: 0,
                        return_ns: 0,
                        markers: Markers::default(),
                    };
                    let mut fate = Seen::Unknown;
                    let mut it = w[2..].iter();
                    while let Some(&k) = it.next() {
                        if k == "dropped" {
                            fate = Seen::Dropped;
                            continue;
                        }
                        let v = ns(it.next().unwrap());
                        match k {
                            "call" => p.call_ns = v,
                            "return" => p.return_ns = v,
                            "simulation_start" => p.markers.simulation_start_ns = Some(v),
                            "shown" => {
                                fate = Seen::At {
                                    displayed_ns: v,
                                    latency_ns: 0,
                                }
                            }
                            k => panic!("word {k}"),
                        }
                    }
                    Event::Present(p, fate)
                }
                k => panic!("event {k}"),
            }
        })
        .collect()
}

/// The markdown tables from `ex` on, each as its rows of cells (header and
/// rule left out).
fn tables(ex: &str) -> Vec<Vec<Vec<String>>> {
    let mut out: Vec<Vec<Vec<String>>> = Vec::new();
    let mut in_table = false;
    for line in ex.lines() {
        if let Some(inner) = line.strip_prefix('|') {
            let cells: Vec<String> = inner
                .trim_end_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            if !in_table {
                out.push(Vec::new());
                in_table = true;
                continue; // header
            }
            if cells.iter().all(|c| c.chars().all(|ch| ch == '-')) {
                continue;
            }
            out.last_mut().unwrap().push(cells);
        } else {
            in_table = false;
        }
    }
    out
}

/// Replays the events (inputs read when they happen, answers after every
/// present, with or without display times) and gives every row.
fn replay(ev: &[Event], with_display: bool) -> Vec<LatencyRow> {
    let mut t = LatencyTracker::new(WINDOW_NS, InputLimits::default());
    // In time order: each present at its return, each input at its time.
    let mut order: Vec<(u64, usize)> = ev
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            Event::Present(p, _) => (p.return_ns, i),
            Event::Input(at, _) => (*at, i),
        })
        .collect();
    order.sort();
    let mut rows = Vec::new();
    for &(now, i) in &order {
        match &ev[i] {
            Event::Present(p, _) => rows.extend(t.present(*p)),
            Event::Input(at, source) => t.input(*at, *source, now).expect("believed"),
        }
        t.inputs_until(now);
    }
    // The answers, last first.
    for e in ev.iter().rev() {
        if let Event::Present(p, fate) = e {
            t.fate(p.id, if with_display { *fate } else { Seen::Unknown });
        }
    }
    rows.extend(std::iter::from_fn(|| t.next_row()));
    rows.extend(std::iter::from_fn(|| t.finish()));
    rows
}

fn check_rows(rows: &[LatencyRow], table: &[Vec<String>]) {
    assert_eq!(rows.len(), table.len());
    for (r, want) in rows.iter().zip(table) {
        let got = [
            Some(r.id as i64 * 1_000_000),
            Some(r.start.ns as i64),
            Some(r.taken.map_or(0, |t| t.inputs) as i64 * 1_000_000),
            r.i2fs_ns().map(|v| v as i64),
            Some(r.fs2p_ns() as i64),
            r.p2d_ns(),
            r.window_i2fs_ns.map(|v| v as i64),
            r.pcl_ns(),
            r.click_to_photon_ns(),
        ];
        let want: Vec<Option<i64>> = want.iter().map(|c| cell(c)).collect();
        assert_eq!(got.to_vec(), want, "frame {}", r.id);
    }
}

#[test]
fn the_worked_example_gives_the_documented_rows_and_summary() {
    let doc = metrics_md();
    let ex = example(&doc);
    let ev = events(ex);
    let t = tables(ex);
    assert_eq!(t.len(), 3, "rows, summary, rows without display times");

    let rows = replay(&ev, true);
    check_rows(&rows, &t[0]);

    let mut summary = LatencySummary::new();
    rows.iter().for_each(|r| summary.push(r));
    let stats = summary.stats(|k| k.name().to_string());
    assert_eq!(stats.len(), t[1].len());
    for ((key, s), want) in stats.iter().zip(&t[1]) {
        assert_eq!(key.name(), want[0]);
        let s: &ValueStats = s.as_ref().expect("a sample");
        assert_eq!(s.frames.to_string(), want[1], "{}", want[0]);
        let close = |a: f64, b: &str| (a - b.parse::<f64>().unwrap()).abs() < 1e-9;
        assert!(close(s.time_s, &want[2]), "{} time_s {}", want[0], s.time_s);
        assert!(close(s.mean_ms, &want[3]), "{} mean {}", want[0], s.mean_ms);
        assert!(close(s.p99_ms, &want[4]), "{} p99 {}", want[0], s.p99_ms);
    }

    let rows = replay(&ev, false);
    check_rows(&rows, &t[2]);
    let mut summary = LatencySummary::new();
    rows.iter().for_each(|r| summary.push(r));
    assert!(summary
        .stats(|k| k.name().to_string())
        .iter()
        .all(|(_, s)| s.is_none()));
}

/// The check can fail: a changed number in the doc's table is caught.
#[test]
fn a_wrong_number_in_the_table_is_caught() {
    let doc = metrics_md().replace("| 5 | 26.5 | 1 | 12 |", "| 5 | 26.5 | 1 | 11 |");
    let ex = example(&doc);
    let rows = replay(&events(ex), true);
    let table = tables(ex).remove(0);
    assert!(std::panic::catch_unwind(|| check_rows(&rows, &table)).is_err());
}
