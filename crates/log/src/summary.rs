//! The session's `.summary.json`: what it holds and how it is written
//! whole ([`write_summary`]), where it is ([`summary_path_for`]).

use crate::error::LogError;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use steadyhud_metrics::{StkPoint, Summary, SummaryKeys};

/// Extra keys for the summary JSON (a JSON object; anything else is ignored).
pub type SessionExtra = serde_json::Value;

/// Layout of `<stem>.summary.json`: the keys of docs/metrics.md#the-json-keys
/// first, in order.
#[derive(serde::Serialize)]
struct SummaryFile<'a, F, K> {
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    summary: Option<SummaryKeys<'a, Frames<'a, F>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frames: Option<u64>,
    stk_curve: StkCurve<'a>,
    ring_overflows: serde_json::Value,
    ring_overflow_events: serde_json::Value,
    pub(crate) exe: serde_json::Value,
    api: serde_json::Value,
    pub(crate) start: serde_json::Value,
    start_unix_s: serde_json::Value,
    wall_s: serde_json::Value,
    log: serde_json::Value,
    tool: serde_json::Value,
    complete: bool,
    frames_so_far: usize,
    #[serde(flatten)]
    extra: Merged<'a, K>,
}

/// What a summary write takes from the caller's state as it writes the
/// file, instead of from values built before: the lists that grow with the
/// session (a running session's stutters, issue 52), serialized straight
/// into the file, so a write holds no copy of them.
pub struct Streamed<'a, F, K> {
    /// The summary's `stutter_frames` (the summary's own when `None`).
    pub stutter_frames: Option<&'a F>,
    /// Extra keys, written in their place among the others (in key order).
    pub keys: Vec<(&'a str, &'a K)>,
}

impl Streamed<'static, (), ()> {
    /// Nothing streamed: every key from the summary and the extra keys.
    pub fn none() -> Self {
        Streamed {
            stutter_frames: None,
            keys: Vec::new(),
        }
    }
}

/// The STK curve: the caller's value for the key, or the points, each
/// written as its `serde_json::Value` (the text a value of the whole curve
/// gives, without holding one: 2,000 points are ~1 MB as values).
enum StkCurve<'a> {
    Value(serde_json::Value),
    Points(&'a [StkPoint]),
}

impl serde::Serialize for StkCurve<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        match self {
            StkCurve::Value(v) => v.serialize(s),
            StkCurve::Points(points) => {
                let mut seq = s.serialize_seq(Some(points.len()))?;
                for p in *points {
                    seq.serialize_element(&serde_json::to_value(p).map_err(S::Error::custom)?)?;
                }
                seq.end()
            }
        }
    }
}

/// The summary's stutter frames: its own or streamed.
enum Frames<'a, F> {
    Own(&'a [usize]),
    Streamed(&'a F),
}

impl<F: serde::Serialize> serde::Serialize for Frames<'_, F> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Frames::Own(f) => f.serialize(s),
            Frames::Streamed(f) => f.serialize(s),
        }
    }
}

/// The extra keys and the streamed ones, in key order (the order of a
/// `serde_json::Map`, which keeps its keys sorted).
struct Merged<'a, K> {
    map: serde_json::Map<String, serde_json::Value>,
    streamed: Vec<(&'a str, &'a K)>,
}

impl<K: serde::Serialize> serde::Serialize for Merged<'_, K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut out = s.serialize_map(None)?;
        let mut streamed = self.streamed.iter().peekable();
        for (k, v) in &self.map {
            while let Some((sk, sv)) = streamed.next_if(|(sk, _)| *sk < k.as_str()) {
                out.serialize_entry(sk, sv)?;
            }
            out.serialize_entry(k, v)?;
        }
        for (sk, sv) in streamed {
            out.serialize_entry(sk, sv)?;
        }
        out.end()
    }
}

/// The session side of a summary write: where the files are and the
/// session keys (see [`crate::SessionLog::summary_target`]).
#[derive(Clone, Debug)]
pub struct SummaryTarget {
    pub(crate) csv_path: PathBuf,
    pub(crate) exe: String,
    pub(crate) api: crate::Api,
    pub(crate) start: SystemTime,
    pub(crate) start_local: String,
    pub(crate) lost: u64,
    pub(crate) overflow_events: u64,
}

impl SummaryTarget {
    /// The target of a log whose writer is gone, from what its header says
    /// ([`crate::recover`]): the program, the API, the start (local ISO
    /// 8601 and Unix seconds) and the timestamps its ring lost.
    pub fn reopened(
        csv_path: PathBuf,
        exe: String,
        api: crate::Api,
        (start_local, start_unix_s): (String, f64),
        (lost, overflow_events): (u64, u64),
    ) -> SummaryTarget {
        let start = UNIX_EPOCH + std::time::Duration::from_secs_f64(start_unix_s.max(0.0));
        SummaryTarget {
            csv_path,
            exe,
            api,
            start,
            start_local,
            lost,
            overflow_events,
        }
    }

    /// `<stem>.summary.json`.
    pub fn path(&self) -> PathBuf {
        summary_path_for(&self.csv_path)
    }
}

/// Whether a summary write is the session's last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Written while the session runs: `"complete": false`.
    Running,
    /// Written at the clean end: `"complete": true`.
    Complete,
}

/// Writes `<stem>.summary.json`: the summary keys (module doc) with
/// `complete` and `frames_so_far` (= `frames`) from `summary` and
/// `progress`. Whole or absent: written to `<stem>.summary.json.tmp`
/// (removed again if that fails) and renamed over the old summary, so a
/// reader sees the previous write or this one, never a mix. Returns the
/// summary's path.
pub fn write_summary(
    target: &SummaryTarget,
    summary: Option<&Summary>,
    stk: &[StkPoint],
    extra: SessionExtra,
    progress: Progress,
) -> Result<PathBuf, LogError> {
    write_summary_streamed(target, summary, stk, extra, &Streamed::none(), progress)
}

/// [`write_summary`] with the keys of `streamed` serialized straight into
/// the file (the same text as if they were in `summary` and `extra`); the
/// file itself is written as it is serialized, never held whole.
pub fn write_summary_streamed<F: serde::Serialize, K: serde::Serialize>(
    target: &SummaryTarget,
    summary: Option<&Summary>,
    stk: &[StkPoint],
    extra: SessionExtra,
    streamed: &Streamed<'_, F, K>,
    progress: Progress,
) -> Result<PathBuf, LogError> {
    let wall = SystemTime::now()
        .duration_since(target.start)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let path = target.path();
    let tmp = path.with_extension("json.tmp");
    // A full disk leaves an empty or partial temporary file: removed, not
    // a file anyone should find next to the log. A link planted under the
    // temporary name is replaced, never written through.
    let mut encoding = None;
    let written = steadyhud_sys::private_dir::replace_file_with(&path, &tmp, |f| {
        let mut out = std::io::BufWriter::new(f);
        match render(
            &mut out, target, summary, stk, extra, streamed, progress, wall,
        ) {
            Err(e) if !e.is_io() => {
                let io = std::io::Error::other(e.to_string());
                encoding = Some(e);
                Err(io)
            }
            r => r.map_err(std::io::Error::from),
        }?;
        std::io::Write::flush(&mut out)
    });
    match (written, encoding) {
        (Ok(()), _) => Ok(path),
        (Err(_), Some(source)) => Err(LogError::Serialize { path, source }),
        (Err(source), None) => Err(LogError::Write { path, source }),
    }
}

/// The summary file's text (what [`write_summary_streamed`] writes), the
/// session `wall` seconds long, into `out`.
#[allow(clippy::too_many_arguments)]
fn render<F: serde::Serialize, K: serde::Serialize>(
    out: &mut impl std::io::Write,
    target: &SummaryTarget,
    summary: Option<&Summary>,
    stk: &[StkPoint],
    extra: SessionExtra,
    streamed: &Streamed<'_, F, K>,
    progress: Progress,
    wall: f64,
) -> serde_json::Result<()> {
    let mut extra = match extra {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let unix = target
        .start
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let file_name = target
        .csv_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Summary keys win over extra keys of the same name, and so do the
    // progress keys (they describe this write); session keys take the
    // caller's value when it gives one. (The keys are read off the
    // summary without its stutter frames: a list that grows.)
    if let Some(Ok(serde_json::Value::Object(keys))) =
        summary.map(|s| serde_json::to_value(s.keys_with(())))
    {
        for k in keys.keys() {
            extra.remove(k);
        }
    }
    extra.remove("complete");
    extra.remove("frames_so_far");
    let mut keys = streamed.keys.clone();
    keys.sort_by_key(|(k, _)| *k);
    for (k, _) in &keys {
        extra.remove(*k);
    }
    let stk_curve = match extra.remove("stk_curve") {
        Some(v) => StkCurve::Value(v),
        None => StkCurve::Points(stk),
    };
    let mut take = |k: &str, v: serde_json::Value| extra.remove(k).unwrap_or(v);
    let file = SummaryFile {
        summary: summary.map(|s| {
            s.keys_with(match streamed.stutter_frames {
                Some(f) => Frames::Streamed(f),
                None => Frames::Own(&s.stutter_frames),
            })
        }),
        frames: summary.is_none().then_some(0),
        stk_curve,
        ring_overflows: take("ring_overflows", target.lost.into()),
        ring_overflow_events: take("ring_overflow_events", target.overflow_events.into()),
        exe: take("exe", target.exe.clone().into()),
        api: take("api", target.api.name().into()),
        start: take("start", target.start_local.clone().into()),
        start_unix_s: take("start_unix_s", unix.into()),
        wall_s: take("wall_s", wall.into()),
        log: take("log", file_name.into()),
        tool: take(
            "tool",
            format!("steadyhud {}", env!("CARGO_PKG_VERSION")).into(),
        ),
        complete: progress == Progress::Complete,
        frames_so_far: summary.map_or(0, |s| s.frames),
        extra: Merged {
            map: extra,
            streamed: keys,
        },
    };
    serde_json::to_writer_pretty(&mut *out, &file)?;
    out.write_all(b"\n").map_err(serde_json::Error::io)
}

/// `<stem>.summary.json` beside a session CSV.
pub fn summary_path_for(csv: &Path) -> PathBuf {
    let stem = csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    csv.with_file_name(format!("{stem}.summary.json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Keys streamed from the caller's lists write the same text as the
    /// same keys built as values: `stutter_frames` in the summary's place,
    /// the others in key order among the extra keys.
    #[test]
    fn streamed_keys_write_the_text_their_values_write() {
        let target = SummaryTarget::reopened(
            PathBuf::from("/nowhere/game.csv"),
            "game".into(),
            crate::Api::default(),
            ("2026-01-01T00:00:00".into(), 1.0),
            (0, 0),
        );
        let d: Vec<u64> = (0..200)
            .map(|i| if i % 20 == 10 { 50_000_000 } else { 10_000_000 })
            .collect();
        let full = steadyhud_metrics::summarize(&d, &Default::default()).unwrap();
        assert!(full.stutter_frames.len() > 5);
        let own = Summary {
            stutter_frames: Vec::new(),
            ..full.clone()
        };
        let causes = serde_json::json!([{"frame": 10, "excess_ms": 40.0}, {"frame": 30}]);
        let texts = serde_json::json!(["frame 10", "frame 30"]);
        let extra = serde_json::json!({"a": 1, "stutter_threshold": 0.2, "zz": [1, 2]});
        let mut with_values = extra.clone();
        with_values["stutter_causes"] = causes.clone();
        with_values["stutter_causes_text"] = texts.clone();
        fn text<F: serde::Serialize, K: serde::Serialize>(
            target: &SummaryTarget,
            summary: &Summary,
            extra: serde_json::Value,
            streamed: &Streamed<'_, F, K>,
        ) -> String {
            let mut out = Vec::new();
            let running = Progress::Running;
            let stk = steadyhud_metrics::stk_curve(&[10_000_000, 50_000_000], 3);
            render(
                &mut out,
                target,
                Some(summary),
                &stk,
                extra,
                streamed,
                running,
                2.5,
            )
            .unwrap();
            String::from_utf8(out).unwrap()
        }
        let want = text(&target, &full, with_values, &Streamed::none());
        let got = text(
            &target,
            &own,
            extra,
            &Streamed {
                stutter_frames: Some(&full.stutter_frames),
                keys: vec![("stutter_causes_text", &texts), ("stutter_causes", &causes)],
            },
        );
        assert_eq!(got, want);
        assert!(want.contains("\"stutter_causes\": ["), "{want}");
        // The curve's points as values of them write (keys in order).
        let stk = steadyhud_metrics::stk_curve(&[10_000_000, 50_000_000], 3);
        let curve = serde_json::to_string_pretty(&serde_json::json!({ "stk_curve": stk })).unwrap();
        let curve = curve.trim_start_matches("{\n").trim_end_matches("\n}");
        assert!(want.contains(curve), "{want}");
    }

    /// Someone who can write the log folder plants a link under the
    /// temporary name: the summary is written, the link's target is not.
    #[test]
    fn a_symlinked_temporary_summary_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let csv = dir.path().join("game.csv");
        let target = SummaryTarget::reopened(
            csv.clone(),
            "game".into(),
            crate::Api::default(),
            (String::new(), 0.0),
            (0, 0),
        );
        let tmp = target.path().with_extension("json.tmp");
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        let path =
            write_summary(&target, None, &[], serde_json::json!({}), Progress::Running).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert!(fs::read_to_string(path)
            .unwrap()
            .contains("\"complete\": false"));
        assert!(fs::symlink_metadata(&tmp).is_err());
    }
}
