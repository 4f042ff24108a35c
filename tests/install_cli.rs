//! `steadyhud install` / `uninstall` / `run` end to end, each with its own
//! temporary XDG_DATA_HOME: the files they write, and the loader really
//! inserting the layer into a real Vulkan app (vkcube) under Xvfb.

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

#[test]
fn install_writes_absolute_manifest_and_copy_that_the_loader_uses() {
    let h = Harness::new();
    let data = fresh_data_home(&h, "user-data");
    let lib = layer_library();
    let out = run(h
        .steadyhud(&["install", "--lib"])
        .arg(&lib)
        .env("XDG_DATA_HOME", &data));
    out.assert_success("steadyhud install");

    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(manifest_in(&data)).expect("manifest written"),
    )
    .unwrap();
    let installed = PathBuf::from(manifest["layer"]["library_path"].as_str().unwrap());
    assert!(
        installed.is_absolute(),
        "library_path {installed:?} is not absolute"
    );
    assert_eq!(installed, data.join("steadyhud/libsteadyhud.so"));
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(&lib).unwrap(),
        "copy differs from the built library"
    );
    assert_eq!(manifest["layer"]["name"], LAYER_NAME);
    assert_eq!(manifest["layer"]["enable_environment"]["STEADYHUD"], "1");
    assert_eq!(
        manifest["layer"]["disable_environment"]["DISABLE_STEADYHUD"],
        "1"
    );
    assert!(
        out.stdout.contains(&installed.display().to_string()),
        "install output names the library:\n{}",
        out.stdout
    );

    // The loader picks it up with STEADYHUD=1 only, and DISABLE_STEADYHUD wins.
    let on = run(vkcube(&h, &data, 30).layer());
    on.assert_success("vkcube with the installed layer");
    assert!(
        inserted(&on.stderr),
        "installed layer not inserted:\n{}",
        tail(&on.stderr, 30)
    );
    assert!(
        on.stderr.contains(&installed.display().to_string()),
        "loader did not load the installed copy"
    );
    let off = run(&mut vkcube(&h, &data, 5));
    assert!(!inserted(&off.stderr), "layer inserted without STEADYHUD=1");
    let disabled = run(vkcube(&h, &data, 5).layer().env("DISABLE_STEADYHUD", "1"));
    assert!(
        !inserted(&disabled.stderr),
        "layer inserted despite DISABLE_STEADYHUD=1"
    );
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
    run(h
        .steadyhud(&["install", "--lib"])
        .arg(layer_library())
        .env("XDG_DATA_HOME", &data))
    .assert_success("install");
    let out = run(h.steadyhud(&["uninstall"]).env("XDG_DATA_HOME", &data));
    out.assert_success("uninstall");
    assert!(!manifest_in(&data).exists(), "manifest left behind");
    assert!(!data.join("steadyhud").exists(), "library copy left behind");
    assert!(out.stdout.contains("removed"), "{}", out.stdout);
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
