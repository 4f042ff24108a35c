//! `steadyhud --version` names the commit it was built from:
//! `steadyhud 0.1.0 (abc1234 2026-11-24)` (short hash, commit date), so a
//! log or a bug report from a packaged build says exactly what it ran.
//!
//! Read with `git` from the checkout this crate sits in. Outside one (a
//! source tarball, a vendored copy inside some other repository) it is
//! `steadyhud 0.1.0 (unknown)`, unless the builder names the commit in
//! `STEADYHUD_COMMIT` (e.g. `abc1234 2026-11-24`), as a distribution's
//! build from a tarball can.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=STEADYHUD_COMMIT");
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let commit = match std::env::var("STEADYHUD_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => from_git(&manifest_dir).unwrap_or_else(|| "unknown".to_string()),
    };
    let version = std::env::var("CARGO_PKG_VERSION").unwrap();
    println!("cargo:rustc-env=STEADYHUD_LONG_VERSION={version} ({commit})");
}

/// `git` in `dir`, trimmed stdout, `None` on any failure (no git, not a
/// checkout, a repository git refuses to read).
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// `abc1234 2026-11-24` for the checked-out commit of the workspace this
/// crate belongs to; also tells Cargo to build again when HEAD moves.
fn from_git(manifest_dir: &Path) -> Option<String> {
    // The workspace root is two folders up (crates/cli); it must be the top
    // of the repository, else this copy of the source is inside someone
    // else's checkout and its HEAD says nothing about us.
    let workspace = manifest_dir.parent()?.parent()?.canonicalize().ok()?;
    let top = PathBuf::from(git(manifest_dir, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != workspace {
        return None;
    }
    // Rebuild when HEAD moves: HEAD itself (a checkout, a detached HEAD)
    // and, when it names a branch, that branch's loose ref (a commit) and
    // packed-refs (git gc); logs/HEAD (the reflog) too, which every
    // commit, checkout and reset appends to, for a branch whose loose ref
    // did not exist yet. In a worktree HEAD is in the worktree's own git
    // folder and the refs in the shared one: --git-path knows both.
    //
    // Each path is given relative to this crate: a target folder copied to
    // another checkout or worktree (as `cp -r ../main/target/release
    // target/` does) then watches that checkout's own files, or, where the
    // same relative path leads nowhere, a missing file, which Cargo counts
    // as changed. Absolute paths would keep watching the first checkout's
    // HEAD and print its commit forever.
    let here = manifest_dir.canonicalize().ok()?;
    let mut watch = ["HEAD", "logs/HEAD", "packed-refs"]
        .map(String::from)
        .to_vec();
    if let Some(branch) = git(manifest_dir, &["symbolic-ref", "-q", "HEAD"]) {
        watch.push(branch);
    }
    for name in &watch {
        if let Some(p) = git(manifest_dir, &["rev-parse", "--git-path", name]) {
            // A relative answer is relative to the cwd, this crate.
            if let Ok(p) = manifest_dir.join(p).canonicalize() {
                println!("cargo:rerun-if-changed={}", relative(&here, &p).display());
            }
        }
    }
    let line = git(
        manifest_dir,
        &["log", "-1", "--format=%h %cd", "--date=short", "--abbrev=7"],
    )?;
    Some(line)
}

/// `to` as a path relative to the folder `from` (both absolute and
/// canonical): `../../.git/HEAD`.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let (from, to): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in common..from.len() {
        rel.push("..");
    }
    for c in &to[common..] {
        rel.push(c);
    }
    rel
}
