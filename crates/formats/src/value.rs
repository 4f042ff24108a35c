//! One frame-time field → integer nanoseconds, with the input rules of
//! docs/metrics.md#input-frames-and-their-durations: a value ≤ 0, NaN or
//! infinite is an error naming its row.

use super::error::{At, ErrorKind, Pos};
use steadyhud_metrics::gpu::NO_DATA;

/// Unit of a frame-time column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Ms,
    Us,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::Us => "µs",
        }
    }
    fn ns(self) -> f64 {
        match self {
            Unit::Ms => 1e6,
            Unit::Us => 1e3,
        }
    }
}

/// Largest duration accepted (1e18 ns ≈ 31 years): keeps every later sum and
/// conversion far from overflow.
pub const MAX_NS: f64 = 1e18;

/// Parses a number (surrounding spaces allowed); `None` if it is not one.
pub fn number(field: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(field).ok()?.trim();
    // Rust's parser also takes "inf", "NaN", "infinity": those are numbers
    // here too, so they get the clearer "not finite" message.
    s.parse::<f64>().ok()
}

/// Converts a frame time in `unit` to ns, rounded to the nearest ns.
pub fn to_ns(v: f64, unit: Unit, column: &str, field: &[u8], pos: Pos) -> Result<u64, At> {
    let shown = || String::from_utf8_lossy(field).trim().to_string();
    if v.is_nan() || v.is_infinite() {
        return Err(At::new(
            pos,
            ErrorKind::NotFinite {
                column: column.to_string(),
                found: shown(),
            },
        ));
    }
    if v <= 0.0 {
        return Err(At::new(
            pos,
            ErrorKind::NotPositive {
                column: column.to_string(),
                found: shown(),
            },
        ));
    }
    let ns = (v * unit.ns()).round();
    if !(1.0..=MAX_NS).contains(&ns) {
        return Err(At::new(
            pos,
            ErrorKind::OutOfRange {
                column: column.to_string(),
                unit: unit.name(),
                found: shown(),
            },
        ));
    }
    Ok(ns as u64)
}

/// Parses a frame-time field in `unit` to ns.
pub fn parse_ns(field: &[u8], unit: Unit, column: &str, pos: Pos) -> Result<u64, At> {
    match number(field) {
        Some(v) => to_ns(v, unit, column, field, pos),
        None => Err(At::new(
            pos,
            ErrorKind::NotNumber {
                column: column.to_string(),
                unit: unit.name(),
                found: String::from_utf8_lossy(field)
                    .trim()
                    .chars()
                    .take(40)
                    .collect(),
            },
        )),
    }
}

/// Parses a per-frame GPU time field in ms (`MsGPUBusy`, `gpu_busy_ms`…)
/// to ns. `NA` (PresentMon's "not available") and an empty field mean the
/// frame has no GPU data ([`NO_DATA`]); 0 is a valid time (an idle GPU),
/// unlike a frame time. Anything else that is not a finite number ≥ 0 in
/// range is an error naming the column.
pub fn parse_gpu_ms(field: &[u8], column: &str, pos: Pos) -> Result<u64, At> {
    let text = String::from_utf8_lossy(field);
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("NA") {
        return Ok(NO_DATA);
    }
    let ns = t.parse::<f64>().ok().map(|v| (v * 1e6).round());
    match ns {
        Some(ns) if (0.0..=MAX_NS).contains(&ns) => Ok(ns as u64),
        _ => Err(At::new(
            pos,
            ErrorKind::BadGpuTime {
                column: column.to_string(),
                found: t.chars().take(40).collect(),
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(s: &str) -> Result<u64, ErrorKind> {
        parse_ns(s.as_bytes(), Unit::Ms, "x", Pos::new(1, 1)).map_err(|e| e.kind)
    }

    #[test]
    fn ms_round_to_nearest_ns() {
        assert_eq!(ns("16.666667").unwrap(), 16_666_667);
        assert_eq!(ns(" 100.06489999999999 ").unwrap(), 100_064_900);
        assert!(ns("0.0000004")
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        assert_eq!(ns("1e-6").unwrap(), 1);
        assert_eq!(
            parse_ns(b"2373", Unit::Us, "f", Pos::new(1, 1)).unwrap(),
            2_373_000
        );
    }

    #[test]
    fn bad_values_say_why() {
        assert!(matches!(ns("0"), Err(ErrorKind::NotPositive { .. })));
        assert!(matches!(ns("-3.5"), Err(ErrorKind::NotPositive { .. })));
        assert!(matches!(ns("NaN"), Err(ErrorKind::NotFinite { .. })));
        assert!(matches!(ns("inf"), Err(ErrorKind::NotFinite { .. })));
        assert!(matches!(ns("abc"), Err(ErrorKind::NotNumber { .. })));
        assert!(matches!(ns(""), Err(ErrorKind::NotNumber { .. })));
        assert!(matches!(ns("1e300"), Err(ErrorKind::OutOfRange { .. })));
    }

    #[test]
    fn gpu_times_allow_zero_and_na() {
        let gpu = |s: &str| parse_gpu_ms(s.as_bytes(), "MsGPUBusy", Pos::new(3, 7));
        assert_eq!(gpu("1.0752").unwrap(), 1_075_200);
        assert_eq!(gpu(" 0.000000 ").unwrap(), 0);
        assert_eq!(gpu("NA").unwrap(), NO_DATA);
        assert_eq!(gpu("").unwrap(), NO_DATA);
        for bad in ["-0.5", "x", "nan", "inf", "1e300"] {
            let e = gpu(bad).unwrap_err();
            assert_eq!(e.pos, Some(Pos::new(3, 7)));
            assert!(
                matches!(&e.kind, ErrorKind::BadGpuTime { column, .. } if column == "MsGPUBusy"),
                "{bad}: {:?}",
                e.kind
            );
        }
    }
}
