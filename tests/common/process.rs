//! Processes: running a command with its output collected (with the time
//! each stdout line arrived), killing or terminating it, a time limit,
//! switches on a [`Command`] (layer, validation, another user), and busy
//! loops that load every core.

use super::VALIDATION;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Default time limit of a [`run`].
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);

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
    /// Lines of stdout and stderr that `keep` selects.
    pub fn output_lines(&self, keep: impl Fn(&str) -> bool) -> Vec<&str> {
        self.stdout
            .lines()
            .chain(self.stderr.lines())
            .filter(|l| keep(l))
            .collect()
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
