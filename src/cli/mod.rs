//! The `steadyhud` subcommands, one module each (main.rs only dispatches).

pub mod analyze;
pub mod bench;
pub mod compare;
pub mod install;
pub mod load;
pub mod report;
pub mod run;
