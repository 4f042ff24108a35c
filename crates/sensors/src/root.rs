//! Where the readings come from: a folder standing for `/` (the real root
//! in the layer, a fixture tree in tests). Every source reads through it.

use std::fs;
use std::io::Read;
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
