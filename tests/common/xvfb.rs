//! A private Xvfb server on the first free display (so tests run in
//! parallel), killed on drop, and xdotool input sent to it. One file for
//! every test that needs an X server: the root tests reach it through
//! `common`, the crates' tests by `#[path = "../../../tests/common/xvfb.rs"]`.
#![allow(dead_code)]

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Next display number to try (shared by all harnesses of this process);
/// starts at a pid-dependent offset so concurrent test binaries rarely collide.
static NEXT_DISPLAY: AtomicU32 = AtomicU32::new(0);

const DISPLAY_FIRST: u32 = 90;

const DISPLAY_SPAN: u32 = 400;

/// A private Xvfb server; killed on drop.
pub struct Xvfb {
    pub number: u32,
    pub width: u32,
    pub height: u32,
    child: Child,
}

impl Xvfb {
    /// Starts Xvfb on the first free display from :90 on, with one screen of
    /// `width`x`height`x24, and waits until it accepts connections.
    pub fn start(width: u32, height: u32) -> Xvfb {
        let _ = NEXT_DISPLAY.compare_exchange(
            0,
            (std::process::id() * 7) % DISPLAY_SPAN,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        let mut last_err = String::new();
        for _ in 0..60 {
            let n = DISPLAY_FIRST + NEXT_DISPLAY.fetch_add(1, Ordering::SeqCst) % DISPLAY_SPAN;
            if Path::new(&format!("/tmp/.X{n}-lock")).exists()
                || Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            {
                continue;
            }
            let child = Command::new("Xvfb")
                .arg(format!(":{n}"))
                .args(["-nolisten", "tcp", "-noreset", "-screen", "0"])
                .arg(format!("{width}x{height}x24"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn();
            let mut child = match child {
                Ok(c) => c,
                Err(e) => panic!("cannot start Xvfb (is the xvfb package installed?): {e}"),
            };
            let socket = format!("/tmp/.X11-unix/X{n}");
            let deadline = Instant::now() + Duration::from_secs(15);
            loop {
                if let Ok(Some(status)) = child.try_wait() {
                    let mut err = String::new();
                    if let Some(mut e) = child.stderr.take() {
                        let _ = e.read_to_string(&mut err);
                    }
                    last_err = format!(":{n} exited with {status}: {}", err.trim());
                    break;
                }
                if UnixStream::connect(&socket).is_ok() {
                    // Drop the stderr pipe reader side: Xvfb logs little and we
                    // do not want it to block on a full pipe.
                    drop(child.stderr.take());
                    return Xvfb {
                        number: n,
                        width,
                        height,
                        child,
                    };
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    last_err = format!(":{n} did not accept connections within 15 s");
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("could not start Xvfb on any display from :{DISPLAY_FIRST}: {last_err}");
    }

    /// `:N`
    pub fn display(&self) -> String {
        format!(":{}", self.number)
    }
}

impl Drop for Xvfb {
    /// SIGTERM lets Xvfb remove its `/tmp/.X{n}-lock` and socket; a SIGKILL
    /// would leave them behind and, over many runs, use up the displays.
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(format!("/tmp/.X{}-lock", self.number));
        let _ = std::fs::remove_file(format!("/tmp/.X11-unix/X{}", self.number));
    }
}

impl Xvfb {
    /// Runs `xdotool ARGS` on this display (e.g. `["key", "shift_R+F12"]`).
    pub fn xdotool(&self, args: &[&str]) {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", self.display())
            .stdin(Stdio::null())
            .output()
            .expect("run xdotool (xdotool package)");
        assert!(
            out.status.success(),
            "xdotool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
