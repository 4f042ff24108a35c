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
pub mod replies;
pub mod server;

use std::io;
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

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

/// Connects to the socket at `path` without waiting: a listener whose
/// queue is full (a stopped or hung game) gives `WouldBlock` instead of
/// blocking, as std's connect would. The stream returned is blocking.
pub fn connect_now(path: &Path) -> io::Result<UnixStream> {
    // SAFETY: sockaddr_un is plain data; all zeroes is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= addr.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "socket path too long",
        ));
    }
    for (dst, &src) in addr.sun_path.iter_mut().zip(bytes) {
        *dst = src as libc::c_char;
    }
    // SAFETY: plain socket creation.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd we own; the stream closes it on every path.
    let stream = unsafe { UnixStream::from_raw_fd(fd) };
    // SAFETY: `addr` is a valid sockaddr_un of the given size.
    let r = unsafe {
        libc::connect(
            fd,
            (&addr as *const libc::sockaddr_un).cast(),
            std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    stream.set_nonblocking(false)?;
    Ok(stream)
}
