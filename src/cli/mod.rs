//! The `steadyhud` subcommands, one module each (main.rs only dispatches).

pub mod install;
pub mod run;
pub mod analyze;
