//! The `steadyhud` subcommands, one module each (main.rs only dispatches).

pub mod analyze;
pub mod bench;
pub mod compare;
pub mod compare_runs;
pub mod config;
pub mod ctl;
pub mod display;
pub mod export;
pub mod install;
pub mod load;
pub mod merge;
pub mod parallel;
pub mod progress;
pub mod recovered;
pub mod report;
pub mod run;
pub mod segments;
pub mod summarize;
