//! The documents (`docs/*.md`, the README) name only files that exist: every path
//! in backquotes (`src/layer/present.rs`, `crates/log/`, `hooks/counted.rs`,
//! `scripts/demo.sh`) must be in the tree, so a move that forgets its
//! documentation fails here rather than misleading the next reader.

use std::path::{Path, PathBuf};

/// Top-level folders a path may start with; such a path must exist exactly.
const TOP: &[&str] = &[
    "src/",
    "crates/",
    "tests/",
    "scripts/",
    "docs/",
    "shaders/",
    "layer-manifest/",
    "benches/",
    "fuzz/",
    ".ci/",
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("layer-manifest").is_dir())
        .expect("the test runs inside the checkout")
        .to_path_buf()
}

/// Every file of the checkout and every folder holding one (as git sees
/// a tree: an empty folder left behind by a move is not there), as paths
/// relative to its top, folders with a trailing `/`; build output and VCS
/// data left out.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a folder of the checkout") {
            let path = entry.expect("a folder entry").path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == "target"
                || rel == ".git"
                || rel.ends_with("/target")
                || rel.contains("corpus")
            {
                continue;
            }
            if path.is_dir() {
                todo.push(path);
            } else {
                // The file and each folder above it.
                let mut upto = 0;
                while let Some(i) = rel[upto..].find('/') {
                    upto += i + 1;
                    out.push(rel[..upto].to_string());
                }
                out.push(rel);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The backquoted words of `text` that name a file or folder of ours.
fn named_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| !w.contains(char::is_whitespace))
        .filter(|w| !w.contains(['<', '>', '*', '$', '~', '{', ':']))
        .filter(|w| !w.starts_with("target/") && !w.starts_with('/') && !w.starts_with('.'))
        .filter(|w| w.ends_with(".rs") || w.ends_with(".sh") || (w.ends_with('/') && w.len() > 1))
        .map(str::to_string)
        .collect()
}

/// Whether `name` is in `tree`: exactly when it starts at the top, else as
/// the tail of some path (`hooks/counted.rs`, `present.rs`, `wayland/`).
fn exists(tree: &[String], name: &str) -> bool {
    if TOP.iter().any(|t| name.starts_with(t)) {
        return tree.iter().any(|p| p == name);
    }
    let tail = format!("/{name}");
    tree.iter().any(|p| p == name || p.ends_with(&tail))
}

#[test]
fn the_docs_and_readme_name_only_what_is_there() {
    let root = repo_root();
    let tree = tree(&root);
    let mut missing = Vec::new();
    let mut checked = 0;
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("read docs/")
        .map(|e| e.expect("an entry of docs/").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    docs.push("README.md".into());
    for doc in &docs {
        let text = std::fs::read_to_string(root.join(doc)).expect("read the document");
        for name in named_paths(&text) {
            checked += 1;
            if !exists(&tree, &name) {
                missing.push(format!("{doc}: `{name}`"));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} paths found: is the parser right?"
    );
    assert!(
        missing.is_empty(),
        "named but not in the tree:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_check_sees_a_missing_file() {
    let tree = vec![
        "src/".to_string(),
        "src/layer/".to_string(),
        "src/layer/present.rs".to_string(),
    ];
    assert!(exists(&tree, "src/layer/present.rs"));
    assert!(exists(&tree, "layer/present.rs"));
    assert!(exists(&tree, "present.rs"));
    assert!(exists(&tree, "layer/"));
    assert!(!exists(&tree, "src/present.rs"), "a top path is exact");
    assert!(!exists(&tree, "entry.rs"));
    assert_eq!(
        named_paths("see `src/a.rs`, `b.rs` and `x y.rs`, `c/`, `target/release/`, `fn`"),
        ["src/a.rs", "b.rs", "c/"]
    );
}
