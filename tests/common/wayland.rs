//! A headless Wayland session for tests ([`WaylandBed`]), on one of two
//! compositors ([`Compositor`]):
//! - sway on wlroots' headless backend with the pixman renderer: apps run
//!   with the steadyhud layer, keys sent with `wtype`, screenshots with
//!   `grim`;
//! - Weston 10 on its headless backend, which answers presentation
//!   feedback (`wp_presentation`: headless sway never sends `presented`,
//!   ../shared/TESTBED.md), for displayed-frame timing.
//!
//! Neither runs as root (sway refuses), so as root (CI containers) everything runs
//! as `nobody` (`Command::uid`/`gid`, which also drops root's supplementary
//! groups): the runtime dir is a private 0700 dir owned by `nobody`, the
//! layer library and its manifest are copied into the bed's 0755 temp dir.
//! As another user everything runs as that user. Every process the bed
//! starts is killed on drop; apps are [`super::Running`] values, killed
//! when they drop (declare them after the bed).
//!
//! Keys: `wtype` builds its own keymap numbering its keys from evdev code 1
//! (`KEY_ESC`) on, so the first key it types is Escape to apps that read raw
//! evdev codes (vkcube quits on its release). [`WaylandBed::press`] therefore
//! types a dummy `XF86Launch9` first, which the bed's sway config binds to
//! `nop`: sway swallows its press and release. A second `wtype` that only
//! sleeps keeps a keyboard on the seat for the bed's lifetime, as a real
//! session has one: without it the seat's keyboard capability (and every
//! client's `wl_keyboard`) would only appear with the first key.

use super::{layer_library, tail, write_manifest, Screenshot};
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Programs a Weston bed needs, with their apt packages.
pub const WESTON_PROGRAMS: [(&str, &str); 1] = [("weston", "weston")];

/// Programs a sway bed needs, with their apt packages.
pub const BED_PROGRAMS: [(&str, &str); 4] = [
    ("sway", "sway"),
    ("swaymsg", "sway"),
    ("wtype", "wtype"),
    ("grim", "grim"),
];

/// The dummy first key of [`WaylandBed::press`] (bound to `nop` in sway).
const DUMMY_KEY: &str = "XF86Launch9";

/// The compositor of a [`WaylandBed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compositor {
    Sway,
    Weston,
}

/// A headless Wayland session; everything it started is killed on drop.
pub struct WaylandBed {
    pub compositor: Compositor,
    /// Root of the bed's files (0755; deleted on drop).
    pub root: tempfile::TempDir,
    pub runtime_dir: PathBuf,
    pub data_home: PathBuf,
    pub config_home: PathBuf,
    /// `STEADYHUD_LOG_DIR` of the bed's commands (writable by the bed's user).
    pub log_dir: PathBuf,
    /// `wayland-N` in the runtime dir.
    pub wayland_display: String,
    /// sway's IPC socket (`SWAYSOCK`; none under Weston).
    pub swaysock: Option<PathBuf>,
    pub width: u32,
    pub height: u32,
    /// (uid, gid) the bed's processes run as; `None`: as ourselves.
    user: Option<(u32, u32)>,
    /// The compositor's process.
    server: Option<Child>,
    /// The headless Weston a nested sway runs in ([`WaylandBed::sway_in_weston`]).
    parent: Option<Child>,
    keyboard: Option<Child>,
}

/// The socket of the Weston a nested sway runs in (not `wayland-*`: the
/// bed's display is sway's).
const PARENT_SOCKET: &str = "weston-parent";

/// `nobody`'s (uid, gid) when we are root, else `None`.
fn bed_user() -> Option<(u32, u32)> {
    if !super::is_root() {
        return None;
    }
    let ids = super::user_ids(c"nobody");
    assert!(
        ids.is_some(),
        "running as root but there is no user `nobody`"
    );
    ids
}

fn chown(path: &Path, user: Option<(u32, u32)>) {
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(path, Some(uid), Some(gid))
            .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
    }
}

impl WaylandBed {
    /// Starts sway with one `width`x`height` headless output and a
    /// keyboard on its seat; waits until both are there.
    pub fn start(width: u32, height: u32) -> WaylandBed {
        WaylandBed::start_with(width, height, true)
    }

    /// Like [`WaylandBed::start`]; `keyboard: false` leaves the seat without
    /// a keyboard (until a `wtype` runs).
    pub fn start_with(width: u32, height: u32, keyboard: bool) -> WaylandBed {
        let bed = WaylandBed::new(Compositor::Sway, width, height);
        bed.start_sway(keyboard)
    }

    /// sway on wlroots' Wayland backend, nested in a headless Weston 10 (a
    /// window of `width`x`height` there), with a keyboard: the one session
    /// here that has both display times and input. sway answers its
    /// clients' presentation feedback `presented` from Weston's (headless
    /// sway alone never does; headless Weston has no seat input).
    pub fn sway_in_weston(width: u32, height: u32) -> WaylandBed {
        let mut bed = WaylandBed::new(Compositor::Sway, width, height);
        let mut weston = bed.weston_command(PARENT_SOCKET, &bed.root.path().join("weston.log"));
        bed.parent = Some(weston.spawn().expect("spawn weston"));
        let deadline = Instant::now() + Duration::from_secs(15);
        while UnixStream::connect(bed.runtime_dir.join(PARENT_SOCKET)).is_err() {
            assert!(
                Instant::now() < deadline,
                "weston did not create its socket within 15 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        bed.start_sway(true)
    }

    /// Starts Weston on its headless backend with one `width`x`height`
    /// output (it repaints, and answers presentation feedback, about every
    /// 25 ms); waits for its socket.
    pub fn weston(width: u32, height: u32) -> WaylandBed {
        let mut bed = WaylandBed::new(Compositor::Weston, width, height);
        let mut weston = bed.weston_command("wayland-steadyhud", &bed.log_path());
        bed.server = Some(weston.spawn().expect("spawn weston"));
        bed.wait_for_sockets();
        bed
    }

    /// Weston on its headless backend, a `width`x`height` output, serving
    /// `socket` in the runtime dir, its stderr into `log`.
    fn weston_command(&self, socket: &str, log: &Path) -> Command {
        let log = std::fs::File::create(log).expect("weston log");
        let mut weston = self.raw_command("weston");
        weston
            .args([
                "--backend=headless-backend.so",
                &format!("--socket={socket}"),
                "--idle-time=0",
                "--no-config",
            ])
            .arg(format!("--width={}", self.width))
            .arg(format!("--height={}", self.height))
            .stdout(Stdio::null())
            .stderr(log);
        weston
    }

    /// The bed's directories and layer manifest, no compositor yet.
    fn new(compositor: Compositor, width: u32, height: u32) -> WaylandBed {
        let user = bed_user();
        let root = tempfile::Builder::new()
            .prefix("steadyhud-wayland-")
            .tempdir()
            .expect("create temp dir");
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod bed root");
        let dir = |name: &str, mode: u32| {
            let d = root.path().join(name);
            std::fs::create_dir_all(&d).expect("create bed dir");
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode))
                .expect("chmod bed dir");
            chown(&d, user);
            d
        };
        let runtime_dir = dir("runtime", 0o700);
        let data_home = dir("data", 0o755);
        let config_home = dir("config", 0o755);
        let log_dir = dir("logs", 0o755);
        let bed = WaylandBed {
            compositor,
            root,
            runtime_dir,
            data_home,
            config_home,
            log_dir,
            wayland_display: String::new(),
            swaysock: None,
            width,
            height,
            user,
            server: None,
            parent: None,
            keyboard: None,
        };
        let lib = bed.install(&layer_library());
        write_manifest(&bed.data_home, &lib);
        bed.chmod_tree(&bed.data_home.clone());
        bed
    }

    fn start_sway(mut self, keyboard: bool) -> WaylandBed {
        let bed = &mut self;
        let (width, height) = (bed.width, bed.height);
        let config = bed.root.path().join("sway.conf");
        // Headless: its one output; nested: its window in Weston.
        let (backend, output) = match bed.parent {
            None => ("headless", "HEADLESS-1"),
            Some(_) => ("wayland", "*"),
        };
        std::fs::write(
            &config,
            format!(
                "output {output} resolution {width}x{height}\n\
                 default_border none\n\
                 xwayland disable\n\
                 bindsym {DUMMY_KEY} nop\n"
            ),
        )
        .expect("write sway config");
        let log = std::fs::File::create(bed.log_path()).expect("sway log");
        let mut sway = bed.raw_command("sway");
        if bed.parent.is_some() {
            sway.env("WAYLAND_DISPLAY", PARENT_SOCKET);
        }
        sway.arg("-c")
            .arg(&config)
            .env("WLR_BACKENDS", backend)
            .env("WLR_RENDERER", "pixman")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .stdout(Stdio::null())
            .stderr(log);
        bed.server = Some(sway.spawn().expect("spawn sway"));
        bed.wait_for_sockets();
        if !keyboard {
            return self;
        }

        let mut kb = bed.command("wtype");
        kb.args(["-s", "3600000"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        bed.keyboard = Some(kb.spawn().expect("spawn wtype (keyboard holder)"));
        bed.wait_for_keyboard();
        self
    }

    /// Where the compositor's stderr goes.
    fn log_path(&self) -> PathBuf {
        self.root.path().join("compositor.log")
    }

    /// The compositor's log so far (last lines).
    pub fn compositor_log(&self) -> String {
        tail(
            &std::fs::read_to_string(self.log_path()).unwrap_or_default(),
            30,
        )
    }

    fn wait_for_sockets(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(Ok(Some(status))) = self.server.as_mut().map(|c| c.try_wait()) {
                panic!(
                    "{:?} exited ({status}):\n{}",
                    self.compositor,
                    self.compositor_log()
                );
            }
            let names: Vec<String> = std::fs::read_dir(&self.runtime_dir)
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            let wl = names
                .iter()
                .find(|n| n.starts_with("wayland-") && !n.ends_with(".lock"));
            let ipc = names.iter().find(|n| n.starts_with("sway-ipc."));
            let ipc_ready = self.compositor == Compositor::Weston || ipc.is_some();
            if let (Some(wl), true) = (wl, ipc_ready) {
                if UnixStream::connect(self.runtime_dir.join(wl)).is_ok() {
                    self.wayland_display = wl.clone();
                    self.swaysock = ipc.map(|i| self.runtime_dir.join(i));
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "{:?} did not create its sockets within 15 s:\n{}",
                self.compositor,
                self.compositor_log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_for_keyboard(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut last = String::new();
        while Instant::now() < deadline {
            let out = self
                .command("swaymsg")
                .args(["-r", "-t", "get_inputs"])
                .output()
                .expect("run swaymsg");
            last = String::from_utf8_lossy(&out.stdout).into_owned();
            if last.contains("\"type\": \"keyboard\"") {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("no keyboard on sway's seat within 10 s (wtype -s):\n{last}");
    }

    /// Copies `file` into the bed (readable and executable by the bed's
    /// user, whatever the permissions on the way to the original).
    pub fn install(&self, file: &Path) -> PathBuf {
        let dir = self.root.path().join("bin");
        std::fs::create_dir_all(&dir).expect("create bed bin dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
            .expect("chmod bed bin dir");
        let dst = dir.join(file.file_name().expect("a file name"));
        std::fs::copy(file, &dst).unwrap_or_else(|e| panic!("copy {}: {e}", file.display()));
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755))
            .expect("chmod installed file");
        dst
    }

    fn chmod_tree(&self, dir: &Path) {
        for e in std::fs::read_dir(dir).expect("read bed dir").flatten() {
            let p = e.path();
            let mode = if p.is_dir() { 0o755 } else { 0o644 };
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode))
                .expect("chmod bed file");
            if p.is_dir() {
                self.chmod_tree(&p);
            }
        }
    }

    /// `program` as the bed's user, with nothing of our environment but
    /// `PATH`.
    fn raw_command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.path())
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .stdin(Stdio::null());
        if let Some((uid, gid)) = self.user {
            c.uid(uid).gid(gid);
        }
        c
    }

    /// The user the bed's processes run as when it is not ourselves
    /// (`nobody`, when we are root).
    pub fn user_name(&self) -> Option<&'static str> {
        self.user.map(|_| "nobody")
    }

    /// `program` as the bed's user in the session: `WAYLAND_DISPLAY`,
    /// `SWAYSOCK` (sway), private XDG dirs with the layer manifest, the log
    /// dir; no `DISPLAY`, the layer not enabled (see `CommandExt::layer`).
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut c = self.raw_command(program);
        c.env("WAYLAND_DISPLAY", &self.wayland_display);
        if let Some(sock) = &self.swaysock {
            c.env("SWAYSOCK", sock);
        }
        c.env("XDG_DATA_HOME", &self.data_home)
            .env("XDG_CONFIG_HOME", &self.config_home)
            .env("STEADYHUD_LOG_DIR", &self.log_dir);
        if super::i686() {
            super::i686_game_env(&mut c);
        }
        c
    }

    /// Starts `program ARGS` in the session with the steadyhud layer on
    /// (killed when the returned value drops).
    pub fn spawn_app(&self, program: &str, args: &[&str]) -> super::Running {
        let mut c = self.command(program);
        c.args(args);
        super::spawn(super::CommandExt::layer(&mut c))
    }

    /// Runs `wtype ARGS` in the session; panics if it fails.
    pub fn wtype(&self, args: &[&str]) {
        let out = self
            .command("wtype")
            .args(args)
            .output()
            .expect("run wtype");
        assert!(
            out.status.success(),
            "wtype {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Presses and releases a combination (`Shift_R+F12`: keys down in
    /// order, up in reverse), after the dummy key (module docs).
    pub fn press(&self, combo: &str) {
        let keys: Vec<&str> = combo.split('+').collect();
        let mut args = vec!["-P", DUMMY_KEY];
        for k in &keys {
            args.extend(["-P", k]);
        }
        for k in keys.iter().rev() {
            args.extend(["-p", k]);
        }
        args.extend(["-p", DUMMY_KEY]);
        self.wtype(&args);
    }

    /// A screenshot of the output (`grim -t ppm -`).
    pub fn screenshot(&self) -> Screenshot {
        let out = self
            .command("grim")
            .args(["-t", "ppm", "-"])
            .output()
            .expect("run grim");
        assert!(
            out.status.success(),
            "grim failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Screenshot::from_ppm(&out.stdout).expect("parse grim's PPM")
    }
}

fn stop(child: &mut Child) {
    if matches!(child.try_wait(), Ok(None)) {
        // SAFETY: kill(2) on our own child's pid: SIGTERM lets sway remove
        // its sockets.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
    }
    let _ = child.wait();
}

impl Drop for WaylandBed {
    fn drop(&mut self) {
        if let Some(c) = self.keyboard.as_mut() {
            stop(c);
        }
        if let Some(c) = self.server.as_mut() {
            stop(c);
        }
        if let Some(c) = self.parent.as_mut() {
            stop(c);
        }
    }
}
