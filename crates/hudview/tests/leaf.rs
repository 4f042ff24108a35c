//! The view depends on nothing that runs (issue 41): walking the
//! workspace manifests from `steadyhud-hudview` through its normal
//! dependencies never reaches the capture core, the control socket, the
//! input crate or anything that loads a driver library (NVML through
//! `libloading`).

use std::collections::BTreeSet;
use std::path::Path;

/// The `[dependencies]` names of a manifest.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            let name = line
                .split(['.', '=', ' '])
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

#[test]
fn the_view_reaches_nothing_that_runs() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut seen = BTreeSet::new();
    let mut todo = vec!["hudview".to_string()];
    while let Some(dir) = todo.pop() {
        let manifest = std::fs::read_to_string(crates.join(&dir).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{dir}/Cargo.toml: {e}"));
        for dep in dependencies(&manifest) {
            if seen.insert(dep.clone()) {
                if let Some(local) = dep.strip_prefix("steadyhud-") {
                    todo.push(local.to_string());
                }
            }
        }
    }
    for forbidden in [
        "steadyhud-capture",
        "steadyhud-control",
        "steadyhud-input",
        "libloading",
    ] {
        assert!(
            !seen.contains(forbidden),
            "hudview reaches {forbidden}: {seen:?}"
        );
    }
    assert!(seen.contains("steadyhud-live"), "{seen:?}");
}
