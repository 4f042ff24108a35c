//! Logs of killed sessions made whole ([`steadyhud_log::recover`]) before
//! a command reads logs, and by `run` when its game has ended: one line
//! each on stderr.

/// Recovers every killed session's log this user's tails know of.
pub fn killed_logs() {
    for r in steadyhud_log::recover::recover_dead() {
        match r {
            Ok(r) => eprintln!("steadyhud: {r}"),
            Err(e) => eprintln!("steadyhud: {e}"),
        }
    }
}
