//! [`Harness`]: one isolated environment per test: its X server, private
//! XDG folders with the layer's manifest, a session-log folder, and the
//! commands made in it (the test app, the `steadyhud` CLI, any program).
//! Its other methods live with their job: logs, screenshots, layers, xserver.

use super::{i686, i686_game_env, layer_library, steadyhud_exe, testapp_exe, write_manifest, Xvfb};
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// One isolated environment: X server, XDG dirs with the layer manifest, log dir.
pub struct Harness {
    pub xvfb: Xvfb,
    /// Root of every private directory (deleted on drop).
    pub root: tempfile::TempDir,
    pub runtime_dir: PathBuf,
    pub data_home: PathBuf,
    pub config_home: PathBuf,
    pub state_home: PathBuf,
    /// `STEADYHUD_LOG_DIR` of every command made by this harness.
    pub log_dir: PathBuf,
}

impl Harness {
    /// A harness with a 640x480 screen.
    pub fn new() -> Harness {
        Harness::with_screen(640, 480)
    }

    pub fn with_screen(width: u32, height: u32) -> Harness {
        let lib = layer_library();
        let root = tempfile::Builder::new()
            .prefix("steadyhud-test-")
            .tempdir()
            .expect("create temp dir");
        let runtime_dir = root.path().join("runtime");
        let data_home = root.path().join("data");
        let config_home = root.path().join("config");
        let state_home = root.path().join("state");
        let log_dir = root.path().join("logs");
        for d in [
            &runtime_dir,
            &data_home,
            &config_home,
            &state_home,
            &log_dir,
        ] {
            std::fs::create_dir_all(d).expect("create harness dir");
        }
        std::fs::set_permissions(&runtime_dir, std::fs::Permissions::from_mode(0o700))
            .expect("chmod runtime dir");
        write_manifest(&data_home, &lib);
        let xvfb = Xvfb::start(width, height);
        Harness {
            xvfb,
            root,
            runtime_dir,
            data_home,
            config_home,
            state_home,
            log_dir,
        }
    }

    /// A command with the harness environment: this display, private XDG
    /// dirs, log dir; the layer is NOT enabled and no other layer env leaks in.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut c = Command::new(program);
        for var in [
            "STEADYHUD",
            "DISABLE_STEADYHUD",
            "STEADYHUD_CONFIG",
            "VK_INSTANCE_LAYERS",
            "VK_LOADER_LAYERS_ENABLE",
            "VK_LOADER_LAYERS_DISABLE",
            "VK_LAYER_PATH",
            "VK_ADD_LAYER_PATH",
            "MANGOHUD",
            "ENABLE_VKBASALT",
            "WAYLAND_DISPLAY",
        ] {
            c.env_remove(var);
        }
        c.env("DISPLAY", self.xvfb.display())
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("XDG_DATA_HOME", &self.data_home)
            .env("XDG_CONFIG_HOME", &self.config_home)
            .env("XDG_STATE_HOME", &self.state_home)
            .env("STEADYHUD_LOG_DIR", &self.log_dir)
            .stdin(Stdio::null());
        if i686() {
            i686_game_env(&mut c);
        }
        c
    }

    /// The test app with `args`, layer off.
    pub fn testapp(&self, args: &[&str]) -> Command {
        let mut c = self.command(testapp_exe());
        c.args(args);
        c
    }

    /// The `steadyhud` CLI with `args`.
    pub fn steadyhud(&self, args: &[&str]) -> Command {
        let mut c = self.command(steadyhud_exe());
        c.args(args);
        c
    }

    /// Writes `$XDG_CONFIG_HOME/steadyhud/steadyhud.conf` for every command
    /// of this harness.
    pub fn write_config(&self, text: &str) -> PathBuf {
        let dir = self.config_home.join("steadyhud");
        std::fs::create_dir_all(&dir).expect("create config dir");
        let p = dir.join("steadyhud.conf");
        std::fs::write(&p, text).expect("write steadyhud.conf");
        p
    }
}
