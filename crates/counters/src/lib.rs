//! Per-frame statistics counters ("why did it stutter?"), in the spirit of
//! The Machinery's statistics view: look a counter up by name once, keep the
//! handle, add to it on the hot path, latch every counter once per frame.
//!
//! # For people who add counters
//!
//! ```
//! use steadyhud_counters::{Counters, Unit};
//!
//! let counters = Counters::new();
//! // Once, at setup (takes a lock, may allocate): name, label, unit.
//! let compile = counters.register("pipeline_create_ms", "pipeline creation", Unit::Nanos).unwrap();
//! // Hot path, any thread: one relaxed atomic add, no lock, no allocation.
//! counters.add(compile, 41_000_000);
//! // Once per present: every counter's frame value is swapped to 0.
//! let mut frame = [0u64; steadyhud_counters::MAX_COUNTERS];
//! let n = counters.latch(&mut frame);
//! assert_eq!(frame[compile.index()], 41_000_000);
//! assert!(n >= 1);
//! ```
//!
//! * A counter is an `AtomicU64` accumulator in a fixed-size table owned by
//!   [`Counters`]; its slot never moves, so a [`CounterId`] (a slot index)
//!   stays valid for the life of the table. Registering the same name again
//!   returns the same id (the first label and unit win). At most
//!   [`MAX_COUNTERS`] counters exist; registering more returns
//!   [`CounterError::Full`] and the caller just doesn't count.
//! * Values are integers in the counter's [`Unit`]: nanoseconds for CPU time,
//!   a plain count, or bytes. Frame values add up everything reported
//!   between two presents (Machinery's "accumulate per frame" choice), so
//!   every counter shares the frame clock and sits in the same table.
//! * [`Counters::latch`] is called by whoever owns the frame clock (the
//!   layer's present hook). It writes the frame's values into a caller-owned
//!   fixed array, so the present path stays allocation-free; the array goes
//!   through the capture ring with the frame's timestamp.
//! * History is kept only for counters someone looks at: [`History`] holds a
//!   bounded ring per viewed counter on the consumer side (the analysis
//!   thread). The session log and frame health ([`health`]) use the whole
//!   session's per-frame values, which the analysis thread keeps anyway.
//!
//! Which frame a value belongs to: frame i lasts from present i to present
//! i+1, so the values latched at present i+1 are frame i's (the work the app
//! did to make the next image). Time spent inside present i+1 is added after
//! that latch and so lands in frame i+1, whose duration it is part of.

#![forbid(unsafe_code)]

pub mod health;
mod history;
pub mod markers;
mod table;

pub use health::{
    attribute, attribute_columns, by_main_cause, gpu_work_info, spikes, Cause, CauseGroup,
    HealthRule, Spike, NO_SPIKE,
};
pub use history::History;
pub use table::{
    is_builtin, label_of_column, unit_of_column, AntiLag, Builtin, CounterColumns, CounterError,
    CounterId, CounterInfo, Counters, FrameValues, Reflex, Swap, Unit, ANTI_LAG, BUILTIN,
    MAX_COUNTERS, REFLEX,
};
