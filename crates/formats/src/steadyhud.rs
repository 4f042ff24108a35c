//! steadyhud's own session log (layout in [`steadyhud_log`]): `#`
//! comment lines anywhere, a CSV header naming `frametime_ms`, one row per
//! frame. A last line without `\n` was cut off by a killed writer and is
//! ignored with a note; a malformed line anywhere else is an error.
//!
//! Columns other than `frame`, `present_ns`, `frametime_ms` and the derived
//! `cpu_busy_ms` are statistics counters (logs written with counters on):
//! they are read into [`Meta::counters`] (`*_ms` as ns, others as integers)
//! so `analyze` can say what spiked with each stutter. Logs without them
//! (older logs, `counters=0`) read exactly as before.
//!
//! `gpu_busy_ms` / `gpu_wait_ms` (logs written with GPU timing) are not
//! counters: they go to [`Meta::gpu`] for the GPU-bound verdict, and frame
//! health gets the busy time from there under its own label. They are never
//! folded into `cpu_busy_ms`, which the layer derives from CPU timestamps
//! alone (`frametime_ms − in_present_ms − limiter_wait_ms`). An empty or `NA` field is a frame
//! without GPU data.
//!
//! System-reading columns (`gpu_power_w`, `cpu_load_pct`, `gpu_throttle`
//! …, [`steadyhud_metrics::sensors`]) are not counters either: they go to
//! [`Meta::sensors`] through [`SensorMap::steadyhud`]; an empty cell is no
//! reading.
//!
//! The display columns (`displayed_ns`, `display_latency_ms`,
//! `refresh_ms`, `display_source`, [`steadyhud_log::display`]; logs of
//! windows that had a source of display times) go to [`Meta::display`],
//! built as the layer builds its summary's
//! ([`steadyhud_log::display::Answers`]), so `analyze --display`, `compare`
//! and `report` measure our logs by the captures' definitions. A log with
//! only some of the four reads without them. PC latency's columns
//! (`pc_latency_ms`, `click_to_photon_ms`, `frame_start_to_present_ms`,
//! [`steadyhud_log::columns::LATENCY`]) join them as the display block's
//! latency values, as a PresentMon capture's `MsPCLatency` … do.
//!
//! A log that does not end with the `# end: complete` line the layer writes
//! at a clean exit gets the note "session did not end cleanly (last flush
//! at …)": the game was killed, crashed, left through `_exit`, or is still
//! running, and the rows stop at the layer's last flush.

use super::error::{At, ErrorKind, Pos};
use super::frame_log::{Format, FrameLog, Mark, Meta};
use super::sensors::{SensorMap, SensorRows};
use super::text::{char_col, clip, field_col, Line, Lines};
use super::value::{parse_gpu_ms, parse_ns, Unit as TimeUnit};
use std::io::BufRead;
use steadyhud_counters::{label_of_column, unit_of_column, CounterColumns, CounterInfo, Unit};
use steadyhud_log::display::Answers;
use steadyhud_log::{
    columns, parse_target_fps, COUNTER_OVERFLOW_PREFIX, END_LINE, EXE_PREFIX, MARK_PREFIX,
    ORIGIN_PREFIX, OVERFLOW_PREFIX, TARGET_FPS_PREFIX,
};
use steadyhud_metrics::gpu::{self, GpuColumns};
use steadyhud_metrics::sensors::is_sensor_column;

const COLUMN: &str = "frametime_ms";

/// Whether a column of a session log holds a counter: a declared counter
/// column, or one no steadyhud declares today (counters come and go with
/// devices and versions); never a frame, derived, GPU or reading column
/// ([`steadyhud_log::columns`]).
fn is_counter(name: &str) -> bool {
    !name.is_empty() && matches!(columns::kind_of(name), None | Some(columns::Kind::Counter))
}

/// A counter value: `*_ms` columns as decimal ms (→ ns), others as integers.
fn parse_counter(field: &str, unit: Unit) -> Option<u64> {
    let f = field.trim();
    match unit {
        Unit::Nanos => {
            let (int, frac) = f.split_once('.').unwrap_or((f, ""));
            if int.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let ms: u64 = int.parse().ok()?;
            let frac_ns: u64 = if frac.is_empty() {
                0
            } else {
                frac.parse::<u64>().ok()? * 10u64.pow(6 + 3 - frac.len() as u32) / 1000
            };
            ms.checked_mul(1_000_000)?.checked_add(frac_ns)
        }
        _ => f.parse().ok(),
    }
}

pub fn read<R: BufRead>(r: R) -> Result<FrameLog, At> {
    let mut lines = Lines::new(r);
    let mut log = Reading::new();
    let mut header: Option<Header> = None;
    let mut last_line = 0;
    while let Some(line) = lines.next_line()? {
        last_line = line.no;
        if line.text.trim().is_empty() {
            continue;
        }
        log.ended = false;
        if line.text.starts_with('#') {
            log.comment(&line);
            continue;
        }
        let Some(h) = &header else {
            let h = Header::parse(&line, &mut log.counters)?;
            if let Some(m) = &h.sensor_map {
                log.sensor_rows = m.rows();
            }
            header = Some(h);
            continue;
        };
        if log.cut(h, &line)? {
            break;
        }
        log.row(h, &line)?;
    }
    log.finish(header, last_line)
}

/// The columns of a log, from its header line.
struct Header {
    /// Number of fields.
    nfields: usize,
    /// Field index of `frametime_ms`.
    col: usize,
    /// Field index of gpu_busy_ms / gpu_wait_ms.
    busy_i: Option<usize>,
    wait_i: Option<usize>,
    sensor_map: Option<SensorMap>,
    /// Field index of each display column (all four or none).
    display_i: Option<[usize; 4]>,
    /// Field index of PC latency's terms ([`steadyhud_log::display::TERMS`];
    /// all three or none), read with the display columns.
    terms_i: Option<[usize; 3]>,
    /// Field index of each counter column (declared in `counters`).
    counter_cols: Vec<usize>,
}

impl Header {
    /// The header `line`, whose counter columns are declared in `counters`
    /// (no values yet); an error without a `frametime_ms` column.
    fn parse(line: &Line<'_>, counters: &mut CounterColumns) -> Result<Header, At> {
        let names: Vec<&str> = line.text.split(',').map(str::trim).collect();
        let Some(col) = names.iter().position(|n| *n == COLUMN) else {
            return Err(At::new(
                Pos::new(line.no, 1),
                ErrorKind::NoColumn {
                    expected: format!("{COLUMN} (header {})", columns::frame_header()),
                    found: clip(line.text, 80),
                },
            ));
        };
        let at = columns::DISPLAY.map(|c| names.iter().position(|n| *n == c.name));
        let display_i = match at {
            [Some(a), Some(b), Some(c), Some(d)] => Some([a, b, c, d]),
            _ => None,
        };
        let terms_i =
            match steadyhud_log::display::TERMS.map(|(c, _)| names.iter().position(|n| *n == c)) {
                [Some(a), Some(b), Some(c)] if display_i.is_some() => Some([a, b, c]),
                _ => None,
            };
        let mut counter_cols = Vec::new();
        for (k, name) in names.iter().enumerate() {
            if is_counter(name) && !is_sensor_column(name) {
                counter_cols.push(k);
                let unit = unit_of_column(name);
                counters.infos.push(CounterInfo {
                    name: name.to_string(),
                    label: label_of_column(name),
                    unit,
                });
                counters.values.push(Vec::new());
            }
        }
        Ok(Header {
            nfields: names.len(),
            col,
            busy_i: names.iter().position(|n| *n == gpu::BUSY_COLUMN),
            wait_i: names.iter().position(|n| *n == gpu::WAIT_COLUMN),
            sensor_map: SensorMap::steadyhud(&names),
            display_i,
            terms_i,
            counter_cols,
        })
    }
}

/// What the rows and comments read so far give.
struct Reading {
    durations: Vec<u64>,
    meta: Meta,
    counters: CounterColumns,
    /// gpu_busy_ms / gpu_wait_ms values.
    busy: Vec<u64>,
    wait: Vec<u64>,
    sensor_rows: SensorRows,
    /// The rows' display answers, and the origin their displayed_ns count
    /// from.
    answers: Answers,
    origin: i128,
    lost: u64,
    counters_lost: u64,
    /// Whether the last line read is the clean-exit line.
    ended: bool,
}

impl Reading {
    fn new() -> Reading {
        Reading {
            durations: Vec::new(),
            meta: Meta::new(Format::SteadyHud, "steadyhud session log", COLUMN),
            counters: CounterColumns::default(),
            busy: Vec::new(),
            wait: Vec::new(),
            sensor_rows: Default::default(),
            answers: Answers::default(),
            origin: 0,
            lost: 0,
            counters_lost: 0,
            ended: false,
        }
    }

    /// A `#` line: the end line, a mark, the exe, the target, the origin,
    /// an overflow note; anything else is ignored.
    fn comment(&mut self, line: &Line<'_>) {
        let text = line.text;
        let meta = &mut self.meta;
        if text.trim_end() == END_LINE {
            self.ended = line.terminated;
        } else if let Some(rest) = text.strip_prefix(MARK_PREFIX) {
            // A cut-off mark line may have lost digits of its frame.
            match Mark::parse(rest).filter(|_| line.terminated) {
                Some(m) => meta.marks.push(m),
                None => meta.notes.push(format!(
                    "line {}: mark line not understood, ignored",
                    line.no
                )),
            }
        } else if let Some(exe) = text.strip_prefix(EXE_PREFIX) {
            meta.source = Some(exe.trim().to_string());
        } else if let Some(f) = text.strip_prefix(TARGET_FPS_PREFIX) {
            meta.target_fps = parse_target_fps(f);
        } else if let Some(t) = text.strip_prefix(ORIGIN_PREFIX) {
            self.origin = t.trim().parse().unwrap_or(0);
        } else if let Some(rest) = text.strip_prefix(OVERFLOW_PREFIX) {
            // Saturating: the counts come from the file (fuzzing found
            // two near-u64::MAX notes overflowing a plain `+=`).
            self.lost = self.lost.saturating_add(first_count(rest));
        } else if let Some(rest) = text.strip_prefix(COUNTER_OVERFLOW_PREFIX) {
            self.counters_lost = self.counters_lost.saturating_add(first_count(rest));
        }
    }

    /// Whether the row `line` is a last line cut off (noted: the reading
    /// stops); an error for a row of the wrong width anywhere else.
    fn cut(&mut self, h: &Header, line: &Line<'_>) -> Result<bool, At> {
        let text = line.text;
        let fields = text.split(',').count();
        let cut = !line.terminated;
        if fields != h.nfields && !cut {
            return Err(At::new(
                Pos::new(line.no, char_col(text.as_bytes(), text.len())),
                ErrorKind::Truncated {
                    expected: h.nfields.to_string(),
                    found: fields,
                },
            ));
        }
        if cut {
            // Of the wrong width, or complete-looking but unterminated: the
            // writer always ends a row with '\n', so its last field may be
            // cut short.
            self.meta.notes.push(format!(
                "line {}: last line cut off (no newline), ignored",
                line.no
            ));
        }
        Ok(cut)
    }

    /// One frame's row: its frame time, GPU, sensor, display and counter
    /// cells.
    fn row(&mut self, h: &Header, line: &Line<'_>) -> Result<(), At> {
        let text = line.text;
        let field = text.split(',').nth(h.col).unwrap_or("");
        let pos = Pos::new(line.no, field_col(text.as_bytes(), h.col));
        self.durations
            .push(parse_ns(field.as_bytes(), TimeUnit::Ms, COLUMN, pos)?);
        for (col, name, out) in [
            (h.busy_i, gpu::BUSY_COLUMN, &mut self.busy),
            (h.wait_i, gpu::WAIT_COLUMN, &mut self.wait),
        ] {
            if let Some(k) = col {
                let f = text.split(',').nth(k).unwrap_or("");
                let pos = Pos::new(line.no, field_col(text.as_bytes(), k));
                out.push(parse_gpu_ms(f.as_bytes(), name, pos)?);
            }
        }
        if let Some(m) = &h.sensor_map {
            let f: Vec<&str> = text.split(',').collect();
            m.push(&mut self.sensor_rows, |k| f.get(k).map(|s| s.as_bytes()));
        }
        if let Some(ix) = h.display_i {
            self.display_cells(ix, line)?;
        }
        if let Some(ix) = h.terms_i {
            self.term_cells(ix, line)?;
        }
        if !h.counter_cols.is_empty() {
            self.counter_cells(&h.counter_cols, line)?;
        }
        Ok(())
    }

    /// The display columns' cells (at `ix`) of the row `line`.
    fn display_cells(&mut self, ix: [usize; 4], line: &Line<'_>) -> Result<(), At> {
        let text = line.text;
        let f: Vec<&str> = text.split(',').collect();
        let cells = ix.map(|k| f.get(k).copied().unwrap_or(""));
        let bad = |k: usize| {
            At::new(
                Pos::new(line.no, field_col(text.as_bytes(), ix[k])),
                ErrorKind::BadDisplayValue {
                    column: columns::DISPLAY[k].name.to_string(),
                    found: clip(cells[k], 40),
                },
            )
        };
        self.answers.push_cells(cells, self.origin).map_err(bad)
    }

    /// PC latency's term cells (at `ix`) of the row `line`.
    fn term_cells(&mut self, ix: [usize; 3], line: &Line<'_>) -> Result<(), At> {
        let text = line.text;
        let f: Vec<&str> = text.split(',').collect();
        let cells = ix.map(|k| f.get(k).copied().unwrap_or(""));
        self.answers.push_term_cells(cells).map_err(|k| {
            At::new(
                Pos::new(line.no, field_col(text.as_bytes(), ix[k])),
                ErrorKind::BadDisplayValue {
                    column: steadyhud_log::display::TERMS[k].0.to_string(),
                    found: clip(cells[k], 40),
                },
            )
        })
    }

    /// The counter columns' cells (at `counter_cols`) of the row `line`.
    fn counter_cells(&mut self, counter_cols: &[usize], line: &Line<'_>) -> Result<(), At> {
        let text = line.text;
        let counters = &mut self.counters;
        let mut next = 0;
        for (k, f) in text.split(',').enumerate() {
            if counter_cols.get(next) != Some(&k) {
                continue;
            }
            let info = &counters.infos[next];
            let v = parse_counter(f, info.unit).ok_or_else(|| {
                At::new(
                    Pos::new(line.no, field_col(text.as_bytes(), k)),
                    ErrorKind::BadCounter {
                        column: info.name.clone(),
                        unit: info.unit.suffix(),
                        found: clip(f, 40),
                    },
                )
            })?;
            counters.values[next].push(v);
            next += 1;
        }
        Ok(())
    }

    /// The log, once every line is read (`last_line`: the last line's
    /// number, 0 for an empty file): an error without a header or a frame;
    /// the notes of an unclean end, overflows and missing cells.
    fn finish(mut self, header: Option<Header>, last_line: u64) -> Result<FrameLog, At> {
        if last_line == 0 {
            return Err(At::new(Pos::new(1, 1), ErrorKind::Empty));
        }
        let Some(h) = header else {
            return Err(At::new(
                Pos::new(last_line, 1),
                ErrorKind::NoHeader {
                    what: "CSV",
                    expected: columns::frame_header(),
                },
            ));
        };
        if self.durations.is_empty() {
            return Err(At::new(
                Pos::new(last_line, 1),
                ErrorKind::NoFrames { what: "frame" },
            ));
        }
        self.overflow_notes();
        let (durations, mut meta) = (self.durations, self.meta);
        if !self.counters.infos.is_empty() {
            meta.counters = Some(self.counters);
        }
        if let Some(m) = &h.sensor_map {
            meta.sensors = m.finish(self.sensor_rows, &mut meta.notes);
        }
        if h.display_i.is_some() {
            let c = self.answers.columns();
            let unknown = c.unknown_frames(durations.len());
            if unknown > 0 {
                meta.notes.push(format!(
                    "{unknown} of {} frame(s) without a display answer (empty {}): neither shown nor dropped",
                    durations.len(),
                    columns::DISPLAY[3].name
                ));
            }
            meta.display = Some(c);
        }
        if h.busy_i.is_some() {
            let missing = self.busy.iter().filter(|&&b| b == gpu::NO_DATA).count();
            if missing > 0 {
                meta.notes.push(format!(
                    "{missing} of {} frame(s) without a value in {}: the GPU-bound verdict covers the others",
                    durations.len(),
                    gpu::BUSY_COLUMN
                ));
            }
            meta.gpu = Some(GpuColumns {
                busy_column: gpu::BUSY_COLUMN.to_string(),
                busy_ns: self.busy,
                wait_column: h.wait_i.map(|_| gpu::WAIT_COLUMN.to_string()),
                wait_ns: h.wait_i.map(|_| self.wait),
            });
        }
        Ok(FrameLog {
            durations_ns: durations,
            meta,
        })
    }

    /// The notes of an unclean end and of lost timestamps or counters.
    fn overflow_notes(&mut self) {
        let notes = &mut self.meta.notes;
        if !self.ended {
            // Rows are contiguous (a lost timestamp makes one longer frame),
            // so the durations add up to the last row's present_ns.
            let ns: u128 = self.durations.iter().map(|&d| u128::from(d)).sum();
            notes.push(format!(
                "session did not end cleanly (last flush at {:.3} s, after {} frames; no \"{END_LINE}\" line)",
                ns as f64 / 1e9,
                self.durations.len()
            ));
        }
        if self.lost > 0 {
            notes.push(format!(
                "ring overflow: {} timestamps lost during capture",
                self.lost
            ));
        }
        if self.counters_lost > 0 {
            notes.push(format!(
                "counter ring overflow: {} frames' counters lost during capture (read as 0)",
                self.counters_lost
            ));
        }
    }
}

/// The count an overflow note starts with (0 when it has none).
fn first_count(rest: &str) -> u64 {
    rest.split_whitespace()
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "# steadyhud 0.1.0 session log\n# exe: vkcube\n# start: x\nframe,present_ns,frametime_ms\n\
                       0,16666667,16.666667\n# ring overflow: 3 timestamps lost\n1,50000000,33.333333\n";

    #[test]
    fn reads_rows_comments_and_overflow() {
        let log = read(LOG.as_bytes()).unwrap();
        assert_eq!(log.durations_ns, vec![16_666_667, 33_333_333]);
        assert_eq!(log.meta.source.as_deref(), Some("vkcube"));
        assert!(log
            .meta
            .notes
            .iter()
            .any(|n| n.contains("3 timestamps lost")));
    }

    /// The header's target is read; a log without the line has none.
    /// PC latency's columns are the display block's latency values, as a
    /// capture's; an empty cell is no value, a bad one an error.
    #[test]
    fn latency_columns_are_read_as_display_values() {
        let text = "# origin_monotonic_ns: 1000\n\
                    frame,present_ns,frametime_ms,displayed_ns,display_latency_ms,refresh_ms,display_source,\
                    input_ns,input_to_frame_start_ms,click_to_photon_ms,frame_start_to_present_ms,pc_latency_ms\n\
                    0,10000000,10.000000,20000000,10.000000,,wayland,,,,6.000000,\n\
                    1,20000000,10.000000,30000000,10.000000,,wayland,13000000,1.000000,17.000000,6.000000,17.000000\n";
        let log = read(text.as_bytes()).unwrap();
        let d = log.meta.display.expect("display columns");
        let col = |k| {
            d.values
                .iter()
                .find(|v| v.key == k)
                .expect("a value column")
        };
        use steadyhud_metrics::display::{ValueKey, NO_VALUE};
        assert_eq!(col(ValueKey::PcLatency).ns, [NO_VALUE, 17_000_000]);
        assert_eq!(col(ValueKey::PcLatency).column, "pc_latency_ms");
        assert_eq!(col(ValueKey::ClickToPhoton).ns, [NO_VALUE, 17_000_000]);
        assert_eq!(col(ValueKey::FrameStartToPresent).ns, [6_000_000; 2]);
        let bad = text.replace(",6.000000,17.000000\n", ",6.000000,x\n");
        assert!(matches!(
            read(bad.as_bytes()).unwrap_err().kind,
            ErrorKind::BadDisplayValue { .. }
        ));
    }

    #[test]
    fn the_recorded_target_is_read() {
        assert_eq!(read(LOG.as_bytes()).unwrap().meta.target_fps, None);
        let text = LOG.replace("# start: x\n", "# target_fps: 144\n# start: x\n");
        assert_eq!(read(text.as_bytes()).unwrap().meta.target_fps, Some(144));
    }

    #[test]
    fn marks_are_read_with_their_frame_and_any_text() {
        let text = format!(
            "{LOG}# mark: boss at frame 2 at frame 1\n# mark: nonsense\n2,66666667,16.666667\n# mark: end at frame 3"
        );
        let log = read(text.as_bytes()).unwrap();
        assert_eq!(
            log.meta.marks,
            vec![Mark {
                frame: 1,
                text: "boss at frame 2".into()
            }]
        );
        let ignored = log.meta.notes.iter().filter(|n| n.contains("mark line"));
        assert_eq!(ignored.count(), 2, "{:?}", log.meta.notes);
    }

    #[test]
    fn cut_last_line_is_ignored_cut_middle_line_is_an_error() {
        let cut = format!("{LOG}2,66666");
        let log = read(cut.as_bytes()).unwrap();
        assert_eq!(log.durations_ns.len(), 2);
        assert!(log
            .meta
            .notes
            .iter()
            .any(|n| n.contains("line 8") && n.contains("cut off")));
        // Complete fields but no newline: still a cut row.
        let cut = format!("{LOG}2,66666667,16.6");
        assert_eq!(read(cut.as_bytes()).unwrap().durations_ns.len(), 2);
        let mid = LOG.replace("0,16666667,16.666667", "0,1666");
        let e = read(mid.as_bytes()).err().unwrap();
        assert_eq!(e.pos, Some(Pos::new(5, 7)));
        assert!(matches!(e.kind, ErrorKind::Truncated { found: 2, .. }));
    }

    #[test]
    fn a_log_without_the_end_line_did_not_end_cleanly() {
        let unclean = |log: &FrameLog| {
            log.meta
                .notes
                .iter()
                .filter(|n| n.contains("did not end cleanly"))
                .cloned()
                .collect::<Vec<_>>()
        };
        let killed = read(LOG.as_bytes()).unwrap();
        assert_eq!(
            unclean(&killed),
            ["session did not end cleanly (last flush at 0.050 s, after 2 frames; no \"# end: complete\" line)"]
        );
        let clean = format!("{LOG}{END_LINE}\n\n");
        assert!(unclean(&read(clean.as_bytes()).unwrap()).is_empty());
        // Rows after it, or an end line cut before its newline: not clean.
        let more = format!("{LOG}{END_LINE}\n2,66666667,16.666667\n");
        assert_eq!(unclean(&read(more.as_bytes()).unwrap()).len(), 1);
        let cut = format!("{LOG}{END_LINE}");
        assert_eq!(unclean(&read(cut.as_bytes()).unwrap()).len(), 1);
    }

    #[test]
    fn huge_overflow_counts_saturate_instead_of_panicking() {
        let text = format!(
            "# steadyhud\n{OVERFLOW_PREFIX}{} timestamps lost\n{OVERFLOW_PREFIX}7 timestamps lost\n{}\n0,1,16.6\n",
            u64::MAX,
            columns::frame_header()
        );
        let log = read(text.as_bytes()).unwrap();
        assert_eq!(log.durations_ns, vec![16_600_000]);
        assert!(
            log.meta
                .notes
                .iter()
                .any(|n| n.contains(&format!("{} timestamps lost", u64::MAX))),
            "{:?}",
            log.meta.notes
        );
    }

    #[test]
    fn counter_columns_are_read_and_located_when_bad() {
        let log = "frame,present_ns,frametime_ms,pipeline_create_ms,pipelines,alloc_bytes,cpu_busy_ms\n\
                   0,10000000,10.000000,0.000000,0,0,9.5\n1,50000000,40.000000,30.250001,3,1048576,39.5\n";
        let r = read(log.as_bytes()).unwrap();
        assert_eq!(r.durations_ns, vec![10_000_000, 40_000_000]);
        let c = r.meta.counters.unwrap();
        assert_eq!(
            c.infos.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(),
            ["pipeline_create_ms", "pipelines", "alloc_bytes"]
        );
        assert_eq!(c.infos[0].label, "pipeline creation");
        assert_eq!(c.infos[0].unit, Unit::Nanos);
        assert_eq!(
            c.values,
            vec![vec![0, 30_250_001], vec![0, 3], vec![0, 1_048_576]]
        );
        let bad = log.replace(",3,", ",x3,");
        let e = read(bad.as_bytes()).err().unwrap();
        assert_eq!(e.pos, Some(Pos::new(3, 32)));
        assert!(matches!(e.kind, ErrorKind::BadCounter { .. }), "{e:?}");
        // The old layout has no counters.
        assert!(read(LOG.as_bytes()).unwrap().meta.counters.is_none());
        // Lost counters are a note, like lost timestamps.
        let noted = log.replacen(
            "\n1,",
            &format!("\n{COUNTER_OVERFLOW_PREFIX}2 frames' counters lost (written as 0)\n1,"),
            1,
        );
        let r = read(noted.as_bytes()).unwrap();
        assert_eq!(r.durations_ns.len(), 2);
        assert!(
            r.meta
                .notes
                .iter()
                .any(|n| n.contains("2 frames' counters lost")),
            "{:?}",
            r.meta.notes
        );
    }

    #[test]
    fn extra_columns_are_fine_and_bad_values_located() {
        let log = read(&b"frame,frametime_ms,cpu_ms\n0,10.5,1\n"[..]).unwrap();
        assert_eq!(log.durations_ns, vec![10_500_000]);
        let e = read(&b"frame,present_ns,frametime_ms\n0,1,0.000000\n"[..])
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(2, 5)));
        assert!(matches!(e.kind, ErrorKind::NotPositive { .. }));
        let e = read(&b"# steadyhud\nframe,present_ns\n"[..]).err().unwrap();
        assert!(matches!(e.kind, ErrorKind::NoColumn { .. }));
    }

    #[test]
    fn gpu_columns_are_read_apart_from_counters_and_cpu_busy() {
        let log = "frame,present_ns,frametime_ms,submit_ms,cpu_busy_ms,gpu_busy_ms,gpu_wait_ms\n\
                   0,10000000,10.000000,0.500000,9.000000,8.250000,0.500000\n\
                   1,30000000,20.000000,0.500000,19.000000,,\n\
                   2,40000000,10.000000,0.500000,9.000000,NA,NA\n";
        let r = read(log.as_bytes()).unwrap();
        let c = r.meta.counters.as_ref().unwrap();
        // Only the real counter: neither GPU column nor cpu_busy_ms.
        assert_eq!(c.infos.len(), 1);
        assert_eq!(c.infos[0].name, "submit_ms");
        assert_eq!(c.values, vec![vec![500_000; 3]]);
        let g = r.meta.gpu.as_ref().unwrap();
        assert_eq!(g.busy_ns, vec![8_250_000, gpu::NO_DATA, gpu::NO_DATA]);
        assert_eq!(g.wait_ns, Some(vec![500_000, gpu::NO_DATA, gpu::NO_DATA]));
        assert!(r.meta.notes.iter().any(|n| n.contains("2 of 3 frame(s)")));
        let bad = log.replace(",8.250000,", ",-8.25,");
        let e = read(bad.as_bytes()).err().unwrap();
        // Line 2 is the first row; `-8.25` starts at character 40.
        assert_eq!(e.pos, Some(Pos::new(2, 40)));
        assert!(matches!(e.kind, ErrorKind::BadGpuTime { .. }), "{e:?}");
        // Logs without the columns have no GPU data.
        assert!(read(LOG.as_bytes()).unwrap().meta.gpu.is_none());
    }

    /// Sensor columns (system readings, cells possibly empty) are not read
    /// as counters and do not stop the log from being read.
    #[test]
    fn sensor_columns_are_not_counters() {
        let text = "# steadyhud 0.1.0 session log\nframe,present_ns,frametime_ms,submits,cpu_load_pct,rss_mb,gpu_throttle\n\
                    0,10000000,10.000000,2,,,\n1,20000000,10.000000,3,43.5,512.0,power|thermal\n";
        let log = read(text.as_bytes()).unwrap();
        assert_eq!(log.durations_ns, [10_000_000, 10_000_000]);
        let names: Vec<&str> = log
            .meta
            .counters
            .as_ref()
            .unwrap()
            .infos
            .iter()
            .map(|i| i.name.as_str())
            .collect();
        assert_eq!(names, ["submits"]);
    }
}
