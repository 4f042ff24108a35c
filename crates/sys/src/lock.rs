//! Locks that outlive a panic ([`Recover`]). The layer contains every panic
//! at its entry points (a panic crossing `extern "system"` would abort the
//! game), so a thread may panic while holding a lock; the data behind the
//! lock is still usable (every holder leaves it consistent between steps),
//! and refusing it would take the HUD or the log down for the rest of the
//! session. So every lock in the crate is taken through these, never with
//! `unwrap`.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Taking a lock whether or not an earlier holder panicked.
pub trait Recover {
    type Guard<'a>
    where
        Self: 'a;
    /// The lock, poisoned or not.
    fn lock_or_recover(&self) -> Self::Guard<'_>;
}

impl<T> Recover for Mutex<T> {
    type Guard<'a>
        = MutexGuard<'a, T>
    where
        T: 'a;
    fn lock_or_recover(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// [`Recover`] for the two sides of a `RwLock`.
pub trait RecoverRw<T> {
    fn read_or_recover(&self) -> RwLockReadGuard<'_, T>;
    fn write_or_recover(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T> RecoverRw<T> for RwLock<T> {
    fn read_or_recover(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(|e| e.into_inner())
    }
    fn write_or_recover(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_still_usable() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let m2 = m.clone();
        let _ = std::thread::spawn(move || {
            let _g = m2.lock().unwrap();
            panic!("poison it");
        })
        .join();
        assert!(m.is_poisoned());
        *m.lock_or_recover() += 1;
        assert_eq!(*m.lock_or_recover(), 2);
        let rw = RwLock::new(5);
        *rw.write_or_recover() = 6;
        assert_eq!(*rw.read_or_recover(), 6);
    }
}
