//! The game's name: what a process is called in its log file name, the
//! `ctl list` column, the summary's `exe` key, per-game config files and
//! the blacklist. A pure rule over the raw bytes of `/proc/self/cmdline`
//! and the target of `/proc/self/exe` (the layer reads them; tests give
//! them as bytes).
//!
//! # The rule
//!
//! 1. A process is a **Wine process** when its executable's file name
//!    starts with `wine` (`wine`, `wine64`, `wine64-preloader`,
//!    `wineserver`, …) or its `argv[0]` looks like a Windows path (a drive
//!    letter `C:\`/`C:/`, a `\\server\share` prefix, a backslash, or a name
//!    ending in `.exe`).
//! 2. A Wine process is named after the first argument, from `argv[0]` on,
//!    that holds a Windows executable: the first `.exe` (any case) that ends
//!    the argument or is followed by a quote or a blank (so a whole
//!    `"C:\Program Files\Game\game.exe" -arg` in one argument works). The
//!    name is that path's last component after `\` or `/`, surrounding
//!    quotes removed, **`.exe` dropped** (`Game-Win64-Shipping.exe` →
//!    `Game-Win64-Shipping`). Without such an argument: `argv[0]`'s last
//!    component, else the executable's file name (`wineserver`).
//! 3. Any other process is named after its executable's file name (a
//!    ` (deleted)` suffix removed), else `argv[0]`'s last component. The cut
//!    15-character `/proc/self/comm` is never used.
//! 4. The name is made safe for a file name: a final `.exe` (any case)
//!    goes, whatever the rule that found it; bytes that are not UTF-8
//!    become `_`, and so does every character other than letters, digits,
//!    `-`, `_`, `.` and `+`; leading dots go; at most 64 characters. An
//!    empty result is no name (the layer then uses `pid-<pid>`).

/// What one process is called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameName {
    /// The name (file-name safe, `.exe` dropped).
    pub name: String,
    /// Whether the process runs under Wine (rule 1); such a process also
    /// reads `wine-<name>.conf`.
    pub wine: bool,
    /// Every name the process goes by, file-name safe, for the blacklist:
    /// the name, the executable's file name and `argv[0]`'s last component
    /// (`.exe` dropped), without repeats.
    pub aliases: Vec<String>,
}

/// Longest name kept, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// The name of the process with command line `cmdline` (arguments each
/// ended by a NUL, as in `/proc/<pid>/cmdline`) and executable path `exe`
/// (the target of `/proc/<pid>/exe`), by the module's rule; `None` when
/// neither gives a name.
pub fn game_name(cmdline: &[u8], exe: Option<&[u8]>) -> Option<GameName> {
    let args: Vec<&[u8]> = cmdline
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .collect();
    let exe_base = exe
        .map(|e| e.strip_suffix(b" (deleted)").unwrap_or(e))
        .map(|e| last_component(e, false))
        .filter(|b| !b.is_empty());
    let argv0 = args.first().copied();
    let wine = exe_base.is_some_and(|b| b.starts_with(b"wine")) || argv0.is_some_and(windows_like);
    let argv0_base = argv0.map(|a| last_component(unquote(a), wine));
    let raw: Option<&[u8]> = if wine {
        args.iter()
            .find_map(|a| windows_exe(a))
            .or(argv0_base)
            .or(exe_base)
    } else {
        exe_base.or(argv0_base)
    };
    let name = safe(raw?)?;
    let mut aliases = vec![name.clone()];
    for other in [exe_base, argv0_base].into_iter().flatten() {
        if let Some(a) = safe(other) {
            if !aliases.contains(&a) {
                aliases.push(a);
            }
        }
    }
    Some(GameName {
        name,
        wine,
        aliases,
    })
}

/// Makes `raw` a safe file name stem (rule 4), `.exe` dropped; `None` when
/// nothing is left.
pub fn safe(raw: &[u8]) -> Option<String> {
    let raw = strip_exe(raw);
    let text = String::from_utf8_lossy(raw);
    let s: String = text
        .chars()
        .take(MAX_NAME_CHARS)
        .map(|c| {
            if c.is_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.');
    (!s.is_empty()).then(|| s.to_string())
}

/// `raw` without a final `.exe` (any case).
fn strip_exe(raw: &[u8]) -> &[u8] {
    match raw.len().checked_sub(4) {
        Some(i) if raw[i..].eq_ignore_ascii_case(b".exe") => &raw[..i],
        _ => raw,
    }
}

/// The part after the last `/` (and, for Windows paths, `\`).
fn last_component(path: &[u8], backslash: bool) -> &[u8] {
    let cut = path
        .iter()
        .rposition(|&b| b == b'/' || (backslash && b == b'\\'));
    cut.map_or(path, |i| &path[i + 1..])
}

/// `a` without surrounding quotes and blanks.
fn unquote(a: &[u8]) -> &[u8] {
    let is_trim = |b: &u8| matches!(b, b'"' | b'\'' | b' ' | b'\t');
    let start = a.iter().position(|b| !is_trim(b)).unwrap_or(a.len());
    let end = a.iter().rposition(|b| !is_trim(b)).map_or(start, |i| i + 1);
    &a[start..end.max(start)]
}

/// Whether `argv[0]` looks like a Windows path (rule 1).
fn windows_like(a: &[u8]) -> bool {
    let a = unquote(a);
    let drive = a.len() >= 3
        && a[0].is_ascii_alphabetic()
        && a[1] == b':'
        && (a[2] == b'\\' || a[2] == b'/');
    drive || a.starts_with(b"\\\\") || a.contains(&b'\\') || strip_exe(a).len() < a.len()
}

/// The executable's last component (with its `.exe`) when `arg` holds a
/// Windows executable path (rule 2).
fn windows_exe(arg: &[u8]) -> Option<&[u8]> {
    let end = (0..arg.len().saturating_sub(3)).find(|&i| {
        arg[i..i + 4].eq_ignore_ascii_case(b".exe")
            && arg
                .get(i + 4)
                .is_none_or(|b| matches!(b, b'"' | b'\'' | b' ' | b'\t'))
    })? + 4;
    let base = last_component(unquote(&arg[..end]), true);
    // A bare ".exe" names nothing.
    (base.len() > 4).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(what, cmdline with NUL-ended arguments, exe, name, wine)`.
    type Case = (
        &'static str,
        &'static [u8],
        Option<&'static [u8]>,
        Option<&'static str>,
        bool,
    );

    /// Command lines as `/proc/<pid>/cmdline` shows them for real games and
    /// helpers (Proton under Steam, Lutris' Wine, plain Wine, native).
    const CASES: &[Case] = &[
        (
            "Proton game (Wine rewrote argv)",
            b"Z:\\home\\user\\.steam\\steam\\steamapps\\common\\Game\\Binaries\\Win64\\Game-Win64-Shipping.exe\0",
            Some(b"/home/user/.steam/steam/steamapps/common/Proton 9.0 (Beta)/files/bin/wine64-preloader"),
            Some("Game-Win64-Shipping"),
            true,
        ),
        (
            "Proton game with arguments",
            b"Z:\\home\\u\\Games\\Elden Ring\\Game\\eldenring.exe\0-windowed\0-dx12\0",
            Some(b"/usr/lib/wine/wine64-preloader"),
            Some("eldenring"),
            true,
        ),
        (
            "Proton's steam.exe shim (the game path is an argument)",
            b"C:\\windows\\system32\\steam.exe\0Z:\\games\\Game\\Game.exe\0",
            Some(b"/opt/proton/files/bin/wine64-preloader"),
            Some("steam"),
            true,
        ),
        (
            "before Wine rewrites argv: loader then the game",
            b"/usr/bin/wine64-preloader\0/usr/bin/wine64\0/home/u/Games/gog/Witcher/bin/x64/witcher3.exe\0",
            Some(b"/usr/bin/wine64-preloader"),
            Some("witcher3"),
            true,
        ),
        (
            "Lutris Wine runner with a Windows path",
            b"/home/u/.local/share/lutris/runners/wine/wine-ge-8-26-x86_64/bin/wine\0C:\\Program Files (x86)\\Battle.net\\Battle.net Launcher.exe\0--exec=launch\0",
            Some(b"/home/u/.local/share/lutris/runners/wine/wine-ge-8-26-x86_64/bin/wine"),
            Some("Battle.net_Launcher"),
            true,
        ),
        (
            "wine start /unix with forward slashes",
            b"wine\0start\0/unix\0/home/u/Games/Some Game/SomeGame.EXE\0",
            Some(b"/usr/bin/wine"),
            Some("SomeGame"),
            true,
        ),
        (
            "whole Windows command line quoted in one argument",
            b"\"C:\\Program Files\\My Game\\My Game.exe\" -log=run.txt\0",
            Some(b"/usr/bin/wine64-preloader"),
            Some("My_Game"),
            true,
        ),
        (
            "forward slashes and a drive letter",
            b"C:/Games/Quake/quake.exe\0",
            Some(b"/usr/bin/wine64"),
            Some("quake"),
            true,
        ),
        (
            "UNC-like path",
            b"\\\\server\\share\\x.exe\0",
            Some(b"/usr/bin/wine64-preloader"),
            Some("x"),
            true,
        ),
        (
            "a .exe inside a folder name is not the executable",
            b"Z:\\mods.exe.d\\tools\\Tool.exe\0",
            Some(b"/usr/bin/wine64-preloader"),
            Some("Tool"),
            true,
        ),
        (
            "wineserver: no .exe anywhere",
            b"/usr/bin/wineserver\0-p0\0",
            Some(b"/usr/bin/wineserver"),
            Some("wineserver"),
            true,
        ),
        (
            "Windows argv[0] under a native executable (the test app's arg0)",
            b"Z:\\games\\Very Long Game Name\\Bin\\Game-Win64-Shipping.exe\0--frames\x00200\0",
            Some(b"/work/target/release/steadyhud-testapp"),
            Some("Game-Win64-Shipping"),
            true,
        ),
        (
            "native game: the executable, not argv[0]",
            b"./vkcube\0--c\x00100\0",
            Some(b"/usr/bin/vkcube"),
            Some("vkcube"),
            false,
        ),
        (
            "native game with a long name comm would cut",
            b"/home/u/Games/Factorio/bin/x64/factorio-headless-experimental\0",
            Some(b"/home/u/Games/Factorio/bin/x64/factorio-headless-experimental"),
            Some("factorio-headless-experimental"),
            false,
        ),
        (
            "Steam's web helper (native)",
            b"/home/u/.steam/steam/ubuntu12_64/steamwebhelper\0-lang=en_US\0",
            Some(b"/home/u/.steam/steam/ubuntu12_64/steamwebhelper"),
            Some("steamwebhelper"),
            false,
        ),
        (
            "deleted executable",
            b"game\0",
            Some(b"/opt/game/game.x86_64 (deleted)"),
            Some("game.x86_64"),
            false,
        ),
        (
            "non-UTF-8 bytes become _",
            b"Z:\\Spiele\\Gr\xfc\xdfe\\Spi\xe9l.exe\0",
            Some(b"/usr/bin/wine64-preloader"),
            Some("Spi_l"),
            true,
        ),
        (
            "unsafe characters in a native name",
            b"x\0",
            Some(b"/opt/My Game: Remastered!"),
            Some("My_Game__Remastered_"),
            false,
        ),
        (
            "leading dots go",
            b"x\0",
            Some(b"/opt/..hidden"),
            Some("hidden"),
            false,
        ),
        (
            "no executable path: argv[0]",
            b"/usr/games/supertuxkart\0",
            None,
            Some("supertuxkart"),
            false,
        ),
        ("nothing readable", b"", None, None, false),
        ("only a bare .exe", b"\\.exe\0", None, None, true),
    ];

    #[test]
    fn the_rule_over_real_command_lines() {
        for &(what, cmdline, exe, name, wine) in CASES {
            let got = game_name(cmdline, exe);
            assert_eq!(got.as_ref().map(|g| g.name.as_str()), name, "{what}");
            if let Some(g) = got {
                assert_eq!(g.wine, wine, "{what}: Wine");
                assert_eq!(g.aliases[0], g.name, "{what}: the name is an alias");
            }
        }
    }

    /// The blacklist sees every name the process goes by.
    #[test]
    fn aliases_hold_the_executable_and_argv0() {
        let g = game_name(
            b"steamwebhelper\0--type=gpu-process\0",
            Some(b"/work/target/release/steadyhud-testapp"),
        )
        .unwrap();
        assert_eq!(g.name, "steadyhud-testapp");
        assert_eq!(g.aliases, ["steadyhud-testapp", "steamwebhelper"]);
        let g = game_name(
            b"C:\\windows\\system32\\explorer.exe\0/desktop\0",
            Some(b"/usr/bin/wine64-preloader"),
        )
        .unwrap();
        assert_eq!(g.aliases, ["explorer", "wine64-preloader"]);
    }

    #[test]
    fn long_names_are_cut_to_64_characters() {
        let long = format!("Z:\\g\\{}.exe\0", "A".repeat(100));
        let g = game_name(long.as_bytes(), None).unwrap();
        assert_eq!(g.name, "A".repeat(MAX_NAME_CHARS));
    }
}
