//! The client side of the control socket (`steadyhud ctl`): finding the
//! sessions, cleaning sockets that dead processes left behind, and one
//! request/reply exchange with a time limit, retried on a fresh connection
//! while the session answers `err busy` (all its connection slots taken).

use super::protocol::{BadReply, Reply, Request};
use super::server::MAX_CONNECTIONS;
use super::{pid_of, socket_path, DirError};
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a session may take to answer.
pub const TIMEOUT: Duration = Duration::from_secs(3);
/// How long [`request`] keeps trying a session that answers `busy`.
pub const BUSY_PATIENCE: Duration = Duration::from_secs(1);
/// The pause before each new try.
pub const BUSY_PAUSE: Duration = Duration::from_millis(50);
/// The longest reply line read (a `status` reply is a few KB): a peer that
/// sends more without a newline is not a session of ours.
pub const MAX_REPLY: usize = 1 << 20;

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
    /// Every try within [`BUSY_PATIENCE`] was answered `err busy`.
    #[error(
        "the game's control socket stayed busy for {} s ({MAX_CONNECTIONS} connections open); try again",
        patience.as_secs_f64()
    )]
    Busy {
        path: PathBuf,
        tries: u32,
        patience: Duration,
    },
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
    if let Err(source) = writer.write_all(format!("{}\n", request.to_line()).as_bytes()) {
        // A session that turned the connection away (busy, another uid)
        // may have answered and closed before the request went out: its
        // line is still there to read.
        if !matches!(
            source.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
        ) {
            return Err(io_err(source));
        }
        return match read_reply(&stream) {
            Ok(line) if !line.is_empty() => {
                Reply::parse(&line).map_err(|source| ClientError::BadReply {
                    path: path.to_path_buf(),
                    source,
                })
            }
            _ => Err(io_err(source)),
        };
    }
    let line = read_reply(&stream).map_err(io_err)?;
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

/// The reply line on `stream` (with its `\n`; empty when the peer closed
/// first), whole within the stream's read timeout ([`TIMEOUT`] unless
/// set): the limit is for the whole reply, not for each read, so a peer
/// that trickles a byte at a time cannot hold the client; at most
/// [`MAX_REPLY`] bytes.
fn read_reply(stream: &UnixStream) -> io::Result<String> {
    let limit = stream.read_timeout().ok().flatten().unwrap_or(TIMEOUT);
    let deadline = Instant::now() + limit;
    let timed_out = || {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("no reply within {} s", limit.as_secs_f64()),
        )
    };
    let mut line = Vec::new();
    let mut buf = [0u8; 4096];
    let mut reader = stream;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        stream.set_read_timeout(Some(left))?;
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(timed_out())
            }
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        match buf[..n].iter().position(|&b| b == b'\n') {
            Some(i) => {
                line.extend_from_slice(&buf[..=i]);
                break;
            }
            None => line.extend_from_slice(&buf[..n]),
        }
        if line.len() > MAX_REPLY {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a reply longer than {MAX_REPLY} bytes"),
            ));
        }
    }
    String::from_utf8(line)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a reply not in UTF-8"))
}

/// One request to the socket at `path` whose reply must come within
/// `deadline` (not [`TIMEOUT`]); no retry when busy.
pub fn request_within(
    path: &Path,
    request: &Request,
    deadline: Duration,
) -> Result<Reply, ClientError> {
    let stream = connect(path)?;
    for set in [UnixStream::set_read_timeout, UnixStream::set_write_timeout] {
        set(&stream, Some(deadline)).map_err(|source| ClientError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    exchange(stream, path, request)
}

/// One request to the socket at `path`; while the session answers `busy`,
/// tried again on a fresh connection every [`BUSY_PAUSE`] for up to
/// [`BUSY_PATIENCE`], then [`ClientError::Busy`].
pub fn request(path: &Path, request: &Request) -> Result<Reply, ClientError> {
    request_patiently(path, request, BUSY_PATIENCE, BUSY_PAUSE)
}

/// [`request`] with its patience and pause given.
pub fn request_patiently(
    path: &Path,
    request: &Request,
    patience: Duration,
    pause: Duration,
) -> Result<Reply, ClientError> {
    let start = Instant::now();
    let mut tries = 0;
    loop {
        let reply = exchange(connect(path)?, path, request)?;
        tries += 1;
        if !reply.is_busy() {
            return Ok(reply);
        }
        if start.elapsed() + pause > patience {
            return Err(ClientError::Busy {
                path: path.to_path_buf(),
                tries,
                patience,
            });
        }
        std::thread::sleep(pause);
    }
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
    use crate::protocol::HudChange;
    use std::io::{BufRead, BufReader};
    use std::os::unix::net::UnixListener;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::thread::JoinHandle;

    /// A stand-in session on `listener`: the first `busy` connections are
    /// told `err busy: …` and closed unread, as the real server does when
    /// its slots are full; later ones get `ok {"hud":"on"}` for their
    /// request line. Runs until `stop`; returns the connections it took.
    fn session(listener: UnixListener, busy: usize, stop: Arc<AtomicBool>) -> JoinHandle<usize> {
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            let mut taken = 0;
            while !stop.load(Ordering::Relaxed) {
                let stream = match listener.accept() {
                    Ok((s, _)) => s,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2));
                        continue;
                    }
                    Err(e) => panic!("accept: {e}"),
                };
                stream.set_nonblocking(false).unwrap();
                taken += 1;
                if taken <= busy {
                    let _ = (&stream)
                        .write_all(b"err busy: 32 control connections are open; try again\n");
                    continue;
                }
                let mut line = String::new();
                BufReader::new(&stream).read_line(&mut line).unwrap();
                assert_eq!(line, "hud on\n");
                (&stream).write_all(b"ok {\"hud\":\"on\"}\n").unwrap();
            }
            taken
        })
    }

    /// A peer that answers a byte at a time (never a whole line) or a
    /// line without end: the client gives up after its time limit for the
    /// whole reply, or at [`MAX_REPLY`] bytes.
    #[test]
    fn a_slow_or_endless_peer_is_given_up_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path(), 7);
        let listener = UnixListener::bind(&path).unwrap();
        let peer = std::thread::spawn(move || {
            let mut sent = Vec::new();
            for trickle in [true, false] {
                let (mut s, _) = listener.accept().unwrap();
                let mut n = 0;
                // A byte every 100 ms for 60 s, or 8 MiB at once.
                while n < if trickle { 600 } else { 8 << 20 } {
                    let chunk: &[u8] = if trickle { b"o" } else { &[b'o'; 65536] };
                    if s.write_all(chunk).is_err() {
                        break;
                    }
                    n += chunk.len();
                    if trickle {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
                sent.push(n);
            }
            sent
        });
        let slow = request_within(&path, &Request::Status, Duration::from_secs(2));
        match slow {
            Err(ClientError::Io { source, .. }) => {
                assert_eq!(source.kind(), io::ErrorKind::TimedOut, "{source}")
            }
            other => panic!("{other:?}"),
        }
        let endless = request_within(&path, &Request::Status, Duration::from_secs(30));
        match endless {
            Err(ClientError::Io { source, .. }) => {
                assert!(source.to_string().contains("longer than"), "{source}")
            }
            other => panic!("{other:?}"),
        }
        let sent = peer.join().unwrap();
        // The client left while the peer still had bytes to send.
        assert!(sent[0] < 600 && sent[1] < 8 << 20, "{sent:?}");
    }

    #[test]
    fn busy_replies_are_tried_again_on_fresh_connections() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path(), 5);
        let stop = Arc::new(AtomicBool::new(false));
        let server = session(UnixListener::bind(&path).unwrap(), 3, stop.clone());
        let reply = request(&path, &Request::Hud(HudChange::On));
        stop.store(true, Ordering::Relaxed);
        let taken = server.join().unwrap();
        match reply {
            Ok(Reply::Ok(v)) => assert_eq!(v, serde_json::json!({"hud": "on"})),
            other => panic!("{other:?}"),
        }
        assert_eq!(taken, 4, "three busy connections, then the one answered");
    }

    #[test]
    fn a_session_that_stays_busy_is_given_up_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path(), 6);
        let stop = Arc::new(AtomicBool::new(false));
        let server = session(UnixListener::bind(&path).unwrap(), usize::MAX, stop.clone());
        let reply = request(&path, &Request::Hud(HudChange::On));
        stop.store(true, Ordering::Relaxed);
        let taken = server.join().unwrap();
        let e = reply.expect_err("an answer from a session that is always busy");
        assert_eq!(
            e.to_string(),
            "the game's control socket stayed busy for 1 s (32 connections open); try again"
        );
        let ClientError::Busy { tries, .. } = e else {
            panic!("{e:?}")
        };
        assert!(tries > 1, "gave up after {tries} try");
        assert_eq!(taken, tries as usize, "one fresh connection per try");
    }

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
