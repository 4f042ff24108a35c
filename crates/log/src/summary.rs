//! The session's `.summary.json`: what it holds and how it is written
//! whole ([`write_summary`]), where it is ([`summary_path_for`]).

use crate::error::LogError;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use steadyhud_metrics::{StkPoint, Summary};

/// Extra keys for the summary JSON (a JSON object; anything else is ignored).
pub type SessionExtra = serde_json::Value;

/// Layout of `<stem>.summary.json`: the keys of docs/metrics.md#the-json-keys
/// first, in order.
#[derive(serde::Serialize)]
struct SummaryFile<'a> {
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    summary: Option<&'a Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frames: Option<u64>,
    stk_curve: serde_json::Value,
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
    extra: serde_json::Map<String, serde_json::Value>,
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
    let mut extra = match extra {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let unix = target
        .start
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let wall = SystemTime::now()
        .duration_since(target.start)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let file_name = target
        .csv_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Summary keys win over extra keys of the same name, and so do the
    // progress keys (they describe this write); session keys take the
    // caller's value when it gives one.
    if let Some(Ok(serde_json::Value::Object(keys))) = summary.map(serde_json::to_value) {
        for k in keys.keys() {
            extra.remove(k);
        }
    }
    extra.remove("complete");
    extra.remove("frames_so_far");
    let path = target.path();
    let serr = |source| LogError::Serialize {
        path: path.clone(),
        source,
    };
    let stk_curve = serde_json::to_value(stk).map_err(serr)?;
    let mut take = |k: &str, v: serde_json::Value| extra.remove(k).unwrap_or(v);
    let out = SummaryFile {
        summary,
        frames: summary.is_none().then_some(0),
        stk_curve: take("stk_curve", stk_curve),
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
        extra,
    };
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(&out).map_err(serr)?;
    let werr = |source| LogError::Write {
        path: path.clone(),
        source,
    };
    // A full disk leaves an empty or partial temporary file: removed, not
    // a file anyone should find next to the log. A link planted under the
    // temporary name is replaced, never written through.
    steadyhud_sys::private_dir::replace_file(&path, &tmp, (text + "\n").as_bytes())
        .map_err(werr)?;
    Ok(path)
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
