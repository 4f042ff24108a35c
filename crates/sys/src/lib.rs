//! What steadyhud asks of the operating system, in one small crate so the
//! crates above it can forbid `unsafe`: the monotonic clock, local time, the
//! home folder, and locks that outlive a contained panic.

pub mod clock;
pub mod home;
pub mod lock;
pub mod time;
