//! Where the readings come from: a folder standing for `/` (the real root
//! in the layer, a fixture tree in tests). Every source reads through it.

use std::fs;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The folder that stands for `/`.
#[derive(Clone, Debug)]
pub struct Root {
    base: PathBuf,
    /// Stands for `/` under `sys/` only (`None`: `base`).
    sys_base: Option<PathBuf>,
}

impl Default for Root {
    fn default() -> Self {
        Root::new("/")
    }
}

/// Longest file a source reads (bounded work per sample; `/proc/stat` of a
/// 256-core machine is ~25 kB).
const MAX_READ: u64 = 256 * 1024;

impl Root {
    /// `base` stands for `/`.
    pub fn new(base: impl Into<PathBuf>) -> Root {
        Root {
            base: base.into(),
            sys_base: None,
        }
    }

    /// The real `/proc` (under `base`) with the `sys/` of `sys_base`: a
    /// fixture GPU beside a real process.
    pub fn with_sys(base: impl Into<PathBuf>, sys_base: impl Into<PathBuf>) -> Root {
        Root {
            base: base.into(),
            sys_base: Some(sys_base.into()),
        }
    }

    /// `rel` (like `proc/stat`, no leading `/`) under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        let rel = rel.trim_start_matches('/');
        match &self.sys_base {
            Some(s) if rel.starts_with("sys/") => s.join(rel),
            _ => self.base.join(rel),
        }
    }

    /// The text of `path` (already under the root), at most [`MAX_READ`]
    /// bytes, read into `buf` (cleared first).
    pub fn read_into(path: &Path, buf: &mut String) -> Option<()> {
        buf.clear();
        let f = fs::File::open(path).ok()?;
        f.take(MAX_READ).read_to_string(buf).ok()?;
        Some(())
    }

    /// The text of `path`.
    pub fn read(path: &Path) -> Option<String> {
        let mut s = String::new();
        Self::read_into(path, &mut s)?;
        Some(s)
    }

    /// The first number of the file at `path` (sysfs files hold one).
    pub fn read_u64(path: &Path) -> Option<u64> {
        let s = Self::read(path)?;
        s.split_whitespace().next()?.parse().ok()
    }

    /// Entries of the folder `path` whose name starts with `prefix`, sorted
    /// by name (natural: `cpu2` before `cpu10`).
    pub fn list(path: &Path, prefix: &str) -> Vec<PathBuf> {
        let Ok(rd) = fs::read_dir(path) else {
            return Vec::new();
        };
        let mut v: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .map(|e| e.path())
            .collect();
        v.sort_by_key(|p| natural_key(p));
        v
    }
}

fn natural_key(p: &Path) -> (String, u64) {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, num) = name.split_at(name.len() - digits);
    (stem.to_string(), num.parse().unwrap_or(0))
}

/// Files read at every sample by path, each through a [`Kept`] handle.
#[derive(Debug, Default)]
pub struct KeptFiles {
    files: Vec<Kept>,
}

impl KeptFiles {
    fn get(&mut self, path: &Path) -> &mut Kept {
        let k = match self.files.iter().position(|f| f.path == path) {
            Some(k) => k,
            None => {
                self.files.push(Kept::new(path.to_path_buf()));
                self.files.len() - 1
            }
        };
        &mut self.files[k]
    }

    /// [`Kept::read_u64`] of `path`.
    pub fn read_u64(&mut self, path: &Path) -> Option<u64> {
        self.get(path).read_u64()
    }

    /// [`Kept::read_into`] of `path`.
    pub fn read_into(&mut self, path: &Path, buf: &mut String) -> Option<()> {
        self.get(path).read_into(buf)
    }
}

/// A file read at every sample through one handle kept open: `/proc` and
/// sysfs files make their text anew at each read from offset 0, and the
/// open and close a fresh read costs are the larger part of a sample
/// (measured on this project's VM: a cold read of `/proc/self/status`
/// costs 109 µs of the thread's time with open and close, 57 µs as a
/// `pread` of an open handle). A failed read closes the handle; the next
/// read opens the file again.
#[derive(Debug)]
pub struct Kept {
    path: PathBuf,
    file: Option<fs::File>,
    bytes: Vec<u8>,
}

impl Kept {
    /// `path` (already under the root), not opened yet.
    pub fn new(path: PathBuf) -> Kept {
        Kept {
            path,
            file: None,
            bytes: Vec::new(),
        }
    }

    /// The file's text now, at most [`MAX_READ`] bytes, into `buf`
    /// (cleared first).
    pub fn read_into(&mut self, buf: &mut String) -> Option<()> {
        buf.clear();
        let text = self.text()?;
        buf.push_str(text);
        Some(())
    }

    /// The first number of the file (sysfs files hold one).
    pub fn read_u64(&mut self) -> Option<u64> {
        self.text()?.split_whitespace().next()?.parse().ok()
    }

    fn text(&mut self) -> Option<&str> {
        if self.file.is_none() {
            self.file = fs::File::open(&self.path).ok();
        }
        let f = self.file.as_ref()?;
        self.bytes.clear();
        let mut chunk = [0u8; 4096];
        loop {
            match f.read_at(&mut chunk, self.bytes.len() as u64) {
                Ok(0) => break,
                Ok(n) => {
                    self.bytes.extend_from_slice(&chunk[..n]);
                    if self.bytes.len() as u64 >= MAX_READ {
                        self.bytes.truncate(MAX_READ as usize);
                        break;
                    }
                }
                Err(_) => {
                    self.file = None;
                    return None;
                }
            }
        }
        std::str::from_utf8(&self.bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept handle reads what the file holds now: rewritten in place (as
    /// the kernel regenerates `/proc` text) it gives the new text; gone, it
    /// gives nothing, and once back it is opened again.
    #[test]
    fn kept_reads_the_file_as_it_is_now() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("energy_uj");
        fs::write(&p, "100\n").unwrap();
        let mut k = Kept::new(p.clone());
        assert_eq!(k.read_u64(), Some(100));
        fs::write(&p, "2500 extra\n").unwrap();
        assert_eq!(k.read_u64(), Some(2500));
        let long = "x".repeat(10_000);
        fs::write(&p, &long).unwrap();
        let mut buf = String::new();
        k.read_into(&mut buf).unwrap();
        assert_eq!(buf, long, "more than one read's worth");
        drop(k);
        let mut k = Kept::new(dir.path().join("missing"));
        assert_eq!(k.read_u64(), None);
        fs::write(dir.path().join("missing"), "7").unwrap();
        assert_eq!(k.read_u64(), Some(7));
    }
}
