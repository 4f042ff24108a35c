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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Analyze(a) => steadyhud::cli::analyze::run(a),
    }
}
