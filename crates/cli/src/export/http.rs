//! The scrape endpoint: `GET /metrics` and nothing else (any other
//! request is 404, a malformed one 400; no file is ever served), one
//! request per connection, bounded everywhere and blockable by nobody:
//!
//! - [`MAX_CONNECTIONS`] served at once. When all are taken, a new
//!   connection takes the place of the oldest one that sent nothing (not
//!   even into its socket's buffer), else of one whose request head is
//!   still partial after [`PARTIAL`], else of one whose reply is still
//!   going out after [`SLOW`]; only when none of these is open is the new
//!   one closed at once. So local processes that open connections and
//!   send nothing, trickle a request, or ask and never read, cannot keep a
//!   scraper out: each new connection pushes one of theirs out, and a
//!   scraper's request, in its buffer from the first millisecond, is never
//!   the one pushed.
//! - [`MAX_HEAD`] bytes of request head, sent within [`IDLE_TIME`]; the
//!   whole reply sent within [`REPLY_TIME`].
//! - A failed `accept` (out of file descriptors: EMFILE, ENFILE) is
//!   counted ([`Server::accept_errors`]), closes the connections idle for
//!   [`IDLE_AT_EMFILE`] (else the oldest idle one) and pauses accepting
//!   for [`FREED_PAUSE`], or [`ACCEPT_PAUSE`] when none was idle: it never
//!   spins.
//! - The games are read at most every [`FRESH`], whatever the number of
//!   scrapes: a scrape flood costs the exporter, never the games.
//! - A request whose `Host` names neither a loopback address, `localhost`
//!   nor the address it listens on ([`Hosts`]) is refused (403): a web
//!   page that rebinds its own name to 127.0.0.1 cannot read `/metrics`
//!   through the player's browser.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Connections served at once: enough that a scraper's connection, which
/// sends its request within a millisecond or so, is never the oldest
/// silent one while a flood of others comes in (each costs one thread).
pub const MAX_CONNECTIONS: usize = 64;
/// Longest request head (request line and headers), bytes.
pub const MAX_HEAD: usize = 8 * 1024;
/// Time a client has to send its request head (a scraper sends it at once).
pub const IDLE_TIME: Duration = Duration::from_secs(1);
/// Time the whole reply may take to send.
pub const REPLY_TIME: Duration = Duration::from_secs(5);
/// A reply still being sent after this may lose its place to a new
/// connection when all are taken (a scrape's reply takes milliseconds).
pub const SLOW: Duration = Duration::from_millis(500);
/// Pause after a failed `accept` before the next.
pub const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
/// The pause when that failure closed idle connections (their descriptors
/// come back as their threads end).
pub const FREED_PAUSE: Duration = Duration::from_millis(10);
/// How old the text served may be before the games are read again.
pub const FRESH: Duration = Duration::from_millis(250);

/// What answers a scrape: makes the text (reads the games).
pub type Scrape = Box<dyn FnMut() -> String + Send>;

/// The cached text and the function that renews it.
struct Source {
    scrape: Scrape,
    text: Option<(Instant, Arc<String>)>,
}

impl Source {
    fn text(&mut self) -> Arc<String> {
        match &self.text {
            Some((at, t)) if at.elapsed() < FRESH => Arc::clone(t),
            _ => {
                let t = Arc::new((self.scrape)());
                self.text = Some((Instant::now(), Arc::clone(&t)));
                t
            }
        }
    }
}

/// One open connection, as the accepting loop sees it.
/// Shared by the loop (which may close it) and its thread.
struct Conn {
    id: u64,
    stream: TcpStream,
    /// When its whole request head came (`None`: not yet).
    asked: Mutex<Option<Instant>>,
    /// Whether its thread has read a byte of it.
    took: AtomicBool,
    opened: Instant,
}

/// Which connections give way first when a new one needs a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// Nothing received: a scraper's request follows its connect at once.
    Silent,
    /// Part of a request head, for [`PARTIAL`] or longer.
    Partial,
    /// A reply still being sent after [`SLOW`].
    Slow,
}

impl Conn {
    /// How readily it gives way; `None`: not at all (a request just in, or
    /// a reply going out).
    fn rank(&self, now: Instant) -> Option<Rank> {
        match *lock(&self.asked) {
            Some(at) => (now.duration_since(at) >= SLOW).then_some(Rank::Slow),
            None if !self.received() => Some(Rank::Silent),
            None => (now.duration_since(self.opened) >= PARTIAL).then_some(Rank::Partial),
        }
    }

    /// Whether any byte of a request came, read by its thread or not yet.
    fn received(&self) -> bool {
        use std::os::fd::AsRawFd;
        let mut b = 0u8;
        // SAFETY: recv(2) peeking at most one byte into `b`, without
        // waiting, on a socket this connection owns.
        let n = unsafe {
            libc::recv(
                self.stream.as_raw_fd(),
                (&mut b as *mut u8).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        // Bytes waiting, or the head (a part) already taken by its thread.
        n > 0 || self.took.load(Ordering::Relaxed)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The open connections, oldest first.
#[derive(Default)]
struct Slots {
    next: u64,
    open: VecDeque<Arc<Conn>>,
}

/// On running out of descriptors, silent and partial connections at least
/// this old are all closed (a scraper's request comes within a millisecond
/// or two of its connect).
pub const IDLE_AT_EMFILE: Duration = Duration::from_millis(50);
/// A request head still incomplete after this may give way (it comes in
/// one packet from a scraper).
pub const PARTIAL: Duration = Duration::from_millis(50);

impl Slots {
    /// Closes every connection that is silent or partial and open for
    /// [`IDLE_AT_EMFILE`] or longer; how many.
    fn evict_idle(&mut self) -> usize {
        let now = Instant::now();
        let before = self.open.len();
        self.open.retain(|c| {
            let idle = now.duration_since(c.opened) >= IDLE_AT_EMFILE
                && c.rank(now).is_some_and(|r| r < Rank::Slow);
            if idle {
                let _ = c.stream.shutdown(Shutdown::Both);
            }
            !idle
        });
        before - self.open.len()
    }

    /// Closes the connection that gives way first (the lowest [`Rank`],
    /// the oldest of it); false when none does.
    fn evict(&mut self) -> bool {
        let now = Instant::now();
        let Some((i, _)) = self
            .open
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((i, c.rank(now)?)))
            .min_by_key(|&(i, r)| (r, i))
        else {
            return false;
        };
        if let Some(c) = self.open.remove(i) {
            // Its thread's read or write fails at once; the descriptor
            // closes when that thread lets go of it.
            let _ = c.stream.shutdown(Shutdown::Both);
        }
        true
    }
}

/// The endpoint's state shared with the text it serves.
#[derive(Clone, Default)]
pub struct Server {
    /// `accept` calls that failed so far.
    pub accept_errors: Arc<AtomicU64>,
    /// The `Host` values answered.
    pub hosts: Arc<Hosts>,
}

/// The `Host` header values a request may carry: an address (IPv4, or IPv6
/// in brackets) that is loopback or the one listened on (any address when
/// listening on all of them: 0.0.0.0 or ::), `localhost`, or the name
/// `--listen` gave; a port may follow. A request without `Host` (HTTP/1.0)
/// is answered: browsers always send one. Another name is what DNS
/// rebinding looks like: an attacker's page whose name now resolves to
/// this machine.
#[derive(Clone, Debug, Default)]
pub struct Hosts {
    /// The host part of `--listen` when it is a name, lowercase.
    name: Option<String>,
    /// The address listened on.
    ip: Option<IpAddr>,
}

impl Hosts {
    /// The hosts of an exporter asked to listen on `listen` (`ADDR:PORT` as
    /// given) and listening on `bound`.
    pub fn new(listen: &str, bound: SocketAddr) -> Hosts {
        let name = split_port(listen)
            .filter(|h| h.parse::<IpAddr>().is_err())
            .map(|h| h.trim_end_matches('.').to_ascii_lowercase());
        Hosts {
            name,
            ip: Some(bound.ip()),
        }
    }

    /// Whether a request's `Host` value names this exporter.
    pub fn allows(&self, host: &str) -> bool {
        let Some(h) = split_port(host.trim()) else {
            return false;
        };
        let h = h.trim_end_matches('.').to_ascii_lowercase();
        match h.parse::<IpAddr>() {
            Ok(ip) => {
                ip.is_loopback()
                    || self
                        .ip
                        .is_some_and(|mine| mine == ip || mine.is_unspecified())
            }
            Err(_) => h == "localhost" || self.name.as_deref() == Some(h.as_str()),
        }
    }
}

/// The host of `host[:port]` or `[v6][:port]` (brackets removed); `None`
/// when it is not of that form.
fn split_port(s: &str) -> Option<&str> {
    let digits = |p: &str| p.is_empty() || p.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        let port_ok = after.is_empty() || after.strip_prefix(':').is_some_and(digits);
        return port_ok.then_some(h);
    }
    let h = match s.rsplit_once(':') {
        Some((h, p)) if digits(p) && !h.contains(':') => h,
        Some(_) => return None,
        None => s,
    };
    (!h.is_empty()).then_some(h)
}

/// The request head's `Host` value: `Ok(None)` without one, `Err` with
/// two.
fn host_header(head: &[u8]) -> Result<Option<String>, ()> {
    let text = std::str::from_utf8(head).map_err(|_| ())?;
    let mut found = None;
    for line in text.split("\r\n").skip(1) {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        if k.eq_ignore_ascii_case("host") {
            if found.is_some() {
                return Err(());
            }
            found = Some(v.trim().to_string());
        }
    }
    Ok(found)
}

impl Server {
    /// Serves `listener` until the process ends.
    pub fn serve(&self, listener: TcpListener, scrape: Scrape) {
        let source = Arc::new(Mutex::new(Source { scrape, text: None }));
        let slots = Arc::new(Mutex::new(Slots::default()));
        loop {
            let stream = match listener.accept() {
                Ok((s, _)) => s,
                Err(e) => {
                    self.accept_errors.fetch_add(1, Ordering::Relaxed);
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        // Out of descriptors: idle connections give theirs
                        // back, and the next try waits a little.
                        let mut slots = lock(&slots);
                        let freed = slots.evict_idle() > 0 || slots.evict();
                        drop(slots);
                        // Each short pause follows a connection closed (so
                        // one accepted before it): no spin either way.
                        std::thread::sleep(if freed { FREED_PAUSE } else { ACCEPT_PAUSE });
                    }
                    continue;
                }
            };
            let conn = {
                let mut s = lock(&slots);
                if s.open.len() >= MAX_CONNECTIONS && !s.evict() {
                    drop(stream); // closed at once: the client may try again
                    continue;
                }
                s.next += 1;
                let conn = Arc::new(Conn {
                    id: s.next,
                    stream,
                    asked: Mutex::new(None),
                    took: AtomicBool::new(false),
                    opened: Instant::now(),
                });
                s.open.push_back(Arc::clone(&conn));
                conn
            };
            let (source, slots2) = (Arc::clone(&source), Arc::clone(&slots));
            let hosts = Arc::clone(&self.hosts);
            let id = conn.id;
            let spawned = std::thread::Builder::new()
                .name("export-conn".into())
                .spawn(move || {
                    let _ = answer(&conn, &source, &hosts);
                    lock(&slots2).open.retain(|c| c.id != conn.id);
                });
            if spawned.is_err() {
                // No thread: the connection went with the closure, unserved.
                lock(&slots).open.retain(|c| c.id != id);
            }
        }
    }
}

/// What a request head asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Asked {
    Metrics,
    NotFound,
    Bad,
    /// `/metrics` with a `Host` that is not this exporter ([`Hosts`]).
    OtherHost,
}

/// Reads a request head: `GET /metrics` (a query string allowed) is the
/// only thing served.
pub fn parse_head(head: &[u8]) -> Asked {
    let Ok(text) = std::str::from_utf8(head) else {
        return Asked::Bad;
    };
    let line = text.lines().next().unwrap_or("");
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version)) = (words.next(), words.next(), words.next())
    else {
        return Asked::Bad;
    };
    if words.next().is_some() || !version.starts_with("HTTP/1.") {
        return Asked::Bad;
    }
    let path = target.split('?').next().unwrap_or("");
    if method == "GET" && path == "/metrics" {
        Asked::Metrics
    } else {
        Asked::NotFound
    }
}

fn answer(conn: &Conn, source: &Mutex<Source>, hosts: &Hosts) -> std::io::Result<()> {
    let mut stream: &TcpStream = &conn.stream;
    let deadline = Instant::now() + IDLE_TIME;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let asked = loop {
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = &head[..end];
            break match (parse_head(head), host_header(head)) {
                (_, Err(())) => Asked::Bad,
                (Asked::Metrics, Ok(Some(h))) if !hosts.allows(&h) => Asked::OtherHost,
                (asked, _) => asked,
            };
        }
        if head.len() > MAX_HEAD {
            break Asked::Bad;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(()); // too slow: closed without a word
        }
        stream.set_read_timeout(Some(left))?;
        // Peeked first, so the loop never sees bytes gone from the socket
        // before `took` says so.
        match conn.stream.peek(&mut buf) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(_) => conn.took.store(true, Ordering::Relaxed),
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    };
    *lock(&conn.asked) = Some(Instant::now());
    let (status, body): (&str, Arc<String>) = match asked {
        Asked::Metrics => ("200 OK", lock(source).text()),
        Asked::NotFound => (
            "404 Not Found",
            Arc::new("not found: only GET /metrics\n".into()),
        ),
        Asked::Bad => ("400 Bad Request", Arc::new("bad request\n".into())),
        Asked::OtherHost => (
            "403 Forbidden",
            Arc::new("forbidden: the Host header does not name this exporter\n".into()),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    // The whole reply within REPLY_TIME, however slowly the client reads.
    let deadline = Instant::now() + REPLY_TIME;
    for part in [head.as_bytes(), body.as_bytes()] {
        for chunk in part.chunks(16 * 1024) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(()); // too slow a reader: dropped
            }
            stream.set_write_timeout(Some(left))?;
            stream.write_all(chunk)?;
        }
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_metrics_is_served() {
        assert_eq!(
            parse_head(b"GET /metrics HTTP/1.1\r\nHost: x"),
            Asked::Metrics
        );
        assert_eq!(parse_head(b"GET /metrics?x=1 HTTP/1.0"), Asked::Metrics);
        for other in [
            &b"GET / HTTP/1.1"[..],
            b"GET /etc/passwd HTTP/1.1",
            b"GET /metrics/../x HTTP/1.1",
            b"POST /metrics HTTP/1.1",
            b"HEAD /metrics HTTP/1.1",
        ] {
            assert_eq!(parse_head(other), Asked::NotFound, "{other:?}");
        }
        for bad in [
            &b"GET /metrics"[..],
            b"\xff\xfe",
            b"",
            b"GET /metrics SPDY/3",
            b"GET  /metrics HTTP/1.1",
        ] {
            assert_eq!(parse_head(bad), Asked::Bad, "{bad:?}");
        }
    }

    #[test]
    fn hosts_are_loopback_localhost_or_the_listen_address() {
        let bound: SocketAddr = "127.0.0.1:9464".parse().unwrap();
        let h = Hosts::new("127.0.0.1:9464", bound);
        for ok in [
            "127.0.0.1:9464",
            "127.0.0.1",
            "localhost:9464",
            "LOCALHOST.",
            "[::1]:9464",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for no in [
            "evil.example:9464",
            "evil.example",
            "10.0.0.1:9464",
            "",
            ":9464",
            "[::1",
        ] {
            assert!(!h.allows(no), "{no}");
        }
        let lan = Hosts::new("gamebox:9464", "192.168.1.5:9464".parse().unwrap());
        assert!(lan.allows("gamebox:9464") && lan.allows("192.168.1.5:9464"));
        assert!(!lan.allows("192.168.1.6:9464") && !lan.allows("evil.example"));
        let any = Hosts::new("0.0.0.0:9464", "0.0.0.0:9464".parse().unwrap());
        assert!(any.allows("192.168.1.6:9464") && !any.allows("evil.example:9464"));
    }

    /// A page whose name was rebound to 127.0.0.1 asks with its own name as
    /// `Host`: refused; the same request naming the address is answered.
    #[test]
    fn a_dns_rebinding_host_is_refused() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let bound = listener.local_addr().unwrap();
        let server = Server {
            hosts: Arc::new(Hosts::new("127.0.0.1:0", bound)),
            ..Server::default()
        };
        std::thread::spawn(move || server.serve(listener, Box::new(|| "m 1\n".to_string())));
        let ask = |host: &str| {
            let mut s = TcpStream::connect(bound).unwrap();
            write!(s, "GET /metrics HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
            let mut reply = String::new();
            s.read_to_string(&mut reply).unwrap();
            reply
        };
        let evil = ask(&format!("rebind.evil.example:{}", bound.port()));
        assert!(evil.starts_with("HTTP/1.1 403 "), "{evil}");
        assert!(!evil.contains("m 1"), "{evil}");
        let ok = ask(&bound.to_string());
        assert!(
            ok.starts_with("HTTP/1.1 200 ") && ok.ends_with("m 1\n"),
            "{ok}"
        );
    }
}
