//! Processes the layer leaves alone: launchers, Steam's client and web
//! helper, Wine's and Proton's own helper processes, crash reporters,
//! anti-cheat bootstrappers, driver probes and compositors. They may create
//! Vulkan devices and present, but a HUD or a log of them is noise.
//!
//! The list is [`BUILTIN`], edited by the config key `blacklist`: names
//! joined by `+`, each added to the list, or, with a leading `-`, taken off
//! it (`blacklist=MyLauncher.exe+-gamescope`).
//!
//! A process is on the list when one of its names (see
//! [`GameName::aliases`]: the game name, the executable's file name,
//! `argv[0]`'s last component) equals an entry, ignoring case, `.exe` and
//! characters unsafe in file names (compared as [`safe`] makes them). An
//! entry written with `.exe` names a Windows program: it matches only the
//! game name of a Wine process (so `explorer.exe` leaves Wine's desktop
//! process alone but not a native program called `explorer`).

use crate::game_name::{safe, GameName};

/// The built-in list. Windows programs end in `.exe` (they match Wine
/// processes only); the others match any process.
pub const BUILTIN: &[&str] = &[
    // Steam's client, web helper, error reporter and driver probes (they
    // create Vulkan instances to list devices), and its shader
    // pre-compiler.
    "steam",
    "steamwebhelper",
    "steamerrorreporter",
    "steamerrorreporter64",
    "gldriverquery",
    "gldriverquery64",
    "vulkandriverquery",
    "vulkandriverquery64",
    "fossilize_replay",
    // Proton's `steam.exe` shim, which starts the game.
    "steam.exe",
    // Wine's and Proton's own processes.
    "wineserver",
    "explorer.exe",
    "services.exe",
    "winedevice.exe",
    "plugplay.exe",
    "svchost.exe",
    "rpcss.exe",
    "winemenubuilder.exe",
    "wineboot.exe",
    "conhost.exe",
    "start.exe",
    "rundll32.exe",
    "tabtip.exe",
    // Crash reporters.
    "CrashReportClient.exe",
    "UnityCrashHandler32.exe",
    "UnityCrashHandler64.exe",
    "crashpad_handler",
    "crashpad_handler.exe",
    // Anti-cheat bootstrappers and services.
    "EasyAntiCheat_Setup.exe",
    "EasyAntiCheat_EOS_Setup.exe",
    "start_protected_game.exe",
    "BEService.exe",
    "BEService_x64.exe",
    // Launchers and their helpers.
    "Battle.net.exe",
    "Battle.net Launcher.exe",
    "BethesdaNetLauncher.exe",
    "EpicGamesLauncher.exe",
    "EpicWebHelper.exe",
    "EADesktop.exe",
    "EALauncher.exe",
    "Origin.exe",
    "OriginThinSetupInternal.exe",
    "IGOProxy.exe",
    "IGOProxy64.exe",
    "UbisoftConnect.exe",
    "upc.exe",
    "UplayWebCore.exe",
    "GalaxyClient.exe",
    "GalaxyClient Helper.exe",
    "SocialClubHelper.exe",
    "RockstarService.exe",
    "LeagueClient.exe",
    "LeagueClientUxRender.exe",
    "RiotClientServices.exe",
    "RiotClientUxRender.exe",
    "ffxivlauncher.exe",
    "ffxivlauncher64.exe",
    "StarCitizen_Launcher.exe",
    "RSI Launcher.exe",
    "Paradox Launcher.exe",
    // Compositors.
    "gamescope",
];

/// Why a process is on the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The entry that matched, as written.
    pub entry: String,
    /// Whether it comes from [`BUILTIN`] (else from the `blacklist` key).
    pub builtin: bool,
    /// The process's name that matched it.
    pub alias: String,
}

/// One entry, as compared: lower case, file-name safe, `.exe` dropped;
/// and whether it names a Windows program.
fn key(entry: &str) -> Option<(String, bool)> {
    let exe = entry.len() > 4
        && entry
            .get(entry.len() - 4..)
            .is_some_and(|e| e.eq_ignore_ascii_case(".exe"));
    safe(entry.as_bytes()).map(|s| (s.to_lowercase(), exe))
}

/// Whether the process named `name` is on the built-in list edited by
/// `edits` (the `blacklist` key's entries, in order), and by which entry.
pub fn blacklisted(name: &GameName, edits: &[String]) -> Option<Listed> {
    let mut list: Vec<(&str, bool)> = BUILTIN.iter().map(|e| (*e, true)).collect();
    for e in edits {
        match e.strip_prefix('-') {
            Some(gone) => {
                let gone = key(gone).map(|k| k.0);
                list.retain(|(x, _)| key(x).map(|k| k.0) != gone);
            }
            None => list.push((e.as_str(), false)),
        }
    }
    list.into_iter().find_map(|(entry, builtin)| {
        let (k, windows) = key(entry)?;
        let alias = if windows {
            name.wine
                .then_some(&name.name)
                .filter(|n| n.to_lowercase() == k)?
        } else {
            name.aliases.iter().find(|a| a.to_lowercase() == k)?
        };
        Some(Listed {
            entry: entry.to_string(),
            builtin,
            alias: alias.clone(),
        })
    })
}

/// Parses the `blacklist` key: entries joined by `+`, each a name or `-`
/// and a name; an empty value is no edit.
pub fn parse_edits(value: &str) -> Result<Vec<String>, String> {
    let edits: Vec<String> = value
        .split('+')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect();
    let ok = edits
        .iter()
        .all(|e| !e.contains('\0') && key(e.strip_prefix('-').unwrap_or(e)).is_some());
    if ok {
        Ok(edits)
    } else {
        Err("process names joined by +, a leading - taking one off the built-in list, e.g. MyLauncher.exe+-gamescope".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game_name::game_name;

    fn named(cmdline: &[u8], exe: &[u8]) -> GameName {
        game_name(cmdline, Some(exe)).unwrap()
    }

    #[test]
    fn builtin_entries_match_their_processes_only() {
        let none: &[String] = &[];
        let cases: &[(&[u8], &[u8], Option<&str>)] = &[
            (
                b"/home/u/.steam/steam/ubuntu12_64/steamwebhelper\0-lang=en\0",
                b"/home/u/.steam/steam/ubuntu12_64/steamwebhelper",
                Some("steamwebhelper"),
            ),
            (
                b"C:\\windows\\system32\\explorer.exe\0/desktop\0",
                b"/usr/bin/wine64-preloader",
                Some("explorer.exe"),
            ),
            (
                b"C:\\windows\\system32\\steam.exe\0Z:\\g\\Game.exe\0",
                b"/opt/proton/bin/wine64-preloader",
                Some("steam"),
            ),
            (
                b"Z:\\g\\EasyAntiCheat_EOS_Setup.EXE\0install\0",
                b"/usr/bin/wine64-preloader",
                Some("EasyAntiCheat_EOS_Setup.exe"),
            ),
            (
                b"C:\\Program Files (x86)\\Battle.net\\Battle.net Launcher.exe\0",
                b"/usr/bin/wine",
                Some("Battle.net Launcher.exe"),
            ),
            (
                b"/usr/bin/gamescope\0-W\x001920\0",
                b"/usr/bin/gamescope",
                Some("gamescope"),
            ),
            (
                b"/usr/bin/wineserver\0",
                b"/usr/bin/wineserver",
                Some("wineserver"),
            ),
            // A native program that shares a Windows helper's name.
            (b"/usr/bin/explorer\0", b"/usr/bin/explorer", None),
            // Games.
            (
                b"Z:\\g\\Game-Win64-Shipping.exe\0",
                b"/usr/bin/wine64-preloader",
                None,
            ),
            (b"vkcube\0", b"/usr/bin/vkcube", None),
        ];
        for (cmdline, exe, want) in cases {
            let got = blacklisted(&named(cmdline, exe), none);
            assert_eq!(
                got.as_ref().map(|l| l.entry.as_str()),
                *want,
                "{}",
                String::from_utf8_lossy(cmdline)
            );
            assert!(got.is_none_or(|l| l.builtin));
        }
    }

    #[test]
    fn the_key_adds_and_removes_entries() {
        let app = named(b"steadyhud-testapp\0", b"/t/steadyhud-testapp");
        let edits = parse_edits("steadyhud-testapp").unwrap();
        let l = blacklisted(&app, &edits).unwrap();
        assert_eq!((l.entry.as_str(), l.builtin), ("steadyhud-testapp", false));
        // Case and .exe do not matter for a plain entry.
        assert!(blacklisted(&app, &parse_edits("STEADYHUD-TESTAPP.exe").unwrap()).is_none());
        assert!(blacklisted(&app, &parse_edits("Steadyhud-Testapp").unwrap()).is_some());

        let helper = named(b"steamwebhelper\0", b"/s/steamwebhelper");
        assert!(blacklisted(&helper, &[]).is_some());
        assert!(blacklisted(&helper, &parse_edits("-steamwebhelper").unwrap()).is_none());
        // Removing a Windows entry by its bare name works too.
        let explorer = named(b"C:\\windows\\explorer.exe\0", b"/usr/bin/wine64");
        assert!(blacklisted(&explorer, &parse_edits(" -explorer + foo ").unwrap()).is_none());
        assert_eq!(parse_edits("").unwrap(), Vec::<String>::new());
        for bad in ["-", "a+-", "...", "-.exe"] {
            assert!(parse_edits(bad).is_err(), "{bad:?}");
        }
    }

    /// A Wine process with a Windows argv[0] is matched on argv[0] by a
    /// plain entry (the test app started as `steamwebhelper`).
    #[test]
    fn argv0_alias_is_matched() {
        let g = named(b"steamwebhelper\0", b"/t/steadyhud-testapp");
        let l = blacklisted(&g, &[]).unwrap();
        assert_eq!(
            (l.entry.as_str(), l.alias.as_str()),
            ("steamwebhelper", "steamwebhelper")
        );
    }
}
