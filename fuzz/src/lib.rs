//! Shared checks of the fuzz targets: besides "never panics", every reader
//! result must honour the contract the rest of steadyhud relies on.

use steadyhud_config::{Config, Source, KEYS};
use steadyhud_formats::{self as formats, Filter, Format, ReadOptions};
use steadyhud_metrics::{self as metrics, Options};

/// Largest duration a reader may return (input rules of
/// docs/metrics.md#input-frames-and-their-durations, `value.rs`).
const MAX_NS: u64 = 1_000_000_000_000_000_000;

/// Reads `data` as a frame log (detected when `format` is `None`) and checks
/// the result: frames are 1 ns ..= 1e18 ns and at least one; errors display
/// without panicking. Successful logs also go through the metrics core.
pub fn check_log(data: &[u8], format: Option<Format>, filter: Filter) {
    let opts = ReadOptions { format, filter };
    match formats::read_bytes(data, &opts) {
        Ok(log) => {
            assert!(!log.durations_ns.is_empty(), "Ok with no frames");
            for (i, &d) in log.durations_ns.iter().enumerate() {
                assert!((1..=MAX_NS).contains(&d), "frame {i}: duration {d} ns out of range");
            }
            if let Some(f) = format {
                // CapFrameX and PresentMon share one reader; it may say either.
                let same = log.meta.format == f
                    || matches!((f, log.meta.format), (Format::PresentMon, Format::CapFrameX) | (Format::CapFrameX, Format::PresentMon));
                assert!(same, "forced {f:?}, reader said {:?}", log.meta.format);
            }
            let s = metrics::summarize(&log.durations_ns, &Options::default()).expect("non-empty log has a summary");
            assert_eq!(s.frames as usize, log.durations_ns.len());
        }
        Err(e) => {
            let shown = e.with_path("fuzz.csv").to_string();
            assert!(shown.starts_with("fuzz.csv"), "error display: {shown}");
        }
    }
}

/// Splits fuzz input at the first newline: the head becomes a PresentMon
/// filter (`process` or `process/swapchain`), the rest the log.
pub fn filter_and_log(data: &[u8]) -> (Filter, &[u8]) {
    let Some(nl) = data.iter().position(|&b| b == b'\n') else { return (Filter::default(), data) };
    let head = String::from_utf8_lossy(&data[..nl]);
    let mut parts = head.splitn(2, '/');
    let process = parts.next().filter(|s| !s.is_empty()).map(str::to_string);
    let swapchain = parts.next().filter(|s| !s.is_empty()).map(str::to_string);
    (Filter { process, swapchain }, &data[nl + 1..])
}

/// Parses config text both ways (file lines, `STEADYHUD_CONFIG` items) and
/// checks: every warning is one line, and the parsed values are a fixed
/// point (writing each key back as text and parsing it gives the same config).
pub fn check_config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for source in [Source::File("steadyhud.conf".into()), Source::Env] {
        let (cfg, warnings) = Config::parse(&text, &source);
        for w in &warnings {
            assert!(!w.contains('\n') && !w.contains('\r'), "warning spans lines: {w:?}");
        }
        let mut again = Config::default();
        for key in KEYS {
            if key == "log_dir" && cfg.log_dir.is_none() {
                continue;
            }
            let value = cfg.value_of(key);
            if let Err(e) = again.set(key, &value) {
                panic!("{key}={value:?} parsed from the input is rejected when written back: {e}");
            }
        }
        assert_eq!(cfg, again, "config is not a fixed point of value_of/set");
    }
}

/// Parses `data` as a control-socket request and as a reply line (what the
/// layer and `steadyhud ctl` read from each other) and checks: a request
/// read back from its own line is the same request, on one line; an error
/// message is one line.
pub fn check_control(data: &[u8]) {
    use steadyhud_control::protocol::{Reply, Request};
    let text = String::from_utf8_lossy(data);
    match Request::parse(&text) {
        Ok(r) => {
            let line = r.to_line();
            assert!(!line.contains('\n'), "request line spans lines: {line:?}");
            assert_eq!(Request::parse(&line).as_ref(), Ok(&r), "{line:?} does not read back");
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(!shown.contains('\n'), "error spans lines: {shown:?}");
        }
    }
    if let Ok(reply) = Reply::parse(&text) {
        let line = reply.to_string();
        assert!(!line.contains('\n'), "reply spans lines: {line:?}");
    }
}
