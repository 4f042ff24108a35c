//! The `steadyhud` subcommands, one module each (main.rs only dispatches).

pub mod install;
pub mod run;
pub mod analyze;
pub mod bench;
pub mod compare;
pub mod load;
pub mod report;
