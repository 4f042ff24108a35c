//! The documents (`docs/*.md`, the README) name only files that exist: every path
//! in backquotes (`src/layer/present.rs`, `crates/log/`, `hooks/counted.rs`,
//! `scripts/demo.sh`) must be in the tree, so a move that forgets its
//! documentation fails here rather than misleading the next reader.
//!
//! The same holds for the comments of the Rust code: a backquoted path in a
//! `//`, `///` or `//!` comment must exist, and a section a comment cites as
//! `docs/<file>.md#<anchor>` must be a heading of that document.

use std::path::{Path, PathBuf};

/// Top-level folders a path may start with; such a path must exist exactly.
const TOP: &[&str] = &[
    "src/",
    "crates/",
    "test-programs/",
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

/// Where the Rust files whose comments are checked live: every `.rs` file
/// under these (sources, tests, benches, build scripts, fuzz targets).
const RUST_TOPS: &[&str] = &[
    "src/",
    "crates/",
    "test-programs/",
    "tests/",
    "benches/",
    "fuzz/",
];

fn rust_files(tree: &[String]) -> Vec<&str> {
    tree.iter()
        .map(String::as_str)
        .filter(|p| p.ends_with(".rs") && RUST_TOPS.iter().any(|t| p.starts_with(t)))
        .collect()
}

/// The comments of Rust source `text`: each run of consecutive comment lines
/// (`//`, `///`, `//!`, markers stripped) joined into one text, so a
/// backquoted span may cross a line break, with the run's first line number.
fn comment_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for (i, line) in text.lines().enumerate() {
        let Some(body) = line.trim_start().strip_prefix("//") else {
            open = false;
            continue;
        };
        let body = body.trim_start_matches(['/', '!']);
        if open {
            let block = &mut blocks.last_mut().unwrap().1;
            block.push('\n');
            block.push_str(body);
        } else {
            blocks.push((i + 1, body.to_string()));
            open = true;
        }
    }
    blocks
}

/// GitHub's anchor of a markdown heading's text: lowercase, backquotes and
/// other punctuation dropped (letters, digits, `-` and `_` stay), each space
/// a `-` (`Steady / Mostly Steady / Typical FPS` →
/// `steady--mostly-steady--typical-fps`).
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of every heading of markdown `text`, as GitHub makes them:
/// a `#` line inside fenced code is no heading, and a repeated anchor gets
/// `-1`, `-2`, … (the second `### Input` is `#input-1`).
fn anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let hashes = line.len() - line.trim_start_matches('#').len();
        if fenced || !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = anchor(line[hashes..].trim_end().trim_end_matches('#'));
        let mut a = base.clone();
        let mut n = 0;
        while out.contains(&a) {
            n += 1;
            a = format!("{base}-{n}");
        }
        out.push(a);
    }
    out
}

/// The documents `text` cites as `docs/<file>.md`, each with the `#anchor`
/// that follows it, if any (`docs/metrics.md#stutters` → `docs/metrics.md`
/// and `stutters`); a full stop after it ends the sentence, not the name.
fn cited_docs(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("docs/") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-')) {
            continue; // part of a longer path (`../../docs/`, `x/docs/`)
        }
        let word: String = text[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '#'))
            .collect();
        let word = word.trim_end_matches('.');
        let (file, section) = match word.split_once('#') {
            Some((f, a)) => (f, Some(a.to_string())),
            None => (word, None),
        };
        if file.ends_with(".md") {
            out.push((file.to_string(), section));
        }
    }
    out
}

/// What the comments of Rust file `path` (its text: `text`) name that is not
/// there, one line each, and how many names were checked: backquoted paths
/// missing from `tree` (as the documents' are checked, except that a folder
/// not under a top folder is not checked: comments also name folders outside
/// the checkout, such as a build's `deps/` or an install's `lib32/`), cited
/// documents missing from `tree`, and cited anchors missing from
/// `anchors_of(document)`.
fn comment_problems(
    tree: &[String],
    anchors_of: &dyn Fn(&str) -> Vec<String>,
    path: &str,
    text: &str,
) -> (usize, Vec<String>) {
    let mut checked = 0;
    let mut missing = Vec::new();
    for (line, block) in comment_blocks(text) {
        let ours = |n: &String| !n.ends_with('/') || TOP.iter().any(|t| n.starts_with(t));
        for name in named_paths(&block).into_iter().filter(ours) {
            checked += 1;
            if !exists(tree, &name) {
                missing.push(format!("{path}:{line}: `{name}`"));
            }
        }
        for (doc, section) in cited_docs(&block) {
            checked += 1;
            if !tree.contains(&doc) {
                missing.push(format!("{path}:{line}: {doc}"));
            } else if let Some(a) = section {
                if !anchors_of(&doc).contains(&a) {
                    missing.push(format!("{path}:{line}: {doc}#{a} (no such heading)"));
                }
            }
        }
    }
    (checked, missing)
}

#[test]
fn the_code_comments_name_only_what_is_there() {
    let root = repo_root();
    let tree = tree(&root);
    let anchors_of = |doc: &str| {
        let text = std::fs::read_to_string(root.join(doc)).expect("read the document");
        anchors(&text)
    };
    let mut missing = Vec::new();
    let mut checked = 0;
    for path in rust_files(&tree) {
        let text = std::fs::read_to_string(root.join(path)).expect("read the source");
        let (n, mut m) = comment_problems(&tree, &anchors_of, path, &text);
        checked += n;
        missing.append(&mut m);
    }
    assert!(
        checked > 50,
        "only {checked} names found: is the parser right?"
    );
    assert!(
        missing.is_empty(),
        "named in a comment but not there ({checked} checked):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_comment_check_sees_a_missing_path_and_anchor() {
    assert_eq!(
        anchor("Steady / Mostly Steady / Typical FPS"),
        "steady--mostly-steady--typical-fps"
    );
    assert_eq!(
        anchor("Stutter time (`stutter_time_pct`)"),
        "stutter-time-stutter_time_pct"
    );
    let doc = "# Metrics\n## Stutters\n### Input\n```sh\n# not a heading\n```\n### Input\n";
    assert_eq!(anchors(doc), ["metrics", "stutters", "input", "input-1"]);
    let tree: Vec<String> = [
        "crates/",
        "crates/capture/",
        "crates/capture/src/",
        "crates/capture/src/live.rs",
        "docs/",
        "docs/metrics.md",
    ]
    .map(String::from)
    .to_vec();
    let anchors_of = |_: &str| anchors(doc);
    // Sources as arrays of lines, so that no line of this file is a comment
    // naming something missing.
    let good = [
        "/// Rolling values (`crates/capture/src/live.rs`, `live.rs`, `deps/`),",
        "/// by the rule of docs/metrics.md#stutters (docs/metrics.md#input-1).",
        "fn f() {}",
    ]
    .join("\n");
    let (checked, missing) = comment_problems(&tree, &anchors_of, "good.rs", &good);
    assert_eq!((checked, missing), (4, vec![]));
    let bad = [
        "fn f() {}",
        "",
        "    // Moved: `src/live.rs` and `layer/capture.rs`, see `crates/gone/`",
        "    //! and docs/metrics.md#stutter, or `docs/nothing.md#stutters`.",
        "let s = \"`src/gone.rs` in a string, docs/metrics.md#nowhere\";",
        "/// `docs/metrics.md` and docs/metrics.md#stutters are there.",
    ]
    .join("\n");
    let (checked, missing) = comment_problems(&tree, &anchors_of, "bad.rs", &bad);
    assert_eq!(
        missing,
        [
            "bad.rs:3: `src/live.rs`",
            "bad.rs:3: `layer/capture.rs`",
            "bad.rs:3: `crates/gone/`",
            "bad.rs:3: docs/metrics.md#stutter (no such heading)",
            "bad.rs:3: docs/nothing.md",
        ]
    );
    assert_eq!(checked, 7);
}
