//! The capture core: what turns a window's presents (or swaps) into a
//! session log, rolling metrics, live statistics for a HUD, a control
//! socket and system readings, knowing no graphics API. The Vulkan layer
//! is its client; another graphics API's would use it the same way.
//!
//! A client makes one [`analysis::Analysis`] per process and, per window,
//! asks it for a [`rings::Stream`] (`Analysis::new_stream`). Its present
//! hook then says "this window was presented at t, with these counter
//! values" ([`rings::Stream::record_with`]: a lock-free ring push, no
//! allocation, no I/O), and its HUD reads "the live statistics of that
//! window" ([`live::LiveCell::latest`]). Everything else happens on the
//! analysis thread (`analysis`): the rows of the log, the rolling window,
//! the summary kept current, the control socket, the system readings
//! (`steadyhud_sensors`, plus NVML in [`gpu_source`]), the hotkeys
//! (`steadyhud_input`). The frame cap's pacing ([`limiter`]) runs in the
//! client's present or swap; GPU busy time comes from the client's timer
//! ([`gpu_times::GpuTimes`]). Test-only fault switches: [`faults`].

pub mod analysis;
pub mod client;
pub mod client_state;
pub mod faults;
pub mod gpu_source;
pub mod gpu_times;
pub mod hud_state;
pub mod identity;
pub mod limiter;
/// The live statistics the HUD draws (the `steadyhud-live` leaf crate).
pub use steadyhud_live as live;
pub mod rings;
pub mod sources;

/// Counts the heap of the unit tests (the constant-memory test reads it).
#[cfg(test)]
#[global_allocator]
static HEAP: analysis::memory_test::Counting = analysis::memory_test::Counting;

/// Panic containment (`steadyhud_sys::guard`), used throughout.
pub use steadyhud_sys::guard;
