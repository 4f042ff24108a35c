//! The `steadyhud` subcommands, one module each.

pub mod compare;
pub mod load;
pub mod report;
