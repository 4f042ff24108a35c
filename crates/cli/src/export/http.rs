//! The scrape endpoint: `GET /metrics` and nothing else (any other
//! request is 404, a malformed one 400; no file is ever served), one
//! request per connection, bounded everywhere: [`MAX_CONNECTIONS`] at
//! once (one more is closed at once), [`MAX_HEAD`] bytes of request head,
//! [`REQUEST_TIME`] to send it. The games are read at most every
//! [`FRESH`], whatever the number of scrapes: a scrape flood costs the
//! exporter, never the games.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 16;
/// Longest request head (request line and headers), bytes.
pub const MAX_HEAD: usize = 8 * 1024;
/// Time a client has to send its request head.
pub const REQUEST_TIME: Duration = Duration::from_secs(2);
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

/// Serves `listener` until the process ends.
pub fn serve(listener: TcpListener, scrape: Scrape) {
    let source = Arc::new(Mutex::new(Source { scrape, text: None }));
    let open = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::AcqRel);
            drop(stream); // closed at once: the client may try again
            continue;
        }
        let (source, counter) = (Arc::clone(&source), Arc::clone(&open));
        let spawned = std::thread::Builder::new()
            .name("export-conn".into())
            .spawn(move || {
                let _ = answer(stream, &source);
                counter.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            // No thread: the connection went with the closure, unserved.
            open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// What a request head asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Asked {
    Metrics,
    NotFound,
    Bad,
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

fn answer(mut stream: TcpStream, source: &Mutex<Source>) -> std::io::Result<()> {
    let deadline = Instant::now() + REQUEST_TIME;
    stream.set_write_timeout(Some(REQUEST_TIME))?;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let asked = loop {
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break parse_head(&head[..end]);
        }
        if head.len() > MAX_HEAD {
            break Asked::Bad;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(()); // too slow: closed without a word
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(_) => return Ok(()),
        }
    };
    let (status, body): (&str, Arc<String>) = match asked {
        Asked::Metrics => {
            let text = source.lock().unwrap_or_else(|e| e.into_inner()).text();
            ("200 OK", text)
        }
        Asked::NotFound => (
            "404 Not Found",
            Arc::new("not found: only GET /metrics\n".into()),
        ),
        Asked::Bad => ("400 Bad Request", Arc::new("bad request\n".into())),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
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
}
