//! The analysis thread's side of the statistics counters for one stream:
//! pairs each present with the counters latched at it, turns them into log
//! columns, runs frame health ([`steadyhud_counters::health::Tracker`]) to
//! name what spiked with each stutter, sums the latency split, and keeps a
//! short history for the HUD's counter page.
//!
//! Latency split (after NVIDIA's PC latency terms), per frame i, which lasts
//! from present i to present i+1:
//! * `in_present_ms`: time the app spent inside `vkQueuePresentKHR` i (our
//!   hook's entry to return, HUD drawing included);
//! * `cpu_busy_ms` = frametime − in_present − limiter_wait: from the return
//!   of present i (the frame's start) to the next present call (NVIDIA's
//!   FS2P), less the frame cap's wait;
//! * present → display: from the window's display times (the stream's
//!   `display_frames`); the summary's `latency.present_to_display_ms` is
//!   set by the stream, `"n/a (…)"` here.

use super::stutter_lists::{CauseRecords, StutterCauses};
use crate::guard;
use crate::rings::{CounterFrame, Stream};
use ringbuf::traits::Consumer;
use ringbuf::HeapCons;
use steadyhud_counters::health::{add_to_groups, sort_groups, HealthRule, Tracker};
use steadyhud_counters::markers::{FrameStartSpan, FRAME_START_SPANS};
use steadyhud_counters::{
    Cause, CauseGroup, CounterId, CounterInfo, FrameValues, History, Unit, MAX_COUNTERS,
};
use steadyhud_metrics::latency::Markers;

/// Frames of counter history the HUD page shows.
pub const HISTORY_FRAMES: usize = 240;

/// Comment line the session log gets above its header.
pub const ABOUT: &str = "counters: per-frame sums over the frame (present to next present); *_ms = CPU ms inside the hooked calls, \
     alloc_bytes = bytes, others = counts; cpu_busy_ms = frametime_ms - in_present_ms - limiter_wait_ms";

/// Counter analysis of one stream.
pub struct CounterTrack {
    cons: HeapCons<CounterFrame>,
    infos: Vec<CounterInfo>,
    in_present: Option<usize>,
    limiter_wait: Option<usize>,
    /// The game's own frame-start spans this device counts, by column
    /// ([`steadyhud_counters::markers::FRAME_START_SPANS`]).
    start_spans: Vec<(usize, FrameStartSpan)>,
    tracker: Tracker,
    /// The causes of the stutters judged for good, compact (issue 52:
    /// what a session keeps per stutter).
    kept: CauseRecords,
    /// Their groups by main cause (`stutters_by_cause`, unsorted).
    groups: Vec<CauseGroup>,
    /// The newest judged stutter's cause, for the HUD.
    last: Option<Cause>,
    /// Causes the tracker just judged (reused).
    judged: Vec<Cause>,
    /// The current row: one value per counter, then cpu_busy ns.
    row: Vec<u64>,
    frames: u64,
    sum_in_present: u64,
    sum_cpu_busy: u64,
    /// History of the counters on the HUD page.
    pub history: History,
}

impl CounterTrack {
    /// Counter analysis of `stream`, if it carries counters; `hud_names`
    /// (config `hud_counter_names`) are the counters the HUD shows, the only
    /// ones that keep a history. A name the device does not count is left
    /// out with one line on stderr.
    pub fn new(
        stream: &Stream,
        cons: Option<HeapCons<CounterFrame>>,
        stutter_threshold: f64,
        hud_names: &[String],
    ) -> Option<CounterTrack> {
        let table = stream.counters.as_ref()?;
        let infos = table.infos();
        let in_present = infos.iter().position(|c| c.name == "in_present_ms");
        let limiter_wait = infos.iter().position(|c| c.name == "limiter_wait_ms");
        let start_spans = FRAME_START_SPANS
            .iter()
            .filter_map(|&(name, s)| Some((infos.iter().position(|c| c.name == name)?, s)))
            .collect();
        let mut viewed: Vec<CounterId> = Vec::new();
        for n in hud_names {
            match table.get(n) {
                Some(id) if !viewed.contains(&id) => viewed.push(id),
                Some(_) => {}
                // A built-in this table does not count (a GL window counts
                // only its swap's): no row on its page, nothing to say.
                None if steadyhud_counters::is_builtin(n) => {}
                None => {
                    let known: Vec<&str> = infos.iter().map(|i| i.name.as_str()).collect();
                    guard::say(format_args!("steadyhud: hud_counter_names: this device has no counter {n:?} (it has {})", known.join(", ")));
                }
            }
        }
        let rule = HealthRule {
            stutter_threshold,
            ..HealthRule::default()
        };
        Some(CounterTrack {
            cons: cons?,
            row: vec![0; infos.len() + 1],
            tracker: Tracker::new(infos.clone(), rule),
            infos,
            in_present,
            limiter_wait,
            start_spans,
            kept: CauseRecords::default(),
            groups: Vec::new(),
            last: None,
            judged: Vec::new(),
            frames: 0,
            sum_in_present: 0,
            sum_cpu_busy: 0,
            history: History::new(&viewed, HISTORY_FRAMES),
        })
    }

    /// The log's extra columns: every counter, then `cpu_busy_ms`.
    pub fn columns(&self) -> Vec<(String, Unit)> {
        let mut c: Vec<(String, Unit)> = self
            .infos
            .iter()
            .map(|i| (i.name.clone(), i.unit))
            .collect();
        c.push((
            steadyhud_log::columns::CPU_BUSY.name.to_string(),
            Unit::Nanos,
        ));
        c
    }

    /// The counters latched at the present stamped `t` (zeros if its entry
    /// was lost); older entries are dropped.
    pub fn take(&mut self, t: u64) -> FrameValues {
        while let Some(f) = self.cons.try_peek() {
            if f.t > t {
                break;
            }
            let f = *f;
            self.cons.try_pop();
            if f.t == t {
                return f.values;
            }
        }
        [0; MAX_COUNTERS]
    }

    /// Feeds one frame (duration `d` ns, its counters); returns the log row's
    /// extra values.
    pub fn on_frame(&mut self, d: u64, values: &FrameValues) -> &[u64] {
        self.tracker.push(d, values, &mut self.judged);
        self.keep_judged();
        self.history.push(values);
        let in_present = self.in_present.map_or(0, |i| values[i]).min(d);
        let cpu_busy = self.cpu_busy(d, values);
        self.frames += 1;
        self.sum_in_present += in_present;
        self.sum_cpu_busy += cpu_busy;
        let n = self.infos.len();
        self.row[..n].copy_from_slice(&values[..n]);
        self.row[n] = cpu_busy;
        &self.row
    }

    /// A frame's `cpu_busy_ms` (ns): its duration `d` less its time in
    /// the present call and the frame cap's wait, from its `values`.
    pub fn cpu_busy(&self, d: u64, values: &FrameValues) -> u64 {
        let in_present = self.in_present.map_or(0, |i| values[i]).min(d);
        let capped = self.limiter_wait.map_or(0, |i| values[i]);
        (d - in_present).saturating_sub(capped)
    }

    /// The game's own start of the frame whose present call was at
    /// `present_ns`, from its `values`: each span the game marked (Reflex
    /// SIMULATION_START or INPUT_SAMPLE to PRESENT_START, Anti-Lag's input
    /// stage to its present stage) placed before the present call.
    pub fn frame_starts(&self, present_ns: u64, values: &FrameValues) -> Markers {
        let mut m = Markers::default();
        for &(i, s) in &self.start_spans {
            let start = match values[i] {
                0 => None,
                span => present_ns.checked_sub(span),
            };
            match s {
                FrameStartSpan::Simulation => m.simulation_start_ns = start,
                FrameStartSpan::InputSample => m.input_sample_ns = start,
                FrameStartSpan::AntiLagInput => m.anti_lag_input_ns = start,
            }
        }
        m
    }

    /// Keeps the causes the tracker just judged, compact.
    fn keep_judged(&mut self) {
        for c in self.judged.drain(..) {
            self.kept.push(&c, &self.infos);
            add_to_groups(&mut self.groups, &c);
            self.last = Some(c);
        }
    }

    /// The newest judged stutter and its main cause, for the HUD.
    pub fn last_stutter(&self) -> Option<crate::live::LastStutter> {
        let c = self.last.as_ref()?;
        Some(crate::live::LastStutter {
            excess_ms: c.excess_ms as f32,
            cause: c.main_text(),
        })
    }

    /// The viewed counters' history for the HUD.
    pub fn live(&self) -> Vec<crate::live::LiveCounter> {
        self.history
            .viewed()
            .filter_map(|id| {
                let info = self.infos.get(id.index())?;
                let values = self.history.values(id)?;
                Some(crate::live::LiveCounter {
                    label: info.label.clone(),
                    unit: info.unit.suffix(),
                    recent: values
                        .iter()
                        .map(|&v| info.unit.display(v as f64) as f32)
                        .collect(),
                })
            })
            .collect()
    }

    /// Summary keys: `stutters_by_cause`, `counters` (per-counter totals)
    /// and `latency`, and the causes a write streams as `stutter_causes`
    /// and `stutter_causes_text`.
    pub fn finish(&mut self) -> (serde_json::Value, StutterCauses) {
        self.tracker.finish(&mut self.judged);
        self.keep_judged();
        self.keys(Vec::new())
    }

    /// [`CounterTrack::finish`]'s keys as if the session ended now, without
    /// ending it: the last frames' stutters are judged on a copy of the
    /// judge, for this write only. The causes kept are shared with the
    /// write, not copied: a temporary growing with the session, at every
    /// periodic write, left the analysis thread's heap with holes too small
    /// for the next one (resident memory growing by time, issue 52).
    pub fn keys_so_far(&mut self) -> (serde_json::Value, StutterCauses) {
        let mut last = Vec::new();
        self.tracker.clone().finish(&mut last);
        self.keys(last)
    }

    /// The keys with the causes kept and then `last`.
    fn keys(&self, last: Vec<Cause>) -> (serde_json::Value, StutterCauses) {
        let mut groups = self.groups.clone();
        for c in &last {
            add_to_groups(&mut groups, c);
        }
        sort_groups(&mut groups);
        let causes = StutterCauses {
            records: self.kept.shared(),
            last,
            infos: self.infos.clone(),
        };
        let counters: Vec<serde_json::Value> = self
            .infos
            .iter()
            .zip(self.tracker.totals())
            .map(|(i, &t)| {
                serde_json::json!({
                    "name": i.name, "label": i.label, "unit": i.unit.suffix(),
                    "total": i.unit.display(t as f64),
                })
            })
            .collect();
        let avg = |s: u64| {
            if self.frames == 0 {
                0.0
            } else {
                s as f64 / self.frames as f64 / 1e6
            }
        };
        let keys = serde_json::json!({
            "stutters_by_cause": groups,
            "counters": counters,
            "latency": {
                "cpu_busy_ms_avg": avg(self.sum_cpu_busy),
                "in_present_ms_avg": avg(self.sum_in_present),
                "present_to_display_ms": "n/a (no display times)",
                "low_latency2_markers": if self.infos.iter().any(|i| i.name == "nv_frame_start_to_present_ms") {
                    "nv_* columns (the app sets VK_NV_low_latency2 markers)"
                } else {
                    "n/a (the device has no vkSetLatencyMarkerNV)"
                },
            },
        });
        (keys, causes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use steadyhud_counters::{Counters, Unit};

    /// The HUD shows the configured counters in the configured order; a name
    /// the device lacks and a repeated name are left out.
    #[test]
    fn hud_shows_the_configured_counters_in_order() {
        let table = Arc::new(Counters::new());
        let pipe = table
            .register("pipeline_create_ms", "pipeline creation", Unit::Nanos)
            .unwrap();
        let subs = table
            .register("submits", "queue submits", Unit::Count)
            .unwrap();
        table
            .register("in_present_ms", "time in present", Unit::Nanos)
            .unwrap();
        let (stream, _cons, vcons) = Stream::with_counters(1, 0, Some(table));
        let names: Vec<String> = ["submits", "no_such", "pipeline_create_ms", "submits"]
            .map(String::from)
            .into();
        let mut track = CounterTrack::new(&stream, vcons, 0.2, &names).unwrap();
        let mut values = [0u64; MAX_COUNTERS];
        values[pipe.index()] = 3_000_000;
        values[subs.index()] = 2;
        track.on_frame(16_000_000, &values);
        let live = track.live();
        let got: Vec<(&str, &str, Vec<f32>)> = live
            .iter()
            .map(|c| (c.label.as_str(), c.unit, c.recent.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("queue submits", Unit::Count.suffix(), vec![2.0]),
                ("pipeline creation", "ms", vec![3.0])
            ]
        );
    }

    /// The game's own frame starts come from the Reflex and Anti-Lag
    /// counters the device registered, placed before the present call; a
    /// span the game did not mark this frame (0) is no start.
    #[test]
    fn frame_starts_are_the_marked_spans_before_the_present() {
        let table = Arc::new(Counters::new());
        steadyhud_counters::Builtin::register(&table).unwrap();
        let reflex = steadyhud_counters::Reflex::register(&table).unwrap();
        let anti_lag = steadyhud_counters::AntiLag::register(&table).unwrap();
        let (stream, _cons, vcons) = Stream::with_counters(1, 0, Some(table));
        let track = CounterTrack::new(&stream, vcons, 0.2, &[]).unwrap();
        let mut values = [0u64; MAX_COUNTERS];
        values[reflex.start_to_present.index()] = 8_000;
        values[anti_lag.input_to_present.index()] = 5_000;
        assert_eq!(
            track.frame_starts(100_000, &values),
            Markers {
                simulation_start_ns: Some(92_000),
                input_sample_ns: None,
                anti_lag_input_ns: Some(95_000),
            }
        );
        values[reflex.input_to_present.index()] = 200_000;
        assert_eq!(track.frame_starts(100_000, &values).input_sample_ns, None);
    }

    /// The HUD's "last stutter" is the newest judged stutter with its main
    /// cause, once the 9 frames after it are in.
    #[test]
    fn last_stutter_names_the_main_cause() {
        let table = Arc::new(Counters::new());
        let pipe = table
            .register("pipeline_create_ms", "pipeline creation", Unit::Nanos)
            .unwrap();
        let (stream, _cons, vcons) = Stream::with_counters(1, 0, Some(table));
        let mut track = CounterTrack::new(&stream, vcons, 0.2, &[]).unwrap();
        let ms = 1_000_000u64;
        let mut values = [0u64; MAX_COUNTERS];
        for i in 0..40u64 {
            values[pipe.index()] = if i == 20 { 30 * ms } else { 0 };
            let d = match i {
                20 => 40 * ms,
                32 => 50 * ms,
                _ => 10 * ms,
            };
            track.on_frame(d, &values);
            // Frame 20 is judged once frame 29 is in; frame 32 only at the end.
            let want = (i >= 29).then_some((30.0, "pipeline creation 30.0 ms"));
            let got = track.last_stutter().map(|l| (l.excess_ms, l.cause));
            assert_eq!(
                got.as_ref().map(|(e, c)| (*e, c.as_str())),
                want,
                "after frame {i}"
            );
        }
        // A periodic write's keys judge the last frames without keeping
        // them; the stutter kept is one compact record, its one spike
        // (issue 52: what a session keeps per stutter).
        let (keys, causes) = track.keys_so_far();
        let so_far: Vec<Cause> = causes.causes().collect();
        assert_eq!(so_far.len(), 2);
        assert_eq!(track.kept.len(), 1);
        assert!(std::mem::size_of::<super::super::stutter_lists::CauseRecord>() <= 40);
        let (final_keys, final_causes) = track.finish();
        assert_eq!(final_keys, keys);
        assert!(final_causes.causes().eq(so_far));
        let last = track.last_stutter().unwrap();
        assert_eq!(
            (last.excess_ms, last.cause.as_str()),
            (40.0, "no counter spiked")
        );
    }
}
