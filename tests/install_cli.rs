//! `steadyhud install` / `uninstall` / `run` end to end, each with its own
//! temporary XDG_DATA_HOME: the files they write (one manifest naming
//! `steadyhud/$LIB/libsteadyhud.so`, a 64-bit and a 32-bit copy), and the
//! loader really inserting the layer into a real Vulkan app (vkcube) under
//! Xvfb.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A data home other than the harness's (which already holds a manifest).
fn fresh_data_home(h: &Harness, name: &str) -> PathBuf {
    let d = h.root.path().join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn manifest_in(data_home: &Path) -> PathBuf {
    data_home
        .join("vulkan/implicit_layer.d")
        .join(format!("{LAYER_NAME}.json"))
}

fn inserted(stderr: &str) -> bool {
    stderr.contains(&format!("Insert instance layer \"{LAYER_NAME}\""))
}

fn vkcube(h: &Harness, data_home: &Path, frames: u32) -> Command {
    let mut c = h.command("vkcube");
    c.args(["--c", &frames.to_string()])
        .env("XDG_DATA_HOME", data_home)
        .env("VK_LOADER_DEBUG", "layer");
    c
}

/// A file that is 32-bit ELF as far as its header's class byte goes (the
/// first 52 bytes of an i386 shared object): what `install --lib32` checks.
/// Not loadable; the 32-bit runtime test uses a real build.
fn fake_elf32(dir: &Path) -> PathBuf {
    let mut h = vec![0u8; 52];
    h[..7].copy_from_slice(b"\x7fELF\x01\x01\x01");
    h[16] = 3; // ET_DYN
    h[18] = 3; // EM_386
    h[20] = 1; // EV_CURRENT
    let p = dir.join("fake32/libsteadyhud.so");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, h).unwrap();
    p
}

/// Every file under `dir`, relative to it, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for p in list_dir(&d) {
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// The `$LIB` folder `install` put the file with `bytes` in, under
/// `<data>/steadyhud/`.
fn lib_folder_holding(data: &Path, bytes: &[u8]) -> String {
    let top = data.join("steadyhud");
    let hits: Vec<String> = files_under(&top)
        .into_iter()
        .filter(|f| std::fs::read(top.join(f)).unwrap() == bytes)
        .collect();
    assert_eq!(hits.len(), 1, "copies under {}: {hits:?}", top.display());
    hits[0]
        .strip_suffix("/libsteadyhud.so")
        .unwrap_or_else(|| panic!("{} is not a libsteadyhud.so", hits[0]))
        .to_string()
}

/// The `steadyhud` program copied alone into `<dir>/bin/`, so that no
/// 32-bit library is found beside it unless the test puts one there.
fn lone_steadyhud(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("steadyhud");
    std::fs::copy(steadyhud_exe(), &exe).unwrap();
    exe
}

#[test]
fn install_writes_one_lib_manifest_and_both_copies_that_the_loader_uses() {
    let h = Harness::new();
    let data = fresh_data_home(&h, "user-data");
    let lib = layer_library();
    let lib32 = fake_elf32(h.root.path());
    let out = run(h
        .steadyhud(&["install", "--lib"])
        .arg(&lib)
        .arg("--lib32")
        .arg(&lib32)
        .env("XDG_DATA_HOME", &data));
    out.assert_success("steadyhud install");

    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(manifest_in(&data)).expect("manifest written"),
    )
    .unwrap();
    let library_path = manifest["layer"]["library_path"].as_str().unwrap();
    assert_eq!(
        library_path,
        format!("{}/steadyhud/$LIB/libsteadyhud.so", data.display()),
        "one manifest naming both copies through $LIB"
    );
    assert!(library_path.ends_with("/steadyhud/$LIB/libsteadyhud.so"));
    // The two copies, byte for byte, in the folders $LIB stands for: the
    // 64-bit one where this system keeps its 64-bit libraries (libc is
    // there), the 32-bit one in its 32-bit counterpart.
    let lib64_dir = lib_folder_holding(&data, &std::fs::read(&lib).unwrap());
    let lib32_dir = lib_folder_holding(&data, &std::fs::read(&lib32).unwrap());
    assert!(
        ["/", "/usr/"]
            .iter()
            .any(|r| Path::new(r).join(&lib64_dir).join("libc.so.6").exists()),
        "64-bit copy in steadyhud/{lib64_dir}/, which is no system library folder"
    );
    assert!(
        [
            ("lib/x86_64-linux-gnu", "lib/i386-linux-gnu"),
            ("lib64", "lib"),
            ("lib", "lib32")
        ]
        .contains(&(lib64_dir.as_str(), lib32_dir.as_str())),
        "unexpected pair {lib64_dir} / {lib32_dir}"
    );
    // The GL library built beside the 64-bit layer goes beside its copy
    // (the fake 32-bit layer has none beside it: no 32-bit GL copy).
    let mut expected = vec![
        format!("steadyhud/{lib32_dir}/libsteadyhud.so"),
        format!("steadyhud/{lib64_dir}/libsteadyhud.so"),
        format!("steadyhud/{lib64_dir}/libsteadyhud_gl.so"),
        format!("vulkan/implicit_layer.d/{LAYER_NAME}.json"),
    ];
    expected.sort();
    assert_eq!(files_under(&data), expected);
    assert_eq!(
        std::fs::read(data.join(format!("steadyhud/{lib64_dir}/libsteadyhud_gl.so"))).unwrap(),
        std::fs::read(common::gl::gl_library()).unwrap(),
        "the GL library's copy"
    );
    assert_eq!(manifest["layer"]["name"], LAYER_NAME);
    assert_eq!(manifest["layer"]["enable_environment"]["STEADYHUD"], "1");
    assert_eq!(
        manifest["layer"]["disable_environment"]["DISABLE_STEADYHUD"],
        "1"
    );
    for f in [&lib64_dir, &lib32_dir] {
        let p = data.join("steadyhud").join(f).join("libsteadyhud.so");
        assert!(
            out.stdout.contains(&p.display().to_string()),
            "install output names {}:\n{}",
            p.display(),
            out.stdout
        );
    }
    assert!(
        !out.stdout.contains("will not get the HUD"),
        "{}",
        out.stdout
    );

    // The loader hands the $LIB path to dlopen, which finds the 64-bit copy
    // (the 32-bit file is not even loadable): the layer captures every frame.
    // Only with STEADYHUD=1, and DISABLE_STEADYHUD wins.
    let on = run(vkcube(&h, &data, 30).layer());
    on.assert_success("vkcube with the installed layer");
    assert!(
        inserted(&on.stderr),
        "installed layer not inserted:\n{}",
        tail(&on.stderr, 30)
    );
    assert!(
        on.stderr.contains(library_path),
        "loader did not load the installed $LIB path:\n{}",
        tail(&on.stderr, 30)
    );
    h.only_session_log_of(30, "vkcube --c 30 with the $LIB manifest");
    h.clear_logs();
    let off = run(&mut vkcube(&h, &data, 5));
    assert!(!inserted(&off.stderr), "layer inserted without STEADYHUD=1");
    let disabled = run(vkcube(&h, &data, 5).layer().env("DISABLE_STEADYHUD", "1"));
    assert!(
        !inserted(&disabled.stderr),
        "layer inserted despite DISABLE_STEADYHUD=1"
    );
    assert!(h.session_logs().is_empty(), "a log without the layer");
}

#[test]
fn install_finds_the_32_bit_library_beside_the_program_or_says_it_has_none() {
    let h = Harness::new();
    // An installed prefix: bin/steadyhud, lib/libsteadyhud.so, lib32/libsteadyhud.so.
    let prefix = h.root.path().join("prefix");
    let exe = lone_steadyhud(&prefix);
    std::fs::create_dir_all(prefix.join("lib")).unwrap();
    std::fs::copy(layer_library(), prefix.join("lib/libsteadyhud.so")).unwrap();
    let lib32 = fake_elf32(h.root.path());
    std::fs::create_dir_all(prefix.join("lib32")).unwrap();
    std::fs::copy(&lib32, prefix.join("lib32/libsteadyhud.so")).unwrap();
    let data = fresh_data_home(&h, "user-data");
    let out = run(h.command(&exe).arg("install").env("XDG_DATA_HOME", &data));
    out.assert_success("install from a prefix");
    let lib32_dir = lib_folder_holding(&data, &std::fs::read(&lib32).unwrap());
    lib_folder_holding(&data, &std::fs::read(layer_library()).unwrap());
    assert!(
        out.stdout.contains(&format!(
            "32-bit library: {}",
            data.join("steadyhud")
                .join(&lib32_dir)
                .join("libsteadyhud.so")
                .display()
        )),
        "{}",
        out.stdout
    );

    // No 32-bit library anywhere: the 64-bit one only, one line saying so,
    // and the 32-bit copy of the install before is gone (it would no longer
    // match the 64-bit one).
    std::fs::remove_file(prefix.join("lib32/libsteadyhud.so")).unwrap();
    let out = run(h.command(&exe).arg("install").env("XDG_DATA_HOME", &data));
    out.assert_success("install without a 32-bit library");
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("32-bit games will not get the HUD"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", out.stdout);
    assert!(lines[0].contains("--lib32"), "{}", lines[0]);
    let lib64_dir = lib_folder_holding(&data, &std::fs::read(layer_library()).unwrap());
    assert_eq!(
        files_under(&data.join("steadyhud")),
        [format!("{lib64_dir}/libsteadyhud.so")]
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(manifest_in(&data)).unwrap()).unwrap();
    assert!(manifest["layer"]["library_path"]
        .as_str()
        .unwrap()
        .ends_with("/steadyhud/$LIB/libsteadyhud.so"));
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

#[test]
fn install_rejects_libraries_of_the_wrong_class() {
    let h = Harness::new();
    let data = fresh_data_home(&h, "user-data");
    let lib32 = fake_elf32(h.root.path());
    let text = h.root.path().join("text.so");
    std::fs::write(&text, "#!/bin/sh\necho not a library\n").unwrap();
    for (args, path, says) in [
        (
            ["--lib", "--lib"],
            &lib32,
            "is a 32-bit library; --lib takes the 64-bit",
        ),
        (
            ["--lib32", "--lib32"],
            &layer_library(),
            "is a 64-bit library; --lib32 takes the 32-bit",
        ),
        (
            ["--lib32", "--lib32"],
            &text,
            "is not an ELF library (--lib32 takes the 32-bit",
        ),
    ] {
        let mut c = h.steadyhud(&["install"]);
        if args[0] == "--lib32" {
            c.arg("--lib").arg(layer_library());
        }
        let out = run(c.arg(args[0]).arg(path).env("XDG_DATA_HOME", &data));
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?} {}: {}",
            path.display(),
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(
            out.stderr.contains(&path.display().to_string()) && out.stderr.contains(says),
            "{}",
            out.stderr
        );
        assert_eq!(files_under(&data), Vec::<String>::new(), "wrote something");
    }
}

#[test]
fn install_no_copy_points_at_the_given_library() {
    let h = Harness::new();
    let data = fresh_data_home(&h, "user-data");
    let lib = layer_library().canonicalize().unwrap();
    run(h
        .steadyhud(&["install", "--no-copy", "--lib"])
        .arg(&lib)
        .env("XDG_DATA_HOME", &data))
    .assert_success("install --no-copy");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(manifest_in(&data)).unwrap()).unwrap();
    assert_eq!(manifest["layer"]["library_path"], lib.display().to_string());
    assert!(!data.join("steadyhud/libsteadyhud.so").exists());
}

#[test]
fn uninstall_removes_everything_and_is_idempotent() {
    let h = Harness::new();
    let data = fresh_data_home(&h, "user-data");
    // A copy from the layout before $LIB (one library, no folder per $LIB).
    std::fs::create_dir_all(data.join("steadyhud")).unwrap();
    std::fs::copy(layer_library(), data.join("steadyhud/libsteadyhud.so")).unwrap();
    run(h
        .steadyhud(&["install", "--lib"])
        .arg(layer_library())
        .arg("--lib32")
        .arg(fake_elf32(h.root.path()))
        .env("XDG_DATA_HOME", &data))
    .assert_success("install");
    assert!(
        !data.join("steadyhud/libsteadyhud.so").exists(),
        "install left the copy of the layout before $LIB"
    );
    // Both layer copies, the 64-bit GL copy, the manifest.
    assert_eq!(files_under(&data).len(), 4, "{:?}", files_under(&data));
    let out = run(h.steadyhud(&["uninstall"]).env("XDG_DATA_HOME", &data));
    out.assert_success("uninstall");
    assert!(!manifest_in(&data).exists(), "manifest left behind");
    assert!(!data.join("steadyhud").exists(), "library copy left behind");
    let left: Vec<String> = files_under(&data)
        .into_iter()
        .filter(|f| f.contains("steadyhud") || f.contains("STEADYHUD"))
        .collect();
    assert!(left.is_empty(), "uninstall left {left:?}");
    assert_eq!(
        out.stdout
            .lines()
            .filter(|l| l.starts_with("removed "))
            .count(),
        4,
        "the manifest, both layer libraries and the GL library:\n{}",
        out.stdout
    );
    let again = run(h.steadyhud(&["uninstall"]).env("XDG_DATA_HOME", &data));
    again.assert_success("second uninstall");
    assert!(again.stdout.contains("not installed"), "{}", again.stdout);
    let after = run(vkcube(&h, &data, 5).layer());
    assert!(
        !inserted(&after.stderr),
        "layer still inserted after uninstall"
    );
}

#[test]
fn install_errors_are_clear() {
    let h = Harness::new();
    let data = fresh_data_home(&h, "user-data");
    let out = run(h
        .steadyhud(&["install", "--lib", "/nonexistent/libsteadyhud.so"])
        .env("XDG_DATA_HOME", &data));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.contains("/nonexistent/libsteadyhud.so")
            && out.stderr.contains("does not exist"),
        "{}",
        out.stderr
    );
    assert!(!manifest_in(&data).exists());

    // Unwritable data home (a regular file, so even root cannot create
    // folders under it): one clear line naming the path, exit 1.
    let blocker = h.root.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let out = run(h
        .steadyhud(&["install", "--lib"])
        .arg(layer_library())
        .env("XDG_DATA_HOME", &blocker));
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&blocker.display().to_string()),
        "{}",
        out.stderr
    );
}

#[test]
fn run_enables_the_layer_without_install_and_keeps_other_layers() {
    let h = Harness::new();
    h.assert_validation_active();
    let empty = fresh_data_home(&h, "no-layer-installed");
    let logs = h.root.path().join("run-logs");
    let out = run(h
        .steadyhud(&["run", "--log-dir"])
        .arg(&logs)
        .arg("--lib")
        .arg(layer_library())
        .args(["--", "vkcube", "--c", "60"])
        .env("XDG_DATA_HOME", &empty)
        .env("VK_INSTANCE_LAYERS", VALIDATION)
        .env("VK_LOADER_DEBUG", "layer"));
    out.assert_success("steadyhud run -- vkcube")
        .assert_no_vuid("steadyhud run -- vkcube with validation");
    assert!(
        inserted(&out.stderr),
        "run did not insert the layer:\n{}",
        tail(&out.stderr, 40)
    );
    assert!(
        out.stderr
            .contains(&format!("Insert instance layer \"{VALIDATION}\"")),
        "run hid the user's validation layer"
    );
    // The layer really captured: vkcube's 60 presents are 59 frames in the
    // log folder given to run.
    let csvs: Vec<_> = list_dir(&logs)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    assert_eq!(
        csvs.len(),
        1,
        "expected one session log in {}: {:?}",
        logs.display(),
        list_dir(&logs)
    );
    assert_eq!(h.analyze(&csvs[0])["frames"], 59);
    // Its private manifest folder is gone afterwards.
    assert_no_run_folder(&h);
}

/// `run`'s private manifest folder is gone after it.
fn assert_no_run_folder(h: &Harness) {
    let leftovers: Vec<_> = list_dir(&h.runtime_dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("steadyhud-run-"))
        })
        .collect();
    assert!(leftovers.is_empty(), "run left {leftovers:?}");
}

#[test]
fn run_forwards_exit_codes_and_signals() {
    let h = Harness::new();
    let lib = layer_library();
    let code = run(h
        .steadyhud(&["run", "--lib"])
        .arg(&lib)
        .args(["--", "sh", "-c", "exit 7"]));
    assert_eq!(code.status.code(), Some(7));
    let killed =
        run(h
            .steadyhud(&["run", "--lib"])
            .arg(&lib)
            .args(["--", "sh", "-c", "kill -9 $$"]));
    assert_eq!(killed.status.code(), Some(128 + 9));
    let missing = run(h
        .steadyhud(&["run", "--lib"])
        .arg(&lib)
        .args(["--", "/nonexistent/game"]));
    assert_eq!(missing.status.code(), Some(127));
    assert!(
        missing.stderr.contains("/nonexistent/game"),
        "{}",
        missing.stderr
    );

    // SIGTERM to steadyhud reaches the program, whose own exit status comes back.
    let mut r = spawn(h.steadyhud(&["run", "--lib"]).arg(&lib).args([
        "--",
        "sh",
        "-c",
        "trap 'echo got-term; exit 42' TERM; echo ready; while :; do sleep 0.05; done",
    ]));
    assert!(
        r.wait_for_line(Duration::from_secs(20), |l| l == "ready"),
        "child never started"
    );
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(r.child.id() as i32, libc::SIGTERM) };
    let out = r.wait();
    assert_eq!(
        out.status.code(),
        Some(42),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    assert!(out.stdout.contains("got-term"));
}

#[test]
fn run_passes_log_dir_and_layer_env_to_the_program() {
    let h = Harness::new();
    let d = h.root.path().join("chosen-logs");
    let out = run(h
        .steadyhud(&["run", "--log-dir"])
        .arg(&d)
        .arg("--lib")
        .arg(layer_library())
        .args([
            "--",
            "sh",
            "-c",
            "echo \"$STEADYHUD|$STEADYHUD_LOG_DIR|$VK_INSTANCE_LAYERS|${DISABLE_STEADYHUD-unset}\"",
        ])
        .env("DISABLE_STEADYHUD", "1"));
    out.assert_success("run sh");
    assert_eq!(
        out.stdout.trim(),
        format!("1|{}|{LAYER_NAME}|unset", d.display())
    );
}

/// Issue 40: a launcher that starts the game later and exits first (as
/// Steam's and Lutris' do) leaves a game that still gets the layer and the
/// GL library: `run` waits for it (subreaper), so the folder `LD_PRELOAD`
/// and `VK_ADD_LAYER_PATH` point into is still there when it starts.
#[test]
fn run_keeps_the_games_a_launcher_leaves_behind() {
    let h = Harness::new();
    let script = format!(
        "(sleep 1; exec {} --frames 60 --fps 60) >/dev/null 2>&1 & \
         (sleep 1; exec {} --frames 60) >/dev/null 2>&1 & exit 0",
        common::gl::gltest_exe().display(),
        testapp_exe().display()
    );
    let out = run(h
        .steadyhud(&["run", "--lib"])
        .arg(layer_library())
        .args(["--", "sh", "-c", &script]));
    out.assert_success("run -- a launcher");
    let logs = h.session_logs();
    // Every frame of each: the GL program's 60 swaps, the test app's 61
    // presents (`--frames 60`).
    let mut got: Vec<(String, u64)> = logs
        .iter()
        .map(|l| {
            let api = l.summary_json()["api"].as_str().unwrap_or("").to_string();
            (api, h.analyze(&l.csv)["frames"].as_u64().unwrap_or(0))
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [("opengl".to_string(), 59), ("vulkan".to_string(), 60)],
        "{logs:?}\n{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("sh ended; waiting for the processes it left running"),
        "{}",
        out.stderr
    );
    assert_no_run_folder(&h);
}
