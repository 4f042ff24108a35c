//! The analysis thread and what it works on: the front door for the
//! clients ([`Analysis`], [`StreamSpec`]); it reads the process's
//! [`crate::client_state::ClientState`] (the client record's data).
//!
//! - `thread`: the thread, a shell over a list of pollers (`pollers`): the
//!   streams (`analyzer` → `stream`), the control socket (`control`), the
//!   HUD and frame-cap keys;
//! - `stream`: one window's presents → rows, rolling metrics, live stats;
//!   its counter columns (`counter_columns`), GPU columns (`gpu_frames`),
//!   its PC latency (`latency_frames`),
//!   its log (`session`), what it keeps per stutter (`stutter_lists`); system readings (`sensors`: the sampler's
//!   poller; `sensor_feed`: the samples the streams' rows and HUD rows
//!   read, and the rows' readings kept for the summary);
//! - `upkeep`: the summary writer thread; `summary`: what every summary
//!   write computes; `wake`: how the thread sleeps (sockets, shutdown, the next tick).

mod analyzer;
mod control;
mod counter_columns;
mod display_frames;
mod gpu_frames;
mod latency_frames;
#[cfg(test)]
pub(crate) mod memory_test;
mod pollers;
mod sensor_feed;
mod sensors;
mod session;
mod stream;
mod stutter_lists;
#[cfg(test)]
mod summary_test;
mod tally;
mod thread;
mod upkeep;
mod wake;

pub use thread::{Analysis, StreamSpec};
