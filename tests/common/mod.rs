//! Test harness for everything that needs a real X server and a real Vulkan
//! app: a private Xvfb display per [`Harness`] (so tests run in parallel),
//! private XDG dirs with the steadyhud implicit-layer manifest pointing at
//! this build's `libsteadyhud.so`, a private session-log folder, and helpers
//! to run programs with/without the layer or the validation layer, kill them,
//! find and analyse session logs, and read screenshot pixels.
//!
//! Usage from a test file: `mod common; use common::*;`. Wayland tests:
//! [`wayland::SwayBed`] (a headless sway session).
//!
//! `STEADYHUD_TEST_ARCH=i686` ([`ARCH_SWITCH`]) runs the same tests with
//! 32-bit games (the test app, the layer, vkcube, vkd3d-gears on 32-bit
//! lavapipe; built and unpacked by `scripts/build-i686.sh`) and the 64-bit
//! harness and CLI.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod gl;
pub mod hud_panel;
pub mod wayland;

/// Name of the layer as in the manifest.
pub const LAYER_NAME: &str = "VK_LAYER_STEADYHUD_overlay";
/// Validation layer name.
pub const VALIDATION: &str = "VK_LAYER_KHRONOS_validation";
/// Default time limit of a [`run`].
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Start of the one line the layer prints per device when `gpu_timing=auto`
/// (the default) leaves GPU timing off on a CPU device, as on lavapipe.
pub const CPU_DEVICE_NOTE: &str = "steadyhud: GPU timing off on a CPU device (";

/// Start of the one line the layer prints per session naming the system
/// readings it cannot read (on this machine: no /sys, no PCI bus id on
/// lavapipe).
pub const SENSORS_NOTE: &str = "steadyhud: system readings: not readable here: ";

/// A `steadyhud:` line other than [`CPU_DEVICE_NOTE`] and [`SENSORS_NOTE`]:
/// something the layer complains about, which the tests on lavapipe do not
/// expect by default.
pub fn is_layer_complaint(line: &str) -> bool {
    line.starts_with("steadyhud:")
        && !line.starts_with(CPU_DEVICE_NOTE)
        && !line.starts_with(SENSORS_NOTE)
}

/// The profile folder this test was built into (`target/<profile>/`); a
/// test binary runs from its `deps/`. Read once: in a mount namespace of
/// its own (tests/packages.rs) `/proc/self/exe` can name the binary by the
/// path of the namespace it left (seen in a chroot), so a test that enters
/// one calls this first.
pub fn profile_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary knows its path");
        let deps = exe.parent().expect("the test binary is in a folder");
        deps.parent().unwrap_or(deps).to_path_buf()
    })
    .clone()
}

/// A binary of another crate of the workspace, built in this test's
/// profile. `cargo test` at the workspace root builds them all (the CLI's
/// and the test app's packages have integration tests of their own, so
/// Cargo builds their binaries before any test runs). Panics with the way
/// out when it is missing.
fn workspace_exe(name: &str) -> PathBuf {
    let exe = profile_dir().join(name);
    assert!(
        exe.is_file(),
        "{} was not built: run the tests from the workspace root (`cargo test --release`), \
         or build it first with `cargo build --release`",
        exe.display()
    );
    exe
}

/// Path of the `steadyhud` CLI built for this test run.
pub fn steadyhud_exe() -> PathBuf {
    workspace_exe("steadyhud")
}

/// Path of the scripted test app built for this test run (in [`i686`]
/// mode: its 32-bit build).
pub fn testapp_exe() -> PathBuf {
    if i686() {
        return i686_build("steadyhud-testapp");
    }
    workspace_exe("steadyhud-testapp")
}

/// The switch for the 32-bit run: `STEADYHUD_TEST_ARCH=i686` makes the
/// games of the tests 32-bit processes (the test app, the layer it loads,
/// vkcube and vkd3d-gears, on 32-bit lavapipe) while everything on the
/// host side (this harness, the `steadyhud` CLI, the log readers) stays
/// 64-bit, as for a 32-bit game on a 64-bit system. Unset (or `x86_64`):
/// the normal run, everything 64-bit.
pub const ARCH_SWITCH: &str = "STEADYHUD_TEST_ARCH";

/// Where `scripts/build-i686.sh` leaves the 32-bit builds and programs.
fn i686_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/i686")
}

/// The 32-bit Vulkan driver (lavapipe) the 32-bit games use.
pub const I686_ICD: &str = "/usr/share/vulkan/icd.d/lvp_icd.i686.json";

/// Whether this run's games are 32-bit ([`ARCH_SWITCH`]`=i686`).
pub fn i686() -> bool {
    let v = std::env::var_os(ARCH_SWITCH).unwrap_or_default();
    match v.to_str() {
        Some("" | "x86_64") => false,
        Some("i686") => true,
        _ => panic!("{ARCH_SWITCH}={v:?}: the choices are i686 (32-bit games) or unset (64-bit)"),
    }
}

/// For a test whose game has no 32-bit build here: in [`i686`] mode,
/// prints `SKIPPED <test> (STEADYHUD_TEST_ARCH=i686): <why>` (straight to
/// stderr, past the capture) and returns true, and the test returns; the
/// 64-bit run covers it. Not a missing tool, so not a failure under
/// `STEADYHUD_REQUIRE_TOOLS` either.
pub fn skip_in_i686(why: &str) -> bool {
    if !i686() {
        return false;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("(test)")
        .to_string();
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test} ({ARCH_SWITCH}=i686): {why}"
    );
    true
}

/// `name` as `scripts/build-i686.sh` built it for i686. Panics, saying to
/// run the script, when it is missing or older than a source file it was
/// built from (cargo's dep-info file next to it lists them): the 64-bit
/// side is rebuilt by `cargo test`, the 32-bit side only by the script.
fn i686_build(name: &str) -> PathBuf {
    let dir = i686_dir().join("i686-unknown-linux-gnu/release");
    let exe = dir.join(name);
    let fix = "run scripts/build-i686.sh (as root) first";
    let built = std::fs::metadata(&exe)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{ARCH_SWITCH}=i686: {} ({e}): {fix}", exe.display()));
    let stem = name.strip_suffix(".so").unwrap_or(name);
    let deps = dir.join(format!("{stem}.d"));
    let text = std::fs::read_to_string(&deps)
        .unwrap_or_else(|e| panic!("{ARCH_SWITCH}=i686: {} ({e}): {fix}", deps.display()));
    let sources = text.split_once(": ").map_or("", |(_, s)| s);
    for src in sources.split_whitespace() {
        let changed = std::fs::metadata(src).and_then(|m| m.modified());
        if changed.is_ok_and(|t| t > built) {
            panic!(
                "{ARCH_SWITCH}=i686: {} is older than {src}: {fix}",
                exe.display()
            );
        }
    }
    exe
}

/// The layer library this test run was built with (see [`built_library`]).
pub fn layer_library() -> PathBuf {
    built_library("libsteadyhud.so")
}

/// The cdylib `name` this test run was built with. `cargo test` compiles
/// it into `target/<profile>/deps/` but only `cargo build` copies it up
/// next to the binaries, so `deps/` (always the newest build) comes first.
/// Panics with an explanation when neither exists. In [`i686`] mode: the
/// 32-bit build.
pub fn built_library(name: &str) -> PathBuf {
    if i686() {
        return i686_build(name);
    }
    let dir = profile_dir();
    let candidates = [dir.join("deps").join(name), dir.join(name)];
    for lib in &candidates {
        if lib.is_file() {
            return lib.clone();
        }
    }
    panic!(
        "the library {name} was not built (looked at {:?}): its crate must keep crate-type \
         cdylib; run the tests from the workspace root, or `cargo build` (same profile) first",
        candidates
    );
}

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

/// One isolated environment: X server, XDG dirs with the layer manifest, log dir.
pub struct Harness {
    pub xvfb: Xvfb,
    /// Root of every private directory (deleted on drop).
    pub root: tempfile::TempDir,
    pub runtime_dir: PathBuf,
    pub data_home: PathBuf,
    pub config_home: PathBuf,
    pub state_home: PathBuf,
    /// `STEADYHUD_LOG_DIR` of every command made by this harness.
    pub log_dir: PathBuf,
}

impl Harness {
    /// A harness with a 640x480 screen.
    pub fn new() -> Harness {
        Harness::with_screen(640, 480)
    }

    pub fn with_screen(width: u32, height: u32) -> Harness {
        let lib = layer_library();
        let root = tempfile::Builder::new()
            .prefix("steadyhud-test-")
            .tempdir()
            .expect("create temp dir");
        let runtime_dir = root.path().join("runtime");
        let data_home = root.path().join("data");
        let config_home = root.path().join("config");
        let state_home = root.path().join("state");
        let log_dir = root.path().join("logs");
        for d in [
            &runtime_dir,
            &data_home,
            &config_home,
            &state_home,
            &log_dir,
        ] {
            std::fs::create_dir_all(d).expect("create harness dir");
        }
        std::fs::set_permissions(&runtime_dir, std::fs::Permissions::from_mode(0o700))
            .expect("chmod runtime dir");
        write_manifest(&data_home, &lib);
        let xvfb = Xvfb::start(width, height);
        Harness {
            xvfb,
            root,
            runtime_dir,
            data_home,
            config_home,
            state_home,
            log_dir,
        }
    }

    /// A command with the harness environment: this display, private XDG
    /// dirs, log dir; the layer is NOT enabled and no other layer env leaks in.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut c = Command::new(program);
        for var in [
            "STEADYHUD",
            "DISABLE_STEADYHUD",
            "STEADYHUD_CONFIG",
            "VK_INSTANCE_LAYERS",
            "VK_LOADER_LAYERS_ENABLE",
            "VK_LOADER_LAYERS_DISABLE",
            "VK_LAYER_PATH",
            "VK_ADD_LAYER_PATH",
            "MANGOHUD",
            "ENABLE_VKBASALT",
            "WAYLAND_DISPLAY",
        ] {
            c.env_remove(var);
        }
        c.env("DISPLAY", self.xvfb.display())
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("XDG_DATA_HOME", &self.data_home)
            .env("XDG_CONFIG_HOME", &self.config_home)
            .env("XDG_STATE_HOME", &self.state_home)
            .env("STEADYHUD_LOG_DIR", &self.log_dir)
            .stdin(Stdio::null());
        if i686() {
            i686_game_env(&mut c);
        }
        c
    }

    /// The test app with `args`, layer off.
    pub fn testapp(&self, args: &[&str]) -> Command {
        let mut c = self.command(testapp_exe());
        c.args(args);
        c
    }

    /// The `steadyhud` CLI with `args`.
    pub fn steadyhud(&self, args: &[&str]) -> Command {
        let mut c = self.command(steadyhud_exe());
        c.args(args);
        c
    }

    /// Writes `$XDG_CONFIG_HOME/steadyhud/steadyhud.conf` for every command
    /// of this harness.
    pub fn write_config(&self, text: &str) -> PathBuf {
        let dir = self.config_home.join("steadyhud");
        std::fs::create_dir_all(&dir).expect("create config dir");
        let p = dir.join("steadyhud.conf");
        std::fs::write(&p, text).expect("write steadyhud.conf");
        p
    }

    /// Session logs in the log dir, sorted by name.
    pub fn session_logs(&self) -> Vec<SessionLog> {
        session_logs_in(&self.log_dir)
    }

    /// The single session log of the log dir; panics (listing the dir) when
    /// there is none or more than one.
    pub fn only_session_log(&self) -> SessionLog {
        let logs = self.session_logs();
        assert_eq!(
            logs.len(),
            1,
            "expected exactly one session log (*.csv) in {}, found: {:?}",
            self.log_dir.display(),
            list_dir(&self.log_dir)
        );
        logs.into_iter().next().unwrap()
    }

    /// The single session log, checked to hold one row per frame of an app
    /// that presented `presents` times (presents − 1 rows); with its rows.
    pub fn only_session_log_of(&self, presents: u64, what: &str) -> (SessionLog, u64) {
        let log = self.only_session_log();
        let rows = logged_durations_ns(&log.csv).len() as u64;
        assert_eq!(
            rows,
            presents - 1,
            "{what}: session log rows vs presents − 1 ({})",
            log.csv.display()
        );
        (log, rows)
    }

    /// Removes every file of the log dir (between runs of one test).
    pub fn clear_logs(&self) {
        for p in list_dir(&self.log_dir) {
            let _ = std::fs::remove_file(p);
        }
    }

    /// `steadyhud analyze FILE --json`, asserted successful, parsed.
    pub fn analyze(&self, file: &Path) -> serde_json::Value {
        let out = run(self.steadyhud(&["analyze"]).arg(file).arg("--json"));
        assert!(
            out.status.success(),
            "steadyhud analyze {} failed ({}):\n{}",
            file.display(),
            out.status,
            out.stderr
        );
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
            panic!("analyze --json printed invalid JSON ({e}):\n{}", out.stdout)
        })
    }

    /// Panics unless the loader really inserts the validation layer with
    /// [`CommandExt::validation`] (so a zero `VUID-` count means something).
    pub fn assert_validation_active(&self) {
        let out = run(self
            .testapp(&["--frames", "1"])
            .validation()
            .env("VK_LOADER_DEBUG", "layer"));
        assert!(
            out.inserted_layer(VALIDATION),
            "the validation layer is not active (vulkan-validationlayers installed?):\n{}",
            tail(&out.stderr, 30)
        );
    }

    /// Whether the loader inserts the steadyhud layer into the test app run
    /// with [`CommandExt::layer`] (loader debug output). Clears the log dir.
    pub fn layer_inserted(&self) -> bool {
        let out = run(self
            .testapp(&["--frames", "1"])
            .layer()
            .env("VK_LOADER_DEBUG", "layer"));
        self.clear_logs();
        out.stderr
            .contains(&format!("Insert instance layer \"{LAYER_NAME}\""))
    }

    /// Runs `xdotool ARGS` on this display (e.g. `["key", "shift_R+F12"]`).
    pub fn xdotool(&self, args: &[&str]) {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", self.xvfb.display())
            .stdin(Stdio::null())
            .output()
            .expect("run xdotool (xdotool package)");
        assert!(
            out.status.success(),
            "xdotool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A screenshot of the whole root window.
    pub fn screenshot(&self) -> Screenshot {
        let out = Command::new("import")
            .args([
                "-display",
                &self.xvfb.display(),
                "-window",
                "root",
                "-depth",
                "8",
                "ppm:-",
            ])
            .stdin(Stdio::null())
            .output()
            .expect("run ImageMagick `import` (imagemagick package)");
        assert!(
            out.status.success(),
            "import failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Screenshot::from_ppm(&out.stdout).expect("parse the PPM screenshot from import")
    }
}

/// What makes a [`Harness::command`] start the 32-bit game in [`i686`]
/// mode: the 32-bit lavapipe as the only driver, and the 32-bit vkcube and
/// vkd3d-gears (unpacked by `scripts/build-i686.sh` into
/// `target/i686/vt32/`) first in `PATH`, so `command("vkcube")` runs them.
/// The 64-bit tools the tests start (the `steadyhud` CLI, by its absolute
/// path) use no Vulkan driver.
fn i686_game_env(c: &mut Command) {
    let bin = i686_dir().join("vt32/usr/bin");
    assert!(
        bin.join("vkcube").is_file() && bin.join("vkd3d-gears").is_file(),
        "{ARCH_SWITCH}=i686: no 32-bit vkcube and vkd3d-gears in {}: run scripts/build-i686.sh \
         (as root) first",
        bin.display()
    );
    let mut path = vec![bin];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    c.env("VK_ICD_FILENAMES", I686_ICD)
        .env("PATH", std::env::join_paths(path).expect("PATH folders"));
}

/// Writes `vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json` under
/// `data_home` from the repo's manifest with an absolute `library_path`.
pub fn write_manifest(data_home: &Path, lib: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("layer-manifest/VK_LAYER_STEADYHUD_overlay.json");
    let text =
        std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("read {}: {e}", src.display()));
    let mut json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", src.display()));
    json["layer"]["library_path"] = serde_json::Value::String(lib.to_string_lossy().into_owned());
    let dir = data_home.join("vulkan/implicit_layer.d");
    std::fs::create_dir_all(&dir).expect("create implicit_layer.d");
    let dst = dir.join(format!("{LAYER_NAME}.json"));
    std::fs::write(&dst, serde_json::to_string_pretty(&json).unwrap()).expect("write manifest");
    dst
}

/// The (uid, gid) of user `name`, if it exists.
pub fn user_ids(name: &std::ffi::CStr) -> Option<(u32, u32)> {
    // SAFETY: getpwnam's result is read before any other passwd call on
    // this thread.
    unsafe {
        let pw = libc::getpwnam(name.as_ptr());
        (!pw.is_null()).then(|| ((*pw).pw_uid, (*pw).pw_gid))
    }
}

/// Whether the tests run as root (other users' cases need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Builder-style switches on a [`Command`].
pub trait CommandExt {
    /// Enable the steadyhud layer (`STEADYHUD=1`).
    fn layer(&mut self) -> &mut Self;
    /// Enable the Khronos validation layer.
    fn validation(&mut self) -> &mut Self;
    /// Run as user `name` with its primary group only (needs root).
    fn as_user(&mut self, name: &std::ffi::CStr) -> &mut Self;
}

impl CommandExt for Command {
    fn layer(&mut self) -> &mut Self {
        self.env("STEADYHUD", "1")
    }
    fn validation(&mut self) -> &mut Self {
        self.env("VK_INSTANCE_LAYERS", VALIDATION)
    }
    fn as_user(&mut self, name: &std::ffi::CStr) -> &mut Self {
        use std::os::unix::process::CommandExt as _;
        let (uid, gid) = user_ids(name).unwrap_or_else(|| panic!("no user {name:?}"));
        // std also drops root's supplementary groups when uid is set.
        self.uid(uid).gid(gid)
    }
}

/// What a finished (or killed) process left.
#[derive(Debug)]
pub struct RunOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Each stdout line with the time since spawn it was read at.
    pub stdout_lines: Vec<(Duration, String)>,
    /// Time since spawn of the SIGKILL, for [`run_killed_after`].
    pub killed_at: Option<Duration>,
}

impl RunOutput {
    /// Whether the loader says it inserted instance layer `name` (the run
    /// had `VK_LOADER_DEBUG=layer`).
    pub fn inserted_layer(&self, name: &str) -> bool {
        self.stderr
            .contains(&format!("Insert instance layer \"{name}\""))
    }

    /// Every stdout/stderr line mentioning a validation VUID.
    pub fn vuid_lines(&self) -> Vec<&str> {
        // Threading and synchronization errors carry no VUID.
        self.output_lines(|l| l.contains("VUID-") || l.contains("Validation Error"))
    }

    /// Lines of stdout and stderr that `keep` selects.
    pub fn output_lines(&self, keep: impl Fn(&str) -> bool) -> Vec<&str> {
        self.stdout
            .lines()
            .chain(self.stderr.lines())
            .filter(|l| keep(l))
            .collect()
    }

    /// N of the test app's final `testapp: presented N frames` line.
    pub fn presented(&self) -> Option<u64> {
        self.stdout.lines().find_map(|l| {
            l.strip_prefix("testapp: presented ")?
                .strip_suffix(" frames")?
                .parse()
                .ok()
        })
    }

    /// Presents per swapchain from `testapp: swapchain presents a,b,...`.
    pub fn swapchain_presents(&self) -> Vec<u64> {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix("testapp: swapchain presents "))
            .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// M of `testapp: swapchain recreations M`.
    pub fn swapchain_recreations(&self) -> Option<u64> {
        self.stdout.lines().find_map(|l| {
            l.strip_prefix("testapp: swapchain recreations ")?
                .trim()
                .parse()
                .ok()
        })
    }

    /// (count, worst ms) from `testapp: late presents N worst X ms`: how
    /// far the app itself missed its script.
    pub fn late_presents(&self) -> Option<(u64, f64)> {
        self.stdout.lines().find_map(|l| {
            let rest = l.strip_prefix("testapp: late presents ")?;
            let (n, worst) = rest.split_once(" worst ")?;
            let (ms, _at) = worst.split_once(" ms")?;
            Some((n.parse().ok()?, ms.parse().ok()?))
        })
    }

    /// Largest `testapp: present K` progress count read at or before `t`
    /// after spawn (0 if none).
    pub fn presents_by(&self, t: Duration) -> u64 {
        self.stdout_lines
            .iter()
            .filter(|(at, _)| *at <= t)
            .filter_map(|(_, l)| l.strip_prefix("testapp: present ")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0)
    }

    /// Panics with both streams unless the process exited 0.
    pub fn assert_success(&self, what: &str) -> &Self {
        assert!(
            self.status.success(),
            "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            self.status,
            tail(&self.stdout, 40),
            tail(&self.stderr, 60)
        );
        self
    }

    /// Panics (showing them) if any `VUID-` line was printed.
    pub fn assert_no_vuid(&self, what: &str) -> &Self {
        let v = self.vuid_lines();
        assert!(
            v.is_empty(),
            "{what}: {} validation message(s):\n{}",
            v.len(),
            v.join("\n")
        );
        self
    }
}

/// Last `n` lines of `s`.
pub fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs to completion (killed and failed after [`RUN_TIMEOUT`]).
pub fn run(cmd: &mut Command) -> RunOutput {
    spawn(cmd).wait()
}

/// Runs and SIGKILLs the process `after` its spawn (if still running).
pub fn run_killed_after(cmd: &mut Command, after: Duration) -> RunOutput {
    let r = spawn(cmd);
    let left = after.saturating_sub(r.start.elapsed());
    std::thread::sleep(left);
    r.kill()
}

/// A process started by [`spawn`] whose stdout lines are collected (with
/// their arrival times) while it runs.
pub struct Running {
    pub child: Child,
    pub start: Instant,
    program: String,
    lines: Arc<Mutex<Vec<(Duration, String)>>>,
    out_thread: Option<std::thread::JoinHandle<()>>,
    err_thread: Option<std::thread::JoinHandle<String>>,
}

/// Spawns `cmd` with piped stdout/stderr read by background threads.
pub fn spawn(cmd: &mut Command) -> Running {
    let start = Instant::now();
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    // A program a test has just written (an installed copy) can be
    // "Text file busy" for a moment: another test thread's fork may hold
    // the writing fd until its exec. Retry that, not other errors.
    let mut tries = 0;
    let mut child = loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            r => break r.unwrap_or_else(|e| panic!("spawn {program}: {e}")),
        }
    };
    let lines = Arc::new(Mutex::new(Vec::<(Duration, String)>::new()));
    let stdout = child.stdout.take().expect("piped stdout");
    let sink = Arc::clone(&lines);
    let out_thread = std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        let mut buf = Vec::new();
        while let Ok(n) = r.read_until(b'\n', &mut buf) {
            if n == 0 {
                break;
            }
            let line = String::from_utf8_lossy(&buf)
                .trim_end_matches(['\n', '\r'])
                .to_string();
            sink.lock().unwrap().push((start.elapsed(), line));
            buf.clear();
        }
    });
    let mut stderr = child.stderr.take().expect("piped stderr");
    let err_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    });
    Running {
        child,
        start,
        program,
        lines,
        out_thread: Some(out_thread),
        err_thread: Some(err_thread),
    }
}

impl Running {
    /// The process's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM (which `steadyhud run` forwards to its program), up to 20 s
    /// to exit, then the output (killed if it had not).
    pub fn terminate(mut self) -> RunOutput {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.has_exited() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill()
    }

    /// Waits until a stdout line satisfies `pred` (true) or `timeout`
    /// passes or the process exits (false).
    pub fn wait_for_line(&mut self, timeout: Duration, pred: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.lines.lock().unwrap().iter().any(|(_, l)| pred(l)) {
                return true;
            }
            if Instant::now() > deadline || matches!(self.child.try_wait(), Ok(Some(_))) {
                // One last look: the line may have arrived with the exit.
                std::thread::sleep(Duration::from_millis(20));
                return self.lines.lock().unwrap().iter().any(|(_, l)| pred(l));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the test app (run with `--progress`) reports at least
    /// `k` present calls; panics after `timeout`.
    pub fn wait_presents(&mut self, k: u64, timeout: Duration) {
        let ok = self.wait_for_line(timeout, |l| {
            l.strip_prefix("testapp: present ")
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| n >= k)
        });
        assert!(
            ok,
            "{} did not report {k} presents within {timeout:?} (run it with --progress)",
            self.program
        );
    }

    /// Whether the process has exited (it is not reaped from the output
    /// readers: [`Running::wait`] still collects everything).
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// SIGKILLs the process now and collects its output.
    pub fn kill(mut self) -> RunOutput {
        let _ = self.child.kill();
        let at = self.start.elapsed();
        let mut out = self.finish();
        out.killed_at = Some(at);
        out
    }

    /// Waits for exit (SIGKILL and panic after [`RUN_TIMEOUT`]).
    pub fn wait(mut self) -> RunOutput {
        loop {
            if self.child.try_wait().expect("wait for child").is_some() {
                break;
            }
            if self.start.elapsed() > RUN_TIMEOUT {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("{} did not finish within {RUN_TIMEOUT:?}", self.program);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.finish()
    }

    fn finish(&mut self) -> RunOutput {
        let status = self.child.wait().expect("wait for child");
        if let Some(t) = self.out_thread.take() {
            t.join().expect("stdout reader");
        }
        let stderr = self
            .err_thread
            .take()
            .map(|t| t.join().expect("stderr reader"))
            .unwrap_or_default();
        let stdout_lines = std::mem::take(&mut *self.lines.lock().unwrap());
        let stdout = stdout_lines
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        RunOutput {
            status,
            stdout,
            stderr,
            stdout_lines,
            killed_at: None,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A session log: the streamed CSV and, when the app exited cleanly, its summary.
#[derive(Clone, Debug)]
pub struct SessionLog {
    pub csv: PathBuf,
    pub summary: Option<PathBuf>,
}

impl SessionLog {
    /// The summary JSON, parsed; panics if there is none.
    pub fn summary_json(&self) -> serde_json::Value {
        let p = self
            .summary
            .as_ref()
            .unwrap_or_else(|| panic!("no .summary.json next to {}", self.csv.display()));
        let text =
            std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", p.display()))
    }
}

/// Files directly in `dir`, sorted.
pub fn list_dir(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// `*.csv` session logs in `dir`, each with its `<stem>.summary.json` if present.
pub fn session_logs_in(dir: &Path) -> Vec<SessionLog> {
    list_dir(dir)
        .into_iter()
        .filter(|p| p.extension() == Some(OsStr::new("csv")))
        .map(|csv| {
            let summary = csv.with_extension("summary.json");
            SessionLog {
                summary: summary.is_file().then_some(summary),
                csv,
            }
        })
        .collect()
}

/// An RGB screenshot.
pub struct Screenshot {
    pub width: u32,
    pub height: u32,
    /// Row-major RGB, 3 bytes per pixel.
    pub rgb: Vec<u8>,
}

impl Screenshot {
    /// Parses binary PPM (P6, maxval 255).
    pub fn from_ppm(data: &[u8]) -> Result<Screenshot, String> {
        let mut fields = Vec::new();
        let mut i = 0;
        while fields.len() < 4 {
            while i < data.len() && data[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < data.len() && data[i] == b'#' {
                while i < data.len() && data[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            let s = i;
            while i < data.len() && !data[i].is_ascii_whitespace() {
                i += 1;
            }
            if s == i {
                return Err("truncated PPM header".into());
            }
            fields.push(String::from_utf8_lossy(&data[s..i]).into_owned());
        }
        i += 1; // the single whitespace after maxval
        if fields[0] != "P6" {
            return Err(format!("not a P6 PPM: {}", fields[0]));
        }
        let w: u32 = fields[1].parse().map_err(|_| "bad width")?;
        let h: u32 = fields[2].parse().map_err(|_| "bad height")?;
        if fields[3] != "255" {
            return Err(format!("unsupported maxval {}", fields[3]));
        }
        let need = (w * h * 3) as usize;
        let rgb = data.get(i..i + need).ok_or("truncated PPM data")?.to_vec();
        Ok(Screenshot {
            width: w,
            height: h,
            rgb,
        })
    }

    /// The (r, g, b) at (x, y).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        assert!(
            x < self.width && y < self.height,
            "pixel ({x},{y}) outside {}x{}",
            self.width,
            self.height
        );
        let o = ((y * self.width + x) * 3) as usize;
        [self.rgb[o], self.rgb[o + 1], self.rgb[o + 2]]
    }

    /// Number of pixels in the rectangle that differ from `other`'s by more
    /// than `tolerance` in any channel.
    pub fn diff_count(
        &self,
        other: &Screenshot,
        x0: u32,
        y0: u32,
        w: u32,
        h: u32,
        tolerance: u8,
    ) -> usize {
        let mut n = 0;
        for y in y0..(y0 + h).min(self.height).min(other.height) {
            for x in x0..(x0 + w).min(self.width).min(other.width) {
                let a = self.pixel(x, y);
                let b = other.pixel(x, y);
                if a.iter().zip(&b).any(|(p, q)| p.abs_diff(*q) > tolerance) {
                    n += 1;
                }
            }
        }
        n
    }

    /// Fraction of the pixels of the rectangle (clipped to the image)
    /// within `tolerance` of `rgb` in every channel.
    pub fn fraction_close(
        &self,
        x0: u32,
        y0: u32,
        w: u32,
        h: u32,
        rgb: [u8; 3],
        tolerance: u8,
    ) -> f64 {
        let (x1, y1) = ((x0 + w).min(self.width), (y0 + h).min(self.height));
        let area = u64::from(x1.saturating_sub(x0)) * u64::from(y1.saturating_sub(y0));
        if area == 0 {
            return 0.0;
        }
        let n = (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .filter(|&(x, y)| close(self.pixel(x, y), rgb, tolerance))
            .count();
        n as f64 / area as f64
    }

    /// Keeps the screenshot as `target/hud-shots/<name>.png` for a human to
    /// look at (printed on stderr); its path.
    #[allow(dead_code)]
    pub fn keep(&self, name: &str) -> PathBuf {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../hud-shots");
        std::fs::create_dir_all(&dir).expect("create target/hud-shots");
        let png = dir.join(format!("{name}.png"));
        self.save_png(&png);
        eprintln!("screenshot: {}", png.display());
        png
    }

    /// Saves as PNG (via ImageMagick) for looking at a failure.
    pub fn save_png(&self, path: &Path) {
        let mut ppm = format!("P6\n{} {}\n255\n", self.width, self.height).into_bytes();
        ppm.extend_from_slice(&self.rgb);
        let tmp = path.with_extension("ppm");
        std::fs::write(&tmp, ppm).expect("write ppm");
        let _ = Command::new("convert").arg(&tmp).arg(path).status();
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The test app's band colours as 8-bit UNORM values, for screenshot checks
/// (must match `crates/testapp/src/target.rs`): band 0 (x in
/// 0..16, 32..48, ...) is `BAND_A`, the others `BAND_B`.
pub const BAND_WIDTH: u32 = 16;
pub const BAND_A_UNORM: [u8; 3] = [13, 64, 140];
pub const BAND_B_UNORM: [u8; 3] = [230, 140, 26];

/// Whether `px` is within `tol` of `want` in every channel.
pub fn close(px: [u8; 3], want: [u8; 3], tol: u8) -> bool {
    px.iter().zip(&want).all(|(a, b)| a.abs_diff(*b) <= tol)
}

/// The test app's own pattern parser (same source file), so tests compute
/// the script's ideal frame durations exactly as the app schedules them.
#[path = "../../crates/testapp/src/pattern.rs"]
#[allow(clippy::all)]
mod pattern;

/// The ideal frame durations (ns) of a `--pattern` script: frame i is the
/// gap between present i and present i+1.
pub fn script_durations_ns(pattern: &str) -> Vec<u64> {
    pattern::Pattern::parse(pattern)
        .unwrap_or_else(|e| panic!("bad pattern {pattern:?}: {e}"))
        .gaps()
        .map(|g| g.as_nanos() as u64)
        .collect()
}

impl Harness {
    /// Panics with the loader's view unless `STEADYHUD=1` makes the loader
    /// insert the steadyhud layer from this harness's manifest.
    pub fn assert_layer_inserted(&self) {
        let out = run(self
            .testapp(&["--frames", "1"])
            .layer()
            .env("VK_LOADER_DEBUG", "layer"));
        assert!(
            out.inserted_layer(LAYER_NAME),
            "the loader did not insert {LAYER_NAME} (manifest under {}):\n{}",
            self.data_home.display(),
            tail(&out.stderr, 40)
        );
        self.clear_logs();
    }
}

/// Frame durations (ns) logged in a steadyhud session CSV, in row order,
/// read with the crate's own session-log reader (`steadyhud_formats`, which
/// ignores a cut-off last line). Panics, naming file, line and column, if
/// the file is not a steadyhud session log.
pub fn logged_durations_ns(csv: &Path) -> Vec<u64> {
    let opts = steadyhud_formats::ReadOptions {
        format: Some(steadyhud_formats::Format::SteadyHud),
        ..Default::default()
    };
    match steadyhud_formats::read_path(csv, &opts) {
        Ok(log) => log.durations_ns,
        Err(e) => panic!(
            "{} is not a readable steadyhud session log: {e}",
            csv.display()
        ),
    }
}

/// The test app's `testapp: gpu work ms: median=M p10=A p90=B frames=N
/// requested=MS` line (`--gpu-work`).
#[derive(Debug)]
pub struct GpuWorkLine {
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
    pub frames: u64,
    pub requested: f64,
}

pub fn gpu_work_line(out: &RunOutput) -> Option<GpuWorkLine> {
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("testapp: gpu work ms: "))?;
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
    };
    Some(GpuWorkLine {
        median: field("median")?,
        p10: field("p10")?,
        p90: field("p90")?,
        frames: field("frames")? as u64,
        requested: field("requested")?,
    })
}

/// Whether `program` is on PATH.
pub fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Serialises the timing-sensitive tests of one test binary: hold the guard
/// for the whole test (a panicking holder does not poison it for the others).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    steadyhud_sys::lock::Recover::lock_or_recover(&LOCK)
}

/// Switches for the validation layer's optional checks (see
/// [`CommandExt::validation`]).
pub trait ValidationExt {
    /// Enable the Khronos validation layer with synchronization validation
    /// (`VK_LAYER_ENABLES`); thread-safety checks are on by default.
    fn sync_validation(&mut self) -> &mut Self;
}

/// `VK_LAYER_ENABLES` value that turns on synchronization validation.
pub const SYNC_VALIDATION: &str = "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT";

impl ValidationExt for Command {
    fn sync_validation(&mut self) -> &mut Self {
        self.env("VK_INSTANCE_LAYERS", VALIDATION)
            .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
    }
}

/// The test app's `testapp: vkCreateSwapchainKHR us: ...` line.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateSwapchainTimes {
    /// The whole line after `testapp: `.
    pub line: String,
    /// Duration of the first call (us).
    pub first_us: u64,
    /// Median of the later calls (us), None if there was only one call.
    pub median_after_first_us: Option<u64>,
    /// Number of calls.
    pub n: u64,
}

impl RunOutput {
    /// Every stdout/stderr line with `Validation Error` (the Khronos
    /// validation layer's error lines: VUIDs, but also threading errors
    /// (`UNASSIGNED-Threading-*`) and synchronization hazards
    /// (`SYNC-HAZARD-*`), which carry no `VUID-`).
    pub fn validation_error_lines(&self) -> Vec<&str> {
        self.output_lines(|l| l.contains("Validation Error"))
    }

    /// Panics (showing the first of them and their count) if any
    /// `Validation Error` line was printed.
    pub fn assert_no_validation_error(&self, what: &str) -> &Self {
        let v = self.validation_error_lines();
        assert!(
            v.is_empty(),
            "{what}: {} `Validation Error` line(s), the first ones:\n{}",
            v.len(),
            v.iter().take(20).copied().collect::<Vec<_>>().join("\n")
        );
        self
    }

    /// N of the test app's `testapp: submit thread submits N` (`--submit-thread`).
    pub fn thread_submits(&self) -> Option<u64> {
        self.stdout.lines().find_map(|l| {
            l.strip_prefix("testapp: submit thread submits ")?
                .trim()
                .parse()
                .ok()
        })
    }

    /// The test app's `testapp: vkCreateSwapchainKHR us: first=.. median_after_first=.. n=..` line.
    pub fn create_swapchain_times(&self) -> Option<CreateSwapchainTimes> {
        let line = self.stdout.lines().find_map(|l| {
            l.strip_prefix("testapp: ")
                .filter(|r| r.starts_with("vkCreateSwapchainKHR us: "))
        })?;
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse::<u64>().ok())
        };
        Some(CreateSwapchainTimes {
            line: line.to_string(),
            first_us: field("first")?,
            median_after_first_us: field("median_after_first"),
            n: field("n")?,
        })
    }
}

impl Harness {
    /// Panics unless [`ValidationExt::sync_validation`] really turns on
    /// synchronization validation (so zero hazards mean something): the test
    /// app's `--submit-hazard` records a write-after-write hazard (and
    /// nothing else wrong) that it must report.
    pub fn assert_sync_validation_active(&self) {
        let args = ["--frames", "2", "--submit-thread", "--submit-hazard"];
        let out = run(self.testapp(&args).sync_validation());
        out.assert_success("testapp --submit-hazard with synchronization validation");
        assert!(
            out.validation_error_lines()
                .iter()
                .any(|l| l.contains("SYNC-HAZARD-WRITE-AFTER-WRITE")),
            "synchronization validation is not active ({SYNC_VALIDATION} in VK_LAYER_ENABLES): \
             the deliberate hazard was not reported:\n{}",
            tail(&out.stdout, 20)
        );
    }

    /// Panics unless the loader puts the validation layer between the
    /// steadyhud layer and the driver (so validation sees the calls the
    /// layer makes on its own, e.g. its queue submissions), judged from
    /// `VK_LOADER_DEBUG=layer` output `loader_debug` (the loader prints the
    /// instance layers it inserts from the driver side up).
    pub fn assert_validation_below_layer(&self, loader_debug: &str) {
        let order: Vec<&str> = loader_debug
            .lines()
            .filter_map(|l| {
                l.split("Insert instance layer \"")
                    .nth(1)?
                    .split('"')
                    .next()
            })
            .collect();
        let pos = |name: &str| order.iter().position(|l| *l == name);
        match (pos(VALIDATION), pos(LAYER_NAME)) {
            (Some(v), Some(s)) => assert!(
                v < s,
                "the validation layer sits above {LAYER_NAME} (insert order from the driver up: {order:?}): \
                 it cannot see the layer's own Vulkan calls"
            ),
            _ => panic!("both {VALIDATION} and {LAYER_NAME} must be inserted; loader inserted {order:?}"),
        }
    }
}

/// Other processes keeping every core busy while a test runs (exit races
/// hide on an idle machine): one shell busy loop per core, killed on drop.
pub struct CpuLoad(Vec<Child>);

impl CpuLoad {
    pub fn start() -> CpuLoad {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        CpuLoad(
            (0..cores)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .spawn()
                        .expect("spawn a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for CpuLoad {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Builds the test's C source `src` (relative to the checkout) into `out`
/// with gcc: `flags` before the source (e.g. `-shared -fPIC`, `-m32`),
/// `libs` after it. Panics naming the source when gcc fails.
pub fn build_c(src: &str, out: &Path, flags: &[&str], libs: &[&str]) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
    let status = Command::new("gcc")
        .args(flags)
        .args(["-O2", "-Wall", "-o"])
        .arg(out)
        .arg(&src)
        .args(libs)
        .status()
        .expect("run gcc (the build set installs it)");
    assert!(status.success(), "gcc could not build {}", src.display());
}
