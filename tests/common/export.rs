//! `steadyhud export` from a test: a free loopback port, one HTTP
//! exchange with the exporter (or Prometheus), a sample of its text, and
//! the exporter started for a [`Harness`]'s games.

use super::{spawn, Harness, Running};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// A free loopback port (bound, then let go).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// One HTTP exchange: the status code and the body.
pub fn http(port: u16, request: &[u8]) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(request)?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    let text = String::from_utf8_lossy(&out).into_owned();
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |b| b.1).to_string();
    Ok((code, body))
}

pub fn get(port: u16, path: &str) -> (u16, String) {
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    http(port, req.as_bytes()).unwrap_or((0, String::new()))
}

/// The value of the first sample line starting with `series`.
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

/// The exporter on `port`, for the harness's games.
pub fn export(h: &Harness, port: u16) -> Running {
    let mut cmd = h.steadyhud(&["export", "--listen", &format!("127.0.0.1:{port}")]);
    let r = spawn(&mut cmd);
    let deadline = Instant::now() + Duration::from_secs(10);
    while get(port, "/metrics").0 != 200 {
        assert!(Instant::now() < deadline, "export never served");
        std::thread::sleep(Duration::from_millis(100));
    }
    r
}
