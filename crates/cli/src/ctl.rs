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
use steadyhud_control::replies::{
    HelpReply, HistogramReply, HudReply, LimitReply, MarkReply, PresetReply, ReplyTypeError,
    Status, WindowDisplay, WindowLatency, WindowMetrics,
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game's process id (default: the only running session).
    #[arg(long, value_name = "P")]
    pub pid: Option<u32>,
    /// Print the session's JSON reply as it is (list: every session's status).
    #[arg(long)]
    pub json: bool,
    /// list | status | hud on|off|toggle | preset N | limit N|off | mark TEXT | histogram
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
        Ok(reply @ Reply::Ok(_)) => {
            let text = match (&reply, args.json) {
                (Reply::Ok(v), true) => serde_json::to_string_pretty(v).map_err(|e| e.to_string()),
                _ => describe(&request, &reply, socket.pid).map_err(|e| e.to_string()),
            };
            match text {
                Ok(t) => {
                    println!("{t}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("steadyhud: pid {}: {e}", socket.pid);
                    ExitCode::from(1)
                }
            }
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

/// The human line(s) for a successful reply, read as the reply type its
/// request has ([`steadyhud_control::replies`]).
fn describe(request: &Request, reply: &Reply, pid: u32) -> Result<String, ReplyTypeError> {
    let text = match request {
        Request::Hud(_) => {
            let r: HudReply = read(reply)?;
            format!("HUD {} (pid {pid})", r.hud)
        }
        Request::Preset(_) => {
            let r: PresetReply = read(reply)?;
            format!("HUD preset {}: {} (pid {pid})", r.preset, r.name)
        }
        Request::Limit(_) => match read::<LimitReply>(reply)?.fps_limit {
            0 => format!("frame cap off (pid {pid})"),
            n => format!("frame cap {n} fps (pid {pid})"),
        },
        Request::Mark(text) => read::<MarkReply>(reply)?
            .logs
            .iter()
            .map(|m| format!("mark {text:?} at frame {} of {}", m.frame, m.log))
            .collect::<Vec<_>>()
            .join("\n"),
        Request::Help => read::<HelpReply>(reply)?.requests.join("\n"),
        Request::Histogram => read::<HistogramReply>(reply)?
            .windows
            .iter()
            .map(|w| {
                format!(
                    "window {}: {} frames in {:.3} s, {} stutters ({:.3} s), {} buckets of {}",
                    w.stream,
                    w.frames,
                    w.time_ns as f64 / 1e9,
                    w.stutters,
                    w.stutter_ns as f64 / 1e9,
                    w.buckets.len(),
                    w.scheme
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Request::Status => status_text(&read(reply)?),
    };
    Ok(text)
}

/// An `ok` reply as `T`.
fn read<T: serde::de::DeserializeOwned>(reply: &Reply) -> Result<T, ReplyTypeError> {
    reply.expect()
}

/// `status` for people: the process, then each window's rolling metrics.
pub fn status_text(s: &Status) -> String {
    let mut out = format!(
        "pid {}  {}\nHUD {} (preset {}), frame cap {}\n",
        s.pid,
        s.exe,
        s.hud,
        s.preset,
        match s.fps_limit {
            0 => "off".to_string(),
            n => format!("{n} fps"),
        }
    );
    if s.windows.is_empty() {
        out.push_str("no window presented yet\n");
    }
    for w in &s.windows {
        out.push_str(&format!(
            "window {}: {} frames, log {}\n",
            w.stream,
            w.frames,
            w.log.as_deref().unwrap_or("(none yet)"),
        ));
        match &w.metrics {
            Some(m) => {
                out.push_str(&format!("  last {:.0} s:\n", w.window_s));
                out.push_str(&metric_lines(m));
            }
            None => out.push_str("  no metrics yet (fewer than two presents)\n"),
        }
        if let (Some(busy), Some(bound)) = (w.gpu_busy_ms, w.gpu_bound_pct) {
            out.push_str(&format!("  GPU {busy:.1} ms/frame, {bound:.0}% bound\n"));
        }
        if let Some(d) = &w.display {
            out.push_str(&display_line(d));
        }
        if let Some(l) = &w.latency {
            out.push_str(&latency_lines(l));
        }
    }
    out.trim_end().to_string()
}

/// What reached the screen over the window: `  display (wayland) 59.9 fps,
/// 3 dropped, 1 unanswered, latency 24.1 ms, refresh 16.7 ms`; `n/a` for
/// a number the source did not give (yet).
fn display_line(d: &WindowDisplay) -> String {
    let ms = |v: Option<f32>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.1} ms"));
    let fps = d
        .displayed_fps
        .map_or_else(|| "n/a".to_string(), |v| format!("{v:.1}"));
    let mut line = format!("  display ({}) {fps} fps, {} dropped", d.source, d.dropped);
    if d.unknown > 0 {
        line.push_str(&format!(", {} unanswered", d.unknown));
    }
    line.push_str(&format!(
        ", latency {}, refresh {}\n",
        ms(d.latency_ms),
        ms(d.refresh_ms)
    ));
    line
}

/// PC latency over the window, a line per term of the summary's latency
/// block under its label, `unknown` for a term not known (never 0):
/// `    PC latency                     unknown`.
fn latency_lines(l: &WindowLatency) -> String {
    let width = l.iter().map(|(k, _)| k.label().chars().count()).max();
    let width = width.unwrap_or(0);
    let mut out = String::from("  latency:\n");
    for (k, v) in l.iter() {
        let v = v.map_or_else(|| "unknown".to_string(), |v| format!("{v:.2} ms"));
        out.push_str(&format!("    {:<width$}  {v}\n", k.label()));
    }
    out
}

/// A window's metrics, one line each in the catalog's order: its label,
/// then its value as tables show it (every metric the game sent, so a new
/// summary metric is listed without code here).
fn metric_lines(m: &WindowMetrics) -> String {
    let width = m
        .iter()
        .map(|(metric, _)| metric.label.chars().count())
        .max()
        .unwrap_or(0);
    m.iter()
        .map(|(metric, v)| format!("    {:<width$}  {}\n", metric.label, metric.show(v)))
        .collect()
}

/// One row of `list`.
struct Row {
    socket: Socket,
    /// The status as sent, and as read.
    status: Result<(serde_json::Value, Status), String>,
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
            Ok(reply @ Reply::Ok(_)) => match (&reply, read::<Status>(&reply)) {
                (Reply::Ok(v), Ok(s)) => Ok((v.clone(), s)),
                (_, Err(e)) => Err(e.to_string()),
                _ => unreachable!("an ok reply"),
            },
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
                Ok((v, _)) => v.clone(),
                Err(m) => serde_json::json!({ "pid": r.socket.pid, "error": m }),
            })
            .collect();
        return match serde_json::to_string_pretty(&out) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("steadyhud: cannot write the list as JSON: {e}");
                ExitCode::from(1)
            }
        };
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
            Ok((_, s)) => println!(
                "{:>8}  {:<20} {:>8} {:>10}  {}",
                r.socket.pid,
                s.exe,
                s.fps.map_or("-".into(), |f| format!("{f:.1}")),
                s.frames,
                s.log.as_deref().unwrap_or("(none yet)")
            ),
            Err(m) => println!("{:>8}  (not answering: {m})", r.socket.pid),
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use steadyhud_control::replies::WindowStatus;
    use steadyhud_metrics::catalog::{self, Value};

    fn status_with(metrics: Option<WindowMetrics>) -> Status {
        Status {
            pid: 42,
            exe: "vkcube".into(),
            hud: "off".into(),
            preset: 1,
            fps_limit: 60,
            windows: vec![WindowStatus {
                stream: 1,
                frames: 600,
                log: Some("/l/vkcube.csv".into()),
                window_s: 10.0,
                metrics,
                gpu_busy_ms: Some(0.9),
                gpu_bound_pct: Some(1.0),
                ..WindowStatus::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn status_text_shows_each_window() {
        let mut metrics = WindowMetrics::default();
        metrics.set("typical_fps", Value::Int(60));
        metrics.set("steady_fps", Value::Int(58));
        metrics.set("p99_ms", Value::Float(17.1));
        metrics.set("time_over_budget_pct", Value::Float(1.234));
        metrics.set("osc", Value::Bool(false));
        let t = status_text(&status_with(Some(metrics)));
        assert_eq!(
            t,
            "pid 42  vkcube\nHUD off (preset 1), frame cap 60 fps\nwindow 1: 600 frames, log /l/vkcube.csv\n  last 10 s:\n    P99 (time-weighted)  17.10 ms\n    Steady FPS           58\n    Typical FPS          60\n    Time over budget     1.23 %\n    OSC (oscillation)    no\n  GPU 0.9 ms/frame, 1% bound"
        );
        assert!(status_text(&status_with(None)).contains("no metrics yet"));
        // A window with a source of display times says what reached the
        // screen, after the GPU line; without one, no such line.
        let mut s = status_with(None);
        assert!(!status_text(&s).contains("display"));
        s.windows[0].display = Some(WindowDisplay {
            source: "wayland".into(),
            displayed_fps: Some(59.94),
            dropped: 3,
            unknown: 0,
            latency_ms: Some(24.08),
            refresh_ms: None,
        });
        assert!(
            status_text(&s).ends_with(
                "\n  display (wayland) 59.9 fps, 3 dropped, latency 24.1 ms, refresh n/a"
            ),
            "{}",
            status_text(&s)
        );
        s.windows[0].display.as_mut().unwrap().unknown = 2;
        assert!(status_text(&s).contains("3 dropped, 2 unanswered, latency"));
        // A window with a reader of input times gives PC latency's terms,
        // last, `unknown` where a term is not known.
        s.windows[0].latency = Some(WindowLatency::new([
            None,
            None,
            Some(3.214),
            Some(1.5),
            None,
        ]));
        assert!(
            status_text(&s).ends_with(
                "\n  latency:\n    PC latency                     unknown\n    Click to photon                unknown\n    Input to frame start (I2FS)    3.21 ms\n    Frame start to present (FS2P)  1.50 ms\n    Present to display             unknown"
            ),
            "{}",
            status_text(&s)
        );
        let empty = Status {
            pid: 1,
            exe: "x".into(),
            hud: "on".into(),
            ..Default::default()
        };
        assert!(status_text(&empty).ends_with("no window presented yet"));
    }

    /// Every metric of the catalog is in `ctl status`: a window's summary,
    /// sent through the reply line as the game sends it, lists each one
    /// under its label with its value.
    #[test]
    fn every_catalog_metric_is_in_ctl_status() {
        let summary = steadyhud_metrics::summarize(
            &[16_666_667, 16_666_667, 40_000_000, 16_666_667],
            &Default::default(),
        )
        .unwrap();
        let line =
            steadyhud_control::replies::ok(&status_with(Some(WindowMetrics::from(&summary))))
                .to_string();
        let status: Status = Reply::parse(&line).unwrap().expect().unwrap();
        let t = status_text(&status);
        for m in catalog::METRICS {
            let want = format!("{}  ", m.label);
            let row = t
                .lines()
                .find(|l| l.trim_start().starts_with(&want))
                .unwrap_or_else(|| panic!("{} missing from ctl status:\n{t}", m.key));
            assert!(
                row.trim_end().ends_with(&m.show(m.of(&summary))),
                "{}: {row}",
                m.key
            );
        }
    }
}
