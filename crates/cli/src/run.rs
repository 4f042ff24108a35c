//! `steadyhud run [--log-dir D] [--lib PATH] -- CMD ARGS`: runs any program
//! with the layer and the GL library on, whether or not they are installed.
//!
//! The layer is added as an explicit layer for the child only: a private
//! folder with a manifest naming the library by absolute path goes into
//! `VK_ADD_LAYER_PATH` (which adds to, rather than replaces, the search
//! path, so the user's other layers stay visible) and the layer name is
//! appended to `VK_INSTANCE_LAYERS`; both are honoured by loader 1.3.239,
//! and when an installed implicit copy is also enabled the loader loads the
//! layer once, from this manifest. `STEADYHUD=1` is set as well so child
//! processes that rebuild their environment still get an installed layer.
//!
//! OpenGL: the GL library (`libsteadyhud_gl.so`, beside the layer library)
//! is appended to `LD_PRELOAD` as `<folder>/$LIB/libsteadyhud_gl.so`, the
//! folder holding links to the 64-bit copy and, when one was built or
//! installed, the 32-bit one under their `$LIB` names (as `install` lays
//! them out), so a 32-bit game started by a 64-bit launcher gets its own.
//! Signals sent to `steadyhud` (SIGTERM, SIGHUP, SIGQUIT, a `kill -INT`) are
//! forwarded to the child; terminal-generated ones already reach it. The
//! exit code is the child's, or 128 + signal when it was killed.
//!
//! Launchers: `run` is the child subreaper of what it starts
//! (`PR_SET_CHILD_SUBREAPER`), so a game a launcher starts and leaves
//! behind (`sh -c 'game & exit 0'`, Lutris- and Steam-style launchers)
//! becomes `run`'s child when the launcher exits. `run` waits for every
//! such process before it removes its folder (which `LD_PRELOAD` and
//! `VK_ADD_LAYER_PATH` point into), so the game keeps its HUD and log; it
//! says once that it is waiting, and from then on forwards signals to
//! those processes.

use super::install::{
    find_lib, find_lib32, lib32_expansion, lib_expansion, manifest_json, InstallError, GL_LIB_NAME,
    MANIFEST_NAME,
};
use clap::Args;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicI32, Ordering};

/// `steadyhud run` options.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Folder for the session log (sets STEADYHUD_LOG_DIR for the program).
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// Layer library to use (default: libsteadyhud.so next to this program).
    #[arg(long, value_name = "PATH")]
    pub lib: Option<PathBuf>,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// Why `run` could not start the program.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Install(#[from] InstallError),
    #[error("cannot create the layer folder {path}: {source}")]
    TempDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start {cmd}: {source}")]
    Spawn {
        cmd: String,
        #[source]
        source: std::io::Error,
    },
}

/// The name the layer is enabled by.
pub use steadyhud_config::LAYER_NAME;

static CHILD: AtomicI32 = AtomicI32::new(0);
/// A signal sent to `run` once its own child was gone, for the processes
/// it left (forwarded from the wait loop, which it interrupts).
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Only signals sent by a process (si_code <= 0); the terminal's reach the
    // child directly through the process group.
    // SAFETY: the kernel passes a valid siginfo; kill is async-signal-safe.
    unsafe {
        let user_sent = info.is_null() || (*info).si_code <= 0;
        let child = CHILD.load(Ordering::Relaxed);
        if user_sent && child > 0 {
            libc::kill(child, sig);
        } else if user_sent {
            PENDING.store(sig, Ordering::Relaxed);
        }
    }
}

fn install_forwarding() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: a plain sigaction with an async-signal-safe handler. No
        // SA_RESTART: a signal ends the wait loop's waitpid, which then
        // forwards it to the processes left behind.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// This process's children now (`/proc/self/task/*/children`).
fn children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut out: Vec<i32> = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Waits for `child` and then for every process left to `run` (the
/// subreaper); `child`'s wait status.
fn wait_tree(child: i32, cmd: &str) -> std::io::Result<libc::c_int> {
    let mut own = None;
    let mut said = false;
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) into a local.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r == -1 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => {
                    let sig = PENDING.swap(0, Ordering::Relaxed);
                    if sig != 0 {
                        for pid in children() {
                            // SAFETY: kill(2) of our own child.
                            unsafe { libc::kill(pid, sig) };
                        }
                    }
                    continue;
                }
                Some(libc::ECHILD) => break,
                _ => return Err(e),
            }
        }
        if r == child {
            own = Some(status);
            CHILD.store(0, Ordering::Relaxed);
        }
        if own.is_some() && !said {
            let left = children();
            if !left.is_empty() {
                said = true;
                let pids: Vec<String> = left.iter().map(i32::to_string).collect();
                eprintln!(
                    "steadyhud run: {cmd} ended; waiting for the processes it left running ({}), which keep their HUD and log",
                    pids.join(", ")
                );
            }
        }
    }
    own.ok_or_else(|| std::io::Error::other("the program was never waited for"))
}

/// A private folder holding the explicit-layer manifest and the GL
/// library's `$LIB` links; removed on drop.
pub struct LayerDir {
    dir: PathBuf,
    /// The `LD_PRELOAD` entry of the GL library (`None`: not built).
    gl_preload: Option<OsString>,
}

impl LayerDir {
    /// The folder, for [`command_with_layer`].
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes the explicit-layer manifest for `lib` into a new private
    /// folder, and the links the GL library is preloaded through.
    pub fn create(lib: &Path) -> Result<LayerDir, RunError> {
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!("steadyhud-run-{}-{nanos}", std::process::id()));
        let err = |source| RunError::TempDir {
            path: dir.clone(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(err)?;
        let mut d = LayerDir {
            dir: dir.clone(),
            gl_preload: None,
        };
        std::fs::write(dir.join(MANIFEST_NAME), manifest_json(lib, false)?).map_err(err)?;
        d.gl_preload = gl_preload(&dir, lib).map_err(err)?;
        Ok(d)
    }
}

impl Drop for LayerDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Links the GL libraries beside `lib` (and beside the 32-bit layer, when
/// there is one) into `dir` under their `$LIB` folders; returns the
/// `LD_PRELOAD` entry, or `None` (with one line) when no GL library was
/// built.
fn gl_preload(dir: &Path, lib: &Path) -> std::io::Result<Option<OsString>> {
    let gl64 = lib.with_file_name(GL_LIB_NAME);
    if !gl64.is_file() {
        eprintln!(
            "steadyhud run: no {GL_LIB_NAME} beside {}; OpenGL games run without steadyhud",
            lib.display()
        );
        return Ok(None);
    }
    let Some(e64) = lib_expansion() else {
        // Unknown `$LIB`: the 64-bit copy by its path.
        return Ok(Some(gl64.into_os_string()));
    };
    let gl32 = find_lib32(None)
        .ok()
        .and_then(Result::ok)
        .map(|l| l.with_file_name(GL_LIB_NAME))
        .filter(|g| g.is_file());
    let pairs = [
        (Some(e64.as_str()), Some(gl64)),
        (lib32_expansion(&e64), gl32),
    ];
    for (expansion, gl) in pairs {
        if let (Some(e), Some(gl)) = (expansion, gl) {
            let folder = dir.join(e);
            std::fs::create_dir_all(&folder)?;
            std::os::unix::fs::symlink(gl, folder.join(GL_LIB_NAME))?;
        }
    }
    Ok(Some(dir.join("$LIB").join(GL_LIB_NAME).into_os_string()))
}

/// `LD_PRELOAD` with `entry` added last (kept once).
fn append_preload(entry: &OsString) -> OsString {
    match std::env::var_os("LD_PRELOAD").filter(|o| !o.is_empty()) {
        Some(mut old) => {
            let e = entry.to_string_lossy();
            if !old.to_string_lossy().split([':', ' ']).any(|l| l == e) {
                old.push(":");
                old.push(entry);
            }
            old
        }
        None => entry.clone(),
    }
}

fn prepend_path_list(var: &str, first: &Path) -> OsString {
    let mut v = OsString::from(first);
    if let Some(old) = std::env::var_os(var).filter(|o| !o.is_empty()) {
        v.push(":");
        v.push(old);
    }
    v
}

fn append_layer(var: &str) -> OsString {
    match std::env::var_os(var).filter(|o| !o.is_empty()) {
        Some(mut old) => {
            if !old.to_string_lossy().split(':').any(|l| l == LAYER_NAME) {
                old.push(":");
                old.push(LAYER_NAME);
            }
            old
        }
        None => OsString::from(LAYER_NAME),
    }
}

/// Builds the child command with the layer and the GL library enabled
/// (used by `run` and `bench`).
pub fn command_with_layer(layer: &LayerDir, log_dir: Option<&Path>, cmd: &[OsString]) -> Command {
    let mut c = Command::new(&cmd[0]);
    if let Some(p) = &layer.gl_preload {
        c.env("LD_PRELOAD", append_preload(p));
    }
    c.args(&cmd[1..])
        .env(
            "VK_ADD_LAYER_PATH",
            prepend_path_list("VK_ADD_LAYER_PATH", &layer.dir),
        )
        .env("VK_INSTANCE_LAYERS", append_layer("VK_INSTANCE_LAYERS"))
        .env("STEADYHUD", "1")
        .env_remove("DISABLE_STEADYHUD");
    if let Some(d) = log_dir {
        c.env("STEADYHUD_LOG_DIR", d);
    }
    c
}

fn run_inner(args: &RunArgs) -> Result<ExitCode, RunError> {
    let lib = find_lib(args.lib.as_deref())?;
    let dir = LayerDir::create(&lib)?;
    let log_dir = args
        .log_dir
        .as_ref()
        .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()));
    let mut cmd = command_with_layer(&dir, log_dir.as_deref(), &args.command);
    install_forwarding();
    // Orphans of the program (a launcher's game) become ours to wait for.
    // SAFETY: prctl(2) with plain integer arguments.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    let child = cmd.spawn().map_err(|source| RunError::Spawn {
        cmd: args.command[0].to_string_lossy().into_owned(),
        source,
    })?;
    let pid = child.id() as i32;
    CHILD.store(pid, Ordering::Relaxed);
    let name = args.command[0].to_string_lossy();
    let status = match wait_tree(pid, &name) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("steadyhud run: waiting for the program: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    drop(dir);
    // A killed game's last frames (Steam's Stop, TerminateProcess).
    crate::recovered::killed_logs(log_dir.as_deref());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    };
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// `steadyhud run`.
pub fn run(args: RunArgs) -> ExitCode {
    match run_inner(&args) {
        Ok(c) => c,
        Err(e @ RunError::Spawn { .. }) => {
            eprintln!("steadyhud run: {e}");
            ExitCode::from(127)
        }
        Err(e) => {
            eprintln!("steadyhud run: {e}");
            ExitCode::from(1)
        }
    }
}
