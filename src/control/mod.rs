//! The control socket: how programs outside the game talk to the layer.
//!
//! Each process with the layer serves a Unix stream socket
//! `$XDG_RUNTIME_DIR/steadyhud/<pid>.sock` (folder 0700, socket 0600, peers
//! of another uid refused by `SO_PEERCRED`). The layer's analysis thread
//! polls it without blocking ([`server`]); `steadyhud ctl` is the client
//! ([`client`]); the line protocol both speak is in [`protocol`] (and in
//! `docs/cli.md`, so `socat` works too). Nothing here knows Vulkan.

pub mod client;
pub mod protocol;
pub mod server;

use std::path::PathBuf;

/// Why there is no socket folder.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    #[error("XDG_RUNTIME_DIR is not set (it names the per-user folder for sockets)")]
    NoRuntimeDir,
}

/// `$XDG_RUNTIME_DIR/steadyhud`: where the sessions' sockets live.
pub fn socket_dir() -> Result<PathBuf, DirError> {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !d.is_empty() => Ok(PathBuf::from(d).join("steadyhud")),
        _ => Err(DirError::NoRuntimeDir),
    }
}

/// The socket of process `pid` in `dir`.
pub fn socket_path(dir: &std::path::Path, pid: u32) -> PathBuf {
    dir.join(format!("{pid}.sock"))
}

/// The pid a socket file name stands for (`1234.sock` → 1234).
pub fn pid_of(file_name: &str) -> Option<u32> {
    file_name.strip_suffix(".sock")?.parse().ok()
}
