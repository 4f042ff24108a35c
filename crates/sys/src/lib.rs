//! What steadyhud asks of the operating system, in one small crate so the
//! crates above it can forbid `unsafe`: the monotonic clock, local time, the
//! home folder, locks that outlive a contained panic, which process a
//! record belongs to ([`owner`]), folders only their user may touch
//! ([`private_dir`]), reading an address a caller handed us ([`probe`]), and the containment itself ([`guard`]: code that runs inside somebody
//! else's game never takes it down).

pub mod clock;
pub mod guard;
pub mod home;
pub mod lock;
pub mod owner;
pub mod private_dir;
pub mod probe;
pub mod tail;
pub mod time;
