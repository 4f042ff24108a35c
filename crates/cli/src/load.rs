//! What the commands that analyse several logs (`report`, `compare`,
//! `bench`) share: reading a log into a [`Run`], and their errors.

use super::analyze::{analyze_path, ThresholdArg};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use steadyhud_formats::{ParseError, ReadOptions};
use steadyhud_report::Run;

/// What stops a multi-log command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Read(#[from] ParseError),
    /// Arguments that do not fit together.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Compare(#[from] steadyhud_metrics::bootstrap::CompareError),
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Reads `path` in any supported format and analyses it with the
/// thresholds of `args` (the target resolved per log); the run is named
/// after the file.
pub fn load_run(path: &Path, args: &ThresholdArg) -> Result<Run, CliError> {
    let a = analyze_path(path, &ReadOptions::default(), args)?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let display = a
        .display
        .zip(a.log.meta.display.as_ref())
        .map(|(stats, c)| steadyhud_report::RunDisplay {
            stats,
            shown: steadyhud_metrics::display::shown_frames(c),
        });
    Ok(Run {
        name,
        durations_ns: a.log.durations_ns,
        summary: a.summary,
        stutter_causes: a.stutter_causes,
        gpu: a.gpu,
        sensors: a.sensors,
        display,
    })
}

/// Runs a multi-log command's `body` with its `--stutter-threshold` and
/// `--target-fps` (each log resolves its target, [`load_run`]); exit
/// status as [`exit`].
pub fn run_with_options(
    threshold: &ThresholdArg,
    body: impl FnOnce(&ThresholdArg) -> Result<(), CliError>,
) -> ExitCode {
    exit(body(threshold))
}

/// Exit status of a command: 0, or 2 with `steadyhud: <error>` on stderr.
pub fn exit(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("steadyhud: {e}");
            ExitCode::from(2)
        }
    }
}
