//! Bounded per-frame history for the counters someone is looking at (the
//! HUD's counter page). Counters nobody views cost no history memory.

use super::table::{CounterId, FrameValues};
use std::collections::VecDeque;

/// The last `capacity` frame values of each viewed counter.
#[derive(Clone, Debug)]
pub struct History {
    capacity: usize,
    viewed: Vec<(CounterId, VecDeque<u64>)>,
}

impl History {
    /// History of `viewed` counters, `capacity` frames each (at least 1).
    pub fn new(viewed: &[CounterId], capacity: usize) -> History {
        let capacity = capacity.max(1);
        History {
            capacity,
            viewed: viewed
                .iter()
                .map(|&id| (id, VecDeque::with_capacity(capacity)))
                .collect(),
        }
    }

    /// Starts viewing `id` (empty history) if not viewed yet.
    pub fn view(&mut self, id: CounterId) {
        if !self.viewed.iter().any(|(v, _)| *v == id) {
            self.viewed
                .push((id, VecDeque::with_capacity(self.capacity)));
        }
    }

    /// Stops viewing `id` and frees its history.
    pub fn unview(&mut self, id: CounterId) {
        self.viewed.retain(|(v, _)| *v != id);
    }

    /// Appends one frame; the oldest value of a full ring leaves.
    pub fn push(&mut self, frame: &FrameValues) {
        for (id, ring) in &mut self.viewed {
            if ring.len() == self.capacity {
                ring.pop_front();
            }
            ring.push_back(frame[id.index()]);
        }
    }

    /// Oldest-first values of a viewed counter (`None` if not viewed).
    pub fn values(&self, id: CounterId) -> Option<&VecDeque<u64>> {
        self.viewed.iter().find(|(v, _)| *v == id).map(|(_, r)| r)
    }

    /// The viewed counters, in view order.
    pub fn viewed(&self) -> impl Iterator<Item = CounterId> + '_ {
        self.viewed.iter().map(|(id, _)| *id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{Counters, Unit, MAX_COUNTERS};

    #[test]
    fn only_viewed_counters_keep_a_bounded_history() {
        let c = Counters::new();
        let a = c.register("a", "a", Unit::Count).unwrap();
        let b = c.register("b", "b", Unit::Count).unwrap();
        let mut h = History::new(&[a], 3);
        for v in 1..=5u64 {
            let mut f = [0; MAX_COUNTERS];
            f[a.index()] = v;
            f[b.index()] = 10 * v;
            h.push(&f);
        }
        assert_eq!(
            h.values(a).unwrap().iter().copied().collect::<Vec<_>>(),
            vec![3, 4, 5]
        );
        assert!(h.values(b).is_none());
        h.view(b);
        h.push(&[7; MAX_COUNTERS]);
        assert_eq!(h.values(b).unwrap().len(), 1);
        h.unview(a);
        assert_eq!(h.viewed().collect::<Vec<_>>(), vec![b]);
    }
}
