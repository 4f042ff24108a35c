//! Per-frame values stored as runs of equal values ([`Runs`]): sensor
//! readings are sampled a few times a second and logged with every frame,
//! so consecutive frames mostly repeat the last sample. A run costs one
//! (start, value) pair instead of one value per frame: at 10 samples a
//! second and 144 FPS, about 1 byte per frame for an `f64` column instead
//! of 8.

/// Whether two values are the same for run-length storage: `f64` by bits
/// (so NaN, "no reading", runs like any value), others by `==`.
pub trait SameValue {
    fn same_value(&self, other: &Self) -> bool;
}

impl SameValue for f64 {
    fn same_value(&self, other: &f64) -> bool {
        self.to_bits() == other.to_bits()
    }
}

impl SameValue for String {
    fn same_value(&self, other: &String) -> bool {
        self == other
    }
}

/// One value per frame, kept as runs: `get(i)` is frame i's value.
#[derive(Clone, Debug, Default)]
pub struct Runs<T> {
    /// (first frame, value) of each run, ascending; a run lasts until the
    /// next one starts (the last until `len`).
    runs: Vec<(u64, T)>,
    len: u64,
}

impl<T: SameValue> Runs<T> {
    pub fn new() -> Runs<T> {
        Runs {
            runs: Vec::new(),
            len: 0,
        }
    }

    /// Appends the next frame's value.
    pub fn push(&mut self, v: T) {
        if !self.runs.last().is_some_and(|r| r.1.same_value(&v)) {
            self.runs.push((self.len, v));
        }
        self.len += 1;
    }

    /// Frames stored.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Runs stored (the memory used is about 16 bytes per run).
    pub fn run_count(&self) -> usize {
        self.runs.len()
    }

    /// Frame `i`'s value (O(log runs)).
    pub fn get(&self, i: usize) -> Option<&T> {
        if i as u64 >= self.len {
            return None;
        }
        let k = self.runs.partition_point(|r| r.0 <= i as u64);
        self.runs.get(k.checked_sub(1)?).map(|r| &r.1)
    }

    /// Every frame's value, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.runs
            .iter()
            .enumerate()
            .flat_map(move |(k, (start, v))| {
                let end = self.runs.get(k + 1).map_or(self.len, |r| r.0);
                std::iter::repeat_n(v, (end - start) as usize)
            })
    }
}

impl<T: SameValue> PartialEq for Runs<T> {
    fn eq(&self, other: &Runs<T>) -> bool {
        self.len == other.len
            && self.runs.len() == other.runs.len()
            && self
                .runs
                .iter()
                .zip(&other.runs)
                .all(|(a, b)| a.0 == b.0 && a.1.same_value(&b.1))
    }
}

impl<T: SameValue> FromIterator<T> for Runs<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Runs<T> {
        let mut r = Runs::new();
        for v in iter {
            r.push(v);
        }
        r
    }
}

impl<T: SameValue + Clone> From<&[T]> for Runs<T> {
    fn from(v: &[T]) -> Runs<T> {
        v.iter().cloned().collect()
    }
}

impl<T: SameValue> From<Vec<T>> for Runs<T> {
    fn from(v: Vec<T>) -> Runs<T> {
        v.into_iter().collect()
    }
}

impl Runs<f64> {
    /// The values as a plain vector (tests, small logs).
    pub fn to_vec(&self) -> Vec<f64> {
        self.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn runs_merge_equal_values_and_nan() {
        let v = [1.0, 1.0, f64::NAN, f64::NAN, 2.0, 1.0];
        let r: Runs<f64> = Runs::from(&v[..]);
        assert_eq!(r.len(), 6);
        assert_eq!(r.run_count(), 4);
        assert_eq!(r.get(1), Some(&1.0));
        assert!(r.get(3).unwrap().is_nan());
        assert_eq!(r.get(5), Some(&1.0));
        assert_eq!(r.get(6), None);
        assert_eq!(r, Runs::from(&v[..]));
        let t: Runs<String> = vec!["".to_string(), "".into(), "power".into()].into();
        assert_eq!(t.run_count(), 2);
        assert_eq!(
            t.iter().map(String::as_str).collect::<Vec<_>>(),
            ["", "", "power"]
        );
        assert!(Runs::<f64>::new().iter().next().is_none());
    }

    proptest! {
        /// Stored as runs, read back frame by frame: the same values.
        #[test]
        fn round_trip(v in proptest::collection::vec(proptest::option::of(0u8..4), 0..300)) {
            let v: Vec<f64> = v.iter().map(|x| x.map_or(f64::NAN, f64::from)).collect();
            let r = Runs::from(&v[..]);
            let back = r.to_vec();
            prop_assert_eq!(back.len(), v.len());
            for (i, (a, b)) in v.iter().zip(&back).enumerate() {
                prop_assert_eq!(a.to_bits(), b.to_bits());
                prop_assert_eq!(r.get(i).unwrap().to_bits(), a.to_bits());
            }
        }
    }
}
