//! MangoHud CSV: system-info lines (`os,cpu,gpu,…` and their values), then
//! a header starting `fps,frametime,…`, then one row per log sample.
//!
//! `frametime` is in µs in old MangoHud (0.6.x) and in ms in newer ones.
//! The unit is decided from the `fps` column: frametime × fps is about 10⁶
//! for µs and 10³ for ms (median over the first 256 rows, split at √10⁹).
//! With no `fps` column, a median frame time above 1000 means µs. The unit
//! is decided in a first pass over those rows; the second pass streams all
//! rows in it.
//!
//! Sensor columns (`cpu_load`, `gpu_power`, `ram_used`, …) go to
//! [`Meta::sensors`] through [`SensorMap::mangohud`] (units there).

use super::csvbody::{split_header, Body, Flow};
use super::error::{At, ErrorKind, Pos};
use super::frame_log::{Format, FrameLog, Meta};
use super::sensors::SensorMap;
use super::text::{clip, Lines};
use super::value::{number, parse_ns, Unit};
use std::io::{BufRead, Seek};

/// Rows looked at before the unit is decided.
const SAMPLE_ROWS: usize = 256;
/// Lines searched for the `fps,frametime` header.
const MAX_PRELUDE: u64 = 10;

pub fn read<R: BufRead + Seek>(r: R) -> Result<FrameLog, At> {
    let mut lines = Lines::new(r);
    let mut info: Vec<String> = Vec::new();
    let (header_line, header) = loop {
        let Some(line) = lines.next_line()? else {
            return Err(if info.is_empty() {
                At::new(Pos::new(1, 1), ErrorKind::Empty)
            } else {
                At::nowhere(ErrorKind::NoHeader {
                    what: "MangoHud",
                    expected: "fps,frametime,…".into(),
                })
            });
        };
        let names = split_header(line.text);
        if names.iter().any(|n| n.eq_ignore_ascii_case("frametime")) {
            break (line.no, names);
        }
        if line.no >= MAX_PRELUDE {
            return Err(At::new(
                Pos::new(line.no, 1),
                ErrorKind::NoHeader {
                    what: "MangoHud",
                    expected: "a header with frametime within the first 10 lines".into(),
                },
            ));
        }
        info.push(line.text.to_string());
    };
    let find = |n: &str| header.iter().position(|h| h.eq_ignore_ascii_case(n));
    let ft_i = find("frametime").unwrap_or(0);
    let column = header[ft_i].clone();
    let fps_i = find("fps");
    let elapsed_i = find("elapsed");
    let needed = ft_i + 1;

    let mut body = Body::after(lines);

    // Pass 1: the unit, from the first rows' frametime × fps (bad rows are
    // skipped here; pass 2 reports them).
    let mut ratios: Vec<f64> = Vec::new();
    let mut values: Vec<f64> = Vec::new();
    body.for_each_row(needed, &column, |rec, _| {
        let Some(v) = number(&rec[ft_i]).filter(|v| v.is_finite() && *v > 0.0) else {
            return Ok(Flow::Continue);
        };
        values.push(v);
        if let Some(fps) = fps_i.and_then(|i| rec.get(i)).and_then(number) {
            if fps.is_finite() && fps > 0.0 {
                ratios.push(v * fps);
            }
        }
        Ok(if values.len() >= SAMPLE_ROWS {
            Flow::Stop
        } else {
            Flow::Continue
        })
    })
    .or_else(|e| {
        if matches!(e.kind, ErrorKind::Io(_)) {
            Err(e)
        } else {
            Ok(())
        }
    })?;
    let (unit, decided_by_fps) = decide(&ratios, &values);

    // Pass 2: every row, in that unit.
    body.rewind()?;
    let mut durations: Vec<u64> = Vec::new();
    let mut elapsed: (Option<f64>, Option<f64>) = (None, None);
    let sensor_map = SensorMap::mangohud(&header);
    let mut sensor_rows = sensor_map.as_ref().map(SensorMap::rows);
    body.for_each_row(needed, &column, |rec, line| {
        let field = &rec[ft_i];
        let ns = parse_ns(field, unit, &column, Pos::new(line, 0)).map_err(|e| (ft_i, e.kind))?;
        durations.push(ns);
        if let (Some(m), Some(rows)) = (&sensor_map, sensor_rows.as_mut()) {
            m.push(rows, |k| rec.get(k));
        }
        if let Some(e) = elapsed_i.and_then(|i| rec.get(i)).and_then(number) {
            elapsed.0.get_or_insert(e);
            elapsed.1 = Some(e);
        }
        Ok(Flow::Continue)
    })?;
    if durations.is_empty() {
        return Err(At::new(
            Pos::new(header_line, 1),
            ErrorKind::NoFrames { what: "MangoHud" },
        ));
    }
    let detail = match unit {
        Unit::Us => "MangoHud CSV (frametime in µs, MangoHud ≤ 0.6)",
        Unit::Ms => "MangoHud CSV (frametime in ms)",
    };
    let mut meta = Meta::new(Format::MangoHud, detail, &column);
    meta.notes.push(if decided_by_fps {
        format!("frametime unit {} (frametime × fps agrees)", unit.name())
    } else {
        format!(
            "frametime unit {} guessed from magnitude (no usable fps column)",
            unit.name()
        )
    });
    if let (Some(m), Some(rows)) = (&sensor_map, sensor_rows) {
        meta.sensors = m.finish(rows, &mut meta.notes);
    }
    if let Some(values) = info.get(1) {
        meta.notes.push(format!("system: {}", clip(values, 120)));
    }
    // 0.6.x logs one row per log interval, not per frame: say so when the
    // rows are much further apart than their frame times.
    if let (Some(a), Some(b)) = elapsed {
        let n = durations.len() as f64;
        let mean_frame_ns = durations.iter().map(|&d| d as f64).sum::<f64>() / n;
        if n > 1.0 && b > a {
            let mean_step = (b - a) / (n - 1.0);
            let median_ns = median(durations.iter().map(|&d| d as f64).collect());
            if mean_step > 3.0 * median_ns {
                meta.notes.push(format!(
                    "rows are log samples ~{:.0} ms apart (elapsed column), not every frame; metrics treat each row as a frame (mean frame time {:.3} ms)",
                    mean_step / 1e6,
                    mean_frame_ns / 1e6
                ));
            }
        }
    }
    Ok(FrameLog {
        durations_ns: durations,
        meta,
    })
}

/// (unit, decided from fps?) from frametime × fps ratios, else magnitudes.
fn decide(ratios: &[f64], values: &[f64]) -> (Unit, bool) {
    if !ratios.is_empty() {
        let m = median(ratios.to_vec());
        return (if m > 31_622.8 { Unit::Us } else { Unit::Ms }, true);
    }
    let m = median(values.to_vec());
    (if m > 1000.0 { Unit::Us } else { Unit::Ms }, false)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn parse(s: &str) -> Result<FrameLog, At> {
        read(Cursor::new(s.as_bytes().to_vec()))
    }

    const INFO: &str = "os,cpu,gpu,ram,kernel,driver,cpuscheduler\nLinux,CPU,,1,k,d,\n";

    #[test]
    fn microseconds_and_milliseconds_told_apart_by_fps() {
        let old = parse(&format!(
            "{INFO}fps,frametime,elapsed\n421.4,2373,1\n60,16667,2\n"
        ))
        .unwrap();
        assert_eq!(old.durations_ns, vec![2_373_000, 16_667_000]);
        assert!(old.meta.detail.contains("µs"));
        let new = parse(&format!(
            "{INFO}fps,frametime,elapsed\n421.4,2.373,1\n60,16.667,2\n"
        ))
        .unwrap();
        assert_eq!(new.durations_ns, vec![2_373_000, 16_667_000]);
        assert!(new.meta.detail.contains("in ms"));
        // No fps column: magnitude.
        let guess = parse("fps_avg,frametime\n1,16667\n").unwrap();
        assert_eq!(guess.durations_ns, vec![16_667_000]);
    }

    #[test]
    fn errors_are_located() {
        let e = parse(&format!("{INFO}fps,frametime\n60,16.6\n60,-1\n"))
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(5, 4)));
        assert!(matches!(e.kind, ErrorKind::NotPositive { .. }));
        let e = parse(&format!("{INFO}fps,frametime\n60,abc\n"))
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(4, 4)));
        let e = parse(&format!("{INFO}fps,frametime\n60\n")).err().unwrap();
        assert!(matches!(e.kind, ErrorKind::Truncated { found: 1, .. }));
        let e = parse(&format!("{INFO}fps,frametime\n")).err().unwrap();
        assert!(matches!(e.kind, ErrorKind::NoFrames { .. }));
    }

    #[test]
    fn many_rows_stream_after_the_sample() {
        let mut s = format!("{INFO}fps,frametime\n");
        for _ in 0..1000 {
            s.push_str("100,10000\n");
        }
        let log = parse(&s).unwrap();
        assert_eq!(log.durations_ns.len(), 1000);
        assert!(log.durations_ns.iter().all(|&d| d == 10_000_000));
    }
}
