//! `steadyhud install` / `steadyhud uninstall`: a user-level implicit layer,
//! no root needed, for 64-bit and 32-bit games through one manifest.
//!
//! The way MangoHud installs: the manifest
//! `$XDG_DATA_HOME/vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json`
//! names `<data home>/steadyhud/$LIB/libsteadyhud.so`, `$LIB` literally. The
//! Vulkan loader hands that absolute path to `dlopen`, and glibc expands the
//! token to the process's own library folder, so a 64-bit game loads the
//! 64-bit copy and a 32-bit game the 32-bit one:
//!
//! | `$LIB`, 64-bit process | `$LIB`, 32-bit process | distributions |
//! |---|---|---|
//! | `lib/x86_64-linux-gnu` | `lib/i386-linux-gnu` | Debian, Ubuntu |
//! | `lib64` | `lib` | Fedora, openSUSE, RHEL |
//! | `lib` | `lib32` | Arch |
//!
//! The 64-bit expansion is read from glibc at run time ([`lib_expansion`]);
//! the 32-bit one comes from this table ([`lib32_expansion`]). Elsewhere
//! the 32-bit copy is not installed (one line says so). A 32-bit game
//! without a 32-bit copy costs one loader line, nothing more.
//!
//! Each library is written to a temporary name and renamed (a game that has
//! the old copy mapped keeps running), then the manifest. Copying means a
//! later `cargo clean` or rebuild does not break or silently change the
//! installed layer. The layer then loads in every Vulkan app started with
//! `STEADYHUD=1`.

use clap::Args;
use std::ffi::{CStr, CString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The manifest shipped in `layer-manifest/`, with a relative library path
/// that `install` and `run` replace by an absolute one.
pub const MANIFEST_TEMPLATE: &str =
    include_str!("../../../layer-manifest/VK_LAYER_STEADYHUD_overlay.json");
/// File name of the manifest.
pub const MANIFEST_NAME: &str = "VK_LAYER_STEADYHUD_overlay.json";
/// File name of the layer library.
pub const LIB_NAME: &str = "libsteadyhud.so";
/// File name of the GL library (`LD_PRELOAD`), installed and looked for
/// beside the layer library of the same width.
pub const GL_LIB_NAME: &str = "libsteadyhud_gl.so";
/// The 32-bit build of the layer, relative to the folder above the one
/// holding this program (`target/release/steadyhud` -> `target/`): where the
/// i686 build puts it.
pub const LIB32_BUILD: &str = "i686/i686-unknown-linux-gnu/release/libsteadyhud.so";
/// The 32-bit library in an installed prefix (`bin/steadyhud` -> `lib32/`).
pub const LIB32_PREFIX: &str = "lib32/libsteadyhud.so";

/// `$LIB` of a 64-bit process -> `$LIB` of a 32-bit one on the same system.
pub const LIB_PAIRS: &[(&str, &str)] = &[
    ("lib/x86_64-linux-gnu", "lib/i386-linux-gnu"),
    ("lib64", "lib"),
    ("lib", "lib32"),
];

/// Why installing or uninstalling failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot find {LIB_NAME} next to {exe} (looked in {looked}); build it with `cargo build` or pass --lib PATH")]
    LibNotFound { exe: String, looked: String },
    #[error("layer library {0} does not exist")]
    LibMissing(PathBuf),
    #[error("{path} is not an ELF library ({flag} takes the {want}-bit libsteadyhud.so)")]
    NotElf {
        path: PathBuf,
        flag: &'static str,
        want: u32,
    },
    #[error("{path} is a {found}-bit library; {flag} takes the {want}-bit libsteadyhud.so")]
    WrongClass {
        path: PathBuf,
        flag: &'static str,
        found: u32,
        want: u32,
    },
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
    /// 32-bit layer library, for 32-bit games (default: ../lib32/libsteadyhud.so
    /// beside this program, or the i686 build
    /// target/i686/i686-unknown-linux-gnu/release/libsteadyhud.so; none: 64-bit only).
    #[arg(long, value_name = "PATH", conflicts_with = "no_copy")]
    pub lib32: Option<PathBuf>,
    /// Point the manifest at the library where it is instead of copying it
    /// (64-bit only).
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

/// The folder holding every installed copy; `uninstall` empties it.
pub fn install_dir(data_home: &Path) -> PathBuf {
    data_home.join("steadyhud")
}

/// Where the copy for a process whose `$LIB` expands to `lib` goes.
pub fn installed_lib_path(data_home: &Path, lib: &str) -> PathBuf {
    install_dir(data_home).join(lib).join(LIB_NAME)
}

/// The single copy of the layout before `$LIB` (still used when
/// [`lib_expansion`] cannot tell); `install` removes it when it writes the
/// `$LIB` layout.
pub fn flat_lib_path(data_home: &Path) -> PathBuf {
    install_dir(data_home).join(LIB_NAME)
}

/// The manifest's `library_path`: `<data home>/steadyhud/$LIB/libsteadyhud.so`.
pub fn lib_token_path(data_home: &Path) -> PathBuf {
    install_dir(data_home).join("$LIB").join(LIB_NAME)
}

/// What `$LIB` expands to in a 32-bit process on the system where a 64-bit
/// one expands it to `lib64` ([`LIB_PAIRS`]); `None` when unknown.
pub fn lib32_expansion(lib64: &str) -> Option<&'static str> {
    LIB_PAIRS
        .iter()
        .find(|(l64, _)| *l64 == lib64)
        .map(|(_, l32)| *l32)
}

/// What glibc's `dlopen` expands `$LIB` to in this process
/// (`lib/x86_64-linux-gnu` on Debian), asked of glibc itself; `None` when it
/// is none of the known values nor the folder libc was loaded from.
pub fn lib_expansion() -> Option<String> {
    let mut candidates: Vec<String> = LIB_PAIRS
        .iter()
        .flat_map(|(a, b)| [a.to_string(), b.to_string()])
        .collect();
    candidates.extend(libc_folder());
    probe_lib_expansion(&candidates)
}

/// The folder the C library was loaded from, relative to `/` or `/usr`
/// (`lib/x86_64-linux-gnu` for `/lib/x86_64-linux-gnu/libc.so.6`): on most
/// systems what `$LIB` expands to, so an unlisted layout still gets probed.
fn libc_folder() -> Option<String> {
    // SAFETY: dladdr only reads the loader's tables; the name it returns
    // stays valid while libc is loaded, i.e. for the whole process.
    let file = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let addr = libc::malloc as *const () as *const libc::c_void;
        if libc::dladdr(addr, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        CStr::from_ptr(info.dli_fname).to_str().ok()?.to_owned()
    };
    let dir = Path::new(&file).parent()?.to_str()?;
    let rel = dir.strip_prefix("/usr/").or(dir.strip_prefix('/'))?;
    (!rel.is_empty()).then(|| rel.to_owned())
}

/// Asks glibc what `$LIB` expands to, among `candidates`. `dlopen` reports a
/// missing file under the name it was given (token unexpanded) but a file
/// that is there and is no ELF object under the expanded name, so: a
/// private folder with an empty `probe.so` under each candidate,
/// `dlopen("<folder>/$LIB/probe.so")`, and the expansion read back from
/// `dlerror()` ("<folder>/lib64/probe.so: file too short").
pub fn probe_lib_expansion(candidates: &[impl AsRef<str>]) -> Option<String> {
    probe_in(&std::env::temp_dir(), candidates)
}

/// [`probe_lib_expansion`] with its private folder made (and removed) in `base`.
fn probe_in(base: &Path, candidates: &[impl AsRef<str>]) -> Option<String> {
    const PROBE: &str = "steadyhud-lib-probe.so";
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = base.join(format!(
        "steadyhud-lib-probe-{}-{nanos}",
        std::process::id()
    ));
    struct Remove<'a>(&'a Path);
    impl Drop for Remove<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0);
        }
    }
    std::fs::create_dir(&dir).ok()?;
    let _remove = Remove(&dir);
    let known: Vec<&str> = candidates
        .iter()
        .map(AsRef::as_ref)
        .filter(|c| {
            let p = Path::new(c);
            !c.is_empty()
                && p.is_relative()
                && p.components()
                    .all(|x| matches!(x, std::path::Component::Normal(_)))
        })
        .collect();
    for c in &known {
        let sub = dir.join(c);
        std::fs::create_dir_all(&sub).ok()?;
        std::fs::write(sub.join(PROBE), b"").ok()?;
    }
    let token_path = dir.join("$LIB").join(PROBE);
    let c_path = CString::new(token_path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a plain dlopen of an empty file, which fails; dlerror's text
    // is copied before any other dl* call on this thread.
    let message = unsafe {
        let handle = libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if !handle.is_null() {
            libc::dlclose(handle);
            return None;
        }
        let e = libc::dlerror();
        if e.is_null() {
            return None;
        }
        CStr::from_ptr(e).to_string_lossy().into_owned()
    };
    let prefix = format!("{}/", dir.display());
    let rest = message.strip_prefix(&prefix)?;
    let expanded = &rest[..rest.find(&format!("/{PROBE}:"))?];
    known
        .iter()
        .find(|c| **c == expanded)
        .map(|c| c.to_string())
}

/// 32- or 64-bit, from an ELF header's class byte (`EI_CLASS`: 1 or 2);
/// `None` for a file that is not ELF.
pub fn elf_bits(path: &Path) -> Result<Option<u32>, InstallError> {
    let mut head = [0u8; 5];
    let mut f = std::fs::File::open(path).map_err(io("reading", path))?;
    match f.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(io("reading", path)(e)),
    }
    Ok(match head {
        [0x7f, b'E', b'L', b'F', 1] => Some(32),
        [0x7f, b'E', b'L', b'F', 2] => Some(64),
        _ => None,
    })
}

/// Errors unless `path` is an ELF file of `want` bits (`flag` names the
/// option it came from, for the message).
pub fn check_bits(path: &Path, want: u32, flag: &'static str) -> Result<(), InstallError> {
    let path_buf = || path.to_path_buf();
    match elf_bits(path)? {
        Some(b) if b == want => Ok(()),
        Some(found) => Err(InstallError::WrongClass {
            path: path_buf(),
            flag,
            found,
            want,
        }),
        None => Err(InstallError::NotElf {
            path: path_buf(),
            flag,
            want,
        }),
    }
}

fn absolute_file(p: &Path) -> Result<PathBuf, InstallError> {
    let p = std::path::absolute(p).map_err(io("resolving", p))?;
    if p.is_file() {
        Ok(p)
    } else {
        Err(InstallError::LibMissing(p))
    }
}

fn exe_dir() -> Result<(PathBuf, PathBuf), InstallError> {
    let exe = std::env::current_exe().map_err(io("locating", Path::new("the running program")))?;
    let dir = exe.parent().unwrap_or(Path::new("/")).to_path_buf();
    Ok((exe, dir))
}

/// The layer library: `--lib`, else next to the running program (cargo's
/// `target/<profile>/`), else `../lib/` of it (an installed prefix).
pub fn find_lib(explicit: Option<&Path>) -> Result<PathBuf, InstallError> {
    if let Some(p) = explicit {
        return absolute_file(p);
    }
    let (exe, dir) = exe_dir()?;
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

/// Where a 32-bit library is looked for without `--lib32`, beside this
/// program: the folder above its own holds [`LIB32_PREFIX`] (an installed
/// prefix) or [`LIB32_BUILD`] (cargo's `target/`).
pub fn lib32_candidates() -> Result<Vec<PathBuf>, InstallError> {
    let (_, dir) = exe_dir()?;
    let up = dir.parent().unwrap_or(&dir);
    Ok(vec![up.join(LIB32_PREFIX), up.join(LIB32_BUILD)])
}

/// The 32-bit library: `--lib32` (which must exist), else the first of
/// [`lib32_candidates`] that does; `Err(looked)` when none does.
pub fn find_lib32(explicit: Option<&Path>) -> Result<Result<PathBuf, Vec<PathBuf>>, InstallError> {
    if let Some(p) = explicit {
        return absolute_file(p).map(Ok);
    }
    let looked = lib32_candidates()?;
    Ok(match looked.iter().find(|c| c.is_file()) {
        Some(c) => Ok(c.canonicalize().map_err(io("resolving", c))?),
        None => Err(looked),
    })
}

/// The manifest text naming `lib` (absolute, possibly with `$LIB`).
/// `implicit = false` drops the enable/disable environment keys (for an
/// explicitly enabled layer).
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

/// Prefix of the temporary names [`write_atomic`] writes through.
fn tmp_prefix(name: &str) -> String {
    format!(".{name}.tmp")
}

/// Writes `bytes` to `path` through a temporary file and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), InstallError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("creating", dir))?;
    let tmp = dir.join(format!(
        "{}{}",
        tmp_prefix(path.file_name().and_then(|n| n.to_str()).unwrap_or("x")),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).map_err(io("writing", &tmp))?;
    std::fs::rename(&tmp, path).map_err(io("renaming into", path))
}

fn copy_atomic(from: &Path, to: &Path) -> Result<(), InstallError> {
    let bytes = std::fs::read(from).map_err(io("reading", from))?;
    write_atomic(to, &bytes)
}

/// Removes `path` if it is there; whether it was.
fn remove_if_present(path: &Path) -> Result<bool, InstallError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io("removing", path)(e)),
    }
}

/// Removes the empty folders from `dir` up to and including `top`.
fn prune_empty(mut dir: &Path, top: &Path) {
    while dir.starts_with(top) && std::fs::remove_dir(dir).is_ok() {
        match dir.parent() {
            Some(p) => dir = p,
            None => break,
        }
    }
}

/// What `install` did.
#[derive(Debug)]
pub struct Installed {
    pub manifest: PathBuf,
    /// The manifest's `library_path` (with `$LIB` when copied).
    pub library_path: PathBuf,
    /// The 64-bit library the manifest leads to.
    pub lib: PathBuf,
    /// The installed 32-bit copy.
    pub lib32: Option<PathBuf>,
    /// Why a 32-bit library that was given or found is not installed.
    pub no_lib32: Option<String>,
    /// The GL libraries copied beside the layer libraries (those built).
    pub gl: Vec<PathBuf>,
}

/// Copies the GL library beside layer library `src` (if one was built) to
/// beside the installed copy `dest`, or removes a stale one there.
fn place_gl(src: &Path, dest: &Path) -> Result<Option<PathBuf>, InstallError> {
    let (from, to) = (
        src.with_file_name(GL_LIB_NAME),
        dest.with_file_name(GL_LIB_NAME),
    );
    if from.is_file() {
        copy_atomic(&from, &to)?;
        Ok(Some(to))
    } else {
        remove_if_present(&to)?;
        Ok(None)
    }
}

/// Installs the layer for the current user under `data_home`: `lib` (64-bit)
/// and `lib32` (32-bit, optional), copied to their `$LIB` folders, or with
/// `copy = false` the manifest naming `lib` where it is (64-bit only).
pub fn install(
    data_home: &Path,
    lib: &Path,
    lib32: Option<&Path>,
    copy: bool,
) -> Result<Installed, InstallError> {
    let expansion = if copy { lib_expansion() } else { None };
    install_with(data_home, lib, lib32, copy, expansion.as_deref())
}

/// [`install`] with the 64-bit `$LIB` expansion given (`None`: unknown,
/// which installs the 64-bit library only, at [`flat_lib_path`]).
pub fn install_with(
    data_home: &Path,
    lib: &Path,
    lib32: Option<&Path>,
    copy: bool,
    lib64_expansion: Option<&str>,
) -> Result<Installed, InstallError> {
    check_bits(lib, 64, "--lib")?;
    if let Some(l32) = lib32 {
        check_bits(l32, 32, "--lib32")?;
    }
    let manifest = manifest_path(data_home);
    // Why a 32-bit library that was given or found is not installed.
    let not_installed = |why: String| lib32.map(|_| why);
    let mut no_lib32 = None;
    let mut installed32 = None;
    let (library_path, installed64) = match (copy, lib64_expansion) {
        (false, _) => {
            no_lib32 = not_installed("--no-copy installs the 64-bit library only".into());
            (lib.to_path_buf(), lib.to_path_buf())
        }
        (true, None) => {
            no_lib32 = not_installed(
                "cannot tell what glibc expands $LIB to here, so the manifest names \
                 the 64-bit copy only"
                    .into(),
            );
            let dest = flat_lib_path(data_home);
            copy_atomic(lib, &dest)?;
            (dest.clone(), dest)
        }
        (true, Some(e64)) => {
            let dest = installed_lib_path(data_home, e64);
            copy_atomic(lib, &dest)?;
            match (lib32, lib32_expansion(e64)) {
                (Some(l32), Some(e32)) => {
                    let dest32 = installed_lib_path(data_home, e32);
                    copy_atomic(l32, &dest32)?;
                    installed32 = Some(dest32);
                }
                (_, e32) => {
                    no_lib32 = not_installed(format!(
                        "no known 32-bit $LIB folder for a system whose 64-bit one is {e64}"
                    ));
                    // A copy left by an earlier install would no longer
                    // match the 64-bit one: 32-bit games go without.
                    if let Some(e32) = e32 {
                        let stale = installed_lib_path(data_home, e32);
                        if remove_if_present(&stale)? {
                            prune_empty(stale.parent().unwrap(), &install_dir(data_home));
                        }
                    }
                }
            }
            (lib_token_path(data_home), dest)
        }
    };
    let mut gl = Vec::new();
    if copy {
        let copies = [
            (Some(lib), Some(&installed64)),
            (lib32, installed32.as_ref()),
        ];
        for (src, dest) in copies {
            if let (Some(src), Some(dest)) = (src, dest) {
                gl.extend(place_gl(src, dest)?);
            }
        }
    }
    write_atomic(&manifest, manifest_json(&library_path, true)?.as_bytes())?;
    if copy && lib64_expansion.is_some() {
        // The single copy of the layout before `$LIB`: nothing names it now.
        remove_if_present(&flat_lib_path(data_home))?;
    }
    Ok(Installed {
        manifest,
        library_path,
        lib: installed64,
        lib32: installed32,
        no_lib32,
        gl,
    })
}

/// Whether `name` is a file `install` writes into [`install_dir`] (a
/// library, or a temporary one left by an interrupted install).
fn is_installed_file(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    [LIB_NAME, GL_LIB_NAME]
        .iter()
        .any(|n| name == *n || name.starts_with(&tmp_prefix(n)))
}

/// Removes the manifest and every installed library (whatever `$LIB`
/// folder, and the layout before it); returns what was removed.
pub fn uninstall(data_home: &Path) -> Result<Vec<PathBuf>, InstallError> {
    let mut removed = Vec::new();
    let manifest = manifest_path(data_home);
    if remove_if_present(&manifest)? {
        removed.push(manifest);
    }
    let top = install_dir(data_home);
    let mut dirs = vec![top.clone()];
    let mut seen = Vec::new();
    while let Some(dir) = dirs.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io("reading", &dir)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io("reading", &dir))?;
            // file_type does not follow symlinks: a link is never descended.
            let kind = entry.file_type().map_err(io("reading", &entry.path()))?;
            if kind.is_dir() {
                dirs.push(entry.path());
            } else if is_installed_file(&entry.file_name()) {
                let p = entry.path();
                if remove_if_present(&p)? {
                    removed.push(p);
                }
            }
        }
        seen.push(dir);
    }
    // Deepest first; a folder still holding something else stays.
    seen.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in seen {
        let _ = std::fs::remove_dir(d);
    }
    Ok(removed)
}

/// `steadyhud install`.
pub fn run_install(args: InstallArgs) -> ExitCode {
    let result = (|| {
        let lib = find_lib(args.lib.as_deref())?;
        let lib32 = if args.no_copy {
            Err(None)
        } else {
            find_lib32(args.lib32.as_deref())?.map_err(Some)
        };
        let installed = install(&data_home()?, &lib, lib32.as_deref().ok(), !args.no_copy)?;
        Ok::<_, InstallError>((installed, lib32))
    })();
    match result {
        Ok((i, lib32)) => {
            println!("installed layer VK_LAYER_STEADYHUD_overlay");
            println!("  manifest:       {}", i.manifest.display());
            println!("  library_path:   {}", i.library_path.display());
            println!("  64-bit library: {}", i.lib.display());
            let why_not = match (&i.lib32, &i.no_lib32, lib32) {
                (Some(p), _, _) => {
                    println!("  32-bit library: {}", p.display());
                    None
                }
                (None, Some(why), _) => Some(why.clone()),
                (None, None, Err(Some(looked))) => Some(format!(
                    "none found (looked at {}; pass --lib32 PATH)",
                    looked
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                (None, None, _) => Some("--no-copy installs the 64-bit library only".into()),
            };
            if let Some(why) = why_not {
                println!("  32-bit library: {why}: 32-bit games will not get the HUD");
            }
            for g in &i.gl {
                println!("  GL library:     {}", g.display());
            }
            println!("enable it per game with STEADYHUD=1 (e.g. Steam launch options: STEADYHUD=1 %command%)");
            if !i.gl.is_empty() {
                println!(
                    "OpenGL games: steadyhud run -- %command% (or LD_PRELOAD='{}' %command%)",
                    i.library_path.with_file_name(GL_LIB_NAME).display()
                );
            }
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
        let t = manifest_json(&lib_token_path(Path::new("/home/u/.local/share")), true).unwrap();
        let t: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(
            t["layer"]["library_path"],
            "/home/u/.local/share/steadyhud/$LIB/libsteadyhud.so"
        );
    }

    /// glibc's own answer, from the dynamic loader's `--list-diagnostics`
    /// (glibc 2.33+): `dl_dst_lib="lib/x86_64-linux-gnu"`.
    fn ld_so_dst_lib() -> Option<String> {
        let interp = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-x86-64.so.2"]
            .into_iter()
            .find(|p| Path::new(p).exists())?;
        let out = std::process::Command::new(interp)
            .arg("--list-diagnostics")
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let line = text.lines().find(|l| l.starts_with("dl_dst_lib="))?;
        Some(line["dl_dst_lib=".len()..].trim_matches('"').to_owned())
    }

    #[test]
    fn lib_expansion_is_what_glibc_says_and_holds_libc() {
        let e = lib_expansion().expect("glibc expands $LIB to a known folder");
        assert!(
            ["/", "/usr/"]
                .iter()
                .any(|root| Path::new(root).join(&e).join("libc.so.6").exists()),
            "no libc.so.6 in /{e} or /usr/{e}"
        );
        match ld_so_dst_lib() {
            Some(glibc) => assert_eq!(e, glibc, "ld.so --list-diagnostics disagrees"),
            None => eprintln!("ld.so --list-diagnostics unavailable; checked libc.so.6 only"),
        }
    }

    #[test]
    fn probe_answers_only_from_its_candidates_and_leaves_nothing() {
        let e = lib_expansion().unwrap();
        let base = tempfile::tempdir().unwrap();
        let decoys = ["nope", "lib/nope-linux-gnu", "../etc", "/abs", ""];
        assert_eq!(probe_in(base.path(), &decoys), None);
        let mut with = decoys.map(String::from).to_vec();
        with.insert(2, e.clone());
        assert_eq!(probe_in(base.path(), &with).as_deref(), Some(e.as_str()));
        let left: Vec<_> = std::fs::read_dir(base.path()).unwrap().collect();
        assert!(left.is_empty(), "probe folders left: {left:?}");
    }

    #[test]
    fn lib32_folder_table() {
        assert_eq!(
            lib32_expansion("lib/x86_64-linux-gnu"),
            Some("lib/i386-linux-gnu")
        );
        assert_eq!(lib32_expansion("lib64"), Some("lib"));
        assert_eq!(lib32_expansion("lib"), Some("lib32"));
        assert_eq!(lib32_expansion("lib/aarch64-linux-gnu"), None);
        assert_eq!(lib32_expansion(""), None);
    }

    /// The first 52 bytes of a 32-bit x86 shared object (`ET_DYN`,
    /// `EM_386`): enough for the class check, not loadable.
    fn fake_elf32() -> Vec<u8> {
        let mut h = vec![0u8; 52];
        h[..7].copy_from_slice(b"\x7fELF\x01\x01\x01");
        h[16] = 3; // e_type ET_DYN
        h[18] = 3; // e_machine EM_386
        h[20] = 1; // e_version
        h
    }

    struct Files {
        dir: tempfile::TempDir,
        lib64: PathBuf,
        lib32: PathBuf,
    }

    fn files() -> Files {
        let dir = tempfile::tempdir().unwrap();
        let lib64 = dir.path().join("build64/libsteadyhud.so");
        let lib32 = dir.path().join("build32/libsteadyhud.so");
        std::fs::create_dir_all(lib64.parent().unwrap()).unwrap();
        std::fs::create_dir_all(lib32.parent().unwrap()).unwrap();
        // This test binary is a 64-bit ELF file like the library.
        std::fs::copy(std::env::current_exe().unwrap(), &lib64).unwrap();
        std::fs::write(&lib32, fake_elf32()).unwrap();
        Files { dir, lib64, lib32 }
    }

    /// Every file under `dir`, relative to it.
    fn all_files(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                if e.file_type().unwrap().is_dir() {
                    todo.push(e.path());
                } else {
                    let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
                    out.push(rel);
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn elf_class_byte() {
        let f = files();
        assert_eq!(elf_bits(&f.lib64).unwrap(), Some(64));
        assert_eq!(elf_bits(&f.lib32).unwrap(), Some(32));
        let text = f.dir.path().join("text.so");
        std::fs::write(&text, "not a library at all").unwrap();
        assert_eq!(elf_bits(&text).unwrap(), None);
        let short = f.dir.path().join("short.so");
        std::fs::write(&short, b"\x7fEL").unwrap();
        assert_eq!(elf_bits(&short).unwrap(), None);
        let e = check_bits(&f.lib32, 64, "--lib").unwrap_err().to_string();
        assert!(
            e.contains("is a 32-bit library; --lib takes the 64-bit"),
            "{e}"
        );
        let e = check_bits(&text, 32, "--lib32").unwrap_err().to_string();
        assert!(e.contains("is not an ELF library"), "{e}");
    }

    #[test]
    fn both_libraries_at_their_lib_folders_then_uninstall_leaves_nothing() {
        let f = files();
        let data = f.dir.path().join("data");
        // The layout before `$LIB`, from an earlier install: replaced.
        std::fs::create_dir_all(install_dir(&data)).unwrap();
        std::fs::write(flat_lib_path(&data), b"old").unwrap();
        let i = install_with(&data, &f.lib64, Some(&f.lib32), true, Some("lib64")).unwrap();
        assert_eq!(i.library_path, data.join("steadyhud/$LIB/libsteadyhud.so"));
        assert_eq!(i.lib, data.join("steadyhud/lib64/libsteadyhud.so"));
        assert_eq!(i.lib32, Some(data.join("steadyhud/lib/libsteadyhud.so")));
        assert_eq!(i.no_lib32, None);
        assert_eq!(
            all_files(&data),
            [
                "steadyhud/lib/libsteadyhud.so",
                "steadyhud/lib64/libsteadyhud.so",
                "vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json",
            ]
        );
        assert_eq!(std::fs::read(i.lib32.unwrap()).unwrap(), fake_elf32());
        assert_eq!(
            i.gl,
            Vec::<PathBuf>::new(),
            "no GL library built: none installed"
        );

        // With GL libraries built beside both: each beside its layer copy.
        std::fs::write(f.lib64.with_file_name(GL_LIB_NAME), b"gl64").unwrap();
        std::fs::write(f.lib32.with_file_name(GL_LIB_NAME), b"gl32").unwrap();
        let i = install_with(&data, &f.lib64, Some(&f.lib32), true, Some("lib64")).unwrap();
        let gl = |d: &str| data.join(format!("steadyhud/{d}/{GL_LIB_NAME}"));
        assert_eq!(i.gl, [gl("lib64"), gl("lib")]);
        assert_eq!(std::fs::read(gl("lib64")).unwrap(), b"gl64");
        assert_eq!(std::fs::read(gl("lib")).unwrap(), b"gl32");
        // An interrupted install's temporary copies go too.
        std::fs::write(data.join("steadyhud/lib/.libsteadyhud.so.tmp77"), b"x").unwrap();
        std::fs::write(data.join("steadyhud/lib/.libsteadyhud_gl.so.tmp77"), b"x").unwrap();
        let removed = uninstall(&data).unwrap();
        assert_eq!(removed.len(), 7, "{removed:?}");
        assert_eq!(all_files(&data), Vec::<String>::new());
        assert!(!install_dir(&data).exists());
        assert_eq!(uninstall(&data).unwrap(), Vec::<PathBuf>::new());
    }

    #[test]
    fn without_a_32_bit_folder_only_the_64_bit_library_is_installed() {
        let f = files();
        let data = f.dir.path().join("data");
        // Unknown 64-bit folder: no 32-bit one to map it to.
        let i = install_with(&data, &f.lib64, Some(&f.lib32), true, Some("lib/odd")).unwrap();
        assert_eq!(i.lib32, None);
        assert!(i.no_lib32.unwrap().contains("lib/odd"));
        assert_eq!(i.lib, data.join("steadyhud/lib/odd/libsteadyhud.so"));
        // Unknown expansion: the absolute layout, 64-bit only.
        let i = install_with(&data, &f.lib64, Some(&f.lib32), true, None).unwrap();
        assert_eq!(i.library_path, flat_lib_path(&data));
        assert!(i.no_lib32.unwrap().contains("$LIB"));
        // No 32-bit library this time: the copy of an earlier install goes.
        install_with(&data, &f.lib64, Some(&f.lib32), true, Some("lib")).unwrap();
        assert!(data.join("steadyhud/lib32/libsteadyhud.so").is_file());
        let i = install_with(&data, &f.lib64, None, true, Some("lib")).unwrap();
        assert_eq!((i.lib32, i.no_lib32), (None, None));
        assert!(!data.join("steadyhud/lib32").exists());
        uninstall(&data).unwrap();
        assert_eq!(all_files(&data), Vec::<String>::new());
    }

    #[test]
    fn wrong_class_writes_nothing() {
        let f = files();
        let data = f.dir.path().join("data");
        let e = install_with(&data, &f.lib32, None, true, Some("lib64")).unwrap_err();
        assert!(
            matches!(e, InstallError::WrongClass { found: 32, .. }),
            "{e}"
        );
        let e = install_with(&data, &f.lib64, Some(&f.lib64), true, Some("lib64")).unwrap_err();
        assert!(
            matches!(e, InstallError::WrongClass { found: 64, .. }),
            "{e}"
        );
        assert!(!data.exists());
    }
}
