//! What this test run was built with: the profile folder, the workspace's
//! binaries (`steadyhud`, the test app) and cdylibs (the layer, the GL
//! library), C test programs built with gcc, and the switch for the 32-bit
//! run ([`ARCH_SWITCH`]) with the 32-bit builds and game environment it
//! uses.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The profile folder this test was built into (`target/<profile>/`); a
/// test binary runs from its `deps/`. Read once: in a mount namespace of
/// its own (tests/packages.rs) `/proc/self/exe` can name the binary by the
/// path of the namespace it left (seen in a chroot), so a test that enters
/// one calls this first.
pub fn profile_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary knows its path");
        let deps = exe.parent().expect("the test binary is in a folder");
        deps.parent().unwrap_or(deps).to_path_buf()
    })
    .clone()
}

/// A binary of another crate of the workspace, built in this test's
/// profile. `cargo test` at the workspace root builds them all (the CLI's
/// and the test app's packages have integration tests of their own, so
/// Cargo builds their binaries before any test runs). Panics with the way
/// out when it is missing.
fn workspace_exe(name: &str) -> PathBuf {
    let exe = profile_dir().join(name);
    assert!(
        exe.is_file(),
        "{} was not built: run the tests from the workspace root (`cargo test --release`), \
         or build it first with `cargo build --release`",
        exe.display()
    );
    exe
}

/// Path of the `steadyhud` CLI built for this test run.
pub fn steadyhud_exe() -> PathBuf {
    workspace_exe("steadyhud")
}

/// Path of the scripted test app built for this test run (in [`i686`]
/// mode: its 32-bit build).
pub fn testapp_exe() -> PathBuf {
    if i686() {
        return i686_build("steadyhud-testapp");
    }
    workspace_exe("steadyhud-testapp")
}

/// The switch for the 32-bit run: `STEADYHUD_TEST_ARCH=i686` makes the
/// games of the tests 32-bit processes (the test app, the layer it loads,
/// vkcube and vkd3d-gears, on 32-bit lavapipe) while everything on the
/// host side (this harness, the `steadyhud` CLI, the log readers) stays
/// 64-bit, as for a 32-bit game on a 64-bit system. Unset (or `x86_64`):
/// the normal run, everything 64-bit.
pub const ARCH_SWITCH: &str = "STEADYHUD_TEST_ARCH";

/// Where `scripts/build-i686.sh` leaves the 32-bit builds and programs.
fn i686_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/i686")
}

/// The 32-bit Vulkan driver (lavapipe) the 32-bit games use.
pub const I686_ICD: &str = "/usr/share/vulkan/icd.d/lvp_icd.i686.json";

/// Whether this run's games are 32-bit ([`ARCH_SWITCH`]`=i686`).
pub fn i686() -> bool {
    let v = std::env::var_os(ARCH_SWITCH).unwrap_or_default();
    match v.to_str() {
        Some("" | "x86_64") => false,
        Some("i686") => true,
        _ => panic!("{ARCH_SWITCH}={v:?}: the choices are i686 (32-bit games) or unset (64-bit)"),
    }
}

/// For a test whose game has no 32-bit build here: in [`i686`] mode,
/// prints `SKIPPED <test> (STEADYHUD_TEST_ARCH=i686): <why>` (straight to
/// stderr, past the capture) and returns true, and the test returns; the
/// 64-bit run covers it. Not a missing tool, so not a failure under
/// `STEADYHUD_REQUIRE_TOOLS` either.
pub fn skip_in_i686(why: &str) -> bool {
    if !i686() {
        return false;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("(test)")
        .to_string();
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test} ({ARCH_SWITCH}=i686): {why}"
    );
    true
}

/// `name` as `scripts/build-i686.sh` built it for i686. Panics, saying to
/// run the script, when it is missing or older than a source file it was
/// built from (cargo's dep-info file next to it lists them): the 64-bit
/// side is rebuilt by `cargo test`, the 32-bit side only by the script.
pub(super) fn i686_build(name: &str) -> PathBuf {
    let dir = i686_dir().join("i686-unknown-linux-gnu/release");
    let exe = dir.join(name);
    let fix = "run scripts/build-i686.sh (as root) first";
    let built = std::fs::metadata(&exe)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{ARCH_SWITCH}=i686: {} ({e}): {fix}", exe.display()));
    let stem = name.strip_suffix(".so").unwrap_or(name);
    let deps = dir.join(format!("{stem}.d"));
    let text = std::fs::read_to_string(&deps)
        .unwrap_or_else(|e| panic!("{ARCH_SWITCH}=i686: {} ({e}): {fix}", deps.display()));
    let sources = text.split_once(": ").map_or("", |(_, s)| s);
    for src in sources.split_whitespace() {
        let changed = std::fs::metadata(src).and_then(|m| m.modified());
        if changed.is_ok_and(|t| t > built) {
            panic!(
                "{ARCH_SWITCH}=i686: {} is older than {src}: {fix}",
                exe.display()
            );
        }
    }
    exe
}

/// The layer library this test run was built with (see [`built_library`]).
pub fn layer_library() -> PathBuf {
    built_library("libsteadyhud.so")
}

/// The cdylib `name` this test run was built with. `cargo test` compiles
/// it into `target/<profile>/deps/` but only `cargo build` copies it up
/// next to the binaries, so `deps/` (always the newest build) comes first.
/// Panics with an explanation when neither exists. In [`i686`] mode: the
/// 32-bit build.
pub fn built_library(name: &str) -> PathBuf {
    if i686() {
        return i686_build(name);
    }
    let dir = profile_dir();
    let candidates = [dir.join("deps").join(name), dir.join(name)];
    for lib in &candidates {
        if lib.is_file() {
            return lib.clone();
        }
    }
    panic!(
        "the library {name} was not built (looked at {:?}): its crate must keep crate-type \
         cdylib; run the tests from the workspace root, or `cargo build` (same profile) first",
        candidates
    );
}

/// What makes a [`Harness::command`] start the 32-bit game in [`i686`]
/// mode: the 32-bit lavapipe as the only driver, and the 32-bit vkcube and
/// vkd3d-gears (unpacked by `scripts/build-i686.sh` into
/// `target/i686/vt32/`) first in `PATH`, so `command("vkcube")` runs them.
/// The 64-bit tools the tests start (the `steadyhud` CLI, by its absolute
/// path) use no Vulkan driver.
pub(super) fn i686_game_env(c: &mut Command) {
    let bin = i686_dir().join("vt32/usr/bin");
    assert!(
        bin.join("vkcube").is_file() && bin.join("vkd3d-gears").is_file(),
        "{ARCH_SWITCH}=i686: no 32-bit vkcube and vkd3d-gears in {}: run scripts/build-i686.sh \
         (as root) first",
        bin.display()
    );
    let mut path = vec![bin];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    c.env("VK_ICD_FILENAMES", I686_ICD)
        .env("PATH", std::env::join_paths(path).expect("PATH folders"));
}

/// Builds the test's C source `src` (relative to the checkout) into `out`
/// with gcc: `flags` before the source (e.g. `-shared -fPIC`, `-m32`),
/// `libs` after it. Panics naming the source when gcc fails.
pub fn build_c(src: &str, out: &Path, flags: &[&str], libs: &[&str]) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
    let status = Command::new("gcc")
        .args(flags)
        .args(["-O2", "-Wall", "-o"])
        .arg(out)
        .arg(&src)
        .args(libs)
        .status()
        .expect("run gcc (the build set installs it)");
    assert!(status.success(), "gcc could not build {}", src.display());
}
