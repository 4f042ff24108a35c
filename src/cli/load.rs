//! Reading a log for the commands that analyse several of them (`report`,
//! `compare`, `bench`): parse, analyse, name it after its file.

use crate::metrics::Options;
use crate::report::Run;
use std::path::{Path, PathBuf};

/// What stops a multi-log command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Read(String),
    #[error("{}: no frames to analyse", path.display())]
    Empty { path: PathBuf },
    #[error("{}: cannot write: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// Parses `path` in any supported format and analyses it.
pub fn load_run(path: &Path, opts: &Options) -> Result<Run, CliError> {
    let durations = read_durations(path)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string());
    Run::new(name, durations, opts).ok_or_else(|| CliError::Empty { path: path.to_path_buf() })
}

fn read_durations(path: &Path) -> Result<Vec<u64>, CliError> {
    // Wired to the formats module when it lands.
    let _ = path;
    Err(CliError::Read("formats not merged yet".into()))
}
