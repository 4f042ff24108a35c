//! The configuration table of docs/cli.md names every key the layer knows
//! (and no key it does not), so a new key cannot go undocumented.

use std::collections::BTreeSet;

#[test]
fn every_key_is_in_the_docs_table() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
    let text = std::fs::read_to_string(&docs).expect("read docs/cli.md");
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("Configuration keys"))
        .expect("docs/cli.md has a `## Configuration keys` section");
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
