//! What can go wrong with a session log ([`LogError`]).

use std::io;
use std::path::PathBuf;

/// A session log that could not be created or written.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot create log folder {}: {source}", path.display())]
    CreateDir { path: PathBuf, source: io::Error },
    #[error("cannot create session log {}: {source}", path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("cannot write session log {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot recover {}: {why}", path.display())]
    Recover { path: PathBuf, why: String },
    #[error("cannot encode the summary of {}: {source}", path.display())]
    Serialize {
        path: PathBuf,
        source: serde_json::Error,
    },
}
