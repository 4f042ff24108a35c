//! What each request's `ok` reply holds, as types the server (the capture
//! core) writes and the client (`steadyhud ctl`) reads: one declaration of
//! the socket's JSON, never keys spelled twice. [`ok`] turns one into a
//! reply line's [`Reply`]; [`Reply::read`] reads it back.

use super::protocol::Reply;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use steadyhud_metrics::catalog::{self, Metric, Value};
use steadyhud_metrics::display::ValueKey;
use steadyhud_metrics::latency::SUMMARY_KEYS;
use steadyhud_metrics::Summary;

/// `status`: the process, the HUD and frame cap in force, each window.
/// `frames`, `log` and `fps` repeat the first window's, for scripts that
/// watch a one-window game.
///
/// Read leniently, so a `steadyhud ctl` and a game's layer of another
/// version still talk: a key the reader does not know is ignored, a
/// missing one takes its default, and a window's metrics that do not read
/// (another version's set, or a value JSON cannot carry) read as none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Status {
    pub pid: u32,
    pub exe: String,
    /// `on` or `off`.
    pub hud: String,
    /// The HUD preset shown (`steadyhud_config::hud::PRESETS`).
    pub preset: u8,
    /// Frames per second; 0: no cap.
    pub fps_limit: u32,
    pub frames: u64,
    pub log: Option<String>,
    /// The first window's average FPS over its rolling window.
    pub fps: Option<f64>,
    pub windows: Vec<WindowStatus>,
}

/// One window (stream) of `status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowStatus {
    pub stream: u64,
    /// The session log's CSV, once open.
    pub log: Option<String>,
    /// Frames so far (presents − 1).
    pub frames: u64,
    pub window_s: f64,
    /// The rolling window's metrics, what the HUD shows (`None` before two
    /// presents or after live statistics stopped).
    #[serde(deserialize_with = "metrics_or_none")]
    pub metrics: Option<WindowMetrics>,
    pub gpu_busy_ms: Option<f32>,
    pub gpu_bound_pct: Option<f32>,
    /// The newest system readings by log column (`cpu_load_pct`, …; empty
    /// with `sensor_hz=0` or before the first sample).
    pub readings: std::collections::BTreeMap<String, f64>,
    /// What reached the screen over the rolling window (`None` without a
    /// source of display times for this window).
    pub display: Option<WindowDisplay>,
    /// PC latency and its terms over the rolling window (`None` without a
    /// reader of input times for this window).
    pub latency: Option<WindowLatency>,
}

/// PC latency over a window's rolling window, as `status` gives it
/// (docs/metrics.md, "PC latency", live): each term of the summary's
/// latency block ([`SUMMARY_KEYS`]) by the same key, in ms, `null` where
/// unknown (never 0). Serialized as one JSON object, key → value; read
/// leniently (keys it does not know ignored, missing ones unknown).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowLatency {
    /// Per term of [`SUMMARY_KEYS`], in its order: ms, `None` unknown.
    values: [Option<f64>; 5],
}

impl WindowLatency {
    /// The terms in the order of [`SUMMARY_KEYS`], ms (`None`: unknown).
    pub fn new(values: [Option<f64>; 5]) -> WindowLatency {
        WindowLatency { values }
    }

    /// The term `key` in ms, if known.
    pub fn get(&self, key: ValueKey) -> Option<f64> {
        let i = SUMMARY_KEYS.iter().position(|&k| k == key)?;
        self.values[i]
    }

    /// Every term with its value (`None`: unknown), in the summary's order.
    pub fn iter(&self) -> impl Iterator<Item = (ValueKey, Option<f64>)> + '_ {
        SUMMARY_KEYS
            .iter()
            .copied()
            .zip(self.values.iter().copied())
    }
}

impl Serialize for WindowLatency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.values.len()))?;
        for (k, v) in self.iter() {
            // A value JSON cannot carry is unknown too.
            map.serialize_entry(k.name(), &v.filter(|v| v.is_finite()))?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for WindowLatency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        Ok(WindowLatency {
            values: SUMMARY_KEYS.map(|k| map.get(k.name()).and_then(serde_json::Value::as_f64)),
        })
    }
}

/// Displayed-frame timing over a window's rolling window, as `status`
/// gives it: [`steadyhud_live::LiveDisplay`] (docs/metrics.md, "Live
/// displayed-frame timing").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowDisplay {
    /// Who answered (`wayland`, `x11-present`, …).
    pub source: String,
    /// Frames shown per second of the window's display time (`None`
    /// before two frames were shown).
    pub displayed_fps: Option<f32>,
    /// Frames the source said were never shown, in the window.
    pub dropped: u32,
    /// Frames in the window with no answer (neither shown nor dropped).
    pub unknown: u32,
    /// Mean present call → on screen of the window's shown frames, ms.
    pub latency_ms: Option<f32>,
    /// The newest refresh period the source gave, ms.
    pub refresh_ms: Option<f32>,
}

impl From<&steadyhud_live::LiveDisplay> for WindowDisplay {
    fn from(d: &steadyhud_live::LiveDisplay) -> WindowDisplay {
        let steadyhud_live::LiveDisplay {
            source,
            displayed_fps,
            dropped,
            unknown,
            latency_ms,
            refresh_ms,
        } = *d;
        WindowDisplay {
            source: source.to_string(),
            displayed_fps,
            dropped,
            unknown,
            latency_ms,
            refresh_ms,
        }
    }
}

/// A window's metrics as `status` gives them: every metric of the catalog
/// ([`catalog::METRICS`]) that the window's summary has, by its key, in
/// the catalog's order (so a new summary metric is here without code; the
/// list of stutter frames is not a metric: indices into the window mean
/// nothing outside the game). Serialized as one JSON object, key → value.
///
/// Read leniently: keys that are not catalog metrics are ignored, missing
/// ones (and `null`, a value JSON cannot carry) are none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowMetrics {
    /// (catalog key, value), in the catalog's order.
    values: Vec<(&'static str, Value)>,
}

impl WindowMetrics {
    /// The value of the metric `key`, if the window has it.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.values.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
    }

    /// [`WindowMetrics::get`] as a number (`true` is 1).
    pub fn number(&self, key: &str) -> Option<f64> {
        self.get(key).map(Value::number)
    }

    /// Every metric the window has with its value, in the catalog's order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static Metric, Value)> + '_ {
        self.values
            .iter()
            .filter_map(|&(k, v)| Some((catalog::metric(k)?, v)))
    }

    /// Whether no metric was read.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Sets the metric `key` (a catalog key; others are ignored), keeping
    /// the catalog's order.
    pub fn set(&mut self, key: &str, v: Value) {
        let Some(m) = catalog::metric(key) else {
            return;
        };
        match self.values.iter_mut().find(|(have, _)| *have == key) {
            Some(slot) => slot.1 = v,
            None => {
                self.values.push((m.key, v));
                let order = |k: &str| catalog::METRICS.iter().position(|c| c.key == k);
                self.values.sort_by_key(|&(k, _)| order(k));
            }
        }
    }
}

impl From<&Summary> for WindowMetrics {
    fn from(s: &Summary) -> Self {
        WindowMetrics {
            values: catalog::METRICS.iter().map(|m| (m.key, m.of(s))).collect(),
        }
    }
}

impl Serialize for WindowMetrics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.values.len()))?;
        for (k, v) in &self.values {
            map.serialize_entry(k, &v.json())?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for WindowMetrics {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let values = catalog::METRICS
            .iter()
            .filter_map(|m| Some((m.key, value_of(map.get(m.key)?)?)))
            .collect();
        Ok(WindowMetrics { values })
    }
}

/// A metric's value from JSON: a flag, a whole number or a float; `None`
/// for anything else (`null`, text, …).
fn value_of(v: &serde_json::Value) -> Option<Value> {
    match v {
        serde_json::Value::Bool(b) => Some(Value::Bool(*b)),
        serde_json::Value::Number(n) => n
            .as_u64()
            .map(Value::Int)
            .or_else(|| n.as_f64().map(Value::Float)),
        _ => None,
    }
}

/// A window's metrics, or none when no catalog metric reads (not an
/// object, or another version's set without a key this one knows).
fn metrics_or_none<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<WindowMetrics>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value::<WindowMetrics>(v)
        .ok()
        .filter(|m| !m.is_empty()))
}

/// `hud on|off|toggle`: the HUD now, `on` or `off`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HudReply {
    pub hud: String,
}

/// `histogram`: each window's totals since its first frame, for
/// `steadyhud export`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistogramReply {
    pub pid: u32,
    pub exe: String,
    pub windows: Vec<WindowHistogram>,
}

/// One window's totals since its first frame: frames, their time, the
/// stutters judged so far (a frame is judged once the 9 after it exist)
/// and their time, the frames the ring lost, and the time histogram in
/// the fleet scheme (`scheme`; `buckets`: non-empty `[bucket, frames,
/// time_ns]`, ascending). Every number only grows while the game runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowHistogram {
    pub stream: u64,
    pub frames: u64,
    pub time_ns: u64,
    pub stutters: u64,
    pub stutter_ns: u64,
    pub ring_overflows: u64,
    pub scheme: String,
    pub buckets: Vec<[u64; 3]>,
}

/// `preset N`: the preset now, and its name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PresetReply {
    pub preset: u8,
    pub name: String,
}

/// `limit N|off`: the cap now (0: none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LimitReply {
    pub fps_limit: u32,
}

/// `mark TEXT`: the text and where it went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarkReply {
    pub mark: String,
    pub logs: Vec<MarkedLog>,
}

/// One log a mark went into, and the first frame of the marked segment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarkedLog {
    pub log: String,
    pub frame: u64,
}

/// `help`: the request forms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HelpReply {
    pub requests: Vec<String>,
}

/// The `ok` reply holding `value`; an `err` naming what failed if it
/// cannot be written as JSON (never an empty `ok {}`).
pub fn ok<T: Serialize>(value: &T) -> Reply {
    match serde_json::to_value(value) {
        Ok(v) => Reply::Ok(v),
        Err(e) => Reply::Err(format!(
            "internal error: the reply could not be written: {e}"
        )),
    }
}

/// Why an `ok` reply is not the type asked for.
#[derive(Debug, thiserror::Error)]
#[error("unexpected reply {json}: {source}")]
pub struct ReplyTypeError {
    pub json: String,
    pub source: serde_json::Error,
}

impl Reply {
    /// The `ok` reply's JSON as `T` (`None` for an `err`).
    pub fn read<T: DeserializeOwned>(&self) -> Option<Result<T, ReplyTypeError>> {
        match self {
            Reply::Ok(v) => {
                Some(
                    serde_json::from_value(v.clone()).map_err(|source| ReplyTypeError {
                        json: v.to_string(),
                        source,
                    }),
                )
            }
            Reply::Err(_) => None,
        }
    }

    /// The reply as `T`; an `err` reply is an error too.
    pub fn expect<T: DeserializeOwned>(&self) -> Result<T, ReplyTypeError> {
        self.read().unwrap_or_else(|| {
            Err(ReplyTypeError {
                json: self.to_string(),
                source: serde::de::Error::custom("an err reply"),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_round_trips_through_a_reply_line() {
        let s = Status {
            pid: 42,
            exe: "vkcube".into(),
            hud: "on".into(),
            preset: 1,
            fps_limit: 60,
            frames: 10,
            log: Some("/tmp/a.csv".into()),
            fps: Some(59.9),
            windows: vec![WindowStatus {
                stream: 1,
                frames: 10,
                window_s: 10.0,
                ..Default::default()
            }],
        };
        let line = ok(&s).to_string();
        let back = Reply::parse(&line).unwrap();
        assert_eq!(back.read::<Status>().unwrap().unwrap(), s);
        assert!(Reply::Err("x".into()).read::<Status>().is_none());
        assert!(ok(&HudReply { hud: "on".into() })
            .read::<LimitReply>()
            .unwrap()
            .is_err());
    }

    /// A window's metrics are every catalog metric by its key, and read
    /// back the same; another version's set reads the keys this one knows
    /// (unknown ones ignored, missing ones none).
    #[test]
    fn window_metrics_are_the_catalog_by_key() {
        let summary =
            steadyhud_metrics::summarize(&[10_000_000, 30_000_000], &Default::default()).unwrap();
        let m = WindowMetrics::from(&summary);
        let v = serde_json::to_value(&m).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let want: Vec<&str> = catalog::METRICS.iter().map(|m| m.key).collect();
        assert_eq!(keys.len(), want.len());
        for k in &want {
            assert!(v.get(*k).is_some(), "{k} missing from {v}");
        }
        let back: WindowMetrics = serde_json::from_value(v).unwrap();
        assert_eq!(back, m);
        assert_eq!(m.number("time_over_budget_pct"), Some(75.0));
        assert_eq!(m.get("osc"), Some(Value::Bool(summary.osc)));
        let old: WindowMetrics = serde_json::from_str(
            r#"{"steady_fps":58,"future":1,"p99_ms":null,"average_fps":59.5}"#,
        )
        .unwrap();
        let read: Vec<&str> = old.iter().map(|(m, _)| m.key).collect();
        assert_eq!(read, ["average_fps", "steady_fps"]);
        assert_eq!(old.get("p99_ms"), None);
    }

    /// Another version's status still reads: unknown keys ignored, missing
    /// ones defaulted, metrics of which no key reads (a `null` where a NaN
    /// was) read as none.
    #[test]
    fn another_versions_status_reads() {
        let line = r#"ok {"pid":7,"exe":"g","hud":"off","future_key":1,"windows":[{"stream":2,"frames":5,"metrics":{"steady_fps":null}}]}"#;
        let s: Status = Reply::parse(line).unwrap().read().unwrap().unwrap();
        assert_eq!((s.pid, s.exe.as_str(), s.fps_limit), (7, "g", 0));
        assert_eq!(s.windows.len(), 1);
        assert_eq!((s.windows[0].stream, s.windows[0].frames), (2, 5));
        assert_eq!(s.windows[0].metrics, None);
    }

    /// A window's display numbers are the live ones, and go through a
    /// reply line; a window without a source has none, and an older
    /// layer's status (no `display` key) reads as none.
    #[test]
    fn display_numbers_round_trip_from_the_live_ones() {
        let live = steadyhud_live::LiveDisplay {
            source: "wayland",
            displayed_fps: Some(59.9),
            dropped: 3,
            unknown: 1,
            latency_ms: Some(24.1),
            refresh_ms: None,
        };
        let d = WindowDisplay::from(&live);
        assert_eq!(
            (d.source.as_str(), d.displayed_fps, d.dropped, d.unknown),
            ("wayland", Some(59.9), 3, 1)
        );
        assert_eq!((d.latency_ms, d.refresh_ms), (Some(24.1), None));
        let s = Status {
            windows: vec![WindowStatus {
                stream: 1,
                display: Some(d.clone()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let line = ok(&s).to_string();
        for key in [r#""source":"wayland""#, r#""dropped":3,"#, r#""unknown":1"#] {
            assert!(line.contains(key), "{key}: {line}");
        }
        let back: Status = Reply::parse(&line).unwrap().read().unwrap().unwrap();
        assert_eq!(back.windows[0].display, Some(d));
        let old = r#"ok {"windows":[{"stream":2}]}"#;
        let s: Status = Reply::parse(old).unwrap().read().unwrap().unwrap();
        assert_eq!(s.windows[0].display, None);
    }

    /// A window's latency is each term of the summary's latency block by
    /// the same key, unknown as `null` (never 0), and reads back the same;
    /// an older layer's status (no `latency`) reads as none, a term it
    /// lacks as unknown.
    #[test]
    fn latency_terms_go_by_the_summarys_keys_unknown_as_null() {
        let l = WindowLatency::new([None, None, Some(3.25), Some(1.5), None]);
        assert_eq!(l.get(ValueKey::InputToFrameStart), Some(3.25));
        assert_eq!(l.get(ValueKey::FrameStartToPresent), Some(1.5));
        assert_eq!(l.get(ValueKey::PcLatency), None);
        assert_eq!(l.get(ValueKey::AnimationError), None);
        let s = Status {
            windows: vec![WindowStatus {
                stream: 1,
                latency: Some(l.clone()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let line = ok(&s).to_string();
        let v = serde_json::to_value(&l).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 5, "{v}");
        for (k, want) in SUMMARY_KEYS
            .iter()
            .zip([None, None, Some(3.25), Some(1.5), None])
        {
            assert_eq!(v[k.name()].as_f64(), want, "{}: {v}", k.name());
            assert!(v.get(k.name()).is_some(), "{}: {v}", k.name());
        }
        assert!(line.contains(r#""pc_latency":null"#), "{line}");
        let back: Status = Reply::parse(&line).unwrap().read().unwrap().unwrap();
        assert_eq!(back.windows[0].latency, Some(l));
        let old = r#"ok {"windows":[{"stream":2,"latency":{"pc_latency":20.5,"future":1}}]}"#;
        let s: Status = Reply::parse(old).unwrap().read().unwrap().unwrap();
        let l = s.windows[0].latency.as_ref().unwrap();
        assert_eq!(l.get(ValueKey::PcLatency), Some(20.5));
        assert_eq!(l.get(ValueKey::PresentToDisplay), None);
        let s: Status = Reply::parse(r#"ok {"windows":[{"stream":2}]}"#)
            .unwrap()
            .read()
            .unwrap()
            .unwrap();
        assert_eq!(s.windows[0].latency, None);
        // A NaN is unknown, not a reply that cannot be written.
        let nan = WindowLatency::new([Some(f64::NAN), None, None, None, None]);
        let v = serde_json::to_value(&nan).unwrap();
        assert_eq!(v["pc_latency"], serde_json::Value::Null);
    }
}
