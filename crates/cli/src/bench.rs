//! `steadyhud bench [--duration S] [--warmup S] -- CMD`: runs a program with
//! the layer for a fixed time, with a progress bar, stops it, and prints the
//! summary of the measured span and a recommended frame cap (the Steady
//! FPS), as SuperTuxKart's benchmark mode does.
//!
//! The span is cut from the session log by present time: frames ending in
//! the first `warmup` seconds (shader compiles, loading) are dropped, and so
//! is anything after `warmup + duration`, so runs of different programs or
//! settings cover the same length of time.

use super::analyze::{table, Analysis};
use super::load::{exit, CliError};
use super::run::{command_with_layer, LayerDir, RunError};
use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode};
use std::time::{Duration, Instant, SystemTime};
use steadyhud_formats::{self as formats, Format, ReadOptions};
use steadyhud_metrics as metrics;
use steadyhud_metrics::gpu::GpuStats;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seconds measured, after the warm-up.
    #[arg(long, default_value_t = 30.0, value_parser = positive)]
    pub duration: f64,
    /// Seconds from the first present that are not measured.
    #[arg(long, default_value_t = 5.0, value_parser = non_negative)]
    pub warmup: f64,
    /// Folder for the session log (default: the layer's log folder).
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// Layer library to use (default: libsteadyhud.so next to this program).
    #[arg(long, value_name = "PATH")]
    pub lib: Option<PathBuf>,
    #[command(flatten)]
    pub threshold: super::analyze::ThresholdArg,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("expected a number > 0, found {s:?}")),
    }
}

fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("expected a number >= 0, found {s:?}")),
    }
}

/// What stops a benchmark.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Cli(#[from] CliError),
    #[error("no log folder: pass --log-dir (no STEADYHUD_LOG_DIR, XDG_STATE_HOME or HOME)")]
    NoLogDir,
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the program wrote no session log to {}: did it present any frame with Vulkan?", dir.display())]
    NoLog { dir: PathBuf },
    #[error("no frames in the measured span ({warmup} s warm-up + {duration} s): the program presented {frames} frames over {seen:.2} s")]
    TooShort {
        warmup: f64,
        duration: f64,
        frames: usize,
        seen: f64,
    },
}

pub fn run(args: &Args) -> ExitCode {
    match bench(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(BenchError::Cli(e)) => exit(Err(e)),
        Err(e) => {
            eprintln!("steadyhud bench: {e}");
            ExitCode::from(2)
        }
    }
}

fn bench(args: &Args) -> Result<(), BenchError> {
    let lib = super::install::find_lib(args.lib.as_deref()).map_err(RunError::from)?;
    let layer = LayerDir::create(&lib)?;
    let log_dir = match &args.log_dir {
        Some(d) => std::path::absolute(d).unwrap_or_else(|_| d.clone()),
        None => steadyhud_log::default_log_dir().ok_or(BenchError::NoLogDir)?,
    };
    std::fs::create_dir_all(&log_dir).map_err(|source| BenchError::Io {
        path: log_dir.clone(),
        source,
    })?;
    let started = SystemTime::now();
    let mut child = command_with_layer(&layer, Some(&log_dir), &args.command)
        .spawn()
        .map_err(|source| RunError::Spawn {
            cmd: args.command[0].to_string_lossy().into_owned(),
            source,
        })?;

    let total = args.warmup + args.duration;
    let outcome = watch(&mut child, &log_dir, started, total);
    stop(&mut child);
    eprintln!();
    // Stopped by SIGTERM: the rows after the layer's last flush are in its tail.
    crate::recovered::killed_logs(Some(log_dir.as_path()));
    if let Some(status) = outcome.exited_early {
        eprintln!(
            "steadyhud bench: the program ended by itself ({status}) before the run was complete"
        );
    }
    let log = outcome
        .log
        .or_else(|| newest_log(&log_dir, started))
        .ok_or(BenchError::NoLog {
            dir: log_dir.clone(),
        })?;

    let read = ReadOptions {
        format: Some(Format::SteadyHud),
        ..ReadOptions::default()
    };
    let mut frames = formats::read_path(&log, &read).map_err(CliError::from)?;
    let all = frames.durations_ns.len();
    let seen = frames.durations_ns.iter().sum::<u64>() as f64 / 1e9;
    let span = measured_range(&frames.durations_ns, args.warmup, args.duration);
    // The GPU verdict of the same measured frames.
    let gpu = frames.meta.gpu.as_ref().and_then(|g| {
        let busy = g.busy_ns.get(span.clone()).unwrap_or_default();
        GpuStats::from_frames(&frames.durations_ns[span.clone()], busy)
    });
    frames.durations_ns = frames.durations_ns[span].to_vec();
    let opts = args.threshold.options_for(frames.meta.target_fps);
    let summary = metrics::summarize(&frames.durations_ns, &opts).ok_or(BenchError::TooShort {
        warmup: args.warmup,
        duration: args.duration,
        frames: all,
        seen,
    })?;
    let steady = summary.steady_fps;
    // Frames were cut to the measured span: counter columns no longer line up.
    let analysis = Analysis {
        path: log,
        log: frames,
        opts,
        summary,
        stutter_causes: None,
        gpu,
        // Like the counters, the readings are not cut to the span.
        sensors: None,
        sensor_causes: None,
        display: None,
    };
    print!("{}", table(&analysis, &opts));
    println!();
    println!(
        "Measured {:.2} s after {} s of warm-up ({} of {} frames).",
        analysis.summary.duration_s, args.warmup, analysis.summary.frames, all
    );
    if steady > 0 {
        println!("Recommended frame cap: {steady} FPS (Steady FPS: under 1% of the time in slower frames, under 0.1% excess time)");
    } else {
        println!("Recommended frame cap: none (not even 1 FPS was steady over this run)");
    }
    Ok(())
}

/// Frames that end after `warmup` and no later than `warmup + duration`
/// seconds from the first present.
pub fn measured_span(durations_ns: &[u64], warmup: f64, duration: f64) -> Vec<u64> {
    durations_ns[measured_range(durations_ns, warmup, duration)].to_vec()
}

/// The indices of [`measured_span`]'s frames: consecutive, since end times
/// only grow; also cuts per-frame columns (GPU busy) to the same frames.
pub fn measured_range(durations_ns: &[u64], warmup: f64, duration: f64) -> std::ops::Range<usize> {
    let from = (warmup * 1e9).round() as u128;
    let to = ((warmup + duration) * 1e9).round() as u128;
    let mut end = 0u128;
    let mut start = durations_ns.len();
    for (i, &d) in durations_ns.iter().enumerate() {
        end += d as u128;
        if end > to {
            return start.min(i)..i;
        }
        if end > from && start == durations_ns.len() {
            start = i;
        }
    }
    start..durations_ns.len()
}

struct Watched {
    log: Option<PathBuf>,
    exited_early: Option<std::process::ExitStatus>,
}

/// Shows progress until `total` seconds of presents are in the log (plus a
/// margin for the last flush), or the program ends.
fn watch(child: &mut Child, log_dir: &Path, started: SystemTime, total: f64) -> Watched {
    let t0 = Instant::now();
    let mut log: Option<PathBuf> = None;
    let mut counter = LineCounter::default();
    let mut bar = Progress::new();
    // The span is timed from the first present, so a slow start-up (a cold
    // shader cache, a loaded machine) does not eat into it: count from the
    // first logged frame. The layer flushes at least once a second: wait
    // that long past the end. A program that never presents is stopped
    // after a minute more.
    let deadline = total + 1.5;
    let mut first_frame: Option<Instant> = None;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Watched {
                log,
                exited_early: Some(status),
            };
        }
        if log.is_none() {
            log = newest_log(log_dir, started);
        }
        let frames = log.as_deref().map_or(0, |p| counter.count(p));
        if frames > 0 && first_frame.is_none() {
            first_frame = Some(Instant::now());
        }
        let elapsed = first_frame.map_or(0.0, |t| t.elapsed().as_secs_f64());
        bar.show(elapsed.min(deadline), deadline, frames, elapsed);
        if elapsed >= deadline || t0.elapsed().as_secs_f64() >= deadline + 60.0 {
            return Watched {
                log,
                exited_early: None,
            };
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// A progress bar redrawn in place on a terminal; on a pipe or file, one
/// plain line every few seconds instead of a stream of carriage returns.
struct Progress {
    tty: bool,
    last_line: f64,
}

impl Progress {
    fn new() -> Progress {
        use std::io::IsTerminal;
        Progress {
            tty: std::io::stderr().is_terminal(),
            last_line: f64::NEG_INFINITY,
        }
    }

    fn show(&mut self, done: f64, total: f64, frames: u64, elapsed: f64) {
        const WIDTH: usize = 30;
        let filled = ((done / total) * WIDTH as f64).round() as usize;
        let bar: String = (0..WIDTH)
            .map(|i| if i < filled { '#' } else { '.' })
            .collect();
        let rate = if elapsed > 0.0 {
            frames as f64 / elapsed
        } else {
            0.0
        };
        let text =
            format!("bench [{bar}] {done:5.1}/{total:.1} s  {frames} frames  ~{rate:.0} fps");
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r{text} ");
        } else if done - self.last_line >= 5.0 || done >= total {
            self.last_line = done;
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }
}

/// Counts the rows of a growing CSV without re-reading it.
#[derive(Default)]
struct LineCounter {
    offset: u64,
    lines: u64,
}

impl LineCounter {
    fn count(&mut self, path: &Path) -> u64 {
        if let Ok(mut f) = std::fs::File::open(path) {
            if f.seek(SeekFrom::Start(self.offset)).is_ok() {
                let mut buf = Vec::new();
                if let Ok(n) = f.read_to_end(&mut buf) {
                    self.offset += n as u64;
                    self.lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
                }
            }
        }
        // header comment lines and the column header are not frames
        self.lines.saturating_sub(2)
    }
}

/// The newest `*.csv` in `dir` modified since `since`.
fn newest_log(dir: &Path, since: SystemTime) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "csv"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .filter(|(m, _)| *m >= since)
        .max()
        .map(|(_, p)| p)
}

/// SIGTERM, then SIGKILL if the program has not ended 3 s later.
fn stop(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    // SAFETY: plain kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_drops_warmup_and_tail_by_present_time() {
        // 10 frames of 100 ms: ends at 0.1 .. 1.0 s
        let d = vec![100_000_000u64; 10];
        assert_eq!(measured_span(&d, 0.25, 0.5).len(), 5); // ends 0.3..=0.7
        assert_eq!(measured_span(&d, 0.0, 10.0).len(), 10);
        assert!(measured_span(&d, 2.0, 1.0).is_empty());
        // The range is that span's indices (GPU columns are cut with it).
        assert_eq!(measured_range(&d, 0.25, 0.5), 2..7);
        assert_eq!(measured_range(&d, 0.0, 10.0), 0..10);
        assert!(measured_range(&d, 2.0, 1.0).is_empty());
        assert!(measured_range(&d, 0.0, 0.0).is_empty());
    }
}
