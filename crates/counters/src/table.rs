//! The counter table ([`Counters`]): named slots that hot paths add to
//! with one relaxed atomic add and a present latches; the units and
//! column names of what they count, and the built-in counters.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Counters a [`Counters`] table holds at most (the per-frame record is a
/// fixed `[u64; MAX_COUNTERS]`).
pub const MAX_COUNTERS: usize = 20;

/// One frame's latched values, indexed by [`CounterId::index`].
pub type FrameValues = [u64; MAX_COUNTERS];

/// What a counter's integer values mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// CPU time in nanoseconds (shown as ms).
    Nanos,
    /// A number of events.
    Count,
    /// A number of bytes (shown as MiB).
    Bytes,
}

impl Unit {
    /// Short suffix for column names and tables.
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Nanos => "ms",
            Unit::Count => "n",
            Unit::Bytes => "bytes",
        }
    }

    /// The value as a human number in its display unit (ns → ms, bytes and counts as is).
    pub fn display(self, v: f64) -> f64 {
        match self {
            Unit::Nanos => v / 1e6,
            _ => v,
        }
    }

    /// `41 ms`, `3`, `12.0 MiB`: a value with its unit for a sentence.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Nanos => format!("{:.1} ms", v / 1e6),
            Unit::Count => format!("{v:.0}"),
            Unit::Bytes => format!("{:.1} MiB", v / (1024.0 * 1024.0)),
        }
    }
}

/// A counter's stable handle: the index of its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CounterId(u8);

impl CounterId {
    /// Index into [`FrameValues`].
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Name, label and unit of a registered counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterInfo {
    /// Machine name, e.g. `pipeline_create_ms` (the session log's column).
    pub name: String,
    /// Words for people, e.g. `pipeline creation`.
    pub label: String,
    pub unit: Unit,
}

/// Declares a set of counters once, as (field, name, label, unit): the
/// name is the session-log column, the label words for people, `_ms`
/// counters hold ns. It makes the list (`$list`, in column order) and a
/// struct of their ids with one field each, filled by `register` by name,
/// so a field can never hold another counter's id.
macro_rules! counter_set {
    (
        $(#[$doc:meta])*
        $ids:ident, $list:ident {
            $( $field:ident: $name:expr, $label:literal, $unit:ident; )*
        }
    ) => {
        $(#[$doc])*
        pub const $list: &[(&str, &str, Unit)] = &[$( ($name, $label, Unit::$unit), )*];

        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $ids {
            $( #[doc = $label] pub $field: CounterId, )*
        }

        impl $ids {
            $(
                /// This counter's declaration (name, label, unit), for a
                /// set that registers some of these ([`Swap`]).
                #[allow(non_upper_case_globals)]
                pub const $field: (&'static str, &'static str, Unit) = ($name, $label, Unit::$unit);
            )*

            /// Registers every counter of the set in `c`; `None` when the
            /// table has no room.
            pub fn register(c: &Counters) -> Option<$ids> {
                Some($ids {
                    $( $field: c.register($name, $label, Unit::$unit).ok()?, )*
                })
            }
        }
    };
}

counter_set! {
    /// The layer's built-in counters.
    Builtin, BUILTIN {
        pipeline_ns: "pipeline_create_ms", "pipeline creation", Nanos;
        pipelines: "pipelines", "pipelines created", Count;
        submit_ns: "submit_ms", "queue submit", Nanos;
        submits: "submits", "queue submits", Count;
        alloc_count: "alloc_count", "memory allocations", Count;
        alloc_bytes: "alloc_bytes", "memory allocated", Bytes;
        acquire_ns: "acquire_ms", "image acquire", Nanos;
        present_ns: "present_ms", "driver present", Nanos;
        in_present_ns: "in_present_ms", "time in present", Nanos;
        swapchain_recreations: "swapchain_recreations", "swapchain recreations", Count;
        layer_setup_ns: "layer_setup_ms", "steadyhud setup", Nanos;
        limiter_wait_ns: "limiter_wait_ms", "frame cap wait", Nanos;
    }
}

counter_set! {
    /// The counters fed by `VK_NV_low_latency2` (Reflex) markers, on
    /// devices that have them ([`crate::markers`]).
    Reflex, REFLEX {
        sim: "nv_sim_ms", "simulation (Reflex)", Nanos;
        submit: "nv_render_submit_ms", "render submit (Reflex)", Nanos;
        start_to_present: crate::markers::SIMULATION_TO_PRESENT, "frame start to present (Reflex)", Nanos;
        input_to_present: crate::markers::INPUT_SAMPLE_TO_PRESENT, "input sample to present (Reflex)", Nanos;
    }
}

counter_set! {
    /// The counter fed by AMD Anti-Lag's stages (`VK_AMD_anti_lag`:
    /// `vkAntiLagUpdateAMD`), on devices that have it.
    AntiLag, ANTI_LAG {
        input_to_present: crate::markers::ANTI_LAG_INPUT_TO_PRESENT, "input to present (Anti-Lag)", Nanos;
    }
}

/// The built-in counters a GL window counts: its swap's, the only call of
/// the game's the GL library times (in the swap hook, `crates/gl`). Each is
/// the [`Builtin`] declaration of the same field, so a GL log's columns are
/// a Vulkan log's by name, label and unit.
#[derive(Clone, Copy, Debug)]
pub struct Swap {
    /// `in_present_ms`: the swap hook's entry to the real swap's return.
    pub in_present_ns: CounterId,
    /// `limiter_wait_ms`: the frame cap's wait.
    pub limiter_wait_ns: CounterId,
}

impl Swap {
    /// Registers the set in `c`; `None` when the table has no room.
    pub fn register(c: &Counters) -> Option<Swap> {
        let reg = |(name, label, unit): (&str, &str, Unit)| c.register(name, label, unit).ok();
        Some(Swap {
            in_present_ns: reg(Builtin::in_present_ns)?,
            limiter_wait_ns: reg(Builtin::limiter_wait_ns)?,
        })
    }
}

/// Whether `name` is a built-in counter (a device or window that does not
/// count it simply has no column for it).
pub fn is_builtin(name: &str) -> bool {
    BUILTIN.iter().any(|b| b.0 == name)
}

/// Label of a session-log counter column: the declared label, else the
/// name with `_` as spaces.
pub fn label_of_column(name: &str) -> String {
    BUILTIN
        .iter()
        .chain(REFLEX)
        .chain(ANTI_LAG)
        .find(|b| b.0 == name)
        .map_or_else(|| name.replace('_', " "), |b| b.1.to_string())
}

/// Counter columns read back from a session log: `values[c][i]` is counter
/// `infos[c]` in frame i, in raw units (ns for `_ms` columns).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CounterColumns {
    pub infos: Vec<CounterInfo>,
    pub values: Vec<Vec<u64>>,
}

/// The unit a session-log counter column's name implies: `*_ms` CPU time
/// (written in ms, kept in ns), `*_bytes` bytes, anything else a count.
pub fn unit_of_column(name: &str) -> Unit {
    if name.ends_with("_ms") {
        Unit::Nanos
    } else if name.ends_with("_bytes") {
        Unit::Bytes
    } else {
        Unit::Count
    }
}

/// Registration failures.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CounterError {
    #[error("counter table full ({MAX_COUNTERS} counters): cannot add {name}")]
    Full { name: String },
    #[error("counter name {name:?} must be non-empty ASCII letters, digits, '.' or '_'")]
    BadName { name: String },
}

/// A fixed table of per-frame accumulators. Share it (`Arc`) between the
/// threads that add and the one that latches.
pub struct Counters {
    /// The accumulators, side by side: the present's latch reads them all,
    /// and a few cache lines cost it far less than one line per counter
    /// (measured with benches/present_cost.rs: on a game's cold cache every
    /// line the present touches is a miss). Threads that add to counters
    /// sharing a line (a submit thread, the present) may contend for it
    /// for the length of one add.
    slots: [Slot; MAX_COUNTERS],
    /// Registered slots; a slot's info is pushed before `len` grows.
    len: AtomicUsize,
    infos: Mutex<Vec<CounterInfo>>,
}

/// A counter's accumulator.
#[derive(Default)]
struct Slot(AtomicU64);

impl Default for Counters {
    fn default() -> Self {
        Self::new()
    }
}

impl Counters {
    /// An empty table.
    pub fn new() -> Counters {
        Counters {
            slots: Default::default(),
            len: AtomicUsize::new(0),
            infos: Mutex::new(Vec::new()),
        }
    }

    /// Looks `name` up, registering it with `label` and `unit` if new.
    /// Not for the hot path: call once and keep the id.
    pub fn register(&self, name: &str, label: &str, unit: Unit) -> Result<CounterId, CounterError> {
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
        {
            return Err(CounterError::BadName {
                name: name.to_string(),
            });
        }
        let mut infos = self.infos.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = infos.iter().position(|c| c.name == name) {
            return Ok(CounterId(i as u8));
        }
        if infos.len() >= MAX_COUNTERS {
            return Err(CounterError::Full {
                name: name.to_string(),
            });
        }
        infos.push(CounterInfo {
            name: name.to_string(),
            label: label.to_string(),
            unit,
        });
        let id = infos.len() - 1;
        self.len.store(infos.len(), Ordering::Release);
        Ok(CounterId(id as u8))
    }

    /// The id of an already registered counter.
    pub fn get(&self, name: &str) -> Option<CounterId> {
        let infos = self.infos.lock().unwrap_or_else(|p| p.into_inner());
        infos
            .iter()
            .position(|c| c.name == name)
            .map(|i| CounterId(i as u8))
    }

    /// Adds `v` to the counter's current frame value: one relaxed atomic add.
    #[inline]
    pub fn add(&self, id: CounterId, v: u64) {
        // `get`: panic-free by construction (an id is always in range).
        if let Some(slot) = self.slots.get(id.index()) {
            slot.0.fetch_add(v, Ordering::Relaxed);
        }
    }

    /// Number of registered counters.
    #[inline]
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ends the frame: swaps every registered counter to 0, writing its
    /// value into `out` (unregistered slots get 0). Returns the number of
    /// registered counters. No lock, no allocation.
    ///
    /// A counter that reads 0 is left as it is: a plain load instead of a
    /// locked swap (most counters are 0 in most frames, and a swap costs
    /// this VM ~7 ns each). Nothing is lost: an add that lands after that
    /// load belongs to the next frame, as one after a swap would.
    #[inline]
    pub fn latch(&self, out: &mut FrameValues) -> usize {
        let n = self.len();
        for (i, o) in out.iter_mut().enumerate() {
            // `get`: the present path's call, panic-free by construction.
            *o = match self.slots.get(i) {
                Some(slot) if i < n && slot.0.load(Ordering::Relaxed) != 0 => {
                    slot.0.swap(0, Ordering::Relaxed)
                }
                _ => 0,
            };
        }
        n
    }

    /// Name, label and unit of every registered counter, in id order.
    pub fn infos(&self) -> Vec<CounterInfo> {
        self.infos.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn register_is_idempotent_and_latch_resets() {
        let c = Counters::new();
        let a = c.register("a.x", "a", Unit::Count).unwrap();
        let b = c.register("b_y", "b", Unit::Nanos).unwrap();
        assert_eq!(c.register("a.x", "other", Unit::Bytes).unwrap(), a);
        assert_eq!(c.get("b_y"), Some(b));
        assert_eq!(c.get("zzz"), None);
        c.add(a, 2);
        c.add(a, 3);
        c.add(b, 7);
        let mut f = [9u64; MAX_COUNTERS];
        assert_eq!(c.latch(&mut f), 2);
        assert_eq!(&f[..3], &[5, 7, 0]);
        c.latch(&mut f);
        assert_eq!(&f[..2], &[0, 0]);
        assert_eq!(c.infos()[0].label, "a");
    }

    #[test]
    fn full_table_and_bad_names_are_errors() {
        let c = Counters::new();
        for i in 0..MAX_COUNTERS {
            c.register(&format!("c{i}"), "x", Unit::Count).unwrap();
        }
        assert!(matches!(
            c.register("one.more", "x", Unit::Count),
            Err(CounterError::Full { .. })
        ));
        assert!(matches!(
            c.register("", "x", Unit::Count),
            Err(CounterError::BadName { .. })
        ));
        assert!(matches!(
            c.register("a,b", "x", Unit::Count),
            Err(CounterError::BadName { .. })
        ));
    }

    #[test]
    fn adds_from_many_threads_are_all_latched() {
        let c = Arc::new(Counters::new());
        let id = c.register("n", "n", Unit::Count).unwrap();
        let mut total = 0;
        let mut f = [0; MAX_COUNTERS];
        std::thread::scope(|s| {
            for _ in 0..4 {
                let c = c.clone();
                s.spawn(move || (0..10_000).for_each(|_| c.add(id, 1)));
            }
            for _ in 0..100 {
                c.latch(&mut f);
                total += f[0];
            }
        });
        c.latch(&mut f);
        total += f[0];
        assert_eq!(total, 40_000);
    }

    /// A GL window's set is the built-in declarations of the same fields.
    #[test]
    fn the_swap_set_is_the_builtin_declarations() {
        let c = Counters::new();
        let s = Swap::register(&c).unwrap();
        let infos = c.infos();
        assert_eq!(infos[s.in_present_ns.index()].name, "in_present_ms");
        assert_eq!(infos[s.limiter_wait_ns.index()].name, "limiter_wait_ms");
        for i in &infos {
            assert!(BUILTIN.contains(&(i.name.as_str(), i.label.as_str(), i.unit)));
            assert!(is_builtin(&i.name));
        }
        assert!(!is_builtin("nv_sim_ms"));
    }

    #[test]
    fn units_format() {
        assert_eq!(Unit::Nanos.format(41_000_000.0), "41.0 ms");
        assert_eq!(Unit::Count.format(3.0), "3");
        assert_eq!(Unit::Bytes.format(2.0 * 1024.0 * 1024.0), "2.0 MiB");
    }
}
