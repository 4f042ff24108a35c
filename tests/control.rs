//! The control socket with the real layer in the test app (Xvfb +
//! lavapipe): `steadyhud ctl` list/status/mark/limit, `analyze --segments`
//! on the log the marks went into, a flood of hostile connections while
//! the app presents, sockets of other users, stale sockets.
//!
//! (The HUD toggled by `ctl hud toggle`, seen in screenshot pixels, is in
//! tests/hud_screenshot.rs beside the hotkey test.)

mod common;
mod require;

use common::*;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Runs `cmd` (a `steadyhud ctl …`) and returns (exit code, stdout, stderr).
fn ctl(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("run steadyhud ctl");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `ctl … status --json` of the only session, parsed.
fn status(h: &Harness) -> serde_json::Value {
    let (code, out, err) = ctl(&mut h.steadyhud(&["ctl", "--json", "status"]));
    assert_eq!(code, 0, "ctl status failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("status JSON: {e}\n{out}"))
}

fn socket_dir(runtime: &Path) -> PathBuf {
    runtime.join("steadyhud")
}

#[test]
fn status_mark_limit_and_segments_through_ctl() {
    let h = Harness::new();
    let (code, _, err) = ctl(&mut h.steadyhud(&["ctl", "status"]));
    assert_eq!(code, 2);
    assert!(err.contains("no running session"), "{err}");

    let mut app = spawn(
        h.testapp(&["--frames", "1400", "--interval", "5ms", "--progress"])
            .layer(),
    );
    let pid = app.child.id();
    app.wait_presents(60, Duration::from_secs(30));

    let (code, out, err) = ctl(&mut h.steadyhud(&["ctl", "list"]));
    assert_eq!(code, 0, "{err}");
    let row = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&pid.to_string()))
        .unwrap_or_else(|| panic!("pid {pid} not listed:\n{out}"));
    assert!(row.contains("steadyhud-testapp"), "{row}");
    assert!(row.contains(&h.log_dir.display().to_string()), "{row}");

    let s = status(&h);
    assert_eq!(s["pid"], pid);
    assert_eq!(s["hud"], "on");
    let frames = s["frames"].as_u64().unwrap();
    assert!(frames > 0, "{s}");
    let m = &s["windows"][0]["metrics"];
    for key in ["steady_fps", "mostly_steady_fps", "typical_fps", "p99_ms"] {
        assert!(m[key].as_f64().is_some_and(|v| v > 0.0), "{key}: {s}");
    }
    assert!(m.get("stutter_frames").is_none());
    // 5 ms frames: the rolling average is near 200 fps (lavapipe on a busy
    // machine may be slower, never faster).
    let fps = s["fps"].as_f64().unwrap();
    assert!(fps > 50.0 && fps < 220.0, "fps {fps}");
    let log = PathBuf::from(s["log"].as_str().unwrap());
    assert!(log.exists(), "{}", log.display());

    // The mark lands between the frames counted just before and just after.
    let before = status(&h)["frames"].as_u64().unwrap();
    let (code, out, err) =
        ctl(&mut h.steadyhud(&["ctl", "--pid", &pid.to_string(), "mark", "scene", "two"]));
    assert_eq!(code, 0, "{err}");
    let after = status(&h)["frames"].as_u64().unwrap();
    let mark_frame: u64 = out
        .trim()
        .strip_prefix("mark \"scene two\" at frame ")
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected mark reply: {out}"));
    assert!(
        before <= mark_frame && mark_frame <= after,
        "{before} <= {mark_frame} <= {after}"
    );

    // A cap takes effect and is logged; bad words are refused before
    // reaching the session.
    let (code, out, _) = ctl(&mut h.steadyhud(&["ctl", "limit", "100"]));
    assert_eq!(
        (code, out.trim()),
        (0, &*format!("frame cap 100 fps (pid {pid})"))
    );
    assert_eq!(status(&h)["fps_limit"], 100);
    std::thread::sleep(Duration::from_millis(800));
    let (code, _, err) = ctl(&mut h.steadyhud(&["ctl", "limit", "fast"]));
    assert_eq!(code, 2);
    assert!(err.contains("`limit` takes"), "{err}");
    let (code, _, _) = ctl(&mut h.steadyhud(&["ctl", "limit", "off"]));
    assert_eq!(code, 0);

    let out = app.wait();
    out.assert_success("test app");
    let presented = out.presented().expect("presented line");
    let text = std::fs::read_to_string(&log).unwrap();
    let rows = logged_durations_ns(&log).len() as u64;
    assert_eq!(rows, presented - 1, "every frame logged");
    assert!(
        text.contains(&format!("# mark: scene two at frame {mark_frame}\n")),
        "mark line missing"
    );
    // While the cap was on (the log says from which frame to which), the
    // frames ran no faster than it allows.
    let cap_at = |fps: u32| -> usize {
        let prefix = format!("# fps_limit: {fps} at frame ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix)?.parse().ok())
            .unwrap_or_else(|| panic!("no `{prefix}` line"))
    };
    let (on, off) = (cap_at(100), cap_at(0));
    let durations = logged_durations_ns(&log);
    // Absolute deadlines 10 ms apart: late frames may be followed by short
    // ones, but n frames never take less than n - 1 intervals (±1 frame at
    // each edge of the span).
    let capped = &durations[on..off];
    let total_ms = capped.iter().sum::<u64>() as f64 / 1e6;
    assert!(
        capped.len() > 20 && total_ms >= (capped.len() as f64 - 3.0) * 10.0,
        "{} capped frames took only {total_ms:.1} ms",
        capped.len()
    );

    let seg = h
        .steadyhud(&["analyze", "--segments", "--json"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(seg.status.success());
    let seg: serde_json::Value = serde_json::from_slice(&seg.stdout).unwrap();
    let parts = seg["segments"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{seg}");
    assert_eq!(parts[0]["label"], "(start)");
    assert_eq!(parts[0]["frames"], mark_frame);
    assert_eq!(parts[1]["label"], "scene two");
    assert_eq!(parts[1]["first_frame"], mark_frame);
    assert_eq!(parts[1]["frames"], rows - mark_frame);
    let seconds = |d: &[u64]| d.iter().sum::<u64>() as f64 / 1e9;
    let mark = mark_frame as usize;
    for (part, range) in parts.iter().zip([0..mark, mark..durations.len()]) {
        let want = seconds(&durations[range]);
        let got = part["duration_s"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-6, "{got} != {want}: {part}");
    }

    // A clean exit removes the socket.
    assert!(
        list_dir(&socket_dir(&h.runtime_dir)).is_empty(),
        "socket left behind"
    );
    let (_, out, _) = ctl(&mut h.steadyhud(&["ctl", "list"]));
    assert_eq!(out.trim(), "no running session with steadyhud");

    // A socket left by a dead process, asked by pid: said and removed.
    let stale = socket_dir(&h.runtime_dir).join("999999.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    let (code, _, err) = ctl(&mut h.steadyhud(&["ctl", "--pid", "999999", "hud", "on"]));
    assert_eq!(code, 2);
    assert!(err.contains("pid 999999 is not running any more"), "{err}");
    assert!(!stale.exists());
}

/// What one hostile client sends.
fn garbage(i: usize) -> Vec<u8> {
    match i % 6 {
        0 => vec![b'x'; 5000],                     // far too long, no newline
        1 => b"\xff\xfe\x00\x01binary\n".to_vec(), // not UTF-8
        2 => b"limit -3\nhud sideways\nmark \x07\n".to_vec(),
        3 => b"status\n".to_vec(),
        4 => Vec::new(), // connect and hang up
        _ => format!("{}\n", "mark ".repeat(60)).into_bytes(),
    }
}

#[test]
fn a_flood_of_hostile_connections_leaves_every_frame_logged() {
    let h = Harness::new();
    let mut app = spawn(
        h.testapp(&["--frames", "1500", "--interval", "3ms", "--progress"])
            .layer(),
    );
    app.wait_presents(30, Duration::from_secs(30));
    let path = socket_dir(&h.runtime_dir).join(format!("{}.sock", app.child.id()));

    // 1000 connections from 8 threads, each sending garbage.
    let replies: Vec<(usize, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let path = &path;
                s.spawn(move || {
                    (0..125)
                        .map(|k| {
                            let i = t * 125 + k;
                            let mut c = UnixStream::connect(path).expect("connect during flood");
                            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                            let _ = c.write_all(&garbage(i));
                            if i % 6 == 4 {
                                return (i, String::new());
                            }
                            let _ = c.shutdown(std::net::Shutdown::Write);
                            let mut reply = String::new();
                            let _ = c.read_to_string(&mut reply);
                            (i, reply)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(replies.len(), 1000);
    for (i, reply) in &replies {
        let first = reply.lines().next().unwrap_or("");
        match i % 6 {
            4 => {}
            3 => assert!(
                first.starts_with("ok {") || first.starts_with("err busy"),
                "client {i}: {reply:?}"
            ),
            _ => assert!(first.starts_with("err "), "client {i}: {reply:?}"),
        }
    }
    let busy = replies
        .iter()
        .filter(|(_, r)| r.starts_with("err busy"))
        .count();
    // The garbage was read, not just turned away: at most 8 clients are
    // served at once by these threads, fewer than the server's 32 slots.
    assert_eq!(busy, 0, "flood clients told busy");

    // Then 40 connections held open and silent, more than the server
    // keeps: at least 8 are told `busy` at once, the rest `idle` after 2 s.
    let held: Vec<UnixStream> = (0..40)
        .map(|_| UnixStream::connect(&path).unwrap())
        .collect();
    let mut held_replies = Vec::new();
    for mut c in held {
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut r = String::new();
        let _ = c.read_to_string(&mut r);
        held_replies.push(r);
    }
    let held_busy = held_replies
        .iter()
        .filter(|r| r.starts_with("err busy"))
        .count();
    let held_idle = held_replies
        .iter()
        .filter(|r| r.starts_with("err idle"))
        .count();
    assert!(
        held_busy >= 8 && held_busy + held_idle == 40,
        "{held_replies:?}"
    );
    // The session still answers, and the frames go on.
    assert!(status(&h)["frames"].as_u64().unwrap() > 30);

    let out = app.wait();
    out.assert_success("test app");
    let log = h.only_session_log();
    let rows = logged_durations_ns(&log.csv).len() as u64;
    assert_eq!(rows, out.presented().unwrap() - 1, "a frame was lost");
    assert!(
        !out.stderr.lines().any(is_layer_complaint),
        "the layer complained:\n{}",
        out.stderr
    );
    eprintln!(
        "flood: 1000 clients answered ({} replies with `err`); held: {held_busy} busy, {held_idle} idle",
        replies.iter().filter(|(_, r)| r.starts_with("err ")).count()
    );
}

#[test]
fn other_users_are_refused_and_stale_sockets_cleaned() {
    if !is_root() {
        require::skip_or_fail("needs root to run the game as another user (.ci/run runs as root)");
        return;
    }
    let h = Harness::new();
    // The game runs as `nobody`, with folders nobody can use.
    let home = tempfile::Builder::new()
        .prefix("steadyhud-nobody-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (runtime, logs, data) = (
        home.path().join("run"),
        home.path().join("logs"),
        home.path().join("data"),
    );
    let (uid, gid) = user_ids(c"nobody").expect("user nobody");
    for d in [&runtime, &logs] {
        std::fs::create_dir(d).unwrap();
        std::os::unix::fs::chown(d, Some(uid), Some(gid)).unwrap();
    }
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    // nobody runs copies: the checkout may sit under a folder only root can
    // enter (`git clone . $(mktemp -d)` makes it 0700).
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let copy = |from: PathBuf| {
        let to = bin.join(from.file_name().unwrap());
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
        to
    };
    let (testapp, cli) = (copy(testapp_exe()), copy(steadyhud_exe()));
    write_manifest(&data, &copy(layer_library()));
    let nobody_env = |mut c: Command| {
        c.env("XDG_RUNTIME_DIR", &runtime)
            .env("STEADYHUD_LOG_DIR", &logs)
            .env("XDG_DATA_HOME", &data)
            .env("XDG_CONFIG_HOME", home.path().join("none"))
            .env("XDG_STATE_HOME", home.path().join("none"));
        c
    };
    let mut game = nobody_env(cmd_with(
        h.command(&testapp),
        &["--frames", "1200", "--interval", "5ms", "--progress"],
    ));
    let mut app = spawn(game.layer().as_user(c"nobody"));
    app.wait_presents(30, Duration::from_secs(30));
    let pid = app.child.id().to_string();
    let sock = socket_dir(&runtime).join(format!("{pid}.sock"));
    let meta = std::fs::metadata(&sock).unwrap_or_else(|e| panic!("{}: {e}", sock.display()));
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);

    // Its own user is answered.
    let nobody_ctl = |args: &[&str]| {
        let mut c = nobody_env(cmd_with(h.command(&cli), &["ctl", "--pid", &pid]));
        c.args(args).as_user(c"nobody");
        c
    };
    let (code, out, err) = ctl(&mut nobody_ctl(&["status"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("steadyhud-testapp"), "{out}");

    // root passes the file permissions; SO_PEERCRED refuses it.
    let (code, _, err) = ctl(&mut nobody_env(
        h.steadyhud(&["ctl", "--pid", &pid, "status"]),
    ));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("permission denied: this session belongs to uid 65534, not 0"),
        "{err}"
    );
    // Another ordinary user cannot even open the folder.
    let mut other = nobody_env(cmd_with(
        h.command(&cli),
        &["ctl", "--pid", &pid, "hud", "off"],
    ));
    let (code, _, err) = ctl(other.as_user(c"daemon"));
    assert_eq!(code, 2, "{err}");
    assert!(err.to_lowercase().contains("permission denied"), "{err}");
    let (code, out, err) = ctl(&mut nobody_ctl(&["--json", "status"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hud"], "on", "a refused client changed the HUD");

    // SIGKILL leaves the socket; `ctl list` removes it and says so.
    let _ = app.kill();
    assert!(sock.exists(), "a killed game cannot remove its socket");
    let mut list = nobody_env(cmd_with(h.command(&cli), &["ctl", "list"]));
    let (code, out, err) = ctl(list.as_user(c"nobody"));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("removed stale socket"), "{err}");
    assert_eq!(out.trim(), "no running session with steadyhud");
    assert!(!sock.exists());
}

/// `c` with `args` added.
fn cmd_with(mut c: Command, args: &[&str]) -> Command {
    c.args(args);
    c
}
