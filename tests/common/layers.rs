//! The Vulkan layers a test runs with: the steadyhud layer's name,
//! manifest and the lines it prints, the Khronos validation layer (with
//! synchronization validation) and the checks that the loader really
//! inserts them, in the right order, and that they reported nothing.

use super::{run, tail, CommandExt, Harness, RunOutput};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Name of the layer as in the manifest.
pub const LAYER_NAME: &str = "VK_LAYER_STEADYHUD_overlay";

/// Validation layer name.
pub const VALIDATION: &str = "VK_LAYER_KHRONOS_validation";

/// Start of the one line the layer prints per device when `gpu_timing=auto`
/// (the default) leaves GPU timing off on a CPU device, as on lavapipe.
pub const CPU_DEVICE_NOTE: &str = "steadyhud: GPU timing off on a CPU device (";

/// Start of the one line the layer prints per session naming the system
/// readings it cannot read (on this machine: no /sys, no PCI bus id on
/// lavapipe).
pub const SENSORS_NOTE: &str = "steadyhud: system readings: not readable here: ";

/// A `steadyhud:` line other than [`CPU_DEVICE_NOTE`] and [`SENSORS_NOTE`]:
/// something the layer complains about, which the tests on lavapipe do not
/// expect by default.
pub fn is_layer_complaint(line: &str) -> bool {
    line.starts_with("steadyhud:")
        && !line.starts_with(CPU_DEVICE_NOTE)
        && !line.starts_with(SENSORS_NOTE)
}

/// Writes `vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json` under
/// `data_home` from the repo's manifest with an absolute `library_path`.
pub fn write_manifest(data_home: &Path, lib: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("layer-manifest/VK_LAYER_STEADYHUD_overlay.json");
    let text =
        std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("read {}: {e}", src.display()));
    let mut json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", src.display()));
    json["layer"]["library_path"] = serde_json::Value::String(lib.to_string_lossy().into_owned());
    let dir = data_home.join("vulkan/implicit_layer.d");
    std::fs::create_dir_all(&dir).expect("create implicit_layer.d");
    let dst = dir.join(format!("{LAYER_NAME}.json"));
    std::fs::write(&dst, serde_json::to_string_pretty(&json).unwrap()).expect("write manifest");
    dst
}

/// Switches for the validation layer's optional checks (see
/// [`CommandExt::validation`]).
pub trait ValidationExt {
    /// Enable the Khronos validation layer with synchronization validation
    /// (`VK_LAYER_ENABLES`); thread-safety checks are on by default.
    fn sync_validation(&mut self) -> &mut Self;
}

/// `VK_LAYER_ENABLES` value that turns on synchronization validation.
pub const SYNC_VALIDATION: &str = "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT";

impl ValidationExt for Command {
    fn sync_validation(&mut self) -> &mut Self {
        self.env("VK_INSTANCE_LAYERS", VALIDATION)
            .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
    }
}

impl RunOutput {
    /// Whether the loader says it inserted instance layer `name` (the run
    /// had `VK_LOADER_DEBUG=layer`).
    pub fn inserted_layer(&self, name: &str) -> bool {
        self.stderr
            .contains(&format!("Insert instance layer \"{name}\""))
    }

    /// Every stdout/stderr line mentioning a validation VUID.
    pub fn vuid_lines(&self) -> Vec<&str> {
        // Threading and synchronization errors carry no VUID.
        self.output_lines(|l| l.contains("VUID-") || l.contains("Validation Error"))
    }

    /// Panics (showing them) if any `VUID-` line was printed.
    pub fn assert_no_vuid(&self, what: &str) -> &Self {
        let v = self.vuid_lines();
        assert!(
            v.is_empty(),
            "{what}: {} validation message(s):\n{}",
            v.len(),
            v.join("\n")
        );
        self
    }

    /// Every stdout/stderr line with `Validation Error` (the Khronos
    /// validation layer's error lines: VUIDs, but also threading errors
    /// (`UNASSIGNED-Threading-*`) and synchronization hazards
    /// (`SYNC-HAZARD-*`), which carry no `VUID-`).
    pub fn validation_error_lines(&self) -> Vec<&str> {
        self.output_lines(|l| l.contains("Validation Error"))
    }

    /// Panics (showing the first of them and their count) if any
    /// `Validation Error` line was printed.
    pub fn assert_no_validation_error(&self, what: &str) -> &Self {
        let v = self.validation_error_lines();
        assert!(
            v.is_empty(),
            "{what}: {} `Validation Error` line(s), the first ones:\n{}",
            v.len(),
            v.iter().take(20).copied().collect::<Vec<_>>().join("\n")
        );
        self
    }
}

impl Harness {
    /// Panics unless the loader really inserts the validation layer with
    /// [`CommandExt::validation`] (so a zero `VUID-` count means something).
    pub fn assert_validation_active(&self) {
        let out = run(self
            .testapp(&["--frames", "1"])
            .validation()
            .env("VK_LOADER_DEBUG", "layer"));
        assert!(
            out.inserted_layer(VALIDATION),
            "the validation layer is not active (vulkan-validationlayers installed?):\n{}",
            tail(&out.stderr, 30)
        );
    }

    /// Whether the loader inserts the steadyhud layer into the test app run
    /// with [`CommandExt::layer`] (loader debug output). Clears the log dir.
    pub fn layer_inserted(&self) -> bool {
        let out = run(self
            .testapp(&["--frames", "1"])
            .layer()
            .env("VK_LOADER_DEBUG", "layer"));
        self.clear_logs();
        out.stderr
            .contains(&format!("Insert instance layer \"{LAYER_NAME}\""))
    }

    /// Panics with the loader's view unless `STEADYHUD=1` makes the loader
    /// insert the steadyhud layer from this harness's manifest.
    pub fn assert_layer_inserted(&self) {
        let out = run(self
            .testapp(&["--frames", "1"])
            .layer()
            .env("VK_LOADER_DEBUG", "layer"));
        assert!(
            out.inserted_layer(LAYER_NAME),
            "the loader did not insert {LAYER_NAME} (manifest under {}):\n{}",
            self.data_home.display(),
            tail(&out.stderr, 40)
        );
        self.clear_logs();
    }

    /// Panics unless [`ValidationExt::sync_validation`] really turns on
    /// synchronization validation (so zero hazards mean something): the test
    /// app's `--submit-hazard` records a write-after-write hazard (and
    /// nothing else wrong) that it must report.
    pub fn assert_sync_validation_active(&self) {
        let args = ["--frames", "2", "--submit-thread", "--submit-hazard"];
        let out = run(self.testapp(&args).sync_validation());
        out.assert_success("testapp --submit-hazard with synchronization validation");
        assert!(
            out.validation_error_lines()
                .iter()
                .any(|l| l.contains("SYNC-HAZARD-WRITE-AFTER-WRITE")),
            "synchronization validation is not active ({SYNC_VALIDATION} in VK_LAYER_ENABLES): \
             the deliberate hazard was not reported:\n{}",
            tail(&out.stdout, 20)
        );
    }

    /// Panics unless the loader puts the validation layer between the
    /// steadyhud layer and the driver (so validation sees the calls the
    /// layer makes on its own, e.g. its queue submissions), judged from
    /// `VK_LOADER_DEBUG=layer` output `loader_debug` (the loader prints the
    /// instance layers it inserts from the driver side up).
    pub fn assert_validation_below_layer(&self, loader_debug: &str) {
        let order: Vec<&str> = loader_debug
            .lines()
            .filter_map(|l| {
                l.split("Insert instance layer \"")
                    .nth(1)?
                    .split('"')
                    .next()
            })
            .collect();
        let pos = |name: &str| order.iter().position(|l| *l == name);
        match (pos(VALIDATION), pos(LAYER_NAME)) {
            (Some(v), Some(s)) => assert!(
                v < s,
                "the validation layer sits above {LAYER_NAME} (insert order from the driver up: {order:?}): \
                 it cannot see the layer's own Vulkan calls"
            ),
            _ => panic!("both {VALIDATION} and {LAYER_NAME} must be inserted; loader inserted {order:?}"),
        }
    }
}
