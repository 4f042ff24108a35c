//! docs/fleet.md's table of metric families names every family
//! `steadyhud export` writes (and none it does not), with its type.

use std::collections::BTreeMap;

#[test]
fn every_family_is_in_the_fleet_docs() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/fleet.md");
    let text = std::fs::read_to_string(&docs).expect("read docs/fleet.md");
    let documented: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("| `")?;
            let (name, rest) = rest.split_once('`')?;
            let kind = rest.split('|').nth(1)?.trim().trim_matches('`');
            name.starts_with("steadyhud_").then_some((name, kind))
        })
        .collect();
    let known: BTreeMap<&str, &str> = steadyhud_cli::export::families()
        .iter()
        .map(|f| (f.name, f.kind.name()))
        .collect();
    assert_eq!(
        documented, known,
        "docs/fleet.md's table (name, type) vs the exporter's families"
    );
}
