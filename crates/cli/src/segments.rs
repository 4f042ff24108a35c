//! `analyze --segments`: a session split at its marks (`steadyhud ctl mark
//! TEXT` writes `# mark: TEXT at frame N`), with every segment's metrics,
//! so one benchmark run can be read scene by scene.
//!
//! Each segment is analysed as a session of its own: its percentiles and
//! Steady FPS weigh only its own time, and the stutter rule's 19-frame
//! medians stop at its edges.

use serde::Serialize;
use steadyhud_formats::Mark;
use steadyhud_metrics::{self as metrics, Options, Summary};

/// Label of the part before the first mark.
pub const START_LABEL: &str = "(start)";

/// One part of a session.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// The mark's text, or [`START_LABEL`].
    pub label: String,
    pub first_frame: u64,
    pub frames: u64,
    /// `None` for a segment without frames (two marks at one frame, or a
    /// mark after the last frame).
    pub summary: Option<Summary>,
}

/// Splits `durations` at `marks` (frames past the end count as the end;
/// marks in frame order, ties in the order written). Without marks, one
/// segment: the whole session.
pub fn split(durations: &[u64], marks: &[Mark], opts: &Options) -> Vec<Segment> {
    let n = durations.len() as u64;
    let mut marks: Vec<&Mark> = marks.iter().collect();
    marks.sort_by_key(|m| m.frame); // stable: ties keep their order
    let mut starts: Vec<(String, u64)> = Vec::with_capacity(marks.len() + 1);
    if marks.first().is_none_or(|m| m.frame > 0) {
        starts.push((START_LABEL.to_string(), 0));
    }
    starts.extend(marks.iter().map(|m| (m.text.clone(), m.frame.min(n))));
    let ends: Vec<u64> = starts.iter().skip(1).map(|s| s.1).chain([n]).collect();
    starts
        .into_iter()
        .zip(ends)
        .map(|((label, first), end)| {
            let part = &durations[first as usize..end as usize];
            Segment {
                label,
                first_frame: first,
                frames: part.len() as u64,
                summary: metrics::summarize(part, opts),
            }
        })
        .collect()
}

/// A segment as a JSON object: `label`, `first_frame`, then the keys of
/// docs/metrics.md#the-json-keys (`frames` included; `stutter_frames`
/// counted from the segment's first frame); an empty segment has only
/// `frames` (0) after `first_frame`.
#[derive(Serialize)]
pub struct SegmentJson<'a> {
    label: &'a str,
    first_frame: u64,
    /// Only without a summary, which has its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    frames: Option<u64>,
    #[serde(flatten)]
    summary: Option<&'a Summary>,
}

/// The segments as JSON objects ([`SegmentJson`]).
pub fn json(segments: &[Segment]) -> Vec<SegmentJson<'_>> {
    segments
        .iter()
        .map(|s| SegmentJson {
            label: &s.label,
            first_frame: s.first_frame,
            frames: s.summary.is_none().then_some(s.frames),
            summary: s.summary.as_ref(),
        })
        .collect()
}

/// The text table `analyze --segments` appends.
pub fn table(segments: &[Segment]) -> String {
    let label_w = segments
        .iter()
        .map(|s| s.label.chars().count())
        .max()
        .unwrap_or(0)
        .max("Segment".len());
    let mut out = format!(
        "\nSegments (split at the log's `# mark:` lines)\n  {:<label_w$}  {:>11}  {:>8}  {:>10}  {:>9}  {:>6}  {:>13}  {:>7}  {:>8}  {:>8}\n",
        "Segment", "first frame", "frames", "duration", "avg FPS", "Steady", "Mostly Steady", "Typical", "P99 ms", "stutters"
    );
    for s in segments {
        let cols = match &s.summary {
            Some(m) => format!(
                "{:>10}  {:>9.2}  {:>6}  {:>13}  {:>7}  {:>8.2}  {:>8}",
                format!("{:.3} s", m.duration_s),
                m.average_fps,
                m.steady_fps,
                m.mostly_steady_fps,
                m.typical_fps,
                m.p99_ms,
                m.stutter_count
            ),
            None => format!("{:>10}", "no frames"),
        };
        out.push_str(&format!(
            "  {:<label_w$}  {:>11}  {:>8}  {}\n",
            s.label, s.first_frame, s.frames, cols
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(frame: u64, text: &str) -> Mark {
        Mark {
            frame,
            text: text.into(),
        }
    }

    #[test]
    fn marks_split_the_frames_and_each_part_is_its_own_session() {
        let mut d = vec![10_000_000u64; 100];
        d.extend(vec![20_000_000u64; 50]);
        let opts = Options::default();
        let s = split(&d, &[mark(100, "slow part")], &opts);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].label.as_str(), s[0].first_frame, s[0].frames),
            (START_LABEL, 0, 100)
        );
        assert_eq!(
            (s[1].label.as_str(), s[1].first_frame, s[1].frames),
            ("slow part", 100, 50)
        );
        assert_eq!(s[0].summary, metrics::summarize(&d[..100], &opts));
        assert_eq!(s[1].summary.as_ref().unwrap().steady_fps, 50);
        assert_eq!(s[0].summary.as_ref().unwrap().steady_fps, 100);
    }

    #[test]
    fn edge_marks_give_empty_or_no_start_segments() {
        let d = vec![10_000_000u64; 10];
        let opts = Options::default();
        let s = split(
            &d,
            &[mark(5, "b"), mark(0, "a"), mark(5, "c"), mark(99, "late")],
            &opts,
        );
        let got: Vec<(&str, u64, u64)> = s
            .iter()
            .map(|s| (s.label.as_str(), s.first_frame, s.frames))
            .collect();
        assert_eq!(
            got,
            vec![("a", 0, 5), ("b", 5, 0), ("c", 5, 5), ("late", 10, 0)]
        );
        assert!(s[1].summary.is_none() && s[3].summary.is_none());
        let whole = split(&d, &[], &opts);
        assert_eq!(whole.len(), 1);
        assert_eq!(whole[0].summary, metrics::summarize(&d, &opts));
        let j = serde_json::to_value(json(&s)).unwrap();
        assert_eq!(j[2]["label"], "c");
        assert_eq!(j[2]["average_fps"], 100.0);
        assert_eq!(j[2]["frames"], 5);
        assert!(j[1].get("average_fps").is_none());
        assert_eq!(j[1]["frames"], 0);
        let t = table(&s);
        assert!(t.contains("no frames"), "{t}");
    }
}
