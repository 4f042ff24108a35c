//! The handle maps the hot path reads: a device's dispatch key → its
//! record, a swapchain's handle → its record, looked up without a lock, a
//! reference count, a hash or an allocation.
//!
//! Vulkan's external-synchronization rules make this simple: a record is
//! removed only by the call that destroys its object (`vkDestroyDevice`,
//! `vkDestroySwapchainKHR`),
//! and the app must not use that object, or anything made from it, during
//! or after that call. So a lookup can hand out a plain reference that stays
//! valid while the caller is inside a call on the object, and concurrent
//! lookups of *other* keys only ever see whole slots (key and pointer are
//! atomics; a slot is published pointer first, key last).
//!
//! Writers (create/destroy) are serialized by a mutex; readers never take it.

use ash::vk;
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use steadyhud_sys::lock::Recover;

/// Dispatch key of a dispatchable handle: the loader's dispatch table
/// pointer stored in its first word (a queue's is its device's).
///
/// # Safety
/// `handle` must be a live dispatchable Vulkan object.
#[inline]
pub unsafe fn dispatch_key<H: vk::Handle>(handle: H) -> usize {
    let p = handle.as_raw() as *const *const c_void;
    if p.is_null() {
        0
    } else {
        // SAFETY: a dispatchable handle points at its dispatch pointer.
        unsafe { *p as usize }
    }
}

/// Records a map holds at once (live `VkDevice`s of the process, live
/// swapchains of a device); one more device is refused with
/// `VK_ERROR_TOO_MANY_OBJECTS`, one more swapchain is not followed.
pub const CAPACITY: usize = 256;

struct Slot<T> {
    key: AtomicU64,
    value: AtomicPtr<T>,
}

/// A fixed-capacity map from non-zero keys (a dispatch key, or a
/// non-dispatchable handle, 64-bit on every platform) to `Arc<T>`.
pub struct HandleMap<T> {
    slots: Box<[Slot<T>]>,
    writers: Mutex<()>,
}

/// The map is full.
#[derive(Debug, PartialEq, Eq)]
pub struct Full;

impl<T> Default for HandleMap<T> {
    fn default() -> Self {
        Self::with_capacity(CAPACITY)
    }
}

impl<T> HandleMap<T> {
    /// An empty map of `capacity` slots.
    pub fn with_capacity(capacity: usize) -> Self {
        let slots = (0..capacity)
            .map(|_| Slot {
                key: AtomicU64::new(0),
                value: AtomicPtr::new(std::ptr::null_mut()),
            })
            .collect();
        HandleMap {
            slots,
            writers: Mutex::new(()),
        }
    }

    /// Adds (or replaces) `key`'s record. `key` must not be 0.
    pub fn insert(&self, key: u64, value: Arc<T>) -> Result<(), Full> {
        debug_assert_ne!(key, 0);
        let _w = self.writers.lock_or_recover();
        if let Some(old) = self.take_locked(key) {
            drop(old);
        }
        let slot = self
            .slots
            .iter()
            .find(|s| s.key.load(Ordering::Relaxed) == 0)
            .ok_or(Full)?;
        slot.value
            .store(Arc::into_raw(value) as *mut T, Ordering::Relaxed);
        slot.key.store(key, Ordering::Release);
        Ok(())
    }

    /// Removes `key`'s record and returns it.
    pub fn remove(&self, key: u64) -> Option<Arc<T>> {
        let _w = self.writers.lock_or_recover();
        self.take_locked(key)
    }

    fn take_locked(&self, key: u64) -> Option<Arc<T>> {
        let slot = self
            .slots
            .iter()
            .find(|s| s.key.load(Ordering::Relaxed) == key)?;
        slot.key.store(0, Ordering::Release);
        let p = slot.value.swap(std::ptr::null_mut(), Ordering::Relaxed);
        // SAFETY: `p` came from `Arc::into_raw` in `insert` and is taken back once.
        (!p.is_null()).then(|| unsafe { Arc::from_raw(p) })
    }

    /// `key`'s record, without locking.
    ///
    /// # Safety
    /// The caller is inside a Vulkan call on the object `key` belongs to (or
    /// otherwise knows the record is not removed while the reference lives):
    /// the reference is valid until `remove(key)`.
    #[inline]
    pub unsafe fn get(&self, key: u64) -> Option<&T> {
        if key == 0 {
            return None;
        }
        let slot = self
            .slots
            .iter()
            .find(|s| s.key.load(Ordering::Acquire) == key)?;
        let p = slot.value.load(Ordering::Relaxed);
        // SAFETY: published before the key (Release/Acquire); alive until
        // removed, which the caller's contract excludes.
        unsafe { p.as_ref() }
    }

    /// A counted reference to `key`'s record (cold paths: teardown, tests).
    pub fn get_arc(&self, key: u64) -> Option<Arc<T>> {
        let _w = self.writers.lock_or_recover();
        let slot = self
            .slots
            .iter()
            .find(|s| s.key.load(Ordering::Relaxed) == key && key != 0)?;
        let p = slot.value.load(Ordering::Relaxed);
        // SAFETY: the writers' lock keeps the slot's Arc alive while its
        // count is raised.
        unsafe {
            Arc::increment_strong_count(p);
            Some(Arc::from_raw(p))
        }
    }

    /// Removes every record and returns them (cold paths: teardown).
    pub fn drain(&self) -> Vec<Arc<T>> {
        let _w = self.writers.lock_or_recover();
        let keys: Vec<u64> = self
            .slots
            .iter()
            .map(|s| s.key.load(Ordering::Relaxed))
            .filter(|&k| k != 0)
            .collect();
        keys.into_iter()
            .filter_map(|k| self.take_locked(k))
            .collect()
    }

    /// Every record (cold paths).
    pub fn all(&self) -> Vec<Arc<T>> {
        let keys: Vec<u64> = self
            .slots
            .iter()
            .map(|s| s.key.load(Ordering::Acquire))
            .filter(|&k| k != 0)
            .collect();
        keys.into_iter().filter_map(|k| self.get_arc(k)).collect()
    }

    /// Number of records.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.key.load(Ordering::Acquire) != 0)
            .count()
    }
}

impl<T> Drop for HandleMap<T> {
    fn drop(&mut self) {
        for s in self.slots.iter() {
            let p = s.value.swap(std::ptr::null_mut(), Ordering::Relaxed);
            if !p.is_null() {
                // SAFETY: as in `take_locked`.
                drop(unsafe { Arc::from_raw(p) });
            }
        }
    }
}

// SAFETY: the map hands out `&T` and `Arc<T>` across threads.
unsafe impl<T: Send + Sync> Sync for HandleMap<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Send for HandleMap<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_remove_and_full() {
        let m = HandleMap::with_capacity(2);
        m.insert(10, Arc::new("a")).unwrap();
        m.insert(20, Arc::new("b")).unwrap();
        assert_eq!(m.insert(30, Arc::new("c")), Err(Full));
        // SAFETY: nothing removes 10 while the reference lives.
        assert_eq!(unsafe { m.get(10) }, Some(&"a"));
        // SAFETY: no record, so no reference to outlive one.
        assert_eq!(unsafe { m.get(30) }, None);
        // SAFETY: as above.
        assert_eq!(unsafe { m.get(0) }, None);
        assert_eq!(m.remove(10).as_deref(), Some(&"a"));
        // SAFETY: as above.
        assert_eq!(unsafe { m.get(10) }, None);
        m.insert(30, Arc::new("c")).unwrap();
        m.insert(30, Arc::new("d")).unwrap(); // replaces
        assert_eq!(m.len(), 2);
        assert_eq!(m.get_arc(30).as_deref(), Some(&"d"));
    }

    /// Readers of stable keys never miss them while other keys come and go.
    #[test]
    fn readers_see_stable_keys_during_churn() {
        let m = Arc::new(HandleMap::with_capacity(8));
        m.insert(1, Arc::new(1u64)).unwrap();
        std::thread::scope(|s| {
            let m2 = m.clone();
            s.spawn(move || {
                for i in 0..20_000u64 {
                    let k = 100 + i % 5;
                    m2.insert(k, Arc::new(k)).unwrap();
                    m2.remove(k);
                }
            });
            for _ in 0..200_000 {
                // SAFETY: key 1 is never removed during the test.
                assert_eq!(unsafe { m.get(1) }, Some(&1));
            }
        });
    }
}
