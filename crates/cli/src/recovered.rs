//! Logs of killed sessions made whole ([`steadyhud_log::recover`]) before
//! a command reads logs, and by `run` when its game has ended: one line
//! each on stderr. Only logs in our log folder (the config's, and the one
//! `run`/`bench` gave the game) are touched.

use std::path::{Path, PathBuf};

/// Recovers every killed session's log this user's tails know of, in the
/// configured log folder or `also`; what games left (the summaries of long
/// logs) too.
pub fn killed_logs(also: Option<&Path>) {
    let (config, _) = steadyhud_config::Config::load();
    let logs: Vec<PathBuf> = config
        .resolved_log_dir()
        .into_iter()
        .chain(also.map(Path::to_path_buf))
        .collect();
    for r in steadyhud_log::recover::recover_dead(&logs, steadyhud_log::recover::Within::Cli) {
        match r {
            Ok(r) => eprintln!("steadyhud: {}", crate::shown(&r.to_string())),
            Err(e) => eprintln!("steadyhud: {}", crate::shown(&e.to_string())),
        }
    }
}
