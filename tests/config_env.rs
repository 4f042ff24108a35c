//! `Config::load()` against the real process environment: file under
//! `$XDG_CONFIG_HOME`, then `STEADYHUD_CONFIG`, then `STEADYHUD_LOG_DIR`.
//! (One test in this binary: it owns the environment.)

use std::path::PathBuf;
use steadyhud_config::{Config, Position};

#[test]
fn load_layers_file_env_and_log_dir_env() {
    let dir = tempfile::tempdir().unwrap();
    let conf_dir = dir.path().join("steadyhud");
    std::fs::create_dir_all(&conf_dir).unwrap();
    std::fs::write(
        conf_dir.join("steadyhud.conf"),
        "# HUD bottom right\nposition=bottom-right\nwindow_seconds=5\nhud_hidden=on\nwindow_seconds=0\n",
    )
    .unwrap();
    std::env::set_var("XDG_CONFIG_HOME", dir.path());
    std::env::set_var(
        "STEADYHUD_CONFIG",
        "target_fps=120,stutter_threshold=0.5,frobnicate=1",
    );
    std::env::remove_var("STEADYHUD_LOG_DIR");
    let (c, w) = Config::load();
    assert_eq!(c.position, Position::BottomRight);
    assert_eq!(
        c.window_seconds, 5.0,
        "the bad second value keeps the first"
    );
    assert!(c.hud_hidden);
    assert_eq!(c.target_fps, 120);
    assert_eq!(c.stutter_threshold, 0.5);
    assert_eq!(c.log_dir, None);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("steadyhud.conf:5: bad value \"0\" for window_seconds")
            && w[0].contains("keeping 5"),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("STEADYHUD_CONFIG item 3: unknown key \"frobnicate\""),
        "{w:?}"
    );

    std::env::set_var("STEADYHUD_LOG_DIR", "/var/tmp/steadyhud-logs");
    let (c, _) = Config::load();
    assert_eq!(c.log_dir, Some(PathBuf::from("/var/tmp/steadyhud-logs")));
    assert_eq!(
        c.resolved_log_dir(),
        Some(PathBuf::from("/var/tmp/steadyhud-logs"))
    );
    assert_eq!(
        steadyhud_log::default_log_dir(),
        Some(PathBuf::from("/var/tmp/steadyhud-logs"))
    );

    std::env::remove_var("STEADYHUD_LOG_DIR");
    std::env::set_var("XDG_STATE_HOME", "/state");
    assert_eq!(
        steadyhud_log::default_log_dir(),
        Some(PathBuf::from("/state/steadyhud"))
    );
    std::env::remove_var("XDG_STATE_HOME");
    std::env::set_var("HOME", "/home/someone");
    assert_eq!(
        steadyhud_log::default_log_dir(),
        Some(PathBuf::from("/home/someone/.local/state/steadyhud"))
    );
}
