//! What the GL library's tests share: the libraries and programs they
//! preload and run, an independent swap counter (`tests/gl/count_swaps.c`,
//! built with the system's C compiler), and the HUD's pixels in a
//! screenshot.

use super::{built_library, i686, i686_build, profile_dir, Screenshot};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The GL library of this test run (in i686 mode, its 32-bit build), or
/// the one `STEADYHUD_TEST_GL_LIBRARY` names (`scripts/test.sh`: the
/// 32-bit build with frame pointers forced).
pub fn gl_library() -> PathBuf {
    match std::env::var_os("STEADYHUD_TEST_GL_LIBRARY") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => built_library("libsteadyhud_gl.so"),
    }
}

/// The GL test program (`test-programs/gltest`; in i686 mode, its 32-bit build).
pub fn gltest_exe() -> PathBuf {
    if i686() {
        return i686_build("steadyhud-gltest");
    }
    let exe = profile_dir().join("steadyhud-gltest");
    assert!(
        exe.is_file(),
        "{} was not built: run the tests from the workspace root",
        exe.display()
    );
    exe
}

/// The swap counter (`tests/gl/count_swaps.c`), built once per test
/// process.
pub fn count_swaps_lib() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| test_lib("count_swaps")).clone()
}

/// The GL query counter (`tests/gl/count_gets.c`), built once per test
/// process.
pub fn count_gets_lib() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| test_lib("count_gets")).clone()
}

/// `tests/gl/<stem>.c` built as a preloadable library for this run's
/// architecture.
fn test_lib(stem: &str) -> PathBuf {
    let dir = profile_dir().join("gl-test-libs");
    std::fs::create_dir_all(&dir).expect("create gl-test-libs");
    let out = dir.join(format!("{stem}-{}.so", std::process::id()));
    let flags: &[&str] = if i686() {
        &["-m32", "-shared", "-fPIC"]
    } else {
        &["-shared", "-fPIC"]
    };
    super::build_c(&format!("tests/gl/{stem}.c"), &out, flags, &["-ldl"]);
    out
}

/// `LD_PRELOAD` of `libs`, in order.
pub fn preload(cmd: &mut Command, libs: &[&Path]) {
    let list: Vec<String> = libs.iter().map(|l| l.display().to_string()).collect();
    cmd.env("LD_PRELOAD", list.join(":"));
}

/// What the swap counter wrote at the game's exit.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SwapCounts {
    pub glx: u64,
    pub egl: u64,
}

impl SwapCounts {
    /// Reads the counter's file; panics naming it when it is missing.
    pub fn read(path: &Path) -> SwapCounts {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
            panic!(
                "the swap counter wrote no {} ({e}): did the game exit cleanly?",
                path.display()
            )
        });
        let mut c = SwapCounts::default();
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("glx", n)) => c.glx = n.parse().expect("glx count"),
                Some(("egl", n)) => c.egl = n.parse().expect("egl count"),
                _ => {}
            }
        }
        c
    }
}

/// The HUD's label colour as the GL library writes it (sRGB-encoded
/// values into a UNORM back buffer).
pub fn label_rgb() -> [u8; 3] {
    let c = steadyhud::hud::view::colors::LABEL;
    [0, 1, 2].map(|i| (c[i] * 255.0).round() as u8)
}

/// Pixels of the HUD's label colour in the rectangle `[x0, y0, x1, y1)`.
pub fn label_pixels(shot: &Screenshot, rect: [u32; 4]) -> usize {
    let want = label_rgb();
    let mut n = 0;
    for y in rect[1]..rect[3].min(shot.height) {
        for x in rect[0]..rect[2].min(shot.width) {
            if super::close(shot.pixel(x, y), want, 3) {
                n += 1;
            }
        }
    }
    n
}

/// A mesa-utils program (`glxgears`, `es2gears_x11`, …) of the games'
/// width: Debian installs both widths side by side as
/// `<name>.<multiarch tuple>` (mesa-utils-bin and mesa-utils-bin:i386).
pub fn mesa_util(name: &str) -> String {
    if i686() {
        format!("{name}.i386-linux-gnu")
    } else {
        name.to_string()
    }
}

/// The 64-bit layer of this test run, for `steadyhud run --lib` (which
/// finds the 32-bit libraries itself, as an installed one would).
pub fn layer_library_64() -> PathBuf {
    let dir = profile_dir();
    [
        dir.join("deps/libsteadyhud.so"),
        dir.join("libsteadyhud.so"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .expect("the 64-bit layer library was not built")
}
