//! The client side of the control socket (`steadyhud ctl`): finding the
//! sessions, cleaning sockets that dead processes left behind, and one
//! request/reply exchange with a time limit.

use super::protocol::{BadReply, Reply, Request};
use super::{pid_of, socket_path, DirError};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a session may take to answer.
pub const TIMEOUT: Duration = Duration::from_secs(3);

/// What went wrong talking to a session.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{0}")]
    Dir(#[from] DirError),
    #[error("cannot read {}: {source}", dir.display())]
    ReadDir { dir: PathBuf, source: io::Error },
    #[error("no running session with steadyhud (no socket in {})", dir.display())]
    NoSession { dir: PathBuf },
    #[error("{n} sessions are running ({pids}); choose one with --pid")]
    Several { n: usize, pids: String },
    #[error("no session with pid {pid} (no socket {})", path.display())]
    NoSuchPid { pid: u32, path: PathBuf },
    #[error("cannot connect to {}: {source}", path.display())]
    Connect { path: PathBuf, source: io::Error },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{}: the session closed the connection without a reply", path.display())]
    NoReply { path: PathBuf },
    #[error("{}: {source}", path.display())]
    BadReply { path: PathBuf, source: BadReply },
}

/// A socket found in the folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Socket {
    pub pid: u32,
    pub path: PathBuf,
}

/// The `<pid>.sock` files of `dir`, by pid (none when the folder is missing).
pub fn sockets(dir: &Path) -> Result<Vec<Socket>, ClientError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ClientError::ReadDir {
                dir: dir.to_path_buf(),
                source,
            })
        }
    };
    let mut out: Vec<Socket> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let pid = pid_of(e.file_name().to_str()?)?;
            Some(Socket {
                pid,
                path: e.path(),
            })
        })
        .collect();
    out.sort_by_key(|s| s.pid);
    Ok(out)
}

/// Whether a connect error means nobody serves the socket any more: the
/// process died without removing it (SIGKILL, crash).
pub fn is_stale(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::ConnectionRefused
}

/// Whether process `pid` no longer exists (then its socket is stale even
/// if a forked child of it still holds the listening fd and so lets
/// connections in that nobody answers).
pub fn process_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Connects to a socket.
pub fn connect(path: &Path) -> Result<UnixStream, ClientError> {
    let stream = super::connect_now(path).map_err(|source| ClientError::Connect {
        path: path.to_path_buf(),
        source: if source.kind() == io::ErrorKind::WouldBlock {
            io::Error::new(
                io::ErrorKind::WouldBlock,
                "the session accepts no connection (its queue is full: is the game stopped?)",
            )
        } else {
            source
        },
    })?;
    let io_err = |source| ClientError::Io {
        path: path.to_path_buf(),
        source,
    };
    stream.set_read_timeout(Some(TIMEOUT)).map_err(io_err)?;
    stream.set_write_timeout(Some(TIMEOUT)).map_err(io_err)?;
    Ok(stream)
}

/// Sends `request` on `stream` and reads the reply line.
pub fn exchange(stream: UnixStream, path: &Path, request: &Request) -> Result<Reply, ClientError> {
    let io_err = |source| ClientError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut writer = &stream;
    writer
        .write_all(format!("{}\n", request.to_line()).as_bytes())
        .map_err(io_err)?;
    let mut line = String::new();
    BufReader::new(&stream)
        .read_line(&mut line)
        .map_err(|source| match source.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ClientError::Io {
                path: path.to_path_buf(),
                source: io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no reply within {} s", TIMEOUT.as_secs()),
                ),
            },
            _ => io_err(source),
        })?;
    if line.is_empty() {
        return Err(ClientError::NoReply {
            path: path.to_path_buf(),
        });
    }
    Reply::parse(&line).map_err(|source| ClientError::BadReply {
        path: path.to_path_buf(),
        source,
    })
}

/// One request to the socket at `path`.
pub fn request(path: &Path, request: &Request) -> Result<Reply, ClientError> {
    exchange(connect(path)?, path, request)
}

/// The socket to talk to: `pid`'s, or the only one in `dir`.
pub fn choose(dir: &Path, pid: Option<u32>) -> Result<Socket, ClientError> {
    if let Some(pid) = pid {
        let path = socket_path(dir, pid);
        return match std::fs::symlink_metadata(&path) {
            Ok(_) => Ok(Socket { pid, path }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(ClientError::NoSuchPid { pid, path })
            }
            // E.g. another user's folder: say so, not "no session".
            Err(source) => Err(ClientError::Connect { path, source }),
        };
    }
    let live: Vec<Socket> = sockets(dir)?
        .into_iter()
        .filter(|s| !matches!(super::connect_now(&s.path), Err(e) if is_stale(&e)))
        .collect();
    match live.len() {
        0 => Err(ClientError::NoSession {
            dir: dir.to_path_buf(),
        }),
        1 => Ok(live.into_iter().next().expect("one")),
        n => Err(ClientError::Several {
            n,
            pids: live
                .iter()
                .map(|s| s.pid.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_lists_pids_and_choose_needs_one_live() {
        let dir = tempfile::tempdir().unwrap();
        assert!(sockets(&dir.path().join("missing")).unwrap().is_empty());
        // A socket nobody listens on any more (its listener is gone).
        let stale = socket_path(dir.path(), 7);
        drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let e = UnixStream::connect(&stale).unwrap_err();
        assert!(is_stale(&e), "{e}");
        assert!(matches!(
            choose(dir.path(), None),
            Err(ClientError::NoSession { .. })
        ));
        let _a = std::os::unix::net::UnixListener::bind(socket_path(dir.path(), 12)).unwrap();
        assert_eq!(choose(dir.path(), None).unwrap().pid, 12);
        let _b = std::os::unix::net::UnixListener::bind(socket_path(dir.path(), 3)).unwrap();
        let e = choose(dir.path(), None).unwrap_err().to_string();
        assert_eq!(e, "2 sessions are running (3, 12); choose one with --pid");
        let pids: Vec<u32> = sockets(dir.path()).unwrap().iter().map(|s| s.pid).collect();
        assert_eq!(pids, vec![3, 7, 12]);
        assert!(matches!(
            choose(dir.path(), Some(99)),
            Err(ClientError::NoSuchPid { pid: 99, .. })
        ));
    }
}
