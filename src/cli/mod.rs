//! The `steadyhud` subcommands, one module each (main.rs only dispatches).

pub mod analyze;
