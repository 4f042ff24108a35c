//! What a session keeps per stutter, and how a summary write lists it
//! without copying it (issue 52): the stutter frames (the whole-session
//! state's shared list, [`StutterFrames`]) and each stutter's counter cause
//! as compact records ([`CauseRecord`], 40 bytes a named counter, the
//! names from the counter table), in a [`SharedList`]. A write is handed
//! a [`StutterLists`] (the frozen chunks shared, the open chunk and the
//! last frames' stutters copied) and streams the per-stutter keys
//! (`stutter_frames`, `stutter_causes`, `stutter_causes_text`, and the
//! readings' `sensor_causes`) into the file one stutter at a time, the
//! same text as a `serde_json::Value` of them all gave.

use steadyhud_counters::{Cause, CounterInfo, Spike};
use steadyhud_log::Streamed;
use steadyhud_metrics::shared_list::{Shared, SharedList};
use steadyhud_metrics::whole::{SensorCauses, StutterFrames};

/// One counter named by a stutter's cause, or the cause of a stutter no
/// counter explains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CauseRecord {
    frame: u64,
    excess_ms: f64,
    /// The spike, in the counter's display unit.
    value: f64,
    median: f64,
    /// The counter's index among the track's counters; [`NONE`]: no
    /// counter spiked.
    counter: u16,
    /// One more counter of the stutter of the record before.
    more: bool,
}

/// [`CauseRecord::counter`] of a stutter no counter explains.
const NONE: u16 = u16::MAX;

/// The causes of a session's stutters, judged for good, kept compact.
#[derive(Default)]
pub struct CauseRecords {
    records: SharedList<CauseRecord>,
}

impl CauseRecords {
    /// Keeps `c`, whose counters are among `infos` (a counter that is not,
    /// which the tracker never names, is left out).
    pub fn push(&mut self, c: &Cause, infos: &[CounterInfo]) {
        let record = |k: usize, s: Option<&Spike>| CauseRecord {
            frame: c.frame,
            excess_ms: c.excess_ms,
            value: s.map_or(0.0, |s| s.value),
            median: s.map_or(0.0, |s| s.median),
            counter: s
                .and_then(|s| infos.iter().position(|i| i.name == s.name))
                .and_then(|i| u16::try_from(i).ok())
                .unwrap_or(NONE),
            more: k > 0,
        };
        if c.counters.is_empty() {
            self.records.push(record(0, None));
        }
        for (k, s) in c.counters.iter().enumerate() {
            self.records.push(record(k, Some(s)));
        }
    }

    /// The records kept so far, for a write on another thread.
    pub fn shared(&self) -> Shared<CauseRecord> {
        self.records.shared()
    }

    /// Records kept (one per named counter, one per stutter without).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.records.len()
    }
}

/// A write's view of the stutter causes: the records kept when it was
/// taken, the last frames' causes (judged as if the session ended then)
/// and the counters' names.
pub struct StutterCauses {
    pub records: Shared<CauseRecord>,
    pub last: Vec<Cause>,
    pub infos: Vec<CounterInfo>,
}

impl StutterCauses {
    /// Every cause, in frame order, made one at a time.
    pub fn causes(&self) -> impl Iterator<Item = Cause> + '_ {
        let mut records = self.records.iter().peekable();
        std::iter::from_fn(move || {
            let first = records.next()?;
            let mut c = Cause {
                frame: first.frame,
                excess_ms: first.excess_ms,
                counters: Vec::new(),
            };
            let mut add = |r: &CauseRecord| {
                if let Some(i) = self.infos.get(usize::from(r.counter)) {
                    c.counters.push(Spike {
                        name: i.name.clone(),
                        label: i.label.clone(),
                        value: r.value,
                        median: r.median,
                        unit: i.unit.suffix().to_string(),
                    });
                }
            };
            add(first);
            while let Some(r) = records.next_if(|r| r.more) {
                add(r);
            }
            Some(c)
        })
        .chain(self.last.iter().cloned())
    }
}

/// A per-stutter key of the summary, serialized from the lists.
pub enum StutterKey<'a> {
    /// `stutter_causes`: each cause as its JSON value (keys in order, as
    /// a `serde_json::Value` of it writes them).
    Causes(&'a StutterCauses),
    /// `stutter_causes_text`: each cause's sentence.
    Texts(&'a StutterCauses),
    /// `sensor_causes`: the readings' causes.
    Sensors(&'a SensorCauses),
}

impl serde::Serialize for StutterKey<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        match self {
            StutterKey::Causes(c) => {
                let mut seq = s.serialize_seq(None)?;
                for cause in c.causes() {
                    // One cause's value at a time: a fixed-size temporary.
                    let v = serde_json::to_value(&cause).map_err(S::Error::custom)?;
                    seq.serialize_element(&v)?;
                }
                seq.end()
            }
            StutterKey::Texts(c) => s.collect_seq(c.causes().map(|c| c.to_string())),
            StutterKey::Sensors(c) => c.serialize(s),
        }
    }
}

/// What a summary write streams: the stutter frames and, when the stream
/// counts, their causes, and with readings, the readings' causes.
#[derive(Default)]
pub struct StutterLists {
    pub frames: StutterFrames,
    pub causes: Option<StutterCauses>,
    pub sensors: Option<SensorCauses>,
}

impl StutterLists {
    /// Runs `write` with the lists as a summary write's streamed keys.
    pub fn streamed<R>(
        &self,
        write: impl FnOnce(&Streamed<'_, StutterFrames, StutterKey<'_>>) -> R,
    ) -> R {
        let causes = self.causes.as_ref();
        let keys: Vec<StutterKey> = (causes.map(StutterKey::Causes).into_iter())
            .chain(causes.map(StutterKey::Texts))
            .chain(self.sensors.as_ref().map(StutterKey::Sensors))
            .collect();
        let keys = keys.iter().map(|k| match k {
            StutterKey::Causes(_) => ("stutter_causes", k),
            StutterKey::Texts(_) => ("stutter_causes_text", k),
            StutterKey::Sensors(_) => ("sensor_causes", k),
        });
        write(&Streamed {
            stutter_frames: Some(&self.frames),
            keys: keys.collect(),
        })
    }
}
