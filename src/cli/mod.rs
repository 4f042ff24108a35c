//! The `steadyhud` subcommands, one module each (main.rs only dispatches).

pub mod analyze;
pub mod compare;
pub mod load;
pub mod report;
