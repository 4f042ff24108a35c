//! `steadyhud ctl [--pid P] [--json] REQUEST`: talks to running games
//! through their control sockets ([`steadyhud_control`]).
//!
//! `list` is answered here (every socket's `status`, stale sockets of dead
//! processes removed); every other request is sent as it is written, so
//! the words are the protocol's (`hud toggle`, `limit 60`, `mark boss
//! fight`, `status`). A session that answers `busy` is asked again for up
//! to a second ([`client::request`]). Exit codes: 0 done, 1 the session
//! refused the request (also: it stayed busy), 2 no session reached or a
//! bad request.

use std::path::Path;
use std::process::ExitCode;
use steadyhud_control::client::{self, ClientError, Socket};
use steadyhud_control::protocol::{Reply, Request};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game's process id (default: the only running session).
    #[arg(long, value_name = "P")]
    pub pid: Option<u32>,
    /// Print the session's JSON reply as it is (status, list).
    #[arg(long)]
    pub json: bool,
    /// list | status | hud on|off|toggle | limit N|off | mark TEXT
    #[arg(required = true, num_args = 1.., value_name = "REQUEST")]
    pub request: Vec<String>,
}

pub fn run(args: &Args) -> ExitCode {
    let dir = match steadyhud_control::socket_dir() {
        Ok(d) => d,
        Err(e) => return fail(&ClientError::from(e)),
    };
    let words = args.request.join(" ");
    if words.trim() == "list" {
        return list(&dir, args.json);
    }
    let request = match Request::parse(&words) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("steadyhud: {e}");
            return ExitCode::from(2);
        }
    };
    let socket = match client::choose(&dir, args.pid) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    match client::request(&socket.path, &request) {
        Ok(Reply::Ok(v)) => {
            let text = if args.json {
                serde_json::to_string_pretty(&v).unwrap_or_default()
            } else {
                describe(&request, &v, socket.pid)
            };
            println!("{text}");
            ExitCode::SUCCESS
        }
        Ok(Reply::Err(m)) => {
            eprintln!("steadyhud: pid {}: {m}", socket.pid);
            ExitCode::from(1)
        }
        // An `err busy` reply, as before the retries: exit code 1.
        Err(e @ ClientError::Busy { .. }) => {
            eprintln!("steadyhud: pid {}: {e}", socket.pid);
            ExitCode::from(1)
        }
        Err(ClientError::Connect { source, .. }) if client::is_stale(&source) => {
            remove_stale(&socket);
            eprintln!("steadyhud: pid {} is not running any more", socket.pid);
            ExitCode::from(2)
        }
        Err(e) => fail(&e),
    }
}

/// Removes a socket nobody listens on any more, saying so on stderr.
fn remove_stale(socket: &Socket) {
    match std::fs::remove_file(&socket.path) {
        Ok(()) => eprintln!(
            "steadyhud: removed stale socket {} (process {} is gone)",
            socket.path.display(),
            socket.pid
        ),
        Err(e) => eprintln!(
            "steadyhud: stale socket {} not removed: {e}",
            socket.path.display()
        ),
    }
}

fn fail(e: &ClientError) -> ExitCode {
    eprintln!("steadyhud: {e}");
    ExitCode::from(2)
}

/// The human line(s) for a successful reply.
fn describe(request: &Request, v: &serde_json::Value, pid: u32) -> String {
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("?").to_string();
    match request {
        Request::Hud(_) => format!("HUD {} (pid {pid})", s("hud")),
        Request::Limit(_) => match v.get("fps_limit").and_then(|x| x.as_u64()) {
            Some(0) | None => format!("frame cap off (pid {pid})"),
            Some(n) => format!("frame cap {n} fps (pid {pid})"),
        },
        Request::Mark(text) => {
            let logs = v.get("logs").and_then(|l| l.as_array()).cloned();
            logs.unwrap_or_default()
                .iter()
                .map(|m| {
                    format!(
                        "mark {text:?} at frame {} of {}",
                        m.get("frame").and_then(|f| f.as_u64()).unwrap_or(0),
                        m.get("log").and_then(|l| l.as_str()).unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
        Request::Help => v
            .get("requests")
            .and_then(|r| r.as_array())
            .map(|r| {
                r.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
        Request::Status => status_text(v),
    }
}

/// `status` for people: the process, then each window's rolling metrics.
pub fn status_text(v: &serde_json::Value) -> String {
    let num = |x: Option<&serde_json::Value>| x.and_then(|x| x.as_f64());
    let mut out = format!(
        "pid {}  {}\nHUD {}, frame cap {}\n",
        v.get("pid").and_then(|p| p.as_u64()).unwrap_or(0),
        v.get("exe").and_then(|e| e.as_str()).unwrap_or("?"),
        v.get("hud").and_then(|h| h.as_str()).unwrap_or("?"),
        match v.get("fps_limit").and_then(|f| f.as_u64()) {
            Some(0) | None => "off".to_string(),
            Some(n) => format!("{n} fps"),
        }
    );
    let windows = v.get("windows").and_then(|w| w.as_array());
    if windows.is_none_or(|w| w.is_empty()) {
        out.push_str("no window presented yet\n");
    }
    for w in windows.into_iter().flatten() {
        out.push_str(&format!(
            "window {}: {} frames, log {}\n",
            w.get("stream").and_then(|s| s.as_u64()).unwrap_or(0),
            w.get("frames").and_then(|f| f.as_u64()).unwrap_or(0),
            w.get("log")
                .and_then(|l| l.as_str())
                .unwrap_or("(none yet)"),
        ));
        let window_s = num(w.get("window_s")).unwrap_or(0.0);
        match w.get("metrics").filter(|m| !m.is_null()) {
            Some(m) => {
                let f = |k: &str| num(m.get(k)).unwrap_or(f64::NAN);
                out.push_str(&format!(
                    "  last {window_s:.0} s: Steady {:.0} fps, Mostly Steady {:.0}, Typical {:.0}, average {:.2} fps, P99 {:.2} ms, {:.0} stutters\n",
                    f("steady_fps"),
                    f("mostly_steady_fps"),
                    f("typical_fps"),
                    f("average_fps"),
                    f("p99_ms"),
                    f("stutter_count"),
                ));
            }
            None => out.push_str("  no metrics yet (fewer than two presents)\n"),
        }
        if let (Some(busy), Some(bound)) = (num(w.get("gpu_busy_ms")), num(w.get("gpu_bound_pct")))
        {
            out.push_str(&format!("  GPU {busy:.1} ms/frame, {bound:.0}% bound\n"));
        }
    }
    out.trim_end().to_string()
}

/// One row of `list`.
struct Row {
    socket: Socket,
    status: Result<serde_json::Value, String>,
}

/// `ctl list`: every session's pid, exe, fps, frames and log; sockets
/// nobody listens on any more are removed (said on stderr).
fn list(dir: &Path, json: bool) -> ExitCode {
    let sockets = match client::sockets(dir) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let mut rows = Vec::new();
    for socket in sockets {
        let status = match client::request(&socket.path, &Request::Status) {
            Err(ClientError::Connect { source, .. }) if client::is_stale(&source) => {
                remove_stale(&socket);
                continue;
            }
            Err(e) => Err(e.to_string()),
            Ok(Reply::Ok(v)) => Ok(v),
            Ok(Reply::Err(m)) => Err(m),
        };
        if status.is_err() && client::process_gone(socket.pid) {
            remove_stale(&socket);
            continue;
        }
        rows.push(Row { socket, status });
    }
    if json {
        let out: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| match &r.status {
                Ok(v) => v.clone(),
                Err(m) => serde_json::json!({ "pid": r.socket.pid, "error": m }),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    if rows.is_empty() {
        println!("no running session with steadyhud");
        return ExitCode::SUCCESS;
    }
    println!(
        "{:>8}  {:<20} {:>8} {:>10}  LOG",
        "PID", "EXE", "FPS", "FRAMES"
    );
    for r in &rows {
        match &r.status {
            Ok(v) => println!(
                "{:>8}  {:<20} {:>8} {:>10}  {}",
                r.socket.pid,
                v.get("exe").and_then(|e| e.as_str()).unwrap_or("?"),
                v.get("fps")
                    .and_then(|f| f.as_f64())
                    .map_or("-".into(), |f| format!("{f:.1}")),
                v.get("frames").and_then(|f| f.as_u64()).unwrap_or(0),
                v.get("log")
                    .and_then(|l| l.as_str())
                    .unwrap_or("(none yet)")
            ),
            Err(m) => println!("{:>8}  (not answering: {m})", r.socket.pid),
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_text_shows_each_window() {
        let v = serde_json::json!({
            "pid": 42, "exe": "vkcube", "hud": "off", "fps_limit": 60,
            "windows": [{
                "stream": 1, "frames": 600, "log": "/l/vkcube.csv", "window_s": 10.0,
                "metrics": {"steady_fps": 58, "mostly_steady_fps": 59, "typical_fps": 60,
                            "average_fps": 60.01, "p99_ms": 17.1, "stutter_count": 2},
                "gpu_busy_ms": 0.9, "gpu_bound_pct": 1.0
            }]
        });
        let t = status_text(&v);
        assert_eq!(
            t,
            "pid 42  vkcube\nHUD off, frame cap 60 fps\nwindow 1: 600 frames, log /l/vkcube.csv\n  last 10 s: Steady 58 fps, Mostly Steady 59, Typical 60, average 60.01 fps, P99 17.10 ms, 2 stutters\n  GPU 0.9 ms/frame, 1% bound"
        );
        let empty =
            serde_json::json!({"pid": 1, "exe": "x", "hud": "on", "fps_limit": 0, "windows": []});
        assert!(status_text(&empty).ends_with("no window presented yet"));
    }
}
