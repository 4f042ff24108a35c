//! The layer's side of the control socket: a non-blocking server the
//! analysis thread polls whenever one of its sockets is ready
//! ([`Server::interest`]) and at its regular ticks.
//!
//! Nothing here ever waits: the listener and every connection are
//! non-blocking, each poll does bounded work (at most [`ACCEPTS_PER_POLL`]
//! new connections, [`MAX_CONNECTIONS`] open ones, [`READ_PER_POLL`] bytes
//! and [`REQUESTS_PER_POLL`] requests per connection,
//! [`REQUESTS_PER_POLL_TOTAL`] in all), and a client that sends a line too
//! long, stops reading, or makes no progress for [`IDLE`] is told why
//! (where it still can be) and dropped. So a slow or hostile client costs the analysis thread
//! microseconds and never reaches the game's frames, which this thread
//! does not touch.
//!
//! Replies are sent with `MSG_NOSIGNAL`: inside a game, SIGPIPE has the
//! game's disposition (usually "terminate"), and a client that hangs up
//! before its reply must not kill the game.
//!
//! Security: the folder must be a real directory of ours with mode 0700
//! (created so if missing), the socket is 0600, and a peer whose uid
//! (`SO_PEERCRED`) is not ours is refused even when it could open the
//! file (root can).

use super::protocol::{Reply, Request, BUSY, MAX_LINE};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use steadyhud_sys::private_dir::euid;

/// New connections taken per poll; more wait in the listen backlog.
pub const ACCEPTS_PER_POLL: usize = 64;
/// Connections open at once; one more is told `err busy` and closed.
pub const MAX_CONNECTIONS: usize = 32;
/// Bytes read from one connection per poll.
pub const READ_PER_POLL: usize = 4096;
/// Requests answered on one connection per poll.
pub const REQUESTS_PER_POLL: usize = 16;
/// Requests answered per poll over all connections (the rest wait for the
/// next poll, at once: [`Server::interest`] says work is waiting).
pub const REQUESTS_PER_POLL_TOTAL: usize = 64;
/// A connection with no complete request for this long is closed.
pub const IDLE: Duration = Duration::from_secs(2);
/// Unsent reply bytes a connection may pile up (it does not read).
const MAX_PENDING_OUT: usize = 64 * 1024;

/// Why the socket could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot create {}: {source}", path.display())]
    Dir { path: PathBuf, source: io::Error },
    #[error("{} is not private ({why}); not serving a control socket there", path.display())]
    NotPrivate { path: PathBuf, why: String },
    #[error("cannot listen on {}: {source}", path.display())]
    Bind { path: PathBuf, source: io::Error },
    #[error("{} is served by another live process", path.display())]
    InUse { path: PathBuf },
}

/// Counts of what the server did, for tests and the status reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    pub accepted: u64,
    pub requests: u64,
    /// Connections closed with an `err` about the connection (too long,
    /// not UTF-8, idle, busy, refused peer, not reading).
    pub dropped: u64,
}

struct Conn {
    stream: UnixStream,
    input: Vec<u8>,
    output: Vec<u8>,
    /// When the connection is dropped unless it makes progress (a
    /// complete request, or reply bytes sent).
    idle_until: Instant,
    /// The client shut its side: answer what is left, then close.
    input_ended: bool,
    /// Close once `output` is sent.
    closing: bool,
}

/// A listening control socket; removed from disk on drop.
pub struct Server {
    listener: UnixListener,
    path: PathBuf,
    /// (device, inode) of the socket file we bound, so drop removes only it.
    file_id: (u64, u64),
    uid: u32,
    conns: Vec<Conn>,
    stats: ServerStats,
}

/// Creates `dir` (mode 0700) or checks that it is ours and private
/// ([`steadyhud_sys::private_dir::ensure`], as the present tails' folder).
pub fn private_dir(dir: &Path) -> Result<(), ServeError> {
    use steadyhud_sys::private_dir::{ensure, DirError};
    ensure(dir).map_err(|e| match e {
        DirError::Io { path, source } => ServeError::Dir { path, source },
        DirError::NotPrivate { path, why } => ServeError::NotPrivate { path, why },
    })
}

impl Server {
    /// Listens on `<dir>/<pid>.sock`, replacing a stale file of that name
    /// (a dead process that had the same pid).
    pub fn bind(dir: &Path, pid: u32) -> Result<Server, ServeError> {
        private_dir(dir)?;
        let path = super::socket_path(dir, pid);
        let bind_err = |source| ServeError::Bind {
            path: path.clone(),
            source,
        };
        // A file of our name is stale (a dead process had our pid) unless
        // somebody still listens there: another pid namespace sharing the
        // folder may have a live game of the same pid; its socket stays.
        match super::connect_now(&path) {
            Ok(_) => return Err(ServeError::InUse { path }),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                return Err(ServeError::InUse { path })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(_) => match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(bind_err(e)),
            },
        }
        let listener = UnixListener::bind(&path).map_err(bind_err)?;
        listener.set_nonblocking(true).map_err(bind_err)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(bind_err)?;
        let meta = std::fs::symlink_metadata(&path).map_err(bind_err)?;
        Ok(Server {
            listener,
            file_id: (meta.dev(), meta.ino()),
            path,
            uid: euid(),
            conns: Vec::new(),
            stats: ServerStats::default(),
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the server did so far.
    pub fn stats(&self) -> ServerStats {
        self.stats
    }

    /// Connections open now.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// What the server waits for, for a thread that sleeps in `poll(2)`
    /// until then: appends one `pollfd` per socket with something to wait
    /// for (the listener for connections, each connection for its next
    /// request or for room to send its reply), and says whether work is
    /// already waiting without any socket becoming ready (a request read
    /// but not answered yet, past the per-poll budget).
    pub fn interest(&self, fds: &mut Vec<libc::pollfd>) -> bool {
        let fd = |f: &dyn AsRawFd, events| libc::pollfd {
            fd: f.as_raw_fd(),
            events,
            revents: 0,
        };
        fds.push(fd(&self.listener, libc::POLLIN));
        let mut pending = false;
        for c in &self.conns {
            let mut events = 0;
            if !c.closing && !c.input_ended && c.input.len() < MAX_LINE {
                events |= libc::POLLIN;
            }
            if !c.output.is_empty() {
                events |= libc::POLLOUT;
            }
            if events != 0 {
                fds.push(fd(&c.stream, events));
            }
            pending |= c.input.contains(&b'\n') || (c.input_ended && !c.closing);
        }
        pending
    }

    /// Accepts, reads, answers (through `handle`) and writes what is ready
    /// now, without waiting for anything.
    pub fn poll(&mut self, now: Instant, handle: &mut dyn FnMut(Request) -> Reply) {
        self.accept(now);
        let mut stats = self.stats;
        let mut budget = REQUESTS_PER_POLL_TOTAL;
        self.conns
            .retain_mut(|c| c.serve(now, &mut budget, handle, &mut stats));
        self.stats = stats;
    }

    fn accept(&mut self, now: Instant) {
        // accept(2) on an empty queue still allocates and frees a socket
        // and its file (a fifth of the analysis thread's CPU at 144 fps,
        // woken 20 times a second); asking first costs no allocation.
        if !readable(&self.listener) {
            return;
        }
        for _ in 0..ACCEPTS_PER_POLL {
            let stream = match self.listener.accept() {
                Ok((s, _)) => s,
                // WouldBlock: nobody waiting. Other errors (EMFILE,
                // ECONNABORTED) are retried at the next poll.
                Err(_) => return,
            };
            self.stats.accepted += 1;
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let refusal = match peer_uid(&stream) {
                Some(uid) if uid == self.uid => None,
                Some(uid) => Some(format!(
                    "permission denied: this session belongs to uid {}, not {uid}",
                    self.uid
                )),
                None => Some("permission denied: cannot tell the peer's uid".into()),
            };
            let refusal = refusal.or_else(|| {
                (self.conns.len() >= MAX_CONNECTIONS).then(|| {
                    format!("{BUSY}: {MAX_CONNECTIONS} control connections are open; try again")
                })
            });
            if let Some(why) = refusal {
                self.stats.dropped += 1;
                let _ = send(&stream, format!("{}\n", Reply::Err(why)).as_bytes());
                continue;
            }
            self.conns.push(Conn {
                stream,
                input: Vec::new(),
                output: Vec::new(),
                idle_until: now + IDLE,
                input_ended: false,
                closing: false,
            });
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Only the file we bound: a later process with our pid may have
        // replaced it (only after we died, but be exact anyway).
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.file_id) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Conn {
    /// One poll of this connection, answering at most `budget` requests
    /// (decremented); false = drop it.
    fn serve(
        &mut self,
        now: Instant,
        budget: &mut usize,
        handle: &mut dyn FnMut(Request) -> Reply,
        stats: &mut ServerStats,
    ) -> bool {
        if now >= self.idle_until {
            if self.closing {
                // Its last reply could not be sent for IDLE: it does not read.
                stats.dropped += 1;
                return false;
            }
            let idle = format!("idle for {} s without a complete request", IDLE.as_secs());
            self.refuse(&idle, stats);
            self.idle_until = now + IDLE;
        }
        if !self.closing {
            self.read(now, budget, handle, stats);
        }
        if !self.output.is_empty() {
            match send(&self.stream, &self.output) {
                Ok(n) => {
                    self.output.drain(..n);
                    if n > 0 {
                        self.idle_until = now + IDLE;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return false, // the client hung up
            }
            if self.output.len() > MAX_PENDING_OUT {
                stats.dropped += 1;
                return false;
            }
        }
        !(self.closing && self.output.is_empty())
    }

    fn read(
        &mut self,
        now: Instant,
        budget: &mut usize,
        handle: &mut dyn FnMut(Request) -> Reply,
        stats: &mut ServerStats,
    ) {
        // Backpressure: nothing more is read while a line's worth waits, so
        // a client that sends faster than it is answered holds at most
        // MAX_LINE + READ_PER_POLL bytes here.
        if !self.input_ended && self.input.len() < MAX_LINE {
            let mut buf = [0u8; READ_PER_POLL];
            match self.stream.read(&mut buf) {
                Ok(0) => self.input_ended = true,
                Ok(n) => self.input.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => {
                    self.closing = true;
                    return;
                }
            }
        }
        let mut answered = 0;
        while answered < REQUESTS_PER_POLL && *budget > 0 {
            let Some(end) = self.input.iter().position(|&b| b == b'\n') else {
                break;
            };
            let line: Vec<u8> = self.input.drain(..=end).collect();
            answered += 1;
            *budget -= 1;
            if line.len() > MAX_LINE {
                return self.refuse(&too_long(), stats);
            }
            if !self.answer(&line[..end], handle, stats) {
                return;
            }
            self.idle_until = now + IDLE;
        }
        let complete_left = self.input.contains(&b'\n');
        if !complete_left && self.input.len() >= MAX_LINE {
            return self.refuse(&too_long(), stats);
        }
        if self.input_ended && !complete_left && *budget > 0 {
            // Every complete request is answered; a last one without its
            // `\n` (`printf status | socat …`) too, then the connection ends.
            let rest = std::mem::take(&mut self.input);
            if !rest.is_empty() {
                *budget -= 1;
                self.answer(&rest, handle, stats);
            }
            self.closing = true;
        }
    }

    /// Answers one request line; false when the connection is closing.
    fn answer(
        &mut self,
        line: &[u8],
        handle: &mut dyn FnMut(Request) -> Reply,
        stats: &mut ServerStats,
    ) -> bool {
        let Ok(text) = std::str::from_utf8(line) else {
            self.refuse("request is not UTF-8 text", stats);
            return false;
        };
        stats.requests += 1;
        let reply = match Request::parse(text) {
            Ok(request) => handle(request),
            Err(e) => Reply::Err(e.to_string()),
        };
        self.push(&reply);
        true
    }

    fn push(&mut self, reply: &Reply) {
        self.output.extend_from_slice(reply.to_string().as_bytes());
        self.output.push(b'\n');
    }

    /// Says why and closes the connection once that is sent.
    fn refuse(&mut self, why: &str, stats: &mut ServerStats) {
        stats.dropped += 1;
        self.input.clear();
        self.push(&Reply::Err(why.to_string()));
        self.closing = true;
    }
}

fn too_long() -> String {
    format!("request longer than {MAX_LINE} bytes")
}

/// `send` without SIGPIPE and without blocking.
fn send(stream: &UnixStream, bytes: &[u8]) -> io::Result<usize> {
    // SAFETY: the pointer and length describe `bytes`, valid for the call;
    // the fd is the stream's, open while `stream` lives.
    let n = unsafe {
        libc::send(
            stream.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Whether `listener` has a connection waiting (or an error to report):
/// `poll(2)` with no wait. A failed poll answers yes, so `accept` decides.
fn readable(listener: &UnixListener) -> bool {
    let mut fd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one live pollfd; the fd is open while `listener` lives.
    unsafe { libc::poll(&mut fd, 1, 0) != 0 }
}

/// The uid of the process at the other end (`SO_PEERCRED`).
fn peer_uid(stream: &UnixStream) -> Option<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given; the
    // fd is open while `stream` lives.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (r == 0 && len as usize == std::mem::size_of::<libc::ucred>()).then_some(cred.uid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::HudChange;
    use std::io::{BufRead, BufReader, Write};

    fn server() -> (tempfile::TempDir, Server) {
        let dir = tempfile::tempdir().unwrap();
        let s = Server::bind(&dir.path().join("steadyhud"), 4242).unwrap();
        (dir, s)
    }

    /// Polls until `done(server)` or 2 s.
    fn pump(s: &mut Server, done: impl Fn(&Server) -> bool) {
        let end = Instant::now() + Duration::from_secs(2);
        while !done(s) && Instant::now() < end {
            s.poll(Instant::now(), &mut echo);
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn echo(r: Request) -> Reply {
        Reply::Ok(serde_json::json!({ "request": r.to_line() }))
    }

    #[test]
    fn folder_and_socket_are_private() {
        let (dir, s) = server();
        let d = std::fs::metadata(dir.path().join("steadyhud")).unwrap();
        assert_eq!(d.mode() & 0o777, 0o700);
        let f = std::fs::symlink_metadata(s.path()).unwrap();
        assert_eq!(f.mode() & 0o777, 0o600);
        assert!(s.path().ends_with("4242.sock"));
        let path = s.path().to_path_buf();
        drop(s);
        assert!(!path.exists(), "socket removed on drop");

        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = Server::bind(&open, 1)
            .err()
            .expect("a 0755 folder is refused");
        assert!(e.to_string().contains("mode 755"), "{e}");
    }

    #[test]
    fn requests_get_replies_in_order_on_one_connection() {
        let (_dir, mut s) = server();
        let mut c = UnixStream::connect(s.path()).unwrap();
        c.write_all(b"hud toggle\nlimit 60\nbogus\n").unwrap();
        let mut seen = Vec::new();
        let mut handle = |r: Request| {
            seen.push(r.clone());
            echo(r)
        };
        let mut reader = BufReader::new(c.try_clone().unwrap());
        let mut lines = Vec::new();
        let end = Instant::now() + Duration::from_secs(2);
        c.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
        while lines.len() < 3 && Instant::now() < end {
            s.poll(Instant::now(), &mut handle);
            let mut l = String::new();
            if reader.read_line(&mut l).is_ok() && !l.is_empty() {
                lines.push(l);
            }
        }
        assert_eq!(lines[0], "ok {\"request\":\"hud toggle\"}\n");
        assert_eq!(lines[1], "ok {\"request\":\"limit 60\"}\n");
        assert!(
            lines[2].starts_with("err unknown request \"bogus\""),
            "{}",
            lines[2]
        );
        assert_eq!(
            seen,
            vec![Request::Hud(HudChange::Toggle), Request::Limit(Some(60))]
        );
        assert_eq!(s.stats().requests, 3);
    }

    /// Reads everything the server sends until it closes (or 2 s pass).
    fn read_all(s: &mut Server, c: &mut UnixStream) -> String {
        c.set_nonblocking(true).unwrap();
        let mut out = Vec::new();
        let end = Instant::now() + Duration::from_secs(3);
        loop {
            s.poll(Instant::now(), &mut echo);
            let mut buf = [0u8; 4096];
            match c.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
            if Instant::now() > end {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn oversized_binary_and_idle_clients_are_told_and_dropped() {
        let (_dir, mut s) = server();
        let mut long = UnixStream::connect(s.path()).unwrap();
        long.write_all(&vec![b'a'; MAX_LINE + 10]).unwrap();
        assert_eq!(
            read_all(&mut s, &mut long),
            format!("err request longer than {MAX_LINE} bytes\n")
        );

        let mut binary = UnixStream::connect(s.path()).unwrap();
        binary.write_all(b"\xff\xfe\x00garbage\n").unwrap();
        assert_eq!(
            read_all(&mut s, &mut binary),
            "err request is not UTF-8 text\n"
        );

        let mut idle = UnixStream::connect(s.path()).unwrap();
        idle.write_all(b"hud").unwrap(); // never finished
        let t = Instant::now();
        assert_eq!(
            read_all(&mut s, &mut idle),
            "err idle for 2 s without a complete request\n"
        );
        assert!(t.elapsed() >= IDLE);
        assert_eq!(s.connections(), 0);
        assert_eq!(s.stats().dropped, 3);
    }

    #[test]
    fn last_request_without_newline_is_answered() {
        let (_dir, mut s) = server();
        let mut c = UnixStream::connect(s.path()).unwrap();
        c.write_all(b"status").unwrap();
        c.shutdown(std::net::Shutdown::Write).unwrap();
        assert_eq!(read_all(&mut s, &mut c), "ok {\"request\":\"status\"}\n");
    }

    #[test]
    fn pipelined_requests_are_all_answered_even_after_the_client_shuts_its_side() {
        let (_dir, mut s) = server();
        let mut c = UnixStream::connect(s.path()).unwrap();
        // 200 short requests (1,400 bytes, more than one line's limit in
        // all) and 40 marks, then EOF: every one gets its reply.
        let mut sent = "status\n".repeat(200);
        for i in 0..40 {
            sent.push_str(&format!("mark m{i}\n"));
        }
        c.write_all(sent.as_bytes()).unwrap();
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let replies = read_all(&mut s, &mut c);
        let lines: Vec<&str> = replies.lines().collect();
        assert_eq!(
            lines.len(),
            240,
            "{:?}",
            &lines[lines.len().saturating_sub(3)..]
        );
        assert!(lines.iter().all(|l| l.starts_with("ok ")), "{replies}");
        assert_eq!(lines[239], "ok {\"request\":\"mark m39\"}");
    }

    #[test]
    fn a_live_socket_of_the_same_name_is_left_alone_a_stale_one_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("steadyhud");
        let first = Server::bind(&d, 7).unwrap();
        let e = Server::bind(&d, 7)
            .err()
            .expect("a live socket is not taken over");
        assert!(matches!(e, ServeError::InUse { .. }), "{e}");
        assert!(first.path().exists());
        // A dead listener's file (its fd closed, the file left).
        let path = crate::socket_path(&d, 8);
        drop(UnixListener::bind(&path).unwrap());
        assert!(path.exists());
        let second = Server::bind(&d, 8).expect("a stale file is replaced");
        assert!(UnixStream::connect(second.path()).is_ok());
    }

    /// Opens every connection slot of `s` and has it accept them all.
    fn fill(s: &mut Server) -> Vec<UnixStream> {
        let held: Vec<UnixStream> = (0..MAX_CONNECTIONS)
            .map(|_| UnixStream::connect(s.path()).unwrap())
            .collect();
        s.poll(Instant::now(), &mut echo);
        assert_eq!(s.connections(), MAX_CONNECTIONS);
        held
    }

    #[test]
    fn too_many_connections_get_busy_and_hangups_do_not_hurt() {
        let (_dir, mut s) = server();
        let held = fill(&mut s);
        let mut extra = UnixStream::connect(s.path()).unwrap();
        let reply = read_all(&mut s, &mut extra);
        assert!(reply.starts_with("err busy:"), "{reply}");
        // What the client retries on.
        assert!(Reply::parse(&reply).unwrap().is_busy(), "{reply}");
        // Clients that send a request and hang up before the reply: the
        // reply's send fails quietly (no SIGPIPE) and they are dropped.
        for mut c in held {
            c.write_all(b"status\n").unwrap();
        }
        pump(&mut s, |s| s.connections() == 0);
        assert_eq!(s.connections(), 0);
    }

    #[test]
    fn the_client_gets_through_once_a_slot_frees() {
        let (_dir, mut s) = server();
        let held = fill(&mut s);
        let path = s.path().to_path_buf();
        let client = std::thread::spawn(move || crate::client::request(&path, &Request::Status));
        // A while of `err busy`: the client is still trying.
        let end = Instant::now() + Duration::from_millis(200);
        while Instant::now() < end {
            s.poll(Instant::now(), &mut echo);
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(!client.is_finished(), "the client stopped at a busy reply");
        drop(held);
        pump(&mut s, |_| client.is_finished());
        match client.join().unwrap() {
            Ok(Reply::Ok(v)) => assert_eq!(v["request"], "status"),
            other => panic!("{other:?}"),
        }
    }
}
