//! The configuration table of docs/cli.md names every key the layer knows
//! (and no key it does not), so a new key cannot go undocumented; its
//! HUD section names every row and preset the same way.

use std::collections::BTreeSet;

/// The `## TITLE` section of docs/cli.md, up to the next `## `.
fn cli_section(title: &str) -> String {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
    let text = std::fs::read_to_string(&docs).expect("read docs/cli.md");
    text.split("\n## ")
        .find(|s| s.starts_with(title))
        .unwrap_or_else(|| panic!("docs/cli.md has a `## {title}` section"))
        .to_string()
}

#[test]
fn every_key_is_in_the_docs_table() {
    let section = cli_section("Configuration keys");
    let documented: BTreeSet<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .collect();
    let known: BTreeSet<&str> = steadyhud_config::KEYS.into_iter().collect();
    assert_eq!(
        documented, known,
        "docs/cli.md's table vs steadyhud_config::KEYS"
    );
}

/// The "HUD presets and rows" section names every row `hud_rows` takes
/// (and none it does not), and its preset table lists each preset's rows.
#[test]
fn every_hud_row_and_preset_is_in_the_docs() {
    let section = cli_section("HUD presets and rows");
    let (table, list) = section
        .split_once("The row\nnames")
        .expect("the preset table, then the row names");
    let ticked = |s: &str| -> BTreeSet<String> {
        s.split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| {
                w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            })
            .map(str::to_string)
            .collect()
    };
    let listed = ticked(list.split("\nColours").next().unwrap_or(list));
    let known: BTreeSet<String> = steadyhud_config::hud::row_names()
        .into_iter()
        .map(str::to_string)
        .collect();
    let extra: BTreeSet<String> = ["hud_rows", "hud_sensor_rows"].map(String::from).into();
    let listed: BTreeSet<String> = listed.difference(&extra).cloned().collect();
    assert_eq!(listed, known, "docs/cli.md's row names vs hud::row_names()");
    for (i, p) in steadyhud_config::hud::PRESETS.iter().enumerate() {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("| {i} {}", p.name)))
            .unwrap_or_else(|| panic!("no table row for preset {i} {}", p.name));
        let rows: Vec<String> = line
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        assert_eq!(rows, p.rows, "preset {i}'s rows in docs/cli.md");
    }
}
