//! `steadyhud` command line: each subcommand lives in `steadyhud::cli::<name>`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "steadyhud", version, about = "Time-weighted frame pacing: Vulkan HUD layer and log analysis")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every metric of two logs side by side, with the change in percent.
    Compare(steadyhud::cli::compare::Args),
    /// A self-contained HTML report (charts, A/B table) of one or more logs.
    Report(steadyhud::cli::report::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Compare(args) => steadyhud::cli::compare::run(args),
        Command::Report(args) => steadyhud::cli::report::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("steadyhud: {e}");
            ExitCode::from(2)
        }
    }
}
