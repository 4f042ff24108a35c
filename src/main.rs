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
    /// Install the layer for this user (implicit, enabled by STEADYHUD=1).
    Install(steadyhud::cli::install::InstallArgs),
    /// Remove the user-level layer installed by `steadyhud install`.
    Uninstall(steadyhud::cli::install::UninstallArgs),
    /// Run a program with the layer on, installed or not.
    Run(steadyhud::cli::run::RunArgs),
    /// Analyse a frame-time log (steadyhud, PresentMon, CapFrameX/OCAT, MangoHud, plain ms).
    Analyze(steadyhud::cli::analyze::AnalyzeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Install(a) => steadyhud::cli::install::run_install(a),
        Command::Uninstall(a) => steadyhud::cli::install::run_uninstall(a),
        Command::Run(a) => steadyhud::cli::run::run(a),
        Command::Analyze(a) => steadyhud::cli::analyze::run(a),
    }
}
