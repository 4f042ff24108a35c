//! The display columns of a PresentMon-style capture, read next to the
//! frame times ([`steadyhud_metrics::display::DisplayColumns`]): the
//! display interval, the dropped flag, and animation error and latency.
//!
//! - Interval, best first: `MsBetweenDisplayChange` (2.x; 1.x, CapFrameX
//!   and OCAT as `msBetweenDisplayChange`/`MsBetweenDisplayChange`), then
//!   `MsDisplayedTime` / `DisplayedTime` (the 2.x "v2" metrics).
//! - Dropped: the `Dropped` column (1.x, CapFrameX, OCAT) when the file has
//!   one (1 = dropped), else `NA` in the interval column (2.x).
//! - Values: `MsAnimationError`/`AnimationError`, `MsPCLatency`,
//!   `MsClickToPhotonLatency`, `MsAllInputToPhotonLatency` (and their
//!   2.x "v2" names without `Ms`), `MsUntilDisplayed`, `MsCPUBusy` /
//!   `CPUBusy` (frame start → present). `NA` or an empty field: no value
//!   for that frame.
//!
//! Names match case-insensitively. Only the frames the reader keeps are
//! read (a row whose frame time is `NA` is skipped whole), so every vector
//! lines up with the log's durations.

use super::error::ErrorKind;
use super::value::number;
use steadyhud_metrics::display::{DisplayColumns, IntervalKind, ValueColumn, ValueKey, NO_VALUE};
use steadyhud_metrics::gpu::NO_DATA;

const SINCE_PREVIOUS: [&str; 1] = ["MsBetweenDisplayChange"];
const OWN_TIME: [&str; 2] = ["MsDisplayedTime", "DisplayedTime"];
const DROPPED: &str = "Dropped";
const VALUES: [(ValueKey, &[&str]); 6] = [
    (
        ValueKey::AnimationError,
        &["MsAnimationError", "AnimationError"],
    ),
    (ValueKey::PcLatency, &["MsPCLatency", "PCLatency"]),
    (
        ValueKey::ClickToPhoton,
        &["MsClickToPhotonLatency", "ClickToPhotonLatency"],
    ),
    (
        ValueKey::AllInputToPhoton,
        &["MsAllInputToPhotonLatency", "AllInputToPhotonLatency"],
    ),
    (ValueKey::PresentToDisplay, &["MsUntilDisplayed"]),
    (ValueKey::FrameStartToPresent, &["MsCPUBusy", "CPUBusy"]),
];

/// Where a capture's display columns are (found in its header).
pub struct Spec {
    interval: (usize, String),
    kind: IntervalKind,
    dropped: Option<(usize, String)>,
    values: Vec<(ValueKey, usize, String)>,
}

/// One group's display data, frame by frame.
#[derive(Default)]
pub struct Frames {
    interval_ns: Vec<u64>,
    dropped: Vec<bool>,
    values: Vec<Vec<i64>>,
}

impl Spec {
    /// The display columns of `header`; `None` without an interval column.
    pub fn find(header: &[String]) -> Option<Spec> {
        let find = |names: &[&str]| {
            names.iter().find_map(|n| {
                header
                    .iter()
                    .position(|h| h.eq_ignore_ascii_case(n))
                    .map(|i| (i, header[i].clone()))
            })
        };
        let (interval, kind) = match find(&SINCE_PREVIOUS) {
            Some(c) => (c, IntervalKind::SincePrevious),
            None => (find(&OWN_TIME)?, IntervalKind::OwnTime),
        };
        Some(Spec {
            interval,
            kind,
            dropped: find(&[DROPPED]),
            values: VALUES
                .iter()
                .filter_map(|(k, names)| find(names).map(|(i, c)| (*k, i, c)))
                .collect(),
        })
    }

    /// Reads one kept frame's fields (`rec` is its row); an error is the
    /// field's index and what is wrong with it.
    pub fn push(&self, f: &mut Frames, rec: &csv::ByteRecord) -> Result<(), (usize, ErrorKind)> {
        let (ii, iname) = &self.interval;
        let interval = rec.get(*ii).map(|b| b.trim_ascii());
        let na = interval.is_some_and(is_na);
        let dropped = match &self.dropped {
            Some((di, dname)) => match rec.get(*di).map(<[u8]>::trim_ascii) {
                None => false,
                Some(b"0") => false,
                Some(b"1") => true,
                Some(other) => return Err((*di, bad(dname, other))),
            },
            None => na,
        };
        let ns = match interval {
            _ if dropped => NO_DATA,
            None => NO_DATA,
            Some(b) if is_na(b) => NO_DATA,
            Some(b) => ms_to_ns(b)
                .filter(|&v| v >= 0)
                .map(|v| v as u64)
                .ok_or_else(|| (*ii, bad(iname, b)))?,
        };
        f.interval_ns.push(ns);
        f.dropped.push(dropped);
        f.values.resize(self.values.len(), Vec::new());
        for ((_, i, name), out) in self.values.iter().zip(f.values.iter_mut()) {
            let v = match rec.get(*i).map(<[u8]>::trim_ascii) {
                None => NO_VALUE,
                Some(b) if is_na(b) => NO_VALUE,
                Some(b) => ms_to_ns(b).ok_or_else(|| (*i, bad(name, b)))?,
            };
            out.push(v);
        }
        Ok(())
    }

    /// The columns of one group's frames.
    pub fn finish(&self, f: Frames) -> DisplayColumns {
        let n = f.dropped.len();
        let mut values = f.values;
        values.resize(self.values.len(), Vec::new());
        DisplayColumns {
            interval_column: self.interval.1.clone(),
            kind: self.kind,
            interval_ns: f.interval_ns,
            dropped: f.dropped,
            dropped_column: self
                .dropped
                .as_ref()
                .map_or_else(|| format!("{} = NA", self.interval.1), |(_, c)| c.clone()),
            values: self
                .values
                .iter()
                .zip(values)
                .map(|((key, _, column), mut ns)| {
                    ns.resize(n, NO_VALUE);
                    ValueColumn {
                        key: *key,
                        column: column.clone(),
                        ns,
                    }
                })
                .collect(),
            sources: None,
        }
    }
}

fn is_na(b: &[u8]) -> bool {
    b.is_empty() || b.eq_ignore_ascii_case(b"NA")
}

/// A finite ms value → ns, rounded to the nearest ns; `None` if it is not
/// one (or beyond ±1e18 ns).
fn ms_to_ns(b: &[u8]) -> Option<i64> {
    let ns = (number(b)? * 1e6).round();
    (ns.is_finite() && ns.abs() <= 1e18).then_some(ns as i64)
}

fn bad(column: &str, found: &[u8]) -> ErrorKind {
    ErrorKind::BadDisplayValue {
        column: column.to_string(),
        found: String::from_utf8_lossy(found).chars().take(40).collect(),
    }
}

#[cfg(test)]
mod tests {
    use crate::{ErrorKind, Filter, Format, Pos};
    use std::io::Cursor;
    use steadyhud_metrics::display::{IntervalKind, ValueKey, NO_VALUE};
    use steadyhud_metrics::gpu::NO_DATA;

    fn parse(text: &str) -> Result<crate::FrameLog, crate::error::At> {
        crate::presentmon::read(
            Cursor::new(text.as_bytes().to_vec()),
            Format::PresentMon,
            &Filter::default(),
        )
    }

    #[test]
    fn v2_na_is_dropped_and_values_follow_the_kept_frames() {
        // The NA frame-time row is skipped whole; a.exe is another group.
        let log = parse(
            "Application,ProcessID,MsBetweenPresents,MsBetweenDisplayChange,MsUntilDisplayed,MsAnimationError,MsPCLatency\n\
             b,2,10,16.5,20,NA,30\nb,2,NA,16,20,1,30\nb,2,10,NA,NA,NA,NA\nb,2,10,33.25,21,-0.5,\na,1,5,5,5,5,5\n",
        )
        .unwrap();
        let d = log.meta.display.unwrap();
        assert_eq!(d.interval_column, "MsBetweenDisplayChange");
        assert_eq!(d.kind, IntervalKind::SincePrevious);
        assert_eq!(d.interval_ns, vec![16_500_000, NO_DATA, 33_250_000]);
        assert_eq!(d.dropped, vec![false, true, false]);
        assert_eq!(d.dropped_column, "MsBetweenDisplayChange = NA");
        let keys: Vec<ValueKey> = d.values.iter().map(|v| v.key).collect();
        assert_eq!(
            keys,
            [
                ValueKey::AnimationError,
                ValueKey::PcLatency,
                ValueKey::PresentToDisplay
            ]
        );
        assert_eq!(d.values[0].ns, vec![NO_VALUE, NO_VALUE, -500_000]);
        assert_eq!(d.values[1].ns, vec![30_000_000, NO_VALUE, NO_VALUE]);
    }

    #[test]
    fn v1_dropped_column_and_v2_displayed_time() {
        let log =
            parse("msBetweenPresents,Dropped,msBetweenDisplayChange\n10,1,0\n10,0,20\n").unwrap();
        let d = log.meta.display.unwrap();
        assert_eq!(d.dropped, vec![true, false]);
        assert_eq!(d.interval_ns, vec![NO_DATA, 20_000_000]);
        assert_eq!(d.dropped_column, "Dropped");
        let log = parse("FrameTime,DisplayedTime,CPUBusy\n10,33.3,4.5\n10,NA,NA\n").unwrap();
        let d = log.meta.display.unwrap();
        assert_eq!(
            (d.kind, d.dropped),
            (IntervalKind::OwnTime, vec![false, true])
        );
        // The v2 name of `MsCPUBusy`: frame start → present.
        assert_eq!(d.values[0].key, ValueKey::FrameStartToPresent);
        assert_eq!(d.values[0].column, "CPUBusy");
        assert_eq!(d.values[0].ns, vec![4_500_000, NO_VALUE]);
        assert!(parse("FrameTime\n10\n").unwrap().meta.display.is_none());
    }

    #[test]
    fn bad_display_values_point_at_their_field() {
        let e = parse("MsBetweenPresents,MsBetweenDisplayChange\n10,16\n10,-1\n")
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(3, 4)));
        assert!(matches!(e.kind, ErrorKind::BadDisplayValue { .. }), "{e:?}");
        let e = parse("MsBetweenPresents,Dropped,MsBetweenDisplayChange\n10,2,16\n")
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(2, 4)));
    }
}
