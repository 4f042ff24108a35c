//! Property tests of `steadyhud_metrics::latency`: the streaming tracker,
//! fed presents, inputs and display answers late and out of order, gives
//! exactly the rows of a direct reading of the definitions
//! (docs/metrics.md, "PC latency") over the whole session at once; and its
//! summary is the captures' time-weighted statistics of the same rows.

use proptest::prelude::*;
use steadyhud_metrics::display::{
    DisplayColumns, DisplayStats, Seen, SeenColumns, ValueColumn, ValueKey, NO_VALUE,
};
use steadyhud_metrics::latency::{
    InputLimits, InputSource, LatencyRow, LatencySummary, LatencyTracker, Markers, Present,
    SUMMARY_KEYS,
};
use steadyhud_metrics::Options;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
/// Inputs are read up to this long after they happen.
const READ_DELAY: u64 = 2 * MS;

#[derive(Clone, Debug)]
struct Frame {
    call: u64,
    ret: u64,
    marker: Option<u64>,
    fate: Seen,
    /// When its answer comes, after its return.
    answer_delay: u64,
}

#[derive(Clone, Debug)]
struct Session {
    /// Present 0 (ends no frame) then one present per frame.
    presents: Vec<Frame>,
    /// Input times, ascending, and how long after each it is read.
    inputs: Vec<(u64, u64)>,
    window_ns: u64,
}

fn session() -> impl Strategy<Value = Session> {
    let frame = (
        1..20_000u64,                             // CPU time before the call, µs
        0..3_000u64,                              // time in present, µs
        prop::option::weighted(0.3, 0..1_000u64), // marker this long after the previous return, µs
        0..4u8,                                   // 0, 1: shown, 2: dropped, 3: unknown
        1..15_000u64,                             // present → display, µs
        0..60_000u64,                             // answer delay, µs
    );
    (
        prop::collection::vec(frame, 1..60),
        prop::collection::vec((0..800_000u64, 0..=READ_DELAY / US), 0..40),
        1..400u64,
    )
        .prop_map(|(fr, inp, window_ms)| {
            let mut presents = vec![Frame {
                call: 0,
                ret: 0,
                marker: None,
                fate: Seen::Unknown,
                answer_delay: 0,
            }];
            let mut shown_at = 0u64;
            for (cpu, inside, marker, fate, p2d, delay) in fr {
                let prev_ret = presents.last().unwrap().ret;
                // A marker lies between the previous return and the call.
                let marker = marker.map(|m| prev_ret + (m * US).min(cpu * US));
                let call = prev_ret + cpu * US;
                let fate = match fate {
                    0 | 1 => {
                        // Display times never go back.
                        shown_at = shown_at.max(call + p2d * US);
                        Seen::At {
                            displayed_ns: shown_at,
                            latency_ns: 0,
                        }
                    }
                    2 => Seen::Dropped,
                    _ => Seen::Unknown,
                };
                presents.push(Frame {
                    call,
                    ret: call + inside * US,
                    marker,
                    fate,
                    answer_delay: delay * US,
                });
            }
            let mut inputs: Vec<(u64, u64)> =
                inp.into_iter().map(|(t, r)| (t * US + 1, r * US)).collect();
            inputs.sort();
            Session {
                presents,
                inputs,
                window_ns: window_ms * MS,
            }
        })
}

/// The frames' starts by the rule: the marker, else the previous return.
fn starts(s: &Session) -> Vec<u64> {
    s.presents
        .windows(2)
        .map(|w| w[1].marker.unwrap_or(w[0].ret))
        .collect()
}

/// The rows by the definitions, the whole session at once: each input to
/// the first frame not dropped whose start is at or after it.
/// A row's numbers: FS2P, inputs taken, I2FS, the window's I2FS, PCL,
/// click to photon.
type Numbers = (u64, u32, Option<u64>, Option<u64>, Option<i64>, Option<i64>);

fn expected(s: &Session) -> Vec<Numbers> {
    let st = starts(s);
    let frames = &s.presents[1..];
    let mut taken: Vec<Vec<u64>> = vec![Vec::new(); frames.len()];
    for &(t, _) in &s.inputs {
        if let Some(k) = (0..frames.len()).find(|&k| st[k] >= t && frames[k].fate != Seen::Dropped)
        {
            taken[k].push(st[k] - t);
        }
    }
    let mean = |sum: u64, n: u64| (2 * sum + n) / (2 * n);
    (0..frames.len())
        .map(|f| {
            let fr = &frames[f];
            let fs2p = fr.call - st[f];
            let p2d = match fr.fate {
                Seen::At { displayed_ns, .. } => Some(displayed_ns as i64 - fr.call as i64),
                _ => None,
            };
            if fr.fate == Seen::Dropped {
                return (fs2p, 0, None, None, None, None);
            }
            let n = taken[f].len() as u64;
            let i2fs = (n > 0).then(|| mean(taken[f].iter().sum(), n));
            let in_window: Vec<u64> = (0..=f)
                .filter(|&k| st[k] + s.window_ns > st[f])
                .flat_map(|k| taken[k].iter().copied())
                .collect();
            let w = (!in_window.is_empty())
                .then(|| mean(in_window.iter().sum(), in_window.len() as u64));
            let pcl = w.zip(p2d).map(|(w, p)| (w + fs2p) as i64 + p);
            let ctp = i2fs.zip(p2d).map(|(i, p)| (i + fs2p) as i64 + p);
            (fs2p, n as u32, i2fs, w, pcl, ctp)
        })
        .collect()
}

enum Ev {
    Present(usize),
    Input(usize),
    Answer(usize),
}

/// Feeds the tracker in time order: presents at their return, inputs
/// when read, answers after their delay; inputs are said read up to
/// `READ_DELAY` before now.
fn track(s: &Session) -> (Vec<LatencyRow>, LatencyTracker) {
    let mut ev: Vec<(u64, u8, Ev)> = Vec::new();
    for (i, p) in s.presents.iter().enumerate() {
        ev.push((p.ret, 1, Ev::Present(i)));
        ev.push((p.ret + p.answer_delay, 2, Ev::Answer(i)));
    }
    // Read in order, each at most `READ_DELAY` after it happened.
    let mut read = 0;
    for (i, &(t, r)) in s.inputs.iter().enumerate() {
        read = std::cmp::max(read, t + r);
        ev.push((read, 0, Ev::Input(i)));
    }
    ev.sort_by_key(|e| (e.0, e.1));
    let mut t = LatencyTracker::new(s.window_ns, InputLimits::default());
    let mut rows = Vec::new();
    for (now, _, e) in ev {
        match e {
            Ev::Present(i) => {
                let p = &s.presents[i];
                rows.extend(t.present(Present {
                    id: i as u64,
                    call_ns: p.call,
                    return_ns: p.ret,
                    markers: Markers {
                        simulation_start_ns: p.marker,
                        ..Markers::default()
                    },
                }));
            }
            Ev::Input(i) => {
                let (at, _) = s.inputs[i];
                assert_eq!(t.input(at, InputSource::Key, now), Ok(()));
            }
            Ev::Answer(i) => t.fate(i as u64, s.presents[i].fate),
        }
        t.inputs_until(now.saturating_sub(READ_DELAY));
        rows.extend(std::iter::from_fn(|| t.next_row()));
    }
    rows.extend(std::iter::from_fn(|| t.finish()));
    (rows, t)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_tracker_gives_the_definitions_rows(s in session()) {
        let (rows, t) = track(&s);
        let want = expected(&s);
        let got: Vec<Numbers> = rows
            .iter()
            .map(|r| (
                r.fs2p_ns(),
                r.taken.map_or(0, |t| t.inputs),
                r.i2fs_ns(),
                r.window_i2fs_ns,
                r.pcl_ns(),
                r.click_to_photon_ns(),
            ))
            .collect();
        prop_assert_eq!(&got, &want);
        let ids: Vec<u64> = rows.iter().map(|r| r.id).collect();
        prop_assert_eq!(ids, (1..s.presents.len() as u64).collect::<Vec<_>>());
        // Every input is counted; those no frame shows are the ones after
        // the last start or before only dropped frames at the end.
        let st = starts(&s);
        let used: u64 = want.iter().map(|w| u64::from(w.1)).sum();
        let after_last = s.inputs.iter().filter(|&&(t, _)| t > *st.last().unwrap()).count() as u64;
        prop_assert_eq!(t.stats().inputs, s.inputs.len() as u64);
        prop_assert_eq!(used + t.stats().inputs_unshown + after_last, s.inputs.len() as u64);
        prop_assert_eq!(t.stats().forced_rows, 0);
    }

    /// The live summary is the captures' time-weighted statistics of the
    /// same rows (`DisplayStats` over the rows as a log's columns): means,
    /// frames and time exact, the P99 within its bucket (1 %).
    #[test]
    fn the_summary_is_the_captures_statistics(s in session()) {
        let (rows, _) = track(&s);
        let mut live = LatencySummary::new();
        rows.iter().for_each(|r| live.push(r));
        let fates: Vec<Seen> = rows.iter().map(|r| r.fate).collect();
        let mut cols = DisplayColumns::from_seen(
            &fates,
            SeenColumns { displayed: "d", dropped: "s", latency: "p2d" },
            Default::default(),
        );
        let col = |key: ValueKey, v: Vec<Option<i64>>| ValueColumn {
            key,
            column: key.name().into(),
            ns: v.into_iter().map(|v| v.unwrap_or(NO_VALUE)).collect(),
        };
        cols.values.push(col(ValueKey::PcLatency, rows.iter().map(|r| r.pcl_ns()).collect()));
        cols.values.push(col(
            ValueKey::ClickToPhoton,
            rows.iter().map(|r| r.click_to_photon_ns()).collect(),
        ));
        cols.values.push(col(
            ValueKey::FrameStartToPresent,
            rows.iter().map(|r| Some(r.fs2p_ns() as i64)).collect(),
        ));
        let batch = DisplayStats::of(&vec![MS; rows.len()], &cols, &Options::default());
        for (key, got) in live.stats(|k| k.name().to_string()) {
            prop_assert!(SUMMARY_KEYS.contains(&key));
            let want = batch.latency.get(key.name()).cloned().flatten();
            match (got, want) {
                (None, None) => {}
                (Some(g), Some(w)) => {
                    prop_assert_eq!(g.frames, w.frames, "{}", key.name());
                    prop_assert!(close(g.time_s, w.time_s));
                    prop_assert!(close(g.mean_ms, w.mean_ms), "{} {} {}", key.name(), g.mean_ms, w.mean_ms);
                    prop_assert!(
                        (g.p99_ms - w.p99_ms).abs() <= 0.01 * w.p99_ms.abs() + 1e-6,
                        "{} p99 {} {}", key.name(), g.p99_ms, w.p99_ms
                    );
                }
                (g, w) => prop_assert!(false, "{}: {:?} vs {:?}", key.name(), g, w),
            }
        }
    }
}
