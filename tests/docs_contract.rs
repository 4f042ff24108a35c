//! docs/metrics.md and the declarations it documents say the same, both
//! ways: the session log's column table is `steadyhud_log::columns::all()`
//! (names, units, kinds, in order), and its counter table explains every
//! declared counter. (The summary's keys are held to the
//! metric catalog by `metrics_examples::json_keys_are_the_contract`.)

use steadyhud_log::columns::{self, Kind};

fn metrics_md() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join("docs/metrics.md")).expect("read docs/metrics.md")
}

/// The rows of the table under `## Session log columns`: (column, unit,
/// kind).
fn documented_columns(doc: &str) -> Vec<(String, String, String)> {
    let section = doc
        .split("\n## Session log columns\n")
        .nth(1)
        .expect("docs/metrics.md has a section \"Session log columns\"");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            (
                cells[0].trim_matches('`').to_string(),
                cells[1].to_string(),
                cells[2].to_string(),
            )
        })
        .collect()
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Frame => "frame",
        Kind::Counter => "counter",
        Kind::Derived => "derived",
        Kind::Gpu => "GPU",
        Kind::Display => "display",
        Kind::Latency => "latency",
        Kind::Sensor => "reading",
    }
}

#[test]
fn the_column_table_is_the_declaration() {
    let documented = documented_columns(&metrics_md());
    let declared: Vec<(String, String, String)> = columns::all()
        .map(|c| {
            (
                c.name.to_string(),
                c.unit.to_string(),
                kind_word(c.kind).to_string(),
            )
        })
        .collect();
    for d in &declared {
        assert!(
            documented.contains(d),
            "declared but not in docs/metrics.md: {d:?}"
        );
    }
    for d in &documented {
        assert!(
            declared.contains(d),
            "in docs/metrics.md but not declared: {d:?}"
        );
    }
    assert_eq!(documented, declared, "the same columns, in another order");
}

/// The check sees a column the docs lack and one they have too many.
#[test]
fn the_check_sees_a_missing_and_an_extra_column() {
    let doc = "x\n## Session log columns\n\n| column | unit | kind | meaning |\n|---|---|---|---|\n| `frame` | count | frame | i |\n| `bogus_ms` | ms | counter | b |\n\n## Next\n";
    let got = documented_columns(doc);
    assert_eq!(
        got,
        [
            (
                "frame".to_string(),
                "count".to_string(),
                "frame".to_string()
            ),
            (
                "bogus_ms".to_string(),
                "ms".to_string(),
                "counter".to_string()
            )
        ]
    );
    assert!(!columns::all().any(|c| c.name == "bogus_ms"));
    assert!(columns::all().any(|c| !got.iter().any(|g| g.0 == c.name)));
}

/// The column names of the table under `### Counter columns` (a row may
/// name several: `` `submit_ms`, `submits` ``), in order.
fn documented_counter_columns(doc: &str) -> Vec<String> {
    let section = doc
        .split("\n### Counter columns\n")
        .nth(1)
        .expect("docs/metrics.md has a section \"Counter columns\"");
    let table = section.split("\n\n").find(|p| p.starts_with("| column"));
    table
        .expect("a table in \"Counter columns\"")
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            let first = l.trim_matches('|').split('|').next().unwrap_or("");
            first
                .split(',')
                .map(|n| n.trim().trim_matches('`').to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The counter table explains every declared counter and `cpu_busy_ms`,
/// no other column, in the log's order.
#[test]
fn the_counter_table_is_the_declared_counters() {
    let documented = documented_counter_columns(&metrics_md());
    let declared: Vec<String> = columns::all()
        .filter(|c| matches!(c.kind, Kind::Counter | Kind::Derived))
        .map(|c| c.name.to_string())
        .collect();
    assert_eq!(documented, declared);
}
