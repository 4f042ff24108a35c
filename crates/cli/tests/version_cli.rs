//! `steadyhud --version` names the version and the commit it was built from
//! (crates/cli/build.rs): `steadyhud 0.1.0 (abc1234 2026-11-24)` from a
//! checkout, `steadyhud 0.1.0 (unknown)` from a source tree without git.

use std::path::Path;
use std::process::Command;

fn version_line(flag: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg(flag)
        .output()
        .expect("run steadyhud");
    assert!(out.status.success(), "steadyhud {flag} failed: {out:?}");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim_end()
        .to_string()
}

/// The commit of the checkout this test was built in, as `git log` gives
/// it, or `None` outside one (or without git).
fn head() -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("git")
        .args(["log", "-1", "--format=%h %cd", "--date=short", "--abbrev=7"])
        .current_dir(&root)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

#[test]
fn version_names_the_commit() {
    let line = version_line("--version");
    let prefix = format!("steadyhud {} (", env!("CARGO_PKG_VERSION"));
    assert!(
        line.starts_with(&prefix),
        "{line:?} should start with {prefix:?}"
    );
    assert!(line.ends_with(')'), "{line:?}");
    assert_eq!(version_line("-V"), line, "-V and --version agree");
    let inner = &line[prefix.len()..line.len() - 1];
    match head() {
        Some(head) if std::env::var_os("STEADYHUD_COMMIT").is_none() => {
            let hash = inner.split(' ').next().unwrap();
            assert!(
                hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()),
                "{line:?}: no short commit hash"
            );
            let date = inner.split(' ').nth(1).unwrap_or("");
            assert!(
                date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-',
                "{line:?}: no commit date YYYY-MM-DD"
            );
            // The build must follow HEAD (build.rs's rerun-if-changed):
            // built and tested at the same commit, the two agree.
            assert_eq!(inner, head, "{line:?} is not the checked-out commit");
        }
        Some(_) => {} // STEADYHUD_COMMIT named it instead
        None => assert_eq!(inner, "unknown", "{line:?}"),
    }
}
