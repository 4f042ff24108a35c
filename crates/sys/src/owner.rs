//! Which process a process-wide record belongs to ([`Owner`]): a child
//! forked without exec inherits its parent's records (their locks, maybe
//! held by a thread that did not come along, and their connections, which
//! are the parent's), so each record that holds such things checks, before
//! it takes its lock, that it is its own.

use std::sync::atomic::{AtomicU32, Ordering};

/// The pid a record belongs to, claimed by its first use.
pub struct Owner(AtomicU32);

impl Default for Owner {
    fn default() -> Owner {
        Owner::new()
    }
}

impl Owner {
    /// Not used yet.
    pub const fn new() -> Owner {
        Owner(AtomicU32::new(0))
    }

    /// Whether the record belongs to this process (claiming it on first
    /// use): false in a forked child.
    pub fn here(&self) -> bool {
        let pid = std::process::id();
        match self
            .0
            .compare_exchange(0, pid, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => true,
            Err(owner) => owner == pid,
        }
    }
}
