//! README.md's CLI synopses against the real `--help`, so the two cannot
//! drift apart:
//! 1. every flag a README command line names (the synopses in `## CLI` and
//!    the commands in any other indented block) exists in that subcommand's
//!    `--help`;
//! 2. every option of a subcommand's `--help` (except help and version)
//!    appears in its synopsis in `## CLI`, so a new flag needs documenting;
//! 3. every subcommand of `steadyhud --help` has a synopsis in `## CLI`.
//!
//! The checker is a plain function of the README text and the help texts;
//! the tests at the end feed it broken inputs to show that it catches each
//! kind of drift.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The README section whose indented block holds one synopsis per subcommand.
const SYNOPSIS_SECTION: &str = "## CLI";

/// The program name a README command line starts with (possibly after a
/// path such as `target/release/`).
const PROGRAM: &str = "steadyhud";

/// One option of a `--help` listing: all its spellings, e.g. `["-o", "--output"]`.
type HelpOption = Vec<String>;

/// A command line found in the README: `steadyhud <subcommand> ...`, with
/// its continuation lines joined.
#[derive(Debug)]
struct CommandLine {
    /// 1-based line number of its first line in README.md.
    line: usize,
    subcommand: String,
    /// The flags it names (`--json`, `-o`), in order; nothing after a bare `--`.
    flags: Vec<String>,
    /// Whether it sits in the `## CLI` synopsis block (else it is an example).
    is_synopsis: bool,
}

/// What `--help` says: the subcommands, and the options of each.
struct Help {
    subcommands: Vec<String>,
    options: BTreeMap<String, Vec<HelpOption>>,
}

fn readme_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("layer-manifest").is_dir())
        .expect("the test runs inside the checkout")
        .join("README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Runs the real binary with `args` and returns its stdout, which must be
/// a successful `--help` listing.
fn help_output(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run steadyhud {}: {e}", args.join(" ")));
    assert!(
        out.status.success(),
        "steadyhud {} failed ({}): {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap_or_else(|e| panic!("steadyhud {} printed non-UTF-8: {e}", args.join(" ")))
}

/// The top-level and every subcommand's `--help`, from the real binary.
fn real_help() -> Help {
    let subcommands = help_subcommands(&help_output(&["--help"]));
    let options = subcommands
        .iter()
        .map(|s| (s.clone(), help_options(&help_output(&[s, "--help"]))))
        .collect();
    Help {
        subcommands,
        options,
    }
}

/// The lines of the `heading:` section of a clap help text (e.g. `Commands:`),
/// up to the blank line that ends it.
fn help_section<'a>(help: &'a str, heading: &'a str) -> impl Iterator<Item = &'a str> {
    help.lines()
        .skip_while(move |l| l.trim_end() != heading)
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
}

/// The subcommand names in `Commands:`, without clap's own `help`.
fn help_subcommands(help: &str) -> Vec<String> {
    help_section(help, "Commands:")
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The options in `Options:`, each with all its spellings. An option line is
/// `  -o, --output <OUTPUT>  text` or `      --json  text`; a wrapped
/// description line is indented further and does not start with `-`.
fn help_options(help: &str) -> Vec<HelpOption> {
    help_section(help, "Options:")
        .filter(|l| {
            let indent = l.len() - l.trim_start().len();
            indent <= 6 && l.trim_start().starts_with('-')
        })
        .map(|l| {
            l.split_whitespace()
                .map(|w| w.trim_end_matches(','))
                .take_while(|w| w.starts_with('-'))
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// The flags a command line names: `--word` or `-x` where a word starts
/// (after a space, `[`, `(` or `|`). A bare `--` ends the line's own
/// options: what follows belongs to the program it runs.
fn flags_in(text: &str) -> Vec<String> {
    let mut flags = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || "[]()|".contains(c)) {
        if word == "--" {
            break;
        }
        let name = word.trim_start_matches('-');
        let dashes = word.len() - name.len();
        let is_flag = match dashes {
            1 => name.len() == 1 && name.chars().all(|c| c.is_ascii_alphabetic()),
            2 => {
                name.starts_with(|c: char| c.is_ascii_alphabetic())
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            }
            _ => false,
        };
        if is_flag {
            flags.push(word.to_string());
        }
    }
    flags
}

/// Whether `text` holds a bare `--`, after which flags belong to the program
/// the subcommand runs (`run`, `bench`), not to steadyhud.
fn has_bare_double_dash(text: &str) -> bool {
    text.split_whitespace().any(|w| w == "--")
}

/// If `text` (one indented README line, trimmed, comment removed) runs the
/// program, the subcommand and the rest of the line.
fn split_command(text: &str) -> Option<(&str, &str)> {
    let mut words = text.splitn(3, ' ');
    let program = words.next()?;
    if program != PROGRAM && !program.ends_with(&format!("/{PROGRAM}")) {
        return None;
    }
    let subcommand = words.next()?;
    Some((subcommand, words.next().unwrap_or("")))
}

/// Every command line in README's indented (4-space) blocks. A line indented
/// further than the command line above it continues it (the README wraps
/// long synopses that way). `# comments` are dropped.
fn readme_command_lines(readme: &str) -> Vec<CommandLine> {
    let mut found: Vec<CommandLine> = Vec::new();
    let mut section = "";
    // Indentation of the command line that continuation lines may extend.
    let mut open: Option<usize> = None;
    // Whether that command line reached a bare `--` (flags after it are CMD's).
    let mut options_ended = false;
    for (i, raw) in readme.lines().enumerate() {
        if raw.starts_with("## ") {
            section = raw.trim_end();
        }
        let indent = raw.len() - raw.trim_start().len();
        if indent < 4 || raw.trim().is_empty() {
            open = None;
            continue;
        }
        let text = match raw.find(" #") {
            Some(at) => &raw[..at],
            None => raw,
        }
        .trim();
        if let Some((subcommand, rest)) = split_command(text) {
            found.push(CommandLine {
                line: i + 1,
                subcommand: subcommand.to_string(),
                flags: flags_in(rest),
                is_synopsis: section == SYNOPSIS_SECTION,
            });
            open = Some(indent);
            options_ended = has_bare_double_dash(rest);
        } else if let (Some(base), Some(last)) = (open, found.last_mut()) {
            if indent > base {
                if !options_ended {
                    last.flags.extend(flags_in(text));
                    options_ended = has_bare_double_dash(text);
                }
            } else {
                open = None;
            }
        }
    }
    found
}

/// Everything on which README and `--help` disagree, one message each,
/// naming the flag or subcommand and where it is missing.
fn check(readme: &str, help: &Help) -> Vec<String> {
    let mut problems = Vec::new();
    let lines = readme_command_lines(readme);

    // 1. Flags the README names must exist.
    for l in &lines {
        let Some(options) = help.options.get(&l.subcommand) else {
            problems.push(format!(
                "README.md:{}: `{PROGRAM} {}` is not a subcommand of `{PROGRAM} --help` ({})",
                l.line,
                l.subcommand,
                help.subcommands.join(", ")
            ));
            continue;
        };
        for flag in &l.flags {
            if !options.iter().any(|o| o.contains(flag)) {
                problems.push(format!(
                    "README.md:{}: `{PROGRAM} {}` names {flag}, which `{PROGRAM} {} --help` does not list",
                    l.line, l.subcommand, l.subcommand
                ));
            }
        }
    }

    // 3. Every subcommand has a synopsis; 2. which names all its options.
    for subcommand in &help.subcommands {
        let synopses: Vec<&CommandLine> = lines
            .iter()
            .filter(|l| l.is_synopsis && &l.subcommand == subcommand)
            .collect();
        if synopses.is_empty() {
            problems.push(format!(
                "`{PROGRAM} {subcommand}` (in `{PROGRAM} --help`) has no synopsis line in README.md's {SYNOPSIS_SECTION} section"
            ));
            continue;
        }
        let documented: Vec<&String> = synopses.iter().flat_map(|l| &l.flags).collect();
        let options = help
            .options
            .get(subcommand)
            .unwrap_or_else(|| panic!("no --help options were read for `{subcommand}`"));
        for option in options {
            let is_builtin = option.iter().any(|n| n == "--help" || n == "--version");
            if !is_builtin && !option.iter().any(|n| documented.contains(&n)) {
                problems.push(format!(
                    "README.md:{}: the `{PROGRAM} {subcommand}` synopsis lacks {}, which `{PROGRAM} {subcommand} --help` lists",
                    synopses[0].line,
                    option.join(", ")
                ));
            }
        }
    }
    problems
}

#[test]
fn readme_synopses_match_help() {
    let problems = check(&readme_text(), &real_help());
    assert!(
        problems.is_empty(),
        "README.md and --help disagree ({} problems):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

// ---- The checker catches drift ----------------------------------------------

/// A small CLI as `--help` would describe it.
fn toy_help() -> Help {
    let top = "Usage: steadyhud <COMMAND>\n\nCommands:\n  analyze  Analyse\n  merge    Merge\n  help     Print this message\n\nOptions:\n  -h, --help     Print help\n  -V, --version  Print version\n";
    let analyze = "Usage: steadyhud analyze [OPTIONS] <FILE>\n\nArguments:\n  <FILE>  A log\n\nOptions:\n      --json                   Print JSON\n  -o, --output <OUTPUT>        Output file\n          wrapped description line --not-a-flag\n      --stutter-threshold <X>  θ [default: 0.2]\n  -h, --help                   Print help\n";
    let merge = "Usage: steadyhud merge [OPTIONS] <HIST>...\n\nOptions:\n      --json  Print JSON\n  -h, --help  Print help\n";
    let subcommands = help_subcommands(top);
    let options = BTreeMap::from([
        ("analyze".to_string(), help_options(analyze)),
        ("merge".to_string(), help_options(merge)),
    ]);
    Help {
        subcommands,
        options,
    }
}

const TOY_README: &str = "# toy\n\n## Use\n\n    target/release/steadyhud analyze log.csv --json   # an example\n\n## CLI\n\n    steadyhud analyze FILE [--json] [-o FILE]\n                      [--stutter-threshold X]\n    steadyhud merge HIST... [--json]\n\nProse mentioning steadyhud analyze --nonsense is not a command line.\n";

#[test]
fn parses_help_and_readme() {
    let help = toy_help();
    assert_eq!(help.subcommands, ["analyze", "merge"]);
    assert_eq!(
        help.options["analyze"],
        [
            vec!["--json"],
            vec!["-o", "--output"],
            vec!["--stutter-threshold"],
            vec!["-h", "--help"]
        ]
    );
    let lines = readme_command_lines(TOY_README);
    let summary: Vec<(usize, &str, Vec<&str>, bool)> = lines
        .iter()
        .map(|l| {
            let flags = l.flags.iter().map(String::as_str).collect();
            (l.line, l.subcommand.as_str(), flags, l.is_synopsis)
        })
        .collect();
    assert_eq!(
        summary,
        [
            (5, "analyze", vec!["--json"], false),
            (
                9,
                "analyze",
                vec!["--json", "-o", "--stutter-threshold"],
                true
            ),
            (11, "merge", vec!["--json"], true),
        ]
    );
    assert_eq!(check(TOY_README, &help), Vec::<String>::new());
}

#[test]
fn flags_stop_at_a_bare_double_dash() {
    assert_eq!(
        flags_in("[--log-dir D] [--csv [--histogram] | --json] -- CMD --not-ours"),
        ["--log-dir", "--csv", "--histogram", "--json"]
    );
    assert_eq!(
        flags_in("[-o report.html] [--format auto|plain]"),
        ["-o", "--format"]
    );
    let readme = "## CLI\n\n    steadyhud run [--lib PATH] -- CMD\n                  --cmd-flag\n";
    assert_eq!(readme_command_lines(readme)[0].flags, ["--lib"]);
}

#[test]
fn reports_an_undocumented_option() {
    let readme = TOY_README.replace("\n                      [--stutter-threshold X]", "");
    assert_eq!(
        check(&readme, &toy_help()),
        ["README.md:9: the `steadyhud analyze` synopsis lacks --stutter-threshold, which `steadyhud analyze --help` lists"]
    );
}

#[test]
fn reports_a_flag_help_does_not_list() {
    let readme = TOY_README.replace("merge HIST... [--json]", "merge HIST... [--json] [--csv]");
    assert_eq!(
        check(&readme, &toy_help()),
        ["README.md:11: `steadyhud merge` names --csv, which `steadyhud merge --help` does not list"]
    );
    // Also in example command lines outside the synopsis section.
    let readme = TOY_README.replace("log.csv --json", "log.csv --jsn");
    assert_eq!(
        check(&readme, &toy_help()),
        ["README.md:5: `steadyhud analyze` names --jsn, which `steadyhud analyze --help` does not list"]
    );
}

#[test]
fn reports_a_subcommand_without_synopsis() {
    let readme = TOY_README.replace("    steadyhud merge HIST... [--json]\n", "");
    assert_eq!(
        check(&readme, &toy_help()),
        ["`steadyhud merge` (in `steadyhud --help`) has no synopsis line in README.md's ## CLI section"]
    );
    let readme = TOY_README.replace("steadyhud merge HIST", "steadyhud merj HIST");
    assert_eq!(
        check(&readme, &toy_help()),
        [
            "README.md:11: `steadyhud merj` is not a subcommand of `steadyhud --help` (analyze, merge)",
            "`steadyhud merge` (in `steadyhud --help`) has no synopsis line in README.md's ## CLI section"
        ]
    );
}

/// The real README and binary: dropping one documented flag from the real
/// `compare` synopsis is reported.
#[test]
fn reports_a_flag_removed_from_the_real_readme() {
    let readme = readme_text();
    let compare = readme
        .lines()
        .position(|l| l.trim_start().starts_with("steadyhud compare "))
        .expect("README.md's ## CLI section has a `steadyhud compare` synopsis");
    let broken: String = readme
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let l = if i == compare {
                l.replace(" [--stutter-threshold X]", "")
            } else {
                l.to_string()
            };
            l + "\n"
        })
        .collect();
    let problems = check(&broken, &real_help());
    assert_eq!(
        problems,
        [format!(
            "README.md:{}: the `steadyhud compare` synopsis lacks --stutter-threshold, which `steadyhud compare --help` lists",
            compare + 1
        )]
    );
}
