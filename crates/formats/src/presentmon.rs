//! PresentMon CSV (1.x `MsBetweenPresents`, 2.x `MsBetweenPresents` or
//! `FrameTime`) and the files built on it: CapFrameX (`//key=value`
//! metadata lines first) and OCAT (system columns on the first row only).
//!
//! Rows of several processes and swapchains may be interleaved; frames are
//! grouped by (ProcessID, SwapChainAddress) and the group with the most
//! frames is analysed, unless [`Filter`] names a process or swapchain.
//! `NA` (PresentMon's "not available") rows are skipped and counted.
//!
//! Per-frame GPU busy time, when the capture has it, is carried along for
//! the GPU-bound verdict ([`steadyhud_metrics::gpu`]): 2.x `MsGPUBusy` (or
//! `GPUBusy` in the "v2" metrics), 1.x `msGPUActive` (`-track_gpu`, the
//! same quantity under its old name), and the wait time `MsGPUWait` /
//! `GPUWait`. A GPU field of `NA` or a row too short for it leaves that
//! frame without GPU data; it never drops the frame.
//!
//! Sensor columns of PresentMon 2 captures (`GPUPower`, `CPUUtilization`,
//! `GPUTemperature`, …) follow the kept frames the same way, into
//! [`Meta::sensors`] through [`SensorMap::presentmon`].
//! Display columns (display interval, dropped flag, animation error,
//! latencies) are read alongside by [`super::display`].

use super::csvbody::{split_header, Body, Flow};
use super::error::{At, ErrorKind, Pos};
use super::frame_log::{Filter, Format, FrameLog, Meta};
use super::sensors::{SensorMap, SensorRows};
use super::text::{clip, Lines};
use super::value::{parse_gpu_ms, parse_ns, Unit};
use std::collections::HashMap;
use std::io::{BufRead, Seek};
use steadyhud_metrics::gpu::{GpuColumns, NO_DATA};

/// Frame-time columns, best first (matched case-insensitively).
const FRAME_COLUMNS: [&str; 2] = ["MsBetweenPresents", "FrameTime"];
/// GPU busy columns, best first (2.x, 2.x "v2" names, 1.x).
const GPU_BUSY_COLUMNS: [&str; 3] = ["MsGPUBusy", "GPUBusy", "msGPUActive"];
/// GPU wait columns (2.x, 2.x "v2" names).
const GPU_WAIT_COLUMNS: [&str; 2] = ["MsGPUWait", "GPUWait"];

struct Group {
    app: String,
    pid: String,
    swapchain: String,
    /// Rows of this group (frames, plus `NA` rows).
    rows: u64,
    /// Durations, collected only for groups the filter lets through.
    durations: Option<Vec<u64>>,
    /// GPU busy / wait ns of those frames, when the file has the columns.
    gpu_busy: Vec<u64>,
    gpu_wait: Vec<u64>,
    /// Sensor readings of those frames, when the file has sensor columns.
    sensors: Option<SensorRows>,
    /// Display columns of those frames ([`super::display`]).
    display: super::display::Frames,
}

impl Group {
    fn label(&self) -> String {
        let mut s = if self.app.is_empty() {
            "unknown app".to_string()
        } else {
            self.app.clone()
        };
        let mut parts = Vec::new();
        if !self.pid.is_empty() {
            parts.push(format!("pid {}", self.pid));
        }
        if !self.swapchain.is_empty() {
            parts.push(format!("swapchain {}", self.swapchain));
        }
        if !parts.is_empty() {
            s.push_str(&format!(" ({})", parts.join(", ")));
        }
        s
    }
}

pub fn read<R: BufRead + Seek>(r: R, format: Format, filter: &Filter) -> Result<FrameLog, At> {
    let mut lines = Lines::new(r);
    let (metadata, header_line, header) = prelude(&mut lines)?;
    let cols = Columns::find(&header, header_line, !metadata.is_empty())?;
    let mut body = Body::after(lines);
    let mut rows = Rows::default();
    body.for_each_row(cols.needed(), &cols.column, |rec, line| {
        rows.row(&cols, filter, rec, line)
    })?;
    if rows.data_rows == 0 {
        return Err(At::new(
            Pos::new(header_line, 1),
            ErrorKind::NoFrames { what: "PresentMon" },
        ));
    }
    let best = rows.best(filter, header_line)?;
    rows.log(best, &cols, format, &metadata)
}

/// Prelude: BOM, `//key=value` metadata (CapFrameX), blank lines; then
/// the header, read as text so its line and columns are known. Returns
/// (metadata, the header's line, its columns).
#[allow(clippy::type_complexity)]
fn prelude<R: BufRead>(
    lines: &mut Lines<R>,
) -> Result<(Vec<(String, String)>, u64, Vec<String>), At> {
    let mut metadata: Vec<(String, String)> = Vec::new();
    loop {
        let Some(line) = lines.next_line()? else {
            return Err(if !metadata.is_empty() {
                At::nowhere(ErrorKind::NoHeader {
                    what: "CSV",
                    expected: "a PresentMon header (Application,…,MsBetweenPresents,…)".into(),
                })
            } else {
                At::new(Pos::new(1, 1), ErrorKind::Empty)
            });
        };
        if let Some(m) = line.text.strip_prefix("//") {
            let (k, v) = m.split_once('=').unwrap_or((m, ""));
            metadata.push((k.trim().to_string(), v.trim().to_string()));
            continue;
        }
        if line.text.trim().is_empty() {
            continue;
        }
        return Ok((metadata, line.no, split_header(line.text)));
    }
}

/// Where the header puts what the reader takes.
struct Columns {
    /// The frame-time column's index and name (as the file spells it).
    frame_i: usize,
    column: String,
    app_i: Option<usize>,
    pid_i: Option<usize>,
    sc_i: Option<usize>,
    /// GPU busy / wait columns (index, name); wait only with busy.
    gpu_busy: Option<(usize, String)>,
    gpu_wait: Option<(usize, String)>,
    sensor_map: Option<SensorMap>,
    display: Option<super::display::Spec>,
    /// Which kind of file this is.
    detail: &'static str,
}

impl Columns {
    /// The columns of `header` (on line `header_line`; `metadata`: the file
    /// had CapFrameX metadata lines); an error without a frame-time column.
    fn find(header: &[String], header_line: u64, metadata: bool) -> Result<Columns, At> {
        let find = |name: &str| header.iter().position(|h| h.eq_ignore_ascii_case(name));
        let first_of = |names: &[&str]| {
            names
                .iter()
                .find_map(|c| find(c).map(|i| (i, header[i].clone())))
        };
        let Some((frame_i, column)) = first_of(&FRAME_COLUMNS) else {
            return Err(At::new(
                Pos::new(header_line, 1),
                ErrorKind::NoColumn {
                    expected: FRAME_COLUMNS.join(" or "),
                    found: clip(&header.join(","), 100),
                },
            ));
        };
        let gpu_busy = first_of(&GPU_BUSY_COLUMNS);
        let gpu_wait = gpu_busy.as_ref().and(first_of(&GPU_WAIT_COLUMNS));
        let has = |n: &str| find(n).is_some();
        let detail = if metadata {
            "CapFrameX CSV"
        } else if has("Motherboard") || has("Processor") || has("GPU") {
            "OCAT CSV"
        } else if has("CPUStartQPC") || has("FrameType") || has("PresentRuntime") {
            "PresentMon 2.x CSV"
        } else {
            "PresentMon 1.x CSV"
        };
        Ok(Columns {
            frame_i,
            column,
            app_i: find("Application"),
            pid_i: find("ProcessID"),
            sc_i: find("SwapChainAddress"),
            gpu_busy,
            gpu_wait,
            sensor_map: SensorMap::presentmon(header),
            display: super::display::Spec::find(header),
            detail,
        })
    }

    /// Fields a row needs (rows with fewer are truncated).
    fn needed(&self) -> usize {
        [Some(self.frame_i), self.app_i, self.pid_i, self.sc_i]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(0)
            + 1
    }
}

/// The rows read so far, grouped by (ProcessID, SwapChainAddress).
#[derive(Default)]
struct Rows {
    groups: Vec<Group>,
    index: HashMap<(Vec<u8>, Vec<u8>), usize>,
    /// The last row's (pid, swapchain) and group: rows come in runs.
    last: Option<(Vec<u8>, Vec<u8>, usize)>,
    na_rows: u64,
    first_na_line: u64,
    data_rows: u64,
}

impl Rows {
    /// One data row `rec` (on `line`): counted in its group and, if the
    /// filter keeps the group, read into it.
    fn row(
        &mut self,
        cols: &Columns,
        filter: &Filter,
        rec: &csv::ByteRecord,
        line: u64,
    ) -> Result<Flow, (usize, ErrorKind)> {
        self.data_rows += 1;
        let g = self.group_of(cols, filter, rec);
        let group = &mut self.groups[g];
        group.rows += 1;
        let Some(durations) = group.durations.as_mut() else {
            return Ok(Flow::Continue);
        };
        let field = &rec[cols.frame_i];
        if field.trim_ascii() == b"NA" {
            self.na_rows += 1;
            if self.first_na_line == 0 {
                self.first_na_line = line;
            }
            return Ok(Flow::Continue);
        }
        let ns = parse_ns(field, Unit::Ms, &cols.column, Pos::new(line, 0))
            .map_err(|e| (cols.frame_i, e.kind))?;
        durations.push(ns);
        for (col, out) in [
            (&cols.gpu_busy, &mut group.gpu_busy),
            (&cols.gpu_wait, &mut group.gpu_wait),
        ] {
            if let Some((i, name)) = col {
                let v = rec.get(*i).map_or(Ok(NO_DATA), |f| {
                    parse_gpu_ms(f, name, Pos::new(line, 0)).map_err(|e| (*i, e.kind))
                })?;
                out.push(v);
            }
        }
        if let (Some(m), Some(rows)) = (&cols.sensor_map, group.sensors.as_mut()) {
            m.push(rows, |k| rec.get(k));
        }
        if let Some(spec) = &cols.display {
            spec.push(&mut group.display, rec)?;
        }
        Ok(Flow::Continue)
    }

    /// The group of `rec`, made now if it is the first row of its (pid,
    /// swapchain).
    fn group_of(&mut self, cols: &Columns, filter: &Filter, rec: &csv::ByteRecord) -> usize {
        let pid = cols.pid_i.map_or(&b""[..], |i| &rec[i]);
        let sc = cols.sc_i.map_or(&b""[..], |i| &rec[i]);
        if let Some((lp, ls, g)) = &self.last {
            if lp == pid && ls == sc {
                return *g;
            }
        }
        let key = (pid.to_vec(), sc.to_vec());
        let g = match self.index.get(&key) {
            Some(&g) => g,
            None => {
                let text = |f: &[u8]| String::from_utf8_lossy(f).trim().to_string();
                let app = text(cols.app_i.map_or(&b""[..], |i| &rec[i]));
                let (pid, swapchain) = (text(pid), text(sc));
                let wanted = filter.wants(&app, &pid, &swapchain);
                self.groups.push(Group {
                    app,
                    pid,
                    swapchain,
                    rows: 0,
                    durations: wanted.then(Vec::new),
                    gpu_busy: Vec::new(),
                    gpu_wait: Vec::new(),
                    sensors: cols.sensor_map.as_ref().map(SensorMap::rows),
                    display: Default::default(),
                });
                self.index.insert(key.clone(), self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        self.last = Some((key.0, key.1, g));
        g
    }

    /// The group analysed: the kept group with the most frames (the first
    /// of equals); an error naming the others when none has a frame.
    fn best(&self, filter: &Filter, header_line: u64) -> Result<usize, At> {
        let groups = &self.groups;
        let best = (0..groups.len())
            .filter(|&g| groups[g].durations.as_ref().is_some_and(|d| !d.is_empty()))
            .max_by_key(|&g| {
                (
                    groups[g].durations.as_ref().map_or(0, Vec::len),
                    std::cmp::Reverse(g),
                )
            });
        best.ok_or_else(|| {
            let others: Vec<String> = groups.iter().take(8).map(Group::label).collect();
            let what = if filter.is_empty() {
                "any process".to_string()
            } else {
                filter.describe()
            };
            At::new(
                Pos::new(header_line, 1),
                ErrorKind::NoMatch {
                    what,
                    others: others.join("; "),
                },
            )
        })
    }

    /// The frame log of group `best`, with the notes on the rest.
    fn log(
        mut self,
        best: usize,
        cols: &Columns,
        format: Format,
        metadata: &[(String, String)],
    ) -> Result<FrameLog, At> {
        let column = &cols.column;
        let mut meta = Meta::new(format, cols.detail, column);
        let group = &mut self.groups[best];
        let durations = group.durations.take().unwrap_or_default();
        if let Some((_, busy_column)) = cols.gpu_busy.clone() {
            let missing = group.gpu_busy.iter().filter(|&&b| b == NO_DATA).count();
            if missing > 0 {
                meta.notes.push(format!(
                    "{missing} of {} frame(s) without a value in {busy_column}: the GPU-bound verdict covers the others",
                    durations.len()
                ));
            }
            meta.gpu = Some(GpuColumns {
                busy_column,
                busy_ns: std::mem::take(&mut group.gpu_busy),
                wait_column: cols.gpu_wait.as_ref().map(|(_, c)| c.clone()),
                wait_ns: cols
                    .gpu_wait
                    .is_some()
                    .then(|| std::mem::take(&mut group.gpu_wait)),
            });
        }
        if let (Some(m), Some(rows)) = (&cols.sensor_map, group.sensors.take()) {
            meta.sensors = m.finish(rows, &mut meta.notes);
        }
        if let Some(spec) = &cols.display {
            meta.display = Some(spec.finish(std::mem::take(&mut group.display)));
        }
        let mut source = group.label();
        if let Some((_, name)) = metadata
            .iter()
            .find(|(k, v)| k.eq_ignore_ascii_case("ProcessName") && !v.is_empty())
        {
            source.push_str(&format!(" — {name}"));
        }
        // A bare frame-time table names no program.
        meta.source = (cols.app_i.is_some()
            || cols.pid_i.is_some()
            || cols.sc_i.is_some()
            || !metadata.is_empty())
        .then_some(source);
        self.others_note(best, &mut meta.notes);
        if self.na_rows > 0 {
            meta.notes.push(format!(
                "{} row(s) with NA in {column} skipped (first at line {})",
                self.na_rows, self.first_na_line
            ));
        }
        Ok(FrameLog {
            durations_ns: durations,
            meta,
        })
    }

    /// The note on the groups other than `best`, if any.
    fn others_note(&self, best: usize, notes: &mut Vec<String>) {
        let others: Vec<&Group> = self
            .groups
            .iter()
            .enumerate()
            .filter(|(g, _)| *g != best)
            .map(|(_, g)| g)
            .collect();
        if !others.is_empty() {
            let rows: u64 = others.iter().map(|g| g.rows).sum();
            notes.push(format!(
                "{} other process/swapchain group(s) with {rows} rows not analysed (largest: {}); choose with --process/--swapchain",
                others.len(),
                others.iter().rev().max_by_key(|g| g.rows).map(|g| g.label()).unwrap_or_default()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn parse(text: &str) -> Result<FrameLog, At> {
        read(
            Cursor::new(text.as_bytes().to_vec()),
            Format::PresentMon,
            &Filter::default(),
        )
    }

    const MULTI: &str = "\u{feff}Application,ProcessID,SwapChainAddress,MsBetweenPresents\n\
        a.exe,1,0x1,10\nb.exe,2,0x2,20\nb.exe,2,0x2,20\na.exe,1,0x1,11\nb.exe,2,0x2,NA\nb.exe,2,0x2,21\n";

    #[test]
    fn biggest_group_wins_and_others_are_noted() {
        let log = parse(MULTI).unwrap();
        assert_eq!(log.durations_ns, vec![20_000_000, 20_000_000, 21_000_000]);
        assert_eq!(
            log.meta.source.as_deref(),
            Some("b.exe (pid 2, swapchain 0x2)")
        );
        assert!(log
            .meta
            .notes
            .iter()
            .any(|n| n.contains("1 other") && n.contains("a.exe")));
        assert!(log
            .meta
            .notes
            .iter()
            .any(|n| n.contains("1 row(s) with NA") && n.contains("line 6")));
    }

    #[test]
    fn filter_picks_a_process() {
        let f = Filter {
            process: Some("A.EXE".into()),
            swapchain: None,
        };
        let log = read(
            Cursor::new(MULTI.as_bytes().to_vec()),
            Format::PresentMon,
            &f,
        )
        .unwrap();
        assert_eq!(log.durations_ns, vec![10_000_000, 11_000_000]);
        let f = Filter {
            process: None,
            swapchain: Some("0x0000000000000001".into()),
        };
        let log = read(
            Cursor::new(MULTI.as_bytes().to_vec()),
            Format::PresentMon,
            &f,
        )
        .unwrap();
        assert_eq!(log.durations_ns.len(), 2);
        let f = Filter {
            process: Some("zzz".into()),
            swapchain: None,
        };
        let e = read(
            Cursor::new(MULTI.as_bytes().to_vec()),
            Format::PresentMon,
            &f,
        )
        .err()
        .unwrap();
        assert!(matches!(e.kind, ErrorKind::NoMatch { .. }));
    }

    #[test]
    fn errors_point_at_line_and_column() {
        let e = parse("Application,MsBetweenPresents\na,\"x,y\",5\na,-1\n")
            .err()
            .unwrap();
        // Row 2's second field is a quoted "x,y": not a number, column 3.
        assert_eq!(e.pos, Some(Pos::new(2, 3)));
        assert!(matches!(e.kind, ErrorKind::NotNumber { .. }));
        let e = parse("Application,MsBetweenPresents\na,1\na,-1\n")
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(3, 3)));
        assert!(matches!(e.kind, ErrorKind::NotPositive { .. }));
        let e = parse("Application,ProcessID,MsBetweenPresents\na,1,5\na,1\n")
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(3, 4)));
        assert!(matches!(e.kind, ErrorKind::Truncated { found: 2, .. }));
        let e = parse("Application,Foo\na,1\n").err().unwrap();
        assert_eq!(e.pos, Some(Pos::new(1, 1)));
        assert!(matches!(e.kind, ErrorKind::NoColumn { .. }));
        let e = parse("Application,MsBetweenPresents\nab\0c,1\n")
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(2, 3)));
        assert!(matches!(e.kind, ErrorKind::Nul));
        let e = parse("Application,MsBetweenPresents\n").err().unwrap();
        assert!(matches!(e.kind, ErrorKind::NoFrames { .. }));
    }

    #[test]
    fn crlf_files_locate_errors_and_skip_na() {
        let log = parse("Application,MsBetweenPresents\r\na,16\r\na,NA\r\n\r\na,17\r\n").unwrap();
        assert_eq!(log.durations_ns, vec![16_000_000, 17_000_000]);
        let e = parse("Application,MsBetweenPresents\r\na,16\r\na,16\r\na,-1\r\n")
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(4, 3)));
        assert!(matches!(e.kind, ErrorKind::NotPositive { ref found, .. } if found == "-1"));
    }

    #[test]
    fn bare_frametime_column_has_no_source() {
        let log = parse("FrameTime\n16.5\n17\n").unwrap();
        assert_eq!(log.durations_ns, vec![16_500_000, 17_000_000]);
        assert_eq!(log.meta.source, None);
    }

    #[test]
    fn capframex_metadata_and_frametime_column() {
        let log = read(
            Cursor::new(b"//GameName=g.exe\n//ProcessName=Game\nApplication,ProcessID,FrameTime\ng.exe,7,8.5\n".to_vec()),
            Format::CapFrameX,
            &Filter::default(),
        )
        .unwrap();
        assert_eq!(log.durations_ns, vec![8_500_000]);
        assert_eq!(log.meta.column, "FrameTime");
        assert_eq!(log.meta.detail, "CapFrameX CSV");
        assert_eq!(log.meta.source.as_deref(), Some("g.exe (pid 7) — Game"));
    }

    #[test]
    fn gpu_busy_follows_the_kept_frames_and_na_is_no_data() {
        // b.exe wins; its NA frame time drops the row (and its GPU value);
        // an NA GPU value keeps the frame without GPU data; a row too
        // short for the GPU columns too.
        let log = parse(
            "Application,ProcessID,SwapChainAddress,MsBetweenPresents,MsGPUBusy,MsGPUWait\n\
             a.exe,1,0x1,10,9,1\nb.exe,2,0x2,20,18,1.5\nb.exe,2,0x2,NA,5,0\n\
             b.exe,2,0x2,21,NA,NA\nb.exe,2,0x2,22\n",
        )
        .unwrap();
        assert_eq!(log.durations_ns, vec![20_000_000, 21_000_000, 22_000_000]);
        let g = log.meta.gpu.as_ref().unwrap();
        assert_eq!(g.busy_column, "MsGPUBusy");
        assert_eq!(g.busy_ns, vec![18_000_000, NO_DATA, NO_DATA]);
        assert_eq!(g.wait_column.as_deref(), Some("MsGPUWait"));
        assert_eq!(g.wait_ns, Some(vec![1_500_000, NO_DATA, NO_DATA]));
        assert!(log.meta.notes.iter().any(|n| n.contains("2 of 3 frame(s)")));
        // 2.x "v2" and 1.x names; a file without any has no GPU data.
        let v2 = parse("FrameTime,GPUBusy,GPUWait\n16,0.5,2\n").unwrap();
        assert_eq!(v2.meta.gpu.unwrap().busy_ns, vec![500_000]);
        let v1 = parse("msBetweenPresents,msGPUActive\n16,15.25\n").unwrap();
        let g = v1.meta.gpu.unwrap();
        assert_eq!(
            (g.busy_column.as_str(), g.busy_ns),
            ("msGPUActive", vec![15_250_000])
        );
        assert_eq!(g.wait_ns, None);
        assert!(parse("MsBetweenPresents\n16\n").unwrap().meta.gpu.is_none());
        // A bad GPU value is an error at its field.
        let e = parse("Application,MsBetweenPresents,MsGPUBusy\na,16,-1\n")
            .err()
            .unwrap();
        assert_eq!(e.pos, Some(Pos::new(2, 6)));
        assert!(matches!(e.kind, ErrorKind::BadGpuTime { .. }), "{e:?}");
    }
}
