//! Reading the games: every control socket in this user's runtime folder
//! (`$XDG_RUNTIME_DIR/steadyhud/`), asked `status` and `histogram`, each
//! with a short deadline so one hanging game cannot stall a scrape. A game
//! that cannot be read costs one line on stderr (once per game and
//! reason) and one count of `steadyhud_export_errors_total` each time it
//! starts failing (an event, not every scrape it keeps failing in); a game
//! that hung is left alone for a while.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use steadyhud_control::client::{self, ClientError};
use steadyhud_control::protocol::Request;
use steadyhud_control::replies::{HistogramReply, Status, WindowHistogram, WindowStatus};

/// How long a game may take to answer one request.
pub const DEADLINE: Duration = Duration::from_millis(500);
/// How long a game that did not answer in time is left alone.
const HUNG_PAUSE: Duration = Duration::from_secs(10);

/// One game as read: its status and each window's totals.
#[derive(Clone, Debug)]
pub struct Game {
    pub pid: u32,
    pub exe: String,
    pub fps_limit: u32,
    /// Windows with both a status and a histogram, by stream id.
    pub windows: Vec<(WindowStatus, WindowHistogram)>,
}

/// Why a game was not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Why {
    Foreign,
    Gone,
    Hung,
    Refused,
}

/// The folder, what was said already, the games left alone.
pub struct Gatherer {
    dir: PathBuf,
    uid: u32,
    said: HashSet<(u32, Why)>,
    /// Games failing now, and why: counted once until read again.
    failing: HashSet<(u32, Why)>,
    hung: HashMap<u32, Instant>,
    /// Times a game started failing to be read, since the start.
    pub errors: u64,
}

impl Gatherer {
    pub fn new(dir: PathBuf) -> Gatherer {
        Gatherer {
            dir,
            // SAFETY: geteuid has no preconditions.
            uid: unsafe { libc::geteuid() },
            said: HashSet::new(),
            failing: HashSet::new(),
            hung: HashMap::new(),
            errors: 0,
        }
    }

    /// Every game that answered, by pid.
    pub fn gather(&mut self) -> Vec<Game> {
        let sockets = match client::sockets(&self.dir) {
            Ok(s) => s,
            Err(e) => {
                self.fail(0, Why::Refused, format_args!("{e}"));
                return Vec::new();
            }
        };
        self.failing.remove(&(0, Why::Refused));
        // A game whose socket is gone fails no more.
        self.failing
            .retain(|&(pid, _)| pid == 0 || sockets.iter().any(|s| s.pid == pid));
        let now = Instant::now();
        self.hung.retain(|_, until| *until > now);
        let mut games = Vec::new();
        for s in sockets {
            if self.hung.contains_key(&s.pid) {
                continue;
            }
            match std::fs::symlink_metadata(&s.path) {
                Ok(m) if m.uid() != self.uid => {
                    self.fail(
                        s.pid,
                        Why::Foreign,
                        format_args!(
                            "{} belongs to uid {}, not this user: skipped",
                            s.path.display(),
                            m.uid()
                        ),
                    );
                    continue;
                }
                Ok(_) => {}
                Err(_) => continue, // gone since the listing
            }
            match read_game(&s.path) {
                Ok(g) => {
                    self.failing.retain(|&(pid, _)| pid != s.pid);
                    games.push(g);
                }
                Err(e) => {
                    let why = match &e {
                        ClientError::Connect { source, .. } if client::is_stale(source) => {
                            // A socket left by a dead process: not an error.
                            if client::process_gone(s.pid) {
                                continue;
                            }
                            Why::Gone
                        }
                        ClientError::Io { source, .. }
                            if source.kind() == std::io::ErrorKind::TimedOut =>
                        {
                            self.hung.insert(s.pid, now + HUNG_PAUSE);
                            Why::Hung
                        }
                        ClientError::NoReply { .. } | ClientError::Connect { .. }
                            if client::process_gone(s.pid) =>
                        {
                            Why::Gone
                        }
                        _ => Why::Refused,
                    };
                    let pause = if why == Why::Hung {
                        format!("; left alone for {} s", HUNG_PAUSE.as_secs())
                    } else {
                        String::new()
                    };
                    self.fail(s.pid, why, format_args!("pid {}: {e}{pause}", s.pid));
                }
            }
        }
        games
    }

    fn fail(&mut self, pid: u32, why: Why, line: std::fmt::Arguments) {
        if self.failing.insert((pid, why)) {
            self.errors += 1;
        }
        if self.said.insert((pid, why)) {
            eprintln!("steadyhud export: {line}");
        }
    }
}

/// One request's reply as `T` (an `err` reply is an error), within
/// [`DEADLINE`].
fn ask<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    request: &Request,
) -> Result<T, ClientError> {
    client::request_within(path, request, DEADLINE)?
        .expect()
        .map_err(|e| ClientError::BadReply {
            path: path.to_path_buf(),
            source: steadyhud_control::protocol::BadReply {
                line: e.to_string(),
            },
        })
}

fn read_game(path: &std::path::Path) -> Result<Game, ClientError> {
    let status: Status = ask(path, &Request::Status)?;
    let hist: HistogramReply = ask(path, &Request::Histogram)?;
    let windows = status
        .windows
        .into_iter()
        .filter_map(|w| {
            let h = hist.windows.iter().find(|h| h.stream == w.stream)?.clone();
            Some((w, h))
        })
        .collect();
    Ok(Game {
        pid: status.pid,
        exe: status.exe,
        fps_limit: status.fps_limit,
        windows,
    })
}
