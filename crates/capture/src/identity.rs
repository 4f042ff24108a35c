//! Who this process is, read once when the layer (or the GL library) is
//! set up: its game name
//! (the rule of [`steadyhud_config::game_name`] over `/proc/self/cmdline`
//! and `/proc/self/exe`), its configuration (global, per-game and Wine
//! files, then the environment) and whether it is on the blacklist.

use crate::guard;
use std::os::unix::ffi::OsStrExt;
use steadyhud_config::{blacklisted, resolve, Config, GameName};

/// What a client knows of its process before any window exists.
pub struct Identity {
    /// The game name (file-name safe), or `pid-<pid>` when none could be
    /// read.
    pub name: String,
    pub config: Config,
    /// The blacklist entry that leaves this process alone, if any.
    pub left_alone: Option<steadyhud_config::Listed>,
}

impl Identity {
    /// Reads the process's name and configuration, printing the config's
    /// warnings and, for an unreadable name or a blacklisted process, one
    /// line each.
    pub fn of_this_process() -> Identity {
        let cmdline = std::fs::read("/proc/self/cmdline").unwrap_or_default();
        let exe = std::fs::read_link("/proc/self/exe").ok();
        let game = steadyhud_config::game_name::game_name(
            &cmdline,
            exe.as_ref().map(|p| p.as_os_str().as_bytes()),
        );
        let name = match &game {
            Some(g) => g.name.clone(),
            None => {
                let pid = std::process::id();
                guard::say(format_args!(
                    "steadyhud: cannot read this process's name from /proc/self/cmdline or /proc/self/exe; calling it pid-{pid}"
                ));
                format!("pid-{pid}")
            }
        };
        let resolved = resolve(&|k| std::env::var(k).ok(), game.as_ref());
        for w in &resolved.warnings {
            guard::say(format_args!("steadyhud: config: {w}"));
        }
        let config = resolved.config;
        let left_alone = game
            .as_ref()
            .and_then(|g: &GameName| blacklisted(g, &config.blacklist));
        if let Some(l) = &left_alone {
            guard::say(format_args!(
                "steadyhud: {} is on the {} blacklist (entry {:?}); the layer stays out of this process",
                l.alias,
                if l.builtin { "built-in" } else { "config's" },
                l.entry
            ));
        }
        Identity {
            name,
            config,
            left_alone,
        }
    }
}
