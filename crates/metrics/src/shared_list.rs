//! A list that only grows, read by another thread while it grows, without
//! copying it ([`SharedList`]): what a running session keeps per stutter
//! (the stutter frames, their causes), which every summary write lists.
//!
//! Its items are kept in frozen chunks of [`CHUNK`] items (shared,
//! never written again) and one open chunk. A [`Shared`] view of the list
//! as it is now costs a pointer per frozen chunk and a copy of the open
//! one: a summary write made on another thread reads every item without
//! a temporary that grows with the list (issue 52: each periodic write's
//! copy of every stutter left the game's heap growing by the stutter).

use std::sync::Arc;

/// Items per chunk.
pub const CHUNK: usize = 256;

/// A list that only grows (module doc).
#[derive(Clone, Debug)]
pub struct SharedList<T> {
    frozen: Vec<Arc<[T]>>,
    open: Vec<T>,
}

impl<T> Default for SharedList<T> {
    fn default() -> Self {
        SharedList {
            frozen: Vec::new(),
            open: Vec::new(),
        }
    }
}

impl<T: Clone> SharedList<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `item`; a full open chunk is frozen (the open one keeps its
    /// room for the next).
    pub fn push(&mut self, item: T) {
        if self.open.capacity() < CHUNK {
            self.open.reserve_exact(CHUNK - self.open.len());
        }
        self.open.push(item);
        if self.open.len() == CHUNK {
            self.frozen.push(Arc::from(&self.open[..]));
            self.open.clear();
        }
    }

    pub fn len(&self) -> usize {
        self.frozen.len() * CHUNK + self.open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `i`.
    pub fn get(&self, i: usize) -> Option<&T> {
        match self.frozen.get(i / CHUNK) {
            Some(c) => c.get(i % CHUNK),
            None => self.open.get(i - self.frozen.len() * CHUNK),
        }
    }

    pub fn last(&self) -> Option<&T> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.frozen.iter().flat_map(|c| c.iter()).chain(&self.open)
    }

    /// The list as it is now, for another thread: the frozen chunks
    /// shared, the open one copied (at most [`CHUNK`] items).
    pub fn shared(&self) -> Shared<T> {
        Shared {
            frozen: self.frozen.clone(),
            open: self.open.clone(),
        }
    }
}

/// A [`SharedList`] as it was when [`SharedList::shared`] was called.
#[derive(Clone, Debug)]
pub struct Shared<T> {
    frozen: Vec<Arc<[T]>>,
    open: Vec<T>,
}

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Shared {
            frozen: Vec::new(),
            open: Vec::new(),
        }
    }
}

impl<T> Shared<T> {
    pub fn len(&self) -> usize {
        self.frozen.len() * CHUNK + self.open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.frozen.iter().flat_map(|c| c.iter()).chain(&self.open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_view_keeps_what_the_list_had() {
        let mut l = SharedList::new();
        for i in 0..(2 * CHUNK + 3) {
            l.push(i);
        }
        let s = l.shared();
        for i in 0..CHUNK {
            l.push(10_000 + i);
        }
        assert_eq!(s.len(), 2 * CHUNK + 3);
        assert!(s.iter().copied().eq(0..(2 * CHUNK + 3)));
        assert_eq!(l.len(), 3 * CHUNK + 3);
        assert!(l.iter().take(2 * CHUNK + 3).copied().eq(0..(2 * CHUNK + 3)));
        assert_eq!(l.get(2 * CHUNK + 3), Some(&10_000));
        assert_eq!(l.get(CHUNK), Some(&CHUNK));
        assert_eq!(l.last(), Some(&(10_000 + CHUNK - 1)));
        assert_eq!(l.get(l.len()), None);
        assert!(SharedList::<u8>::new().shared().is_empty());
    }
}
