//! Issue 51: a log folder that stops answering (a hung network mount) must
//! not hold the game's exit. The log folder here is an ext4 image mounted
//! over the harness's log folder and frozen (`fsfreeze`) mid-session, so
//! every write to it blocks as on a stopped NFS server. The test app leaves
//! `main` without destroying its device (the exit hook ends the session):
//! its main thread must end while the folder is still frozen, one line
//! must say what was not written, and once the folder answers again the
//! next `steadyhud` command recovers every frame from the present tail.
//! Idle, then with every core kept busy by other processes.
//!
//! Before the fix the exit joined the analysis thread, blocked in its
//! flush, for as long as the folder stayed frozen: for ever.

mod common;
mod require;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// An ext4 image loop-mounted on a folder; thawed and unmounted on drop.
struct Mounted {
    at: PathBuf,
    frozen: bool,
}

impl Mounted {
    /// `None` (after a skip line, or a failure under
    /// `STEADYHUD_REQUIRE_TOOLS`) where loop mounts cannot be had.
    fn new(img: &Path, at: &Path) -> Option<Mounted> {
        let f = std::fs::File::create(img).expect("create image");
        f.set_len(32 << 20).expect("size image");
        drop(f);
        let mkfs = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(img)
            .output()
            .expect("mkfs.ext4");
        assert!(mkfs.status.success(), "mkfs.ext4: {mkfs:?}");
        let mount = Command::new("mount")
            .args(["-o", "loop"])
            .arg(img)
            .arg(at)
            .output()
            .expect("mount");
        if !mount.status.success() {
            require::skip_or_fail(&format!(
                "cannot loop-mount an ext4 image (mount -o loop, util-linux; needs /dev/loop*): {}",
                String::from_utf8_lossy(&mount.stderr).trim()
            ));
            return None;
        }
        Some(Mounted {
            at: at.to_path_buf(),
            frozen: false,
        })
    }

    fn freeze(&mut self, on: bool) {
        let s = Command::new("fsfreeze")
            .arg(if on { "-f" } else { "-u" })
            .arg(&self.at)
            .status()
            .expect("fsfreeze");
        assert!(s.success(), "fsfreeze {on}");
        self.frozen = on;
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.frozen {
            self.freeze(false);
        }
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}

/// Whether process `pid`'s main thread has ended (its threads blocked in
/// the kernel keep the process until the folder answers again).
fn main_thread_ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat.rsplit_once(") ").map(|(_, r)| r.chars().next());
            matches!(state, Some(Some('Z' | 'X')))
        }
    }
}

#[test]
fn a_log_folder_that_blocks_on_write_holds_the_exit_no_longer_than_the_bound() {
    if !is_root() {
        require::skip_or_fail("needs root (a loop mount and fsfreeze)");
        return;
    }
    if !require::programs(&[
        ("mkfs.ext4", "e2fsprogs"),
        ("fsfreeze", "util-linux"),
        ("mount", "mount"),
    ]) {
        return;
    }
    let _one = serial();
    for busy in [false, true] {
        let what = if busy { "two busy loops" } else { "idle" };
        let h = Harness::new();
        let Some(mut mounted) = Mounted::new(&h.root.path().join("logs.img"), &h.log_dir) else {
            return;
        };
        let _load = busy.then(CpuLoad::start);
        let mut app = spawn(
            h.testapp(&[
                "--frames",
                "300",
                "--interval",
                "10ms",
                "--no-destroy",
                "--progress",
            ])
            .layer(),
        );
        app.wait_presents(100, Duration::from_secs(120));
        mounted.freeze(true);
        // The app presents the rest of its script and leaves main; its
        // exit must not wait for the frozen folder.
        let pid = app.pid();
        let deadline = Instant::now() + Duration::from_secs(90);
        while !main_thread_ended(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let ended = main_thread_ended(pid);
        mounted.freeze(false);
        if !ended {
            let out = app.kill();
            panic!(
                "{what}: the game's exit waited for the frozen log folder:\n{}",
                tail(&out.stderr, 20)
            );
        }
        let out = app.wait();
        out.assert_success(what);
        let said: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("were not written within 2 s"))
            .collect();
        assert_eq!(said.len(), 1, "{what}: {}", out.stderr);
        // The folder answers again: the next command makes the log whole
        // from the present tail.
        let presents = out.presented().expect("testapp: presented N");
        let log = h.only_session_log();
        let a = h.analyze(&log.csv);
        assert_eq!(
            a["frames"].as_u64(),
            Some(presents - 1),
            "{what}: frames after recovery vs presents − 1: {a}"
        );
        drop(mounted);
    }
}
