//! Displayed-frame timing in a session log: who answered ([`Source`]),
//! one frame's answer ([`Shown`]), its cells in the
//! [`crate::columns::DISPLAY`] columns ([`Shown::write_cells`]) and
//! back ([`Shown::parse`]); a log's rows' answers for the displayed-frame
//! metrics ([`Answers`], every row; [`RunningAnswers`], the game's, in
//! fixed size). The layer writes them, the `formats` reader reads them;
//! both go through here.

use crate::columns::{DISPLAY, LATENCY};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use steadyhud_metrics::display::{
    DisplayColumns, DisplayStats, Seen, SeenColumns, ValueColumn, ValueKey, NO_VALUE,
};
use steadyhud_metrics::display_whole::DisplaySession;
use steadyhud_metrics::Options;

/// Who told us when a frame reached the screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Wayland's `wp_presentation` feedback on the game's surface.
    Wayland,
    /// X11 Present's `CompleteNotify` on the game's window.
    X11Present,
    /// `VK_EXT_present_timing`.
    PresentTiming,
    /// `VK_GOOGLE_display_timing`.
    GoogleDisplayTiming,
}

impl Source {
    pub const ALL: [Source; 4] = [
        Source::Wayland,
        Source::X11Present,
        Source::PresentTiming,
        Source::GoogleDisplayTiming,
    ];

    /// The `display_source` cell, the summary's and the HUD's name.
    pub fn name(self) -> &'static str {
        match self {
            Source::Wayland => "wayland",
            Source::X11Present => "x11-present",
            Source::PresentTiming => "present-timing",
            Source::GoogleDisplayTiming => "google-display-timing",
        }
    }

    /// The source called `name` ([`Source::name`]).
    pub fn from_name(name: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// What became of one frame on the way to the screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// On screen at `displayed_ns` (CLOCK_MONOTONIC), with the display's
    /// refresh period (0: none given).
    At {
        source: Source,
        displayed_ns: u64,
        refresh_ns: u64,
    },
    /// Never shown: the source said it was replaced before a refresh
    /// (a dropped frame).
    Dropped { source: Source },
    /// No answer: not asked, or the answer never came. Neither shown
    /// nor dropped.
    Unknown,
}

impl Shown {
    /// Appends the frame's four display cells, each preceded by a comma:
    /// `displayed_ns` from `origin_ns` (the session's first present),
    /// `display_latency_ms` from `present_ns` (the present call that ends
    /// the frame; both CLOCK_MONOTONIC), `refresh_ms`, `display_source`.
    pub fn write_cells(self, origin_ns: u64, present_ns: u64, out: &mut String) {
        let ms = |out: &mut String, ns: i128| {
            let sign = if ns < 0 { "-" } else { "" };
            let a = ns.unsigned_abs();
            let _ = write!(out, ",{sign}{}.{:06}", a / 1_000_000, a % 1_000_000);
        };
        match self {
            Shown::At {
                source,
                displayed_ns,
                refresh_ns,
            } => {
                let _ = write!(out, ",{}", displayed_ns as i128 - origin_ns as i128);
                ms(out, displayed_ns as i128 - present_ns as i128);
                if refresh_ns > 0 {
                    ms(out, refresh_ns as i128);
                } else {
                    out.push(',');
                }
                let _ = write!(out, ",{}", source.name());
            }
            Shown::Dropped { source } => {
                let _ = write!(out, ",,,,{}", source.name());
            }
            Shown::Unknown => out.push_str(",,,,"),
        }
    }

    /// A row's answer back from its four cells (`displayed_ns`,
    /// `display_latency_ms`, `refresh_ms`, `display_source`): `displayed`
    /// in the log's time (from the first present), so `At::displayed_ns`
    /// is that plus `origin_ns`. `None` for cells steadyhud does not write.
    pub fn parse(cells: [&str; 4], origin_ns: i128) -> Option<Shown> {
        let [displayed, _latency, refresh, source] = cells.map(str::trim);
        if source.is_empty() {
            return (displayed.is_empty()).then_some(Shown::Unknown);
        }
        let source = Source::from_name(source)?;
        if displayed.is_empty() {
            return Some(Shown::Dropped { source });
        }
        let at = displayed.parse::<i128>().ok()? + origin_ns;
        let refresh_ns = if refresh.is_empty() {
            0
        } else {
            parse_ms(refresh)?
        };
        Some(Shown::At {
            source,
            displayed_ns: u64::try_from(at).ok()?,
            refresh_ns,
        })
    }
}

/// `-0.000500` (ms, up to six decimals, signed) as ns.
fn parse_signed_ms(s: &str) -> Option<i64> {
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let ns = i64::try_from(parse_ms(s)?).ok()?;
    Some(if negative { -ns } else { ns })
}

/// `16.666667` (ms, up to six decimals) as ns.
fn parse_ms(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac: u64 = format!("{frac:0<6}").parse().ok()?;
    Some(whole.parse::<u64>().ok()? * 1_000_000 + frac)
}

/// The summary JSON's key for displayed-frame timing, and
/// `analyze --display --json`'s block: [`summary_keys`].
pub const SUMMARY_KEY: &str = "display";

/// A log's frames' answers, in row order, as the displayed-frame metrics
/// take them ([`Answers::columns`]): the layer adds each row's as it
/// writes the row ([`Answers::push`]), the `formats` reader each row's as
/// it reads it ([`Answers::push_read`]), so both measure the same frames
/// the same way.
#[derive(Clone, Debug, Default)]
pub struct Answers {
    seen: Vec<Seen>,
    sources: BTreeMap<&'static str, usize>,
    /// PC latency's per-frame terms of the rows so far, in a log with the
    /// [`crate::columns::LATENCY`] columns ([`Answers::push_terms`]).
    terms: Vec<[i64; 3]>,
}

/// A frame's latency as the layer writes it: its display time after
/// `present_ns`, the present call that ends it, on the clock of
/// `At::displayed_ns` (what [`Shown::write_cells`] gets); [`NO_VALUE`]
/// for a frame not shown.
fn latency_of(shown: Shown, present_ns: u64) -> i64 {
    match shown {
        Shown::At { displayed_ns, .. } => {
            i64::try_from(displayed_ns as i128 - present_ns as i128).unwrap_or(NO_VALUE)
        }
        _ => NO_VALUE,
    }
}

/// A frame's answer as the displayed-frame metrics take it, with its
/// latency, and the source that gave it.
fn seen_of(shown: Shown, latency_ns: i64) -> (Seen, Option<Source>) {
    match shown {
        Shown::At {
            source,
            displayed_ns,
            ..
        } => (
            Seen::At {
                displayed_ns,
                latency_ns,
            },
            Some(source),
        ),
        Shown::Dropped { source } => (Seen::Dropped, Some(source)),
        Shown::Unknown => (Seen::Unknown, None),
    }
}

/// The names of the [`DISPLAY`] columns the displayed-frame metrics come
/// from (intervals from `displayed_ns`, dropped frames from
/// `display_source` without `displayed_ns`, present to display from
/// `display_latency_ms`), handed to `f`.
fn with_names<R>(f: impl FnOnce(SeenColumns<'_>) -> R) -> R {
    let [displayed, latency, _, source] = DISPLAY.map(|c| c.name);
    f(SeenColumns {
        displayed,
        dropped: &format!("{source} without {displayed}"),
        latency,
    })
}

/// The latency columns [`Answers::push_terms`] takes, with the display
/// value each becomes: PCL, click to photon, FS2P.
pub const TERMS: [(&str, ValueKey); 3] = [
    (LATENCY[4].name, ValueKey::PcLatency),
    (LATENCY[2].name, ValueKey::ClickToPhoton),
    (LATENCY[3].name, ValueKey::FrameStartToPresent),
];

impl Answers {
    /// The next row's answer; `present_ns`: the present call that ends the
    /// frame, on the clock of `At::displayed_ns` (what
    /// [`Shown::write_cells`] gets).
    pub fn push(&mut self, shown: Shown, present_ns: u64) {
        self.push_read(shown, latency_of(shown, present_ns));
    }

    /// The next row's answer as a log gives it: the latency from its
    /// `display_latency_ms` cell ([`NO_VALUE`]: empty).
    pub fn push_read(&mut self, shown: Shown, latency_ns: i64) {
        let (seen, source) = seen_of(shown, latency_ns);
        self.seen.push(seen);
        if let Some(s) = source {
            *self.sources.entry(s.name()).or_default() += 1;
        }
    }

    /// The next row's answer from its four cells as a log holds them
    /// (`displayed_ns`, `display_latency_ms`, `refresh_ms`,
    /// `display_source`; `origin_ns` as for [`Shown::parse`]). `Err(k)`:
    /// cell k is not what steadyhud writes, and nothing is added.
    pub fn push_cells(&mut self, cells: [&str; 4], origin_ns: i128) -> Result<(), usize> {
        let [displayed, latency, _, source] = cells;
        let Some(shown) = Shown::parse(cells, origin_ns) else {
            // Which cell: an unknown source, else a refresh that alone
            // keeps the row from reading, else the display time.
            return Err(
                if !source.trim().is_empty() && Source::from_name(source.trim()).is_none() {
                    3
                } else if Shown::parse([displayed, latency, "", source], origin_ns).is_some() {
                    2
                } else {
                    0
                },
            );
        };
        let latency_ns = match (shown, latency.trim()) {
            (Shown::At { .. }, l) if !l.is_empty() => parse_signed_ms(l).ok_or(1usize)?,
            _ => NO_VALUE,
        };
        self.push_read(shown, latency_ns);
        Ok(())
    }

    /// The next row's PC latency terms ([`TERMS`]' order, ns,
    /// [`NO_VALUE`]: empty): the layer adds them as it writes the row, the
    /// `formats` reader as it reads it, so `analyze` reads our logs'
    /// latency as it reads a capture's.
    pub fn push_terms(&mut self, terms: [i64; 3]) {
        self.terms.push(terms);
    }

    /// The next row's terms from their cells ([`TERMS`]' order); `Err(k)`:
    /// cell k is not a number of ms, and nothing is added.
    pub fn push_term_cells(&mut self, cells: [&str; 3]) -> Result<(), usize> {
        let mut terms = [NO_VALUE; 3];
        for (k, c) in cells.iter().enumerate() {
            let c = c.trim();
            if !c.is_empty() {
                terms[k] = parse_signed_ms(c).ok_or(k)?;
            }
        }
        self.push_terms(terms);
        Ok(())
    }

    /// Rows so far.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// The display columns of the rows so far, named after the log's
    /// [`DISPLAY`] columns (intervals from `displayed_ns`, dropped frames
    /// from `display_source` without `displayed_ns`, present to display
    /// from `display_latency_ms`).
    pub fn columns(&self) -> DisplayColumns {
        let mut c = with_names(|names| {
            DisplayColumns::from_seen(
                &self.seen,
                names,
                self.sources
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect(),
            )
        });
        if !self.terms.is_empty() {
            // Rows whose terms are not in yet (held for their inputs) have none.
            for (k, (column, key)) in TERMS.iter().enumerate() {
                let ns = (0..self.seen.len())
                    .map(|i| self.terms.get(i).map_or(NO_VALUE, |t| t[k]))
                    .collect();
                c.values.push(ValueColumn {
                    key: *key,
                    column: column.to_string(),
                    ns,
                });
            }
        }
        c
    }
}

/// A running session's displayed-frame statistics in fixed size
/// ([`DisplaySession`]): what the layer keeps of its rows' answers
/// instead of [`Answers`] (issue 52), fed the same way as it writes each
/// row; its summary keys are [`summary_keys`]' for the same rows at the
/// precision docs/metrics.md states ("The summary of a running session").
#[derive(Clone, Debug)]
pub struct RunningAnswers {
    session: DisplaySession,
}

impl RunningAnswers {
    /// With the stutter rule of `opts`.
    pub fn new(opts: &Options) -> RunningAnswers {
        RunningAnswers {
            session: DisplaySession::new(opts),
        }
    }

    /// The next row: its answer, the present call that ends its frame (as
    /// for [`Answers::push`]), its present duration and, in a log with the
    /// [`crate::columns::LATENCY`] columns, its PC latency terms
    /// ([`TERMS`]' order, as [`Answers::push_terms`] takes them; from the
    /// first row that has them on, as the log's columns).
    pub fn push(
        &mut self,
        shown: Shown,
        present_ns: u64,
        duration_ns: u64,
        terms: Option<[i64; 3]>,
    ) {
        if terms.is_some() {
            self.session.set_values(&TERMS.map(|t| t.1));
        }
        let (seen, source) = seen_of(shown, latency_of(shown, present_ns));
        let terms = terms.as_ref().map_or(&[][..], |t| &t[..]);
        self.session
            .push(duration_ns, seen, source.map(Source::name), terms);
    }

    /// Rows so far.
    pub fn len(&self) -> usize {
        self.session.rows()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fixed-size state.
    pub fn session(&self) -> &DisplaySession {
        &self.session
    }

    /// The summary JSON's displayed-frame keys of the rows so far:
    /// `{"display": {…}}`, as [`summary_keys`] of the same rows.
    pub fn summary_keys(&self, opts: &Options) -> serde_json::Value {
        keys(with_names(|names| {
            self.session.stats(names, &TERMS.map(|t| t.0), opts)
        }))
    }
}

/// `{"display": stats}`.
fn keys(stats: DisplayStats) -> serde_json::Value {
    let mut keys = serde_json::Map::new();
    // A struct of numbers, strings and maps: encoding cannot fail.
    keys.insert(
        SUMMARY_KEY.into(),
        serde_json::to_value(stats).unwrap_or(serde_json::Value::Null),
    );
    serde_json::Value::Object(keys)
}

/// The summary JSON's displayed-frame keys for a log of `durations_ns`
/// whose rows' answers are `answers` (the first `durations_ns.len()` of
/// them): `{"display": {…}}`, the block `analyze --display --json` prints
/// for the same log (both are [`DisplayStats`], docs/metrics.md
/// "Displayed frames"). Merge it into the summary's extra keys.
pub fn summary_keys(durations_ns: &[u64], answers: &Answers, opts: &Options) -> serde_json::Value {
    keys(DisplayStats::of(durations_ns, &answers.columns(), opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(s: Shown) -> String {
        let mut out = String::new();
        s.write_cells(1_000, 2_000, &mut out);
        out
    }

    #[test]
    fn cells_round_trip() {
        let at = Shown::At {
            source: Source::Wayland,
            displayed_ns: 18_668_667,
            refresh_ns: 16_666_667,
        };
        assert_eq!(cells(at), ",18667667,18.666667,16.666667,wayland");
        let drop = Shown::Dropped {
            source: Source::X11Present,
        };
        assert_eq!(cells(drop), ",,,,x11-present");
        assert_eq!(cells(Shown::Unknown), ",,,,");
        for s in [at, drop, Shown::Unknown] {
            let c = cells(s);
            let v: Vec<&str> = c[1..].split(',').collect();
            assert_eq!(Shown::parse([v[0], v[1], v[2], v[3]], 1_000), Some(s));
        }
        assert_eq!(Shown::parse(["5", "", "", ""], 0), None);
        assert_eq!(Shown::parse(["5", "", "", "carrier-pigeon"], 0), None);
    }

    /// A row's cells as written come back with their latency, exactly; a
    /// cell steadyhud does not write is named by its index.
    #[test]
    fn answers_read_the_cells_back() {
        let mut a = Answers::default();
        let mut written = Answers::default();
        let frames = [
            (
                Shown::At {
                    source: Source::Wayland,
                    displayed_ns: 1_500,
                    refresh_ns: 0,
                },
                2_000,
            ),
            (
                Shown::At {
                    source: Source::Wayland,
                    displayed_ns: 20_123_457,
                    refresh_ns: 16_666_667,
                },
                3_000,
            ),
            (
                Shown::Dropped {
                    source: Source::X11Present,
                },
                4_000,
            ),
            (Shown::Unknown, 5_000),
        ];
        for (s, present) in frames {
            let mut out = String::new();
            s.write_cells(1_000, present, &mut out);
            let v: Vec<&str> = out[1..].split(',').collect();
            a.push_cells([v[0], v[1], v[2], v[3]], 1_000).unwrap();
            written.push(s, present);
        }
        assert_eq!(a.columns(), written.columns());
        let c = a.columns();
        assert_eq!(c.values[0].ns[..2], [-500, 20_120_457]);
        assert_eq!(
            c.sources,
            Some([("wayland".into(), 2), ("x11-present".into(), 1)].into())
        );
        for (cells, bad) in [
            (["5", "1.0", "", "carrier-pigeon"], 3),
            (["5", "1.0", "16.6x", "wayland"], 2),
            (["5x", "1.0", "", "wayland"], 0),
            (["5", "", "", ""], 0),
            (["5", "1.0.0", "", "wayland"], 1),
        ] {
            assert_eq!(a.push_cells(cells, 0), Err(bad), "{cells:?}");
        }
        assert_eq!(a.len(), 4);
    }

    #[test]
    fn a_frame_shown_before_its_present_has_a_negative_latency() {
        let mut out = String::new();
        Shown::At {
            source: Source::Wayland,
            displayed_ns: 1_500,
            refresh_ns: 0,
        }
        .write_cells(1_000, 2_000, &mut out);
        assert_eq!(out, ",500,-0.000500,,wayland");
    }
}
