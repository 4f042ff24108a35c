//! Folders only their user may touch: the control sockets' folder and the
//! present tails' folder are made mode 0700, and a folder of that name
//! found already there is used only when it is ours, private and not a
//! symbolic link (another user can make `/dev/shm/steadyhud-<uid>` first,
//! and a folder they can write is a folder whose files they choose). And
//! files in such folders opened only when they are ours ([`open_own`]),
//! and replaced through a temporary file that is never someone's link
//! ([`replace_file`]).

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a folder is not used.
#[derive(Debug)]
pub enum DirError {
    /// It could not be made or looked at.
    Io { path: PathBuf, source: io::Error },
    /// It is there but not ours alone (`why`: owner, mode, kind).
    NotPrivate { path: PathBuf, why: String },
}

impl std::fmt::Display for DirError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            DirError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            DirError::NotPrivate { path, why } => {
                write!(f, "{} is not private ({why})", path.display())
            }
        }
    }
}

impl std::error::Error for DirError {}

/// This process's effective uid.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Creates `dir` (mode 0700; its parent must exist) or checks that the
/// folder already there is a folder (not a link to one), owned by us, and
/// open to nobody else.
pub fn ensure(dir: &Path) -> Result<(), DirError> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(DirError::Io {
                path: dir.to_path_buf(),
                source,
            })
        }
    }
    check(dir)
}

/// [`ensure`] without making it: `Ok(false)` when there is no such folder.
pub fn check_existing(dir: &Path) -> Result<bool, DirError> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        _ => check(dir).map(|()| true),
    }
}

fn check(dir: &Path) -> Result<(), DirError> {
    let not_private = |why: String| DirError::NotPrivate {
        path: dir.to_path_buf(),
        why,
    };
    let meta = std::fs::symlink_metadata(dir).map_err(|source| DirError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    if meta.file_type().is_symlink() {
        return Err(not_private("a symbolic link".into()));
    }
    if !meta.is_dir() {
        return Err(not_private("not a directory".into()));
    }
    if meta.uid() != euid() {
        return Err(not_private(format!("owned by uid {}", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(not_private(format!("mode {:o}", meta.mode() & 0o777)));
    }
    Ok(())
}

/// Opens the file at `path` (for writing too when `write`) without
/// following a symbolic link and without waiting (a FIFO or a device
/// answers at once), and keeps it only if it is a regular file owned by us
/// of `len` bytes (any length when `None`): whatever else sits in a folder
/// is not ours to read or write. `None` when it is gone; a file refused is
/// an `InvalidData` error saying why.
pub fn open_own(path: &Path, write: bool, len: Option<u64>) -> io::Result<Option<std::fs::File>> {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    let why = if !meta.file_type().is_file() {
        "not a regular file".to_string()
    } else if meta.uid() != euid() {
        format!("owned by uid {}", meta.uid())
    } else if len.is_some_and(|l| l != meta.len()) {
        format!("{} bytes, not {}", meta.len(), len.unwrap_or(0))
    } else {
        return Ok(Some(file));
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {why}; left alone", path.display()),
    ))
}

/// Replaces `target` with `bytes` whole: written to `tmp` (in the same
/// folder), then renamed over it, so a reader sees the old file or the new
/// one. `tmp` is made anew (`O_CREAT | O_EXCL | O_NOFOLLOW`): whatever had
/// its name (a file a killed writer left, or a symbolic link someone put
/// there to have us write through it) is removed first, never written
/// through; a name taken again meanwhile is an error. `tmp` is removed
/// again when the write fails.
pub fn replace_file(target: &Path, tmp: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    replace_file_with(target, tmp, |f| f.write_all(bytes))
}

/// [`replace_file`] with the content written by `write` into the new
/// temporary file (streamed: no copy of the whole content in memory).
pub fn replace_file_with(
    target: &Path,
    tmp: &Path,
    write: impl FnOnce(&mut std::fs::File) -> io::Result<()>,
) -> io::Result<()> {
    match std::fs::remove_file(tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(tmp)?;
    let written = write(&mut f).and_then(|()| {
        drop(f);
        std::fs::rename(tmp, target)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn made_private_or_refused() {
        let root = std::env::temp_dir().join(format!("steadyhud-private-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        let d = root.join("d");
        assert!(!check_existing(&d).unwrap());
        ensure(&d).unwrap();
        assert_eq!(std::fs::metadata(&d).unwrap().mode() & 0o777, 0o700);
        ensure(&d).unwrap();
        assert!(check_existing(&d).unwrap());
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(ensure(&d), Err(DirError::NotPrivate { .. })));
        let link = root.join("link");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink(&d, &link).unwrap();
        let e = ensure(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A link planted under the temporary name is not written through.
    #[test]
    fn a_symlinked_temporary_file_is_not_followed() {
        let root = std::env::temp_dir().join(format!("steadyhud-replace-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        let victim = root.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let (target, tmp) = (root.join("s.json"), root.join("s.json.tmp"));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        replace_file(&target, &tmp, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert!(std::fs::symlink_metadata(&tmp).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
