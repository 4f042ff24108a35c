//! Locks that outlive a panic ([`Recover`]). The layer contains every panic
//! at its entry points (a panic crossing `extern "system"` would abort the
//! game), so a thread may panic while holding a lock; the data behind the
//! lock is still usable (every holder leaves it consistent between steps),
//! and refusing it would take the HUD or the log down for the rest of the
//! session. So every lock in the crate is taken through these, never with
//! `unwrap`.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
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

/// A lock for the present and swap paths, whose own work is checked
/// panic-free at build time (`#[no_panic]`, see `guard`): taking and
/// releasing it cannot unwind. std's `Mutex` can't panic there either, but
/// the compiler cannot see it (its futex wait and wake, and the poison
/// check's look at the thread's panic count, are out-of-line functions of
/// std, which it must assume may unwind); here they are called through
/// `extern "C"` shims, which cannot unwind (a panic inside would abort).
/// Poisoned or not, as [`Recover`].
pub trait Hold<T> {
    /// The lock, poisoned or not; released when the [`Held`] drops.
    fn hold(&self) -> Held<'_, T>;
}

impl<T> Hold<T> for Mutex<T> {
    #[inline]
    fn hold(&self) -> Held<'_, T> {
        Held(ManuallyDrop::new(take(self)))
    }
}

/// A [`Hold`] lock, held.
pub struct Held<'a, T>(ManuallyDrop<MutexGuard<'a, T>>);

// The guard is Rust data; `extern "C"` here only says "cannot unwind".
#[allow(improper_ctypes_definitions)]
#[inline]
extern "C" fn take<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock_or_recover()
}

#[allow(improper_ctypes_definitions)]
#[inline]
extern "C" fn release<T>(g: &mut ManuallyDrop<MutexGuard<'_, T>>) {
    // SAFETY: dropped once, from `Held::drop`.
    unsafe { ManuallyDrop::drop(g) }
}

impl<T> Drop for Held<'_, T> {
    #[inline]
    fn drop(&mut self) {
        release(&mut self.0);
    }
}

impl<T> Deref for Held<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Held<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
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
        *m.hold() += 1;
        assert_eq!(*m.hold(), 3);
        let rw = RwLock::new(5);
        *rw.write_or_recover() = 6;
        assert_eq!(*rw.read_or_recover(), 6);
    }
}
