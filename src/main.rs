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
    /// Analyse a frame-time log (steadyhud, PresentMon, CapFrameX/OCAT, MangoHud, plain ms).
    Analyze(steadyhud::cli::analyze::AnalyzeArgs),
    /// Every metric of two logs side by side, with the change in percent.
    Compare(steadyhud::cli::compare::Args),
    /// A self-contained HTML report (charts, A/B table) of one or more logs.
    Report(steadyhud::cli::report::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Analyze(a) => steadyhud::cli::analyze::run(a),
        Command::Compare(a) => steadyhud::cli::compare::run(&a),
        Command::Report(a) => steadyhud::cli::report::run(&a),
    }
}
