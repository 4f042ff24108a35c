//! The contract keys (docs/metrics.md#the-json-keys), in order: every
//! summary and `analyze --json` output must carry them. Read from the spec
//! text itself (docs/metrics.md, "The JSON keys"), not from the code under
//! test, for the tests that check outputs against it.

/// The keys docs/metrics.md lists under "The JSON keys", in its order.
pub fn metrics_md_keys() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("layer-manifest").is_dir())
        .expect("the test runs inside the checkout")
        .join("docs/metrics.md");
    let text = std::fs::read_to_string(path).expect("read docs/metrics.md");
    let section = text
        .split("\n## The JSON keys\n")
        .nth(1)
        .expect("docs/metrics.md has a section \"The JSON keys\"");
    // The list is the paragraph after "... carry these keys, in this order ...:".
    let after = section
        .split("in this order")
        .nth(1)
        .expect("the section says \"in this order\"");
    let list = after.split("\n\n").nth(1).expect("the key list paragraph");
    let keys: Vec<String> = list
        .split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect();
    assert!(
        keys.len() >= 10,
        "too few keys in docs/metrics.md: {keys:?}"
    );
    keys
}
