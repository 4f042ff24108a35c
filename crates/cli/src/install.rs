//! `steadyhud install` / `steadyhud uninstall`: a user-level implicit layer,
//! no root needed.
//!
//! The library is copied to `$XDG_DATA_HOME/steadyhud/libsteadyhud.so`
//! (written to a temporary name and renamed, so a game that has the old copy
//! mapped keeps running) and the manifest
//! `$XDG_DATA_HOME/vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json`
//! names that copy by absolute path. Copying means a later `cargo clean` or
//! rebuild does not break or silently change the installed layer.
//! The layer then loads in every Vulkan app started with `STEADYHUD=1`.

use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The manifest shipped in `layer-manifest/`, with a relative library path.
pub const MANIFEST_TEMPLATE: &str =
    include_str!("../../../layer-manifest/VK_LAYER_STEADYHUD_overlay.json");
/// File name of the manifest.
pub const MANIFEST_NAME: &str = "VK_LAYER_STEADYHUD_overlay.json";
/// File name of the layer library.
pub const LIB_NAME: &str = "libsteadyhud.so";

/// Why installing or uninstalling failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot find {LIB_NAME} next to {exe} (looked in {looked}); build it with `cargo build` or pass --lib PATH")]
    LibNotFound { exe: String, looked: String },
    #[error("layer library {0} does not exist")]
    LibMissing(PathBuf),
    #[error("neither XDG_DATA_HOME nor HOME is set; cannot find the user data folder")]
    NoDataHome,
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("bad built-in manifest template: {0}")]
    Template(#[from] serde_json::Error),
}

fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> InstallError + 'a {
    move |source| InstallError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// `steadyhud install` options.
#[derive(Args, Debug)]
pub struct InstallArgs {
    /// Layer library to install (default: libsteadyhud.so next to this program).
    #[arg(long, value_name = "PATH")]
    pub lib: Option<PathBuf>,
    /// Point the manifest at the library where it is instead of copying it.
    #[arg(long)]
    pub no_copy: bool,
}

/// `steadyhud uninstall` options.
#[derive(Args, Debug)]
pub struct UninstallArgs {}

/// `$XDG_DATA_HOME`, or `~/.local/share` when unset or relative (XDG spec).
pub fn data_home() -> Result<PathBuf, InstallError> {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
        if d.is_absolute() {
            return Ok(d);
        }
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or(InstallError::NoDataHome)?;
    Ok(PathBuf::from(home).join(".local/share"))
}

/// Where the implicit manifest goes.
pub fn manifest_path(data_home: &Path) -> PathBuf {
    data_home
        .join("vulkan/implicit_layer.d")
        .join(MANIFEST_NAME)
}

/// Where the installed copy of the library goes.
pub fn installed_lib_path(data_home: &Path) -> PathBuf {
    data_home.join("steadyhud").join(LIB_NAME)
}

/// The layer library: `--lib`, else next to the running program (cargo's
/// `target/<profile>/`), else `../lib/` of it (an installed prefix).
pub fn find_lib(explicit: Option<&Path>) -> Result<PathBuf, InstallError> {
    if let Some(p) = explicit {
        let p = std::path::absolute(p).map_err(io("resolving", p))?;
        return if p.is_file() {
            Ok(p)
        } else {
            Err(InstallError::LibMissing(p))
        };
    }
    let exe = std::env::current_exe().map_err(io("locating", Path::new("the running program")))?;
    let dir = exe.parent().unwrap_or(Path::new("/"));
    let candidates = [
        dir.join(LIB_NAME),
        dir.join("../lib").join(LIB_NAME),
        dir.join("..").join(LIB_NAME),
    ];
    for c in &candidates {
        if c.is_file() {
            return c.canonicalize().map_err(io("resolving", c));
        }
    }
    Err(InstallError::LibNotFound {
        exe: exe.display().to_string(),
        looked: candidates
            .iter()
            .map(|c| c.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// The manifest text naming `lib` (absolute). `implicit = false` drops the
/// enable/disable environment keys (for an explicitly enabled layer).
pub fn manifest_json(lib: &Path, implicit: bool) -> Result<String, InstallError> {
    let mut v: serde_json::Value = serde_json::from_str(MANIFEST_TEMPLATE)?;
    let layer = &mut v["layer"];
    layer["library_path"] = serde_json::Value::String(lib.display().to_string());
    if !implicit {
        if let Some(o) = layer.as_object_mut() {
            o.remove("enable_environment");
            o.remove("disable_environment");
        }
    }
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}

/// Writes `bytes` to `path` through a temporary file and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), InstallError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("creating", dir))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("x"),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).map_err(io("writing", &tmp))?;
    std::fs::rename(&tmp, path).map_err(io("renaming into", path))
}

/// What `install` did.
pub struct Installed {
    pub manifest: PathBuf,
    pub lib: PathBuf,
}

/// Installs the layer for the current user under `data_home`.
pub fn install(data_home: &Path, lib: &Path, copy: bool) -> Result<Installed, InstallError> {
    let lib = if copy {
        let dest = installed_lib_path(data_home);
        let bytes = std::fs::read(lib).map_err(io("reading", lib))?;
        write_atomic(&dest, &bytes)?;
        dest
    } else {
        lib.to_path_buf()
    };
    let manifest = manifest_path(data_home);
    write_atomic(&manifest, manifest_json(&lib, true)?.as_bytes())?;
    Ok(Installed { manifest, lib })
}

/// Removes the manifest and the installed copy; returns what was removed.
pub fn uninstall(data_home: &Path) -> Result<Vec<PathBuf>, InstallError> {
    let mut removed = Vec::new();
    for p in [manifest_path(data_home), installed_lib_path(data_home)] {
        match std::fs::remove_file(&p) {
            Ok(()) => removed.push(p),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(InstallError::Io {
                    action: "removing",
                    path: p,
                    source: e,
                })
            }
        }
    }
    let _ = std::fs::remove_dir(data_home.join("steadyhud")); // only if empty
    Ok(removed)
}

/// `steadyhud install`.
pub fn run_install(args: InstallArgs) -> ExitCode {
    let result = (|| {
        let lib = find_lib(args.lib.as_deref())?;
        install(&data_home()?, &lib, !args.no_copy)
    })();
    match result {
        Ok(i) => {
            println!("installed layer VK_LAYER_STEADYHUD_overlay");
            println!("  manifest: {}", i.manifest.display());
            println!("  library:  {}", i.lib.display());
            println!("enable it per game with STEADYHUD=1 (e.g. Steam launch options: STEADYHUD=1 %command%)");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("steadyhud install: {e}");
            ExitCode::from(1)
        }
    }
}

/// `steadyhud uninstall`.
pub fn run_uninstall(_args: UninstallArgs) -> ExitCode {
    match data_home().and_then(|d| uninstall(&d)) {
        Ok(removed) if removed.is_empty() => {
            println!("steadyhud layer was not installed; nothing to remove");
            ExitCode::SUCCESS
        }
        Ok(removed) => {
            for p in removed {
                println!("removed {}", p.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("steadyhud uninstall: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_names_absolute_lib_and_keeps_env_keys() {
        let m = manifest_json(Path::new("/opt/x/libsteadyhud.so"), true).unwrap();
        let v: serde_json::Value = serde_json::from_str(&m).unwrap();
        assert_eq!(v["layer"]["library_path"], "/opt/x/libsteadyhud.so");
        assert_eq!(v["layer"]["enable_environment"]["STEADYHUD"], "1");
        assert_eq!(v["layer"]["disable_environment"]["DISABLE_STEADYHUD"], "1");
        let e: serde_json::Value =
            serde_json::from_str(&manifest_json(Path::new("/l.so"), false).unwrap()).unwrap();
        assert!(e["layer"].get("enable_environment").is_none());
        assert_eq!(e["layer"]["name"], "VK_LAYER_STEADYHUD_overlay");
    }
}
