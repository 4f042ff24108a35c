//! The release packages as a gamer installs them: `scripts/package.sh`
//! run on what this `cargo test` built (and the 32-bit layer of
//! `scripts/build-i686.sh`), then
//! - the two .debs (`steadyhud` amd64 and i386, Multi-Arch: same):
//!   their fields and files; `dpkg -i` of both at once; the files where
//!   the manifest says; Debian's 64-bit vkcube and its 32-bit one
//!   (`vulkan-tools:i386`, unpacked) with `STEADYHUD=1`, validation and
//!   nothing in the user's home: no `Validation Error`, presents − 1 log
//!   rows, the HUD in a screenshot taken while each runs (and none without
//!   the layer); `DISABLE_STEADYHUD=1` keeping both out; a 32-bit and a
//!   64-bit Vulkan program each mapping its own library through the one
//!   manifest's `/usr/$LIB/`; `dpkg -r` of both leaving no file of theirs
//!   behind.
//!   dpkg runs in a mount namespace of this test's own, with /usr and /var
//!   overlays, so the packages are really installed for everything the
//!   test starts while every other process still sees the system without
//!   them: tests run beside it (cargo-nextest runs test binaries in
//!   parallel; other checkouts on the same machine), and one of them checks
//!   that an uninstalled layer is gone. A failed run leaves nothing
//!   installed either;
//! - the tarball: its layout, and `install.sh` / `uninstall.sh` for a user,
//!   with the same vkcube checks (both widths) against its user-level
//!   manifest.
//!
//! Needs root, dpkg with the i386 architecture, cargo-deb, the 32-bit
//! library, vkcube and Xvfb, gcc -m32: without one, `SKIPPED` (a failure
//! under `STEADYHUD_REQUIRE_TOOLS=1`).

mod common;
mod require;
use common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Where scripts/build-i686.sh leaves the 32-bit layer.
const LIB32: &str = "target/i686/i686-unknown-linux-gnu/release/libsteadyhud.so";
/// Debian's 32-bit vkcube, unpacked there by scripts/build-i686.sh.
const VKCUBE32: &str = "target/i686/vt32/usr/bin/vkcube";
const MANIFEST: &str = "/usr/share/vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json";
const LIBRARY_PATH: &str = "/usr/$LIB/steadyhud/libsteadyhud.so";
/// What glibc's dlopen makes of `$LIB` on Debian, per architecture.
const LIB64_DIR: &str = "lib/x86_64-linux-gnu";
const LIB32_DIR: &str = "lib/i386-linux-gnu";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn output(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("run {:?}: {e}", cmd.get_program()))
}

/// Runs `cmd`, panics with its output unless it succeeds; its stdout.
fn ok(cmd: &mut Command) -> String {
    let out = output(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What `scripts/package.sh` made in target/dist/.
struct Dist {
    deb64: PathBuf,
    deb32: PathBuf,
    tarball: PathBuf,
}

/// Whether the packages can be built here; else one [`require::skip_or_fail`].
fn can_package() -> bool {
    if !require::programs(&[
        ("dpkg", "dpkg"),
        ("dpkg-deb", "dpkg"),
        ("dpkg-shlibdeps", "dpkg-dev"),
        ("readelf", "binutils"),
    ]) {
        return false;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if !Command::new(&cargo)
        .args(["deb", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        require::skip_or_fail(
            "cargo-deb is not installed (cargo install --locked cargo-deb --version 3.8.0; \
             scripts/package.sh installs it when missing)",
        );
        return false;
    }
    if !repo().join(LIB32).is_file() {
        require::skip_or_fail(&format!(
            "the 32-bit layer {LIB32} is not built: run scripts/build-i686.sh first (as root)"
        ));
        return false;
    }
    true
}

/// `scripts/package.sh` once per test binary, on this test run's CLI and
/// layer (no second build); `None` (after a skip) when it cannot run.
fn dist() -> Option<&'static Dist> {
    static DIST: OnceLock<Option<Dist>> = OnceLock::new();
    DIST.get_or_init(|| {
        if !can_package() {
            return None;
        }
        let out = output(
            Command::new(repo().join("scripts/package.sh"))
                .arg("--cli")
                .arg(steadyhud_exe())
                .arg("--lib64")
                .arg(layer_library())
                .current_dir(repo()),
        );
        let log = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "scripts/package.sh failed:\n{log}");
        let d = repo().join("target/dist");
        let dist = Dist {
            deb64: d.join(format!("steadyhud_{VERSION}-1_amd64.deb")),
            deb32: d.join(format!("steadyhud_{VERSION}-1_i386.deb")),
            tarball: d.join(format!("steadyhud-{VERSION}-linux.tar.gz")),
        };
        for f in [
            &dist.deb64,
            &dist.deb32,
            &dist.tarball,
            &d.join("SHA256SUMS"),
        ] {
            assert!(f.is_file(), "{} not made:\n{log}", f.display());
        }
        Some(dist)
    })
    .as_ref()
}

fn field(deb: &Path, name: &str) -> String {
    ok(Command::new("dpkg-deb").arg("--field").arg(deb).arg(name))
        .trim()
        .to_string()
}

/// The files (not folders) of a .deb, as absolute paths.
fn deb_files(deb: &Path) -> Vec<String> {
    ok(Command::new("dpkg-deb").arg("--contents").arg(deb))
        .lines()
        .filter(|l| l.starts_with('-'))
        .map(|l| {
            l.rsplit(' ')
                .next()
                .unwrap()
                .trim_start_matches('.')
                .to_string()
        })
        .collect()
}

/// ELF class of a file: 1 = 32-bit, 2 = 64-bit.
fn elf_class(p: &Path) -> u8 {
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
    assert_eq!(&bytes[..4], b"\x7fELF", "{} is not ELF", p.display());
    bytes[4]
}

/// No symbol table, no debug info: what a package should ship.
fn assert_stripped(p: &Path) {
    let sections = ok(Command::new("readelf").args(["-S", "--wide"]).arg(p));
    assert!(
        !sections.contains(".symtab") && !sections.contains(".debug_"),
        "{} is not stripped:\n{sections}",
        p.display()
    );
}

#[test]
fn debs_are_one_multiarch_package_with_the_files_in_place() {
    let Some(dist) = dist() else { return };
    for (deb, arch) in [(&dist.deb64, "amd64"), (&dist.deb32, "i386")] {
        assert_eq!(field(deb, "Package"), "steadyhud");
        assert_eq!(field(deb, "Version"), format!("{VERSION}-1"));
        assert_eq!(field(deb, "Architecture"), arch);
        assert_eq!(field(deb, "Multi-Arch"), "same", "{}", deb.display());
        assert!(field(deb, "Depends").contains("libc6"), "{}", deb.display());
    }
    // Each says what it holds: the i386 one only the 32-bit layer.
    let (d64, d32) = (
        field(&dist.deb64, "Description"),
        field(&dist.deb32, "Description"),
    );
    assert!(d64.contains("command line"), "{d64}");
    assert!(
        d32.starts_with("32-bit Vulkan layer") && !d32.contains("command line:"),
        "{d32}"
    );
    // Rewriting the i386 description keeps every control member cargo-deb
    // made (md5sums too, in versions that write them).
    let members = |deb: &Path| {
        let tar = ok(Command::new("sh")
            .arg("-c")
            .arg("dpkg-deb --ctrl-tarfile \"$0\" | tar -t")
            .arg(deb));
        let mut m: Vec<String> = tar
            .lines()
            .map(|l| l.trim_start_matches("./").to_string())
            .collect();
        m.retain(|l| !l.is_empty());
        m.sort();
        m
    };
    let m64 = members(&dist.deb64);
    assert!(m64.contains(&"control".to_string()), "{m64:?}");
    assert_eq!(members(&dist.deb32), m64);
    let files64 = deb_files(&dist.deb64);
    let files32 = deb_files(&dist.deb32);
    let lib64 = format!("/usr/{LIB64_DIR}/steadyhud/libsteadyhud.so");
    let lib32 = format!("/usr/{LIB32_DIR}/steadyhud/libsteadyhud.so");
    let copyright = "/usr/share/doc/steadyhud/copyright".to_string();
    let gl = |lib: &str| lib.replace("libsteadyhud.so", "libsteadyhud_gl.so");
    let mut want64 = vec![
        "/usr/bin/steadyhud".to_string(),
        lib64.clone(),
        gl(&lib64),
        MANIFEST.to_string(),
        copyright.clone(),
    ];
    let mut want32 = vec![lib32.clone(), gl(&lib32), MANIFEST.to_string(), copyright];
    for (mut got, want) in [(files64, &mut want64), (files32, &mut want32)] {
        got.sort();
        want.sort();
        assert_eq!(&got, want);
    }

    // The files both architectures ship must be the same bytes, or dpkg
    // refuses the second one.
    let tmp = tempfile::tempdir().unwrap();
    let (x64, x32) = (tmp.path().join("amd64"), tmp.path().join("i386"));
    for (deb, dir) in [(&dist.deb64, &x64), (&dist.deb32, &x32)] {
        ok(Command::new("dpkg-deb").arg("-x").arg(deb).arg(dir));
    }
    for shared in [MANIFEST, "/usr/share/doc/steadyhud/copyright"] {
        let rel = shared.trim_start_matches('/');
        assert_eq!(
            std::fs::read(x64.join(rel)).unwrap(),
            std::fs::read(x32.join(rel)).unwrap(),
            "{shared} differs between the architectures"
        );
    }

    // The manifest: the template of layer-manifest/ with the library under
    // /usr/$LIB/ (one manifest, each process its own library).
    let rel = MANIFEST.trim_start_matches('/');
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(x64.join(rel)).unwrap()).unwrap();
    let mut template: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("layer-manifest/VK_LAYER_STEADYHUD_overlay.json"))
            .unwrap(),
    )
    .unwrap();
    template["layer"]["library_path"] = LIBRARY_PATH.into();
    assert_eq!(manifest, template);
    assert_eq!(manifest["layer"]["enable_environment"]["STEADYHUD"], "1");
    assert_eq!(
        manifest["layer"]["disable_environment"]["DISABLE_STEADYHUD"],
        "1"
    );

    // Each library is of its architecture, and stripped.
    let l64 = x64.join(lib64.trim_start_matches('/'));
    let l32 = x32.join(lib32.trim_start_matches('/'));
    assert_eq!(elf_class(&l64), 2, "the amd64 package's library is 64-bit");
    assert_eq!(elf_class(&l32), 1, "the i386 package's library is 32-bit");
    for f in [&l64, &l32, &x64.join("usr/bin/steadyhud")] {
        assert_stripped(f);
    }
}

/// A small Vulkan program (C, so it builds for i386 too): loads the loader
/// with dlopen, creates an instance (the loader loads the layers then),
/// and prints each libsteadyhud it has mapped as `probe: mapped PATH`.
const PROBE_C: &str = r#"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <vulkan/vulkan.h>
int main(void) {
    void *vk = dlopen("libvulkan.so.1", RTLD_NOW);
    if (!vk) { fprintf(stderr, "probe: %s\n", dlerror()); return 2; }
    PFN_vkGetInstanceProcAddr gipa =
        (PFN_vkGetInstanceProcAddr)dlsym(vk, "vkGetInstanceProcAddr");
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO };
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo info = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO };
    info.pApplicationInfo = &app;
    VkInstance instance;
    VkResult r = create(&info, NULL, &instance);
    printf("probe: vkCreateInstance %d\n", (int)r);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (path && strstr(path, "libsteadyhud")) printf("probe: mapped %s", path);
    }
    if (r == VK_SUCCESS) {
        PFN_vkDestroyInstance destroy =
            (PFN_vkDestroyInstance)gipa(instance, "vkDestroyInstance");
        destroy(instance, NULL);
    }
    return r == VK_SUCCESS ? 0 : 1;
}
"#;

/// The probe built for 64 and 32 bits in `dir`; `None` (after a skip) when
/// gcc cannot build a 32-bit program.
fn build_probes(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    if !require::program("gcc", "gcc") {
        return None;
    }
    let src = dir.join("probe.c");
    std::fs::write(&src, PROBE_C).unwrap();
    let mut built = Vec::new();
    for (flag, name) in [("-m64", "probe64"), ("-m32", "probe32")] {
        let exe = dir.join(name);
        let out = output(
            Command::new("gcc")
                .arg(flag)
                .arg("-O1")
                .arg(&src)
                .arg("-o")
                .arg(&exe)
                .arg("-ldl"),
        );
        if !out.status.success() {
            require::skip_or_fail(&format!(
                "gcc {flag} cannot build a Vulkan program (apt-get install gcc-multilib \
                 libvulkan-dev): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return None;
        }
        built.push(exe);
    }
    let probe32 = built.pop().unwrap();
    Some((built.pop().unwrap(), probe32))
}

/// The libsteadyhud files a probe run mapped (each once; a library is
/// mapped in several segments).
fn mapped(out: &RunOutput) -> Vec<String> {
    let mut files: Vec<String> = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("probe: mapped "))
        .map(|p| p.trim().to_string())
        .collect();
    files.sort();
    files.dedup();
    files
}

/// This thread, and every process it starts from now on, in a mount
/// namespace of its own in which /usr and /var are overlays whose changes
/// land in `changes` and vanish with the namespace. The rest of the
/// machine (other tests running now) never sees them.
fn private_usr_and_var(changes: &Path) -> Result<(), String> {
    use std::ffi::CString;
    let c = |s: &str| CString::new(s).unwrap();
    // SAFETY: unshare and mount with valid NUL-terminated strings; they
    // affect only this thread (its own fs and mount namespace).
    unsafe {
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            return Err(format!(
                "unshare(CLONE_NEWNS): {}",
                std::io::Error::last_os_error()
            ));
        }
        // Nothing mounted here may propagate back to the real system.
        let root = c("/");
        if libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            let e = std::io::Error::last_os_error();
            // EINVAL: / is not a mount point (a chroot into a plain folder).
            let hint = if e.raw_os_error() == Some(libc::EINVAL) {
                " (/ is not a mount point: in a chroot, bind-mount its folder onto itself first)"
            } else {
                ""
            };
            return Err(format!("make / private: {e}{hint}"));
        }
        for dir in ["usr", "var"] {
            let upper = changes.join(format!("{dir}-upper"));
            let work = changes.join(format!("{dir}-work"));
            std::fs::create_dir_all(&upper).unwrap();
            std::fs::create_dir_all(&work).unwrap();
            let options = c(&format!(
                "lowerdir=/{dir},upperdir={},workdir={}",
                upper.display(),
                work.display()
            ));
            let (fs, target) = (c("overlay"), c(&format!("/{dir}")));
            if libc::mount(
                fs.as_ptr(),
                target.as_ptr(),
                fs.as_ptr(),
                0,
                options.as_ptr().cast(),
            ) != 0
            {
                return Err(format!(
                    "overlay on /{dir}: {}",
                    std::io::Error::last_os_error()
                ));
            }
        }
    }
    Ok(())
}

/// Whether 32-bit Vulkan programs run here (dpkg's i386 architecture,
/// the 32-bit C and C++ libraries, loader and lavapipe: what the i386
/// package depends on and the 32-bit probe needs); else one
/// [`require::skip_or_fail`].
fn i386_runtime() -> bool {
    let arches = ok(Command::new("dpkg").arg("--print-foreign-architectures"));
    if !arches.lines().any(|a| a == "i386") {
        require::skip_or_fail(
            "dpkg has no i386 architecture (dpkg --add-architecture i386; scripts/build-i686.sh does it)",
        );
        return false;
    }
    let wanted = [
        "libc6:i386",
        "libstdc++6:i386",
        "libvulkan1:i386",
        "mesa-vulkan-drivers:i386",
    ];
    let missing: Vec<&str> = wanted
        .into_iter()
        .filter(|p| {
            !Command::new("dpkg-query")
                .args(["-W", "-f", "${db:Status-Status}", p])
                .output()
                .is_ok_and(|o| o.stdout == b"installed")
        })
        .collect();
    if !missing.is_empty() {
        require::skip_or_fail(&format!(
            "not installed: {} (apt-get install them; scripts/build-i686.sh does)",
            missing.join(" ")
        ));
        return false;
    }
    if !repo().join(VKCUBE32).is_file() {
        require::skip_or_fail(&format!(
            "no 32-bit vkcube at {VKCUBE32}: scripts/build-i686.sh unpacks it"
        ));
        return false;
    }
    true
}

#[test]
fn debs_install_together_serve_64_and_32_bit_games_and_remove_cleanly() {
    if !is_root() {
        require::skip_or_fail("dpkg -i needs root");
        return;
    }
    if !require::programs(&[("vkcube", "vulkan-tools"), ("Xvfb", "xvfb")]) {
        return;
    }
    if !i386_runtime() {
        return;
    }
    let Some(dist) = dist() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let Some((probe64, probe32)) = build_probes(tmp.path()) else {
        return;
    };
    // Not installed already (e.g. by hand): the removal check would mean nothing.
    let before = output(Command::new("dpkg-query").args(["-W", "steadyhud"]));
    assert!(
        !before.status.success() || String::from_utf8_lossy(&before.stdout).trim().is_empty(),
        "steadyhud is already installed on this machine: dpkg -r steadyhud first"
    );

    let (deb64, deb32) = (dist.deb64.clone(), dist.deb32.clone());
    let changes = tmp.path().join("changes");
    // The build's paths are read before the namespace (common::profile_dir).
    common::profile_dir();
    // A thread of its own: the namespace ends with it, whatever libtest
    // does with its test threads.
    let name = std::thread::current()
        .name()
        .unwrap_or("packages")
        .to_string();
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            if let Err(e) = private_usr_and_var(&changes) {
                require::skip_or_fail(&format!("no private mount namespace with overlays: {e}"));
                return;
            }
            installed_and_removed(&deb64, &deb32, &probe64, &probe32);
        })
        .expect("spawn the namespace's thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

/// Inside the private namespace: install, check, use, remove, check.
fn installed_and_removed(deb64: &Path, deb32: &Path, probe64: &Path, probe32: &Path) {
    ok(Command::new("dpkg").arg("-i").arg(deb64).arg(deb32));
    let listed: Vec<String> = ["steadyhud:amd64", "steadyhud:i386"]
        .iter()
        .flat_map(|p| {
            ok(Command::new("dpkg").args(["-L", p]))
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    for f in ["/usr/bin/steadyhud", MANIFEST] {
        assert!(listed.iter().any(|l| l == f), "dpkg -L lacks {f}");
        assert!(Path::new(f).is_file(), "{f} not installed");
    }
    // The files are where the manifest says, each of its architecture.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(MANIFEST).unwrap()).unwrap();
    assert_eq!(manifest["layer"]["library_path"], LIBRARY_PATH);
    for (lib_dir, class) in [(LIB64_DIR, 2), (LIB32_DIR, 1)] {
        let lib = LIBRARY_PATH.replace("$LIB", lib_dir);
        assert!(listed.contains(&lib), "dpkg -L lacks {lib}");
        assert_eq!(elf_class(Path::new(&lib)), class, "{lib}");
    }
    let version = ok(Command::new("/usr/bin/steadyhud").arg("--version"));
    assert!(
        version.starts_with(&format!("steadyhud {VERSION} (")),
        "{version}"
    );

    // A gamer's vkcubes, 64-bit and 32-bit: the layer from /usr/share only
    // (empty home, no XDG_DATA_HOME manifest), enabled by STEADYHUD=1.
    let h = Harness::new();
    let home = h.root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let user = |c: &mut Command| {
        c.env("HOME", &home)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("XDG_DATA_DIRS")
            .env_remove("XDG_CONFIG_DIRS")
            .env("VK_LOADER_DEBUG", "layer");
    };
    let mut plain = h.command("vkcube");
    user(&mut plain);
    no_hud_without_the_layer(&h, &mut plain);
    for (mut cube, bits) in vkcubes(&h) {
        let what = format!("{bits} vkcube with the packaged layer");
        user(&mut cube);
        let out = cube_shows_the_hud(&h, &mut cube, &what);
        assert!(
            out.stderr.contains(&format!(
                "Insert instance layer \"{LAYER_NAME}\" ({LIBRARY_PATH})"
            )),
            "{what}: the loader did not insert the packaged layer:\n{}",
            tail(&out.stderr, 40)
        );
    }
    for (mut cube, bits) in vkcubes(&h) {
        user(&mut cube);
        disabled_by_env(&h, &mut cube, bits);
    }

    // Each architecture's program maps its own library through the one
    // manifest ($LIB).
    for (probe, lib_dir) in [(probe64, LIB64_DIR), (probe32, LIB32_DIR)] {
        let mut c = h.command(probe);
        c.layer();
        user(&mut c);
        let out = run(&mut c);
        out.assert_success(&probe.display().to_string());
        let want = LIBRARY_PATH.replace("$LIB", lib_dir);
        assert_eq!(
            mapped(&out),
            [want],
            "{}: {}\n{}",
            probe.display(),
            out.stdout,
            tail(&out.stderr, 30)
        );
    }

    ok(Command::new("dpkg").args(["-r", "steadyhud:amd64", "steadyhud:i386"]));
    for p in ["steadyhud:amd64", "steadyhud:i386"] {
        let status =
            output(Command::new("dpkg-query").args(["-W", "-f", "${db:Status-Status}", p]));
        let status = String::from_utf8_lossy(&status.stdout);
        assert!(status != "installed", "{p} still installed");
    }
    // Nothing of theirs is left: each listed path is gone, or a folder
    // another package owns (/usr, /usr/share/vulkan/implicit_layer.d, ...).
    let left: Vec<&String> = listed
        .iter()
        .filter(|p| Path::new(p).exists())
        .filter(|p| {
            !Path::new(p).is_dir()
                || !output(Command::new("dpkg").args(["-S", p]))
                    .status
                    .success()
        })
        .collect();
    assert!(left.is_empty(), "left behind by dpkg -r: {left:?}");
    let mut cube = h.command("vkcube");
    cube.args(["--c", "5"]).layer();
    user(&mut cube);
    let out = run(&mut cube);
    out.assert_success("vkcube after dpkg -r");
    assert!(
        !out.stderr
            .contains(&format!("Insert instance layer \"{LAYER_NAME}\"")),
        "the layer is still inserted after dpkg -r"
    );
}

/// Frames each of the gamer's vkcubes presents: a few seconds, for
/// screenshots while it runs (lavapipe draws its 500×500 window at some
/// 1,000 frames a second here, validation included).
const CUBE_FRAMES: u64 = 3000;

/// The gamer's two vkcubes: Debian's 64-bit one, and its 32-bit one
/// (`vulkan-tools:i386`, unpacked by scripts/build-i686.sh since it cannot
/// be installed beside the 64-bit package) on the 32-bit lavapipe.
fn vkcubes(h: &Harness) -> [(Command, &'static str); 2] {
    let mut cube32 = h.command(repo().join(VKCUBE32));
    cube32.env("VK_ICD_FILENAMES", I686_ICD);
    [(h.command("vkcube"), "64-bit"), (cube32, "32-bit")]
}

/// The top-left corner of vkcube's 500×500 window (Xvfb without a window
/// manager puts it where vkcube asks; found rather than assumed): the
/// first lit pixel of the screen's bottom row (below the HUD), then of
/// the column near the window's right edge (beside it). `None` before the
/// window shows.
fn cube_window(s: &Screenshot) -> Option<(u32, u32)> {
    let lit = |x, y| s.pixel(x, y) != [0, 0, 0];
    let x0 = (0..s.width).find(|&x| lit(x, s.height - 1))?;
    let right = (x0 + 480).min(s.width - 1);
    let y0 = (0..s.height).find(|&y| lit(right, y))?;
    Some((x0, y0))
}

/// vkcube's image in the window's top-left corner is its clear colour
/// only; the HUD's panel covers it: under half of the corner's pixels
/// keep the colour of the window's top-right corner (which nothing draws
/// on).
fn hud_drawn(s: &Screenshot) -> bool {
    let Some((x0, y0)) = cube_window(s) else {
        return false;
    };
    let clear = s.pixel((x0 + 480).min(s.width - 1), y0 + 8);
    s.fraction_close(x0 + 8, y0 + 8, 120, 50, clear, 12) < 0.5
}

/// Runs `cube` for [`CUBE_FRAMES`] frames, taking screenshots while it
/// runs; the output, the last screenshot with the window up, and whether
/// one of them showed the HUD (it stops looking then).
fn cube_run(h: &Harness, cube: &mut Command) -> (RunOutput, Option<Screenshot>, bool) {
    cube.args(["--c", &CUBE_FRAMES.to_string()]);
    let mut running = spawn(cube);
    let (mut last, mut seen) = (None, false);
    while !seen && !running.has_exited() {
        let s = h.screenshot();
        seen = hud_drawn(&s);
        if cube_window(&s).is_some() {
            last = Some(s);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (running.wait(), last, seen)
}

/// Saves `shot` into the test's temp folder and names it, for a failure.
fn kept(shot: Option<&Screenshot>, name: &str) -> String {
    let Some(s) = shot else {
        return "no screenshot showed the window".into();
    };
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.png"));
    s.save_png(&p);
    format!("screenshot in {}", p.display())
}

/// The HUD check can fail: vkcube without `STEADYHUD=1` shows its window
/// and no HUD in the corner.
fn no_hud_without_the_layer(h: &Harness, cube: &mut Command) {
    let (out, last, seen) = cube_run(h, cube);
    out.assert_success("vkcube without the layer");
    assert!(
        !seen,
        "the HUD check sees a HUD without the layer: {}",
        kept(last.as_ref(), "packages-no-layer")
    );
    assert!(last.is_some(), "no screenshot showed vkcube's window");
    assert!(h.session_logs().is_empty(), "a log without the layer");
}

/// Runs `cube` (vkcube, the user's environment set) with `STEADYHUD=1`
/// under validation and checks what a gamer gets: no `Validation Error`,
/// no complaint of the layer, presents − 1 log rows, the HUD on screen
/// while it runs. Returns the output (the loader's lines) and clears the
/// log folder.
fn cube_shows_the_hud(h: &Harness, cube: &mut Command, what: &str) -> RunOutput {
    cube.layer().validation();
    let (out, last, seen) = cube_run(h, cube);
    out.assert_success(what);
    assert!(
        out.stderr
            .contains(&format!("Insert instance layer \"{VALIDATION}\"")),
        "{what}: validation is not active:\n{}",
        tail(&out.stderr, 30)
    );
    let errors = out.output_lines(|l| l.contains("Validation Error"));
    assert!(errors.is_empty(), "{what}: {errors:#?}");
    let complaints = out.output_lines(is_layer_complaint);
    assert!(complaints.is_empty(), "{what}: {complaints:#?}");
    h.only_session_log_of(CUBE_FRAMES, what);
    h.clear_logs();
    let name = what.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    assert!(
        seen,
        "{what}: no HUD in the top-left corner: {}",
        kept(last.as_ref(), &name)
    );
    out
}

/// `DISABLE_STEADYHUD=1` beside `STEADYHUD=1`: the loader leaves the
/// layer out and nothing is logged.
fn disabled_by_env(h: &Harness, cube: &mut Command, bits: &str) {
    let out = run(cube
        .args(["--c", "5"])
        .layer()
        .env("DISABLE_STEADYHUD", "1"));
    out.assert_success(&format!("{bits} vkcube with DISABLE_STEADYHUD=1"));
    assert!(
        !out.stderr
            .contains(&format!("Insert instance layer \"{LAYER_NAME}\"")),
        "{bits} vkcube: DISABLE_STEADYHUD=1 did not keep the layer out"
    );
    assert!(
        h.session_logs().is_empty(),
        "{bits} vkcube: a log with DISABLE_STEADYHUD=1"
    );
}

#[test]
fn tarball_installs_for_a_user_and_uninstalls() {
    let Some(dist) = dist() else { return };
    let tmp = tempfile::tempdir().unwrap();
    ok(Command::new("tar")
        .arg("-xzf")
        .arg(&dist.tarball)
        .arg("-C")
        .arg(tmp.path()));
    let top = tmp.path().join(format!("steadyhud-{VERSION}"));
    for (f, class) in [
        ("bin/steadyhud", Some(2)),
        ("lib64/libsteadyhud.so", Some(2)),
        ("lib32/libsteadyhud.so", Some(1)),
        ("lib64/libsteadyhud_gl.so", Some(2)),
        ("lib32/libsteadyhud_gl.so", Some(1)),
        ("share/steadyhud/VK_LAYER_STEADYHUD_overlay.json", None),
        ("install.sh", None),
        ("uninstall.sh", None),
        ("where.sh", None),
        ("README", None),
    ] {
        let p = top.join(f);
        assert!(p.is_file(), "the tarball lacks {f}");
        if let Some(class) = class {
            assert_eq!(elf_class(&p), class, "{f}");
        }
    }
    let help = ok(Command::new(top.join("bin/steadyhud")).args(["install", "--help"]));
    assert!(
        help.contains("--lib32"),
        "install.sh passes --lib32: {help}"
    );
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = |name: &str| {
        let mut c = Command::new(top.join(name));
        c.env("HOME", &home).env_remove("XDG_DATA_HOME");
        c
    };
    let said = ok(&mut script("install.sh"));
    assert!(home.join(".local/bin/steadyhud").is_file(), "{said}");
    let data = home.join(".local/share");
    let manifest = data.join("vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json");
    assert!(manifest.is_file(), "no user manifest: {said}");
    let h = Harness::new();
    let user = |c: &mut Command| {
        c.env("HOME", &home)
            .env("XDG_DATA_HOME", &data)
            .env("VK_LOADER_DEBUG", "layer");
    };
    let i386 = i386_runtime();
    // Without the i386 runtime only the 64-bit one (after the SKIPPED line).
    let widths = if i386 { 2 } else { 1 };
    // The manifest's path as the loader prints it ($LIB is dlopen's).
    let library = data.join("steadyhud/$LIB/libsteadyhud.so");
    for (mut cube, bits) in vkcubes(&h).into_iter().take(widths) {
        let what = format!("{bits} vkcube with the tarball's layer");
        user(&mut cube);
        let out = cube_shows_the_hud(&h, &mut cube, &what);
        assert!(
            out.stderr.contains(&format!(
                "Insert instance layer \"{LAYER_NAME}\" ({})",
                library.display()
            )),
            "{what}: not the tarball's manifest:\n{}",
            tail(&out.stderr, 30)
        );
    }
    for (mut cube, bits) in vkcubes(&h).into_iter().take(widths) {
        user(&mut cube);
        disabled_by_env(&h, &mut cube, bits);
    }
    // The one manifest's $LIB: each width its own copy.
    if i386 {
        if let Some((probe64, probe32)) = build_probes(tmp.path()) {
            for (probe, bits) in [(probe64, "x86_64"), (probe32, "i386")] {
                let out = run(h
                    .command(&probe)
                    .layer()
                    .env("HOME", &home)
                    .env("XDG_DATA_HOME", &data));
                out.assert_success(&probe.display().to_string());
                let want = data.join(format!("steadyhud/lib/{bits}-linux-gnu/libsteadyhud.so"));
                assert_eq!(
                    mapped(&out),
                    [want.display().to_string()],
                    "{}",
                    tail(&out.stderr, 30)
                );
            }
        }
    }
    // The GL libraries beside the layer's two copies.
    for bits in ["x86_64", "i386"] {
        let gl = data.join(format!("steadyhud/lib/{bits}-linux-gnu/libsteadyhud_gl.so"));
        assert!(gl.is_file(), "{} not installed", gl.display());
    }
    ok(&mut script("uninstall.sh"));
    assert!(!home.join(".local/bin/steadyhud").exists());
    assert!(!manifest.exists());
    assert!(!data.join("steadyhud").exists());
}

/// The README's sizes of the shipped libraries are what this build gives,
/// stripped, to the 0.1 MB it prints (the layer's in two places, the GL
/// library's once). A release build only (other profiles' sizes differ).
#[test]
fn the_readme_states_the_libraries_sizes_this_build_gives() {
    if i686() || !profile_dir().ends_with("release") {
        eprintln!("sizes are the 64-bit release build's: not checked here");
        return;
    }
    let stripped_mb = |lib: &Path| {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let out = dir.path().join("lib.so");
        ok(Command::new("strip").arg("-o").arg(&out).arg(lib));
        std::fs::metadata(&out).expect("stripped copy").len() as f64 / 1e6
    };
    let layer = stripped_mb(&layer_library());
    let gl = stripped_mb(&common::gl::gl_library());
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let stated = |before: &str, after: &str| -> Vec<f64> {
        readme
            .match_indices(before)
            .filter_map(|(i, _)| {
                let rest = &readme[i + before.len()..];
                let end = rest.find(after)?;
                rest[..end].trim().parse().ok()
            })
            .collect()
    };
    let layer_stated = [
        stated("copies the library (", " MB, stripped)"),
        stated("| shipped library | ", " MB stripped"),
    ]
    .concat();
    let gl_stated = stated("the GL library ", " MB)");
    assert_eq!(
        layer_stated.len(),
        2,
        "the layer's size, twice: {layer_stated:?}"
    );
    assert_eq!(gl_stated.len(), 1, "the GL library's size: {gl_stated:?}");
    for (what, built, stated) in [
        ("layer", layer, &layer_stated[..]),
        ("GL library", gl, &gl_stated[..]),
    ] {
        for s in stated {
            assert!(
                (built - s).abs() <= 0.05 + 1e-9,
                "README says the {what} is {s} MB stripped; this build gives {built:.2} MB"
            );
        }
    }
}
