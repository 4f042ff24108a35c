//! `steadyhud config --show [--name N] [--wine]`: the configuration a game
//! gets (global file, its per-game files, `STEADYHUD_CONFIG`,
//! `STEADYHUD_LOG_DIR`; see [`steadyhud_config::sources`]), one
//! `key=value` line per key with where the value came from, and whether
//! the blacklist leaves it alone.

use std::process::ExitCode;
use steadyhud_config::game_name::safe;
use steadyhud_config::{blacklisted, resolve, GameName, Resolved};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print the resolved configuration (the default and only action).
    #[arg(long)]
    pub show: bool,
    /// The game name (as in its log file names, `ctl list`); reads its
    /// `<N>.conf`. A name ending in `.exe` means a Wine process.
    #[arg(long, value_name = "N")]
    pub name: Option<String>,
    /// The game runs under Wine/Proton: also read `wine-<N>.conf`.
    #[arg(long, requires = "name")]
    pub wine: bool,
}

pub fn run(args: &Args) -> ExitCode {
    let game = match &args.name {
        None => None,
        Some(n) => match safe(n.as_bytes()) {
            Some(name) => Some(GameName {
                wine: args.wine || n.to_ascii_lowercase().ends_with(".exe"),
                aliases: vec![name.clone()],
                name,
            }),
            None => {
                eprintln!("steadyhud: --name {n:?} names nothing (empty once unsafe characters and .exe go)");
                return ExitCode::from(2);
            }
        },
    };
    let resolved = resolve(&|k| std::env::var(k).ok(), game.as_ref());
    for w in &resolved.warnings {
        eprintln!("steadyhud: config: {w}");
    }
    print!("{}", show(&resolved, game.as_ref()));
    ExitCode::SUCCESS
}

/// The text `--show` prints: comment lines on the game and the files read,
/// then `key=value  # origin` per key.
pub fn show(r: &Resolved, game: Option<&GameName>) -> String {
    let mut out = String::new();
    match game {
        Some(g) => {
            out.push_str(&format!(
                "# game {}{}\n",
                g.name,
                if g.wine { " (Wine)" } else { "" }
            ));
            if let Some(l) = blacklisted(g, &r.config.blacklist) {
                out.push_str(&format!(
                    "# left alone: on the {} blacklist (entry {:?})\n",
                    if l.builtin { "built-in" } else { "config's" },
                    l.entry
                ));
            }
        }
        None => out.push_str("# no game (--name N): global file and environment only\n"),
    }
    if r.files.is_empty() {
        out.push_str("# files read: none\n");
    }
    for f in &r.files {
        out.push_str(&format!("# file read: {}\n", f.display()));
    }
    let width = r
        .origins
        .iter()
        .map(|(k, _)| k.len() + 1 + r.config.value_of(k).chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    for (key, origin) in &r.origins {
        let line = format!("{key}={}", r.config.value_of(key));
        let origin = match r.config.resolved_log_dir() {
            Some(dir) if *key == "log_dir" && r.config.log_dir.is_none() => {
                format!("{origin}: {}", dir.display())
            }
            _ => origin.clone(),
        };
        out.push_str(&format!("{line:<width$}  # {origin}\n"));
    }
    out
}
