//! steadyhud: an implicit Vulkan layer that timestamps every present, keeps
//! time-weighted frame-pacing metrics and draws them as a HUD; plus the
//! library behind the `steadyhud` CLI.
//!
//! Data flow: present hook (`layer`) → lock-free ring → analysis thread →
//! [`metrics::Rolling`] (HUD) and session log; the CLI reads logs through
//! `formats` and the same [`metrics`] functions.

pub mod cli;
pub mod config;
pub mod control;
pub mod counters;
pub mod formats;
pub mod hud;
pub mod layer;
pub mod live;
pub mod lock;
pub mod metrics;
pub mod report;
pub mod session_log;
