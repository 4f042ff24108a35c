//! Which configuration sources a process reads, in which order, and where
//! each key's value came from:
//!
//! 1. the defaults;
//! 2. the global file [`config_path`] (`steadyhud.conf`);
//! 3. the game's file `<name>.conf` next to it;
//! 4. for a Wine process, `wine-<name>.conf` next to it (narrower than the
//!    plain file, which a native build of the same game shares, so it wins);
//! 5. `STEADYHUD_CONFIG`;
//! 6. `STEADYHUD_LOG_DIR` (for `log_dir` only).
//!
//! `<name>` is the game name ([`crate::game_name`]). Later sources override
//! earlier ones key by key; a missing file is silent.

use crate::game_name::GameName;
use crate::settings::{config_path, Config, Source, ENV_CONFIG, ENV_LOG_DIR, KEYS};
use std::path::{Path, PathBuf};

/// A configuration with its warnings and where every value came from.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub config: Config,
    /// One line per problem (see [`Config::apply`]).
    pub warnings: Vec<String>,
    /// Every key of [`KEYS`], in that order, with its origin: `default`,
    /// `FILE:LINE`, `STEADYHUD_CONFIG item N` or `STEADYHUD_LOG_DIR`.
    pub origins: Vec<(&'static str, String)>,
    /// The files read (the ones that exist), in order.
    pub files: Vec<PathBuf>,
}

/// The per-game files of `game` in the folder of the global file `global`,
/// in the order they are applied (see the module).
pub fn game_config_paths(global: &Path, game: &GameName) -> Vec<PathBuf> {
    let Some(dir) = global.parent() else {
        return Vec::new();
    };
    let mut paths = vec![dir.join(format!("{}.conf", game.name))];
    if game.wine {
        paths.push(dir.join(format!("wine-{}.conf", game.name)));
    }
    // A game named `steadyhud` does not read the global file twice.
    paths.retain(|p| p != global);
    paths
}

impl Config {
    /// Reads the config file and the environment of this process (no game
    /// files: see [`resolve`]). Returns the config and one warning line per
    /// problem (unknown key, bad value: earlier value kept; unreadable
    /// file: defaults kept).
    pub fn load() -> (Config, Vec<String>) {
        Config::load_with(&|k| std::env::var(k).ok())
    }

    /// [`Config::load`] with the environment given as a function (tests).
    pub fn load_with(env: &dyn Fn(&str) -> Option<String>) -> (Config, Vec<String>) {
        let r = resolve(env, None);
        (r.config, r.warnings)
    }
}

/// Loads the configuration of the process named `game` (`None`: the global
/// file and the environment only) with the environment given as a
/// function.
pub fn resolve(env: &dyn Fn(&str) -> Option<String>, game: Option<&GameName>) -> Resolved {
    let mut cfg = Config::default();
    let mut warnings = Vec::new();
    let mut origins: Vec<(&'static str, String)> =
        KEYS.iter().map(|k| (*k, "default".to_string())).collect();
    let mut files = Vec::new();
    let mut note = |key: &str, at: String| {
        if let Some(o) = origins.iter_mut().find(|(k, _)| *k == key) {
            o.1 = at;
        }
    };
    if let Some(global) = config_path(env) {
        let mut paths = vec![global.clone()];
        if let Some(g) = game {
            paths.extend(game_config_paths(&global, g));
        }
        for path in paths {
            if let Some(text) = read(&path, &mut warnings) {
                warnings.extend(cfg.apply_noting(&text, &Source::File(path.clone()), &mut note));
                files.push(path);
            }
        }
    }
    if let Some(text) = env(ENV_CONFIG) {
        warnings.extend(cfg.apply_noting(&text, &Source::Env, &mut note));
    }
    if let Some(dir) = env(ENV_LOG_DIR).filter(|d| !d.is_empty()) {
        cfg.log_dir = Some(PathBuf::from(dir));
        note("log_dir", ENV_LOG_DIR.to_string());
    }
    Resolved {
        config: cfg,
        warnings,
        origins,
        files,
    }
}

/// A config file's text (invalid UTF-8 replaced, with a warning); `None`
/// when it does not exist (silently) or cannot be read (a warning).
fn read(path: &Path, warnings: &mut Vec<String>) -> Option<String> {
    match std::fs::read(path) {
        Ok(bytes) => Some(match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                warnings.push(format!(
                    "{}: not valid UTF-8; invalid bytes replaced",
                    path.display()
                ));
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            warnings.push(format!(
                "{}: cannot read ({e}); using defaults",
                path.display()
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Position;

    fn game(name: &str, wine: bool) -> GameName {
        GameName {
            name: name.into(),
            wine,
            aliases: vec![name.into()],
        }
    }

    /// Global file < `<name>.conf` < `wine-<name>.conf` < the environment,
    /// key by key, each value's origin named.
    #[test]
    fn layering_and_origins() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("steadyhud");
        std::fs::create_dir_all(&conf).unwrap();
        std::fs::write(
            conf.join("steadyhud.conf"),
            "target_fps=30\nposition=top-right\nhud_hidden=1\n",
        )
        .unwrap();
        std::fs::write(
            conf.join("Game.conf"),
            "# game\nposition=bottom-right\nfps_limit=50\n",
        )
        .unwrap();
        std::fs::write(conf.join("wine-Game.conf"), "fps_limit=40\nbogus=1\n").unwrap();
        let xdg = dir.path().to_string_lossy().into_owned();
        let env = |k: &str| match k {
            "XDG_CONFIG_HOME" => Some(xdg.clone()),
            "STEADYHUD_CONFIG" => Some("hud_hidden=0".into()),
            _ => None,
        };
        let origin = |r: &Resolved, key: &str| {
            r.origins
                .iter()
                .find(|(k, _)| *k == key)
                .map(|o| o.1.clone())
                .unwrap()
        };

        let native = resolve(&env, Some(&game("Game", false)));
        let c = &native.config;
        assert_eq!(
            (c.target_fps, c.position, c.fps_limit.as_slice()),
            (30, Position::BottomRight, &[50][..])
        );
        assert!(!c.hud_hidden);
        assert!(origin(&native, "position").ends_with("steadyhud/Game.conf:2"));
        assert!(origin(&native, "target_fps").ends_with("steadyhud/steadyhud.conf:1"));
        assert_eq!(origin(&native, "hud_hidden"), "STEADYHUD_CONFIG item 1");
        assert_eq!(origin(&native, "window_seconds"), "default");
        assert_eq!(native.files.len(), 2);
        assert_eq!(native.warnings, Vec::<String>::new());

        let wine = resolve(&env, Some(&game("Game", true)));
        assert_eq!(wine.config.fps_limit, [40]);
        assert_eq!(wine.config.position, Position::BottomRight);
        assert!(origin(&wine, "fps_limit").ends_with("steadyhud/wine-Game.conf:1"));
        assert_eq!(wine.files.len(), 3);
        assert_eq!(wine.warnings.len(), 1);
        assert!(wine.warnings[0].contains("wine-Game.conf:2: unknown key \"bogus\""));

        // Another game and no game read the global file only.
        for r in [
            resolve(&env, Some(&game("Other", true))),
            resolve(&env, None),
        ] {
            assert_eq!(
                (r.config.position, r.config.fps_limit.len()),
                (Position::TopRight, 0)
            );
            assert_eq!(r.files.len(), 1);
        }
        assert_eq!(
            origin(&resolve(&env, None), "position").rsplit(':').next(),
            Some("2")
        );
    }

    #[test]
    fn a_game_called_steadyhud_reads_the_global_file_once() {
        let global = Path::new("/c/steadyhud/steadyhud.conf");
        assert_eq!(
            game_config_paths(global, &game("steadyhud", false)),
            Vec::<PathBuf>::new()
        );
        assert_eq!(
            game_config_paths(global, &game("steadyhud", true)),
            [PathBuf::from("/c/steadyhud/wine-steadyhud.conf")]
        );
        assert_eq!(
            game_config_paths(global, &game("G", true)),
            [
                PathBuf::from("/c/steadyhud/G.conf"),
                PathBuf::from("/c/steadyhud/wine-G.conf")
            ]
        );
    }
}
