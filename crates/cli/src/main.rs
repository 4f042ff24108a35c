//! `steadyhud` command line: each subcommand lives in `steadyhud_cli::<name>`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "steadyhud",
    // `0.1.0 (abc1234 2026-11-24)`: the commit, from build.rs.
    version = env!("STEADYHUD_LONG_VERSION"),
    about = "Time-weighted frame pacing: Vulkan HUD layer and log analysis"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Install the layer for this user (implicit, enabled by STEADYHUD=1).
    Install(steadyhud_cli::install::InstallArgs),
    /// Remove the user-level layer installed by `steadyhud install`.
    Uninstall(steadyhud_cli::install::UninstallArgs),
    /// Run a program with the layer on, installed or not.
    Run(steadyhud_cli::run::RunArgs),
    /// Analyse a frame-time log (steadyhud, PresentMon, CapFrameX/OCAT, MangoHud, plain ms).
    Analyze(steadyhud_cli::analyze::AnalyzeArgs),
    /// Run a program with the layer for a fixed time and recommend a frame cap.
    Bench(steadyhud_cli::bench::Args),
    /// Every metric of two logs side by side, with the change in percent.
    Compare(steadyhud_cli::compare::Args),
    /// A self-contained HTML report (charts, A/B table) of one or more logs.
    Report(steadyhud_cli::report::Args),
    /// One row per log with every metric and its time histogram (--csv, --json), logs read in parallel.
    Summarize(steadyhud_cli::summarize::Args),
    /// Sum time histograms (summarize output) into fleet-wide percentiles and Steady/Typical FPS.
    Merge(steadyhud_cli::merge::Args),
    /// Talk to a running game: list, status, hud on|off|toggle, preset N, limit N|off, mark TEXT, histogram.
    Ctl(steadyhud_cli::ctl::Args),
    /// Serve the running games' time-weighted numbers to Prometheus (/metrics), or write them for node_exporter.
    Export(steadyhud_cli::export::Args),
    /// Show the configuration a game gets and where each value comes from: config --show [--name N].
    Config(steadyhud_cli::config::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Analyze(_)
            | Command::Compare(_)
            | Command::Report(_)
            | Command::Summarize(_)
            | Command::Merge(_)
    ) {
        // The logs they read are whole first, killed sessions' too.
        steadyhud_cli::recovered::killed_logs(None);
    }
    match cli.command {
        Command::Install(a) => steadyhud_cli::install::run_install(a),
        Command::Uninstall(a) => steadyhud_cli::install::run_uninstall(a),
        Command::Run(a) => steadyhud_cli::run::run(a),
        Command::Analyze(a) => steadyhud_cli::analyze::run(a),
        Command::Bench(a) => steadyhud_cli::bench::run(&a),
        Command::Compare(a) => steadyhud_cli::compare::run(&a),
        Command::Report(a) => steadyhud_cli::report::run(&a),
        Command::Summarize(a) => steadyhud_cli::summarize::run(&a),
        Command::Merge(a) => steadyhud_cli::merge::run(&a),
        Command::Ctl(a) => steadyhud_cli::ctl::run(&a),
        Command::Export(a) => steadyhud_cli::export::run(&a),
        Command::Config(a) => steadyhud_cli::config::run(&a),
    }
}
