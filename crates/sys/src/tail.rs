//! The present tail: a small file in memory (tmpfs) that the present path
//! writes each timestamp into, so the frames a killed game presented after
//! its log's last flush can still be logged.
//!
//! A game ended by SIGKILL, by Wine's `TerminateProcess` (`_exit`) or by
//! SIGTERM runs no code of ours at its end: whatever the analysis thread had
//! not written yet is gone with the process. The pages of a shared file
//! mapping are not: they belong to the file. So each stream maps one
//! [`Tail`], the present stores its timestamp there (a plain store to
//! memory, no system call), and whoever runs next ([`TailFile`]: the next
//! session, `steadyhud run`, `steadyhud analyze`) adds the missing rows.
//!
//! The file lives on tmpfs ([`folder`]), so no store ever waits for a disk
//! and nothing is written back while the game runs. Its writer holds an
//! exclusive `flock` on it for as long as it lives; the kernel drops the
//! lock when the process ends, however it ends. So a reader knows a tail
//! is its writer's to finish while the lock is held ([`claim`]), in
//! whatever pid namespace either runs. A tail is made under a name of its
//! own that readers skip (`.<pid>-<n>.creating`) and linked to its name
//! once whole and locked; a name in use is never reused (`-2`, `-3` …). Layout, in native u64
//! words: a 4 KiB header (magic, slot count, pid, origin = the session's
//! first timestamp, count = timestamps stored so far, the CSV's path) and
//! then the slots, timestamp `i` in slot `i % slots`.

use crate::private_dir::open_own;
use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// First word of every tail file ("SHDTAIL1").
const MAGIC: u64 = u64::from_le_bytes(*b"SHDTAIL1");
/// Header size in bytes: the slots start on the next page.
const HEADER: usize = 4096;
/// Header words: magic, slots, pid, origin, count, path length.
const W_MAGIC: usize = 0;
const W_SLOTS: usize = 1;
const W_PID: usize = 2;
const W_ORIGIN: usize = 3;
const W_COUNT: usize = 4;
const W_PATH_LEN: usize = 5;
/// Byte offset of the CSV's path in the header.
const PATH_AT: usize = 64;
/// Slots of a stream's tail: 16 s of frames at 1000 fps, far beyond the
/// log's flush interval (rows older than that are in the CSV).
pub const SLOTS: usize = 1 << 14;

/// Where tails are kept: `$XDG_RUNTIME_DIR/steadyhud-tails` (beside the
/// sockets' folder, which holds sockets only), else
/// `/dev/shm/steadyhud-<uid>`; both are in memory. Used only when it is
/// ours, mode 0700 and no symbolic link ([`crate::private_dir`]): anyone
/// may make `/dev/shm/steadyhud-<uid>` first.
pub fn folder() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("steadyhud-tails"),
        // SAFETY: getuid(2) cannot fail.
        _ => PathBuf::from(format!("/dev/shm/steadyhud-{}", unsafe { libc::getuid() })),
    }
}

/// The file name of the tail of process `pid`'s log `<stem>.csv`.
pub fn file_name(pid: u32, stem: &str) -> String {
    format!("{pid}-{stem}.tail")
}

/// A stream's mapped tail, written by the present path.
pub struct Tail {
    words: *const AtomicU64,
    len: usize,
    slots: usize,
    /// Open and `flock`ed while the writer lives.
    _file: fs::File,
    path: PathBuf,
}

// SAFETY: the mapping is only accessed through atomics and lives until drop.
unsafe impl Send for Tail {}
// SAFETY: as above: shared access is atomic loads and stores.
unsafe impl Sync for Tail {}

impl Tail {
    /// Creates `path` (mode 0600, its folder 0700) for the stream whose
    /// log is `csv`, in process `pid`, whose first timestamp is `origin`,
    /// and maps it with every page already touched, so no present takes a
    /// page fault for it.
    /// A folder that is not ours alone is refused
    /// ([`crate::private_dir::ensure`]): the game then has no tail.
    pub fn create(path: &Path, csv: &Path, pid: u32, origin: u64) -> io::Result<Tail> {
        if let Some(dir) = path.parent() {
            crate::private_dir::ensure(dir).map_err(|e| match e {
                crate::private_dir::DirError::Io { source, .. } => source,
                e => io::Error::new(io::ErrorKind::PermissionDenied, e.to_string()),
            })?;
        }
        let csv = csv.as_os_str().as_bytes();
        if PATH_AT + csv.len() > HEADER {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "log path too long",
            ));
        }
        // Made under a name nobody else uses (never another's file: a
        // shared mapping of a file that shrinks faults), then linked to
        // `path` or, when that is taken, `path` with `-2`, `-3` …
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let creating = path.with_file_name(format!(
            ".{pid}-{}.creating",
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&creating)?;
        if !try_lock(&file)? {
            return Err(io::Error::new(io::ErrorKind::WouldBlock, "tail locked"));
        }
        let len = HEADER + SLOTS * 8;
        file.set_len(len as u64)?;
        use std::os::fd::AsRawFd;
        // SAFETY: a new shared mapping of `len` bytes of a file that long.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the mapping is ours, `len` bytes, page aligned.
        unsafe {
            let bytes = std::slice::from_raw_parts_mut(map.cast::<u8>(), len);
            // Touch every page now (the slots' pages by zeroing them).
            bytes.fill(0);
            bytes[PATH_AT..PATH_AT + csv.len()].copy_from_slice(csv);
            // Keep the pages in memory if the limit allows; a tail that is
            // swapped out still works, its first store just waits.
            libc::mlock(map, len);
        }
        let mut tail = Tail {
            words: map.cast::<AtomicU64>(),
            len,
            slots: SLOTS,
            _file: file,
            path: path.to_path_buf(),
        };
        tail.word(W_SLOTS).store(SLOTS as u64, Ordering::Relaxed);
        tail.word(W_PID).store(u64::from(pid), Ordering::Relaxed);
        tail.word(W_ORIGIN).store(origin, Ordering::Relaxed);
        tail.word(W_PATH_LEN)
            .store(csv.len() as u64, Ordering::Relaxed);
        // Magic last: a reader that sees it sees the header whole.
        tail.word(W_MAGIC).store(MAGIC, Ordering::Release);
        let linked = (1..=100).find_map(|n| {
            let target = match n {
                1 => path.to_path_buf(),
                n => {
                    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                    path.with_file_name(format!("{stem}-{n}.tail"))
                }
            };
            match fs::hard_link(&creating, &target) {
                Ok(()) => Some(Ok(target)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
                Err(e) => Some(Err(e)),
            }
        });
        let _ = fs::remove_file(&creating);
        tail.path = linked.unwrap_or_else(|| {
            Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "no free tail name",
            ))
        })?;
        Ok(tail)
    }

    #[inline]
    fn word(&self, i: usize) -> &AtomicU64 {
        debug_assert!(i * 8 < self.len);
        // SAFETY: `i` is inside the mapping, which lives as long as self.
        unsafe { &*self.words.add(i) }
    }

    #[inline]
    fn slot(&self, index: u64) -> &AtomicU64 {
        // `max(1)`: never 0 (the writer's SLOTS), and so no division's
        // panic on the present path.
        self.word(HEADER / 8 + (index % self.slots.max(1) as u64) as usize)
    }

    /// Stores timestamp `index` and counts it: the present path's call.
    #[inline]
    pub fn put(&self, index: u64, t: u64) {
        self.slot(index).store(t, Ordering::Relaxed);
        self.word(W_COUNT).store(index + 1, Ordering::Release);
    }

    /// Stores timestamp `index` without counting it (timestamps presented
    /// before the tail was attached, whose count [`Tail::set_count`] set).
    pub fn fill(&self, index: u64, t: u64) {
        self.slot(index).store(t, Ordering::Relaxed);
    }

    /// Timestamps `0..count` are the stream's so far.
    pub fn set_count(&self, count: u64) {
        self.word(W_COUNT).store(count, Ordering::Release);
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Tail {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `create`, unmapped once.
        unsafe { libc::munmap(self.words as *mut libc::c_void, self.len) };
    }
}

/// `flock(LOCK_EX | LOCK_NB)` on `file`: false when another open file
/// holds it (a live writer).
fn try_lock(file: &fs::File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock(2) on an open descriptor.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// The size of every tail file.
pub const FILE_LEN: u64 = (HEADER + SLOTS * 8) as u64;

/// A tail whose writer has ended, taken by one reader: locked, and renamed
/// out of the way so no other reader takes it too; removed on drop.
pub struct Claim {
    file: fs::File,
    path: PathBuf,
    keep: bool,
}

/// Takes the tail at `path` if its writer has ended (its lock is free);
/// `None` while it lives, or when another reader took it first.
pub fn claim(path: &Path) -> io::Result<Option<Claim>> {
    Ok(claim_if(path, |_| true)?.map(|(c, _)| c))
}

/// [`claim`], when `accept` takes the tail as read (under its lock, before
/// it is renamed): a tail not accepted stays as it was, for a reader that
/// may. Only a regular file of ours of a tail's size is read
/// ([`open_own`]).
pub fn claim_if(
    path: &Path,
    accept: impl FnOnce(&TailFile) -> bool,
) -> io::Result<Option<(Claim, TailFile)>> {
    let Some(file) = open_own(path, false, Some(FILE_LEN))? else {
        return Ok(None);
    };
    if !try_lock(&file)? {
        return Ok(None);
    }
    let tail = TailFile::read_from(&file)?;
    if !accept(&tail) {
        return Ok(None);
    }
    let claimed = path.with_extension(format!("recovering-{}", std::process::id()));
    match fs::rename(path, &claimed) {
        Ok(()) => Ok(Some((
            Claim {
                file,
                path: claimed,
                keep: false,
            },
            tail,
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes `.<name>.creating` files in `dir` that no writer holds (one
/// that died while making its tail).
pub fn sweep_unfinished(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.ends_with(".creating") {
            if let Ok(Some(f)) = open_own(&e.path(), false, None) {
                if try_lock(&f).unwrap_or(false) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
    }
}

impl Claim {
    /// The tail's contents (read through the file claimed, not its name).
    pub fn read(&self) -> io::Result<TailFile> {
        TailFile::read_from(&self.file)
    }

    /// Keeps the claimed file under `path`'s stem with extension `ext`
    /// instead of removing it (work left for another reader, who claims
    /// it as a tail).
    pub fn keep_as(mut self, path: &Path, ext: &str) -> io::Result<()> {
        fs::rename(&self.path, path.with_extension(ext))?;
        self.keep = true;
        Ok(())
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// A tail read back from its file (by a process other than its writer).
#[derive(Debug)]
pub struct TailFile {
    /// The process that wrote it.
    pub pid: u32,
    /// The session's first timestamp.
    pub origin: u64,
    /// Timestamps `0..count` were presented (as the file says: a count
    /// far beyond the slots means the older ones are gone, or a forgery).
    pub count: u64,
    /// The stream's session log.
    pub csv: PathBuf,
    slots: Vec<u64>,
}

impl TailFile {
    /// Reads the tail at `path` (a regular file of ours of a tail's size).
    pub fn read(path: &Path) -> io::Result<TailFile> {
        match open_own(path, false, Some(FILE_LEN))? {
            Some(f) => TailFile::read_from(&f),
            None => Err(io::ErrorKind::NotFound.into()),
        }
    }

    /// Reads the tail open as `file`: exactly a tail's size, no more.
    pub fn read_from(file: &fs::File) -> io::Result<TailFile> {
        let mut bytes = vec![0u8; FILE_LEN as usize];
        file.read_exact_at(&mut bytes, 0)?;
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        let word = |i: usize| -> u64 {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            u64::from_ne_bytes(b)
        };
        if word(W_MAGIC) != MAGIC {
            return Err(bad("not a steadyhud tail"));
        }
        let path_len = word(W_PATH_LEN);
        if word(W_SLOTS) != SLOTS as u64 || path_len > (HEADER - PATH_AT) as u64 {
            return Err(bad("wrong size"));
        }
        let path_len = path_len as usize;
        let csv = std::ffi::OsStr::from_bytes(&bytes[PATH_AT..PATH_AT + path_len]);
        Ok(TailFile {
            pid: word(W_PID) as u32,
            origin: word(W_ORIGIN),
            count: word(W_COUNT),
            csv: PathBuf::from(csv),
            slots: (0..SLOTS).map(|i| word(HEADER / 8 + i)).collect(),
        })
    }

    /// The number of slots: how far back from `count` a timestamp can be
    /// found.
    pub fn slots(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Timestamp `index`, while its slot still holds it.
    pub fn timestamp(&self, index: u64) -> Option<u64> {
        let n = self.slots.len() as u64;
        if index >= self.count || self.count - index > n {
            return None;
        }
        self.slots.get((index % n) as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_stored_reads_back_after_the_writer_is_gone() {
        let dir = std::env::temp_dir().join(format!("steadyhud-tail-{}", std::process::id()));
        let path = dir.join(file_name(7, "game"));
        let tail = Tail::create(&path, Path::new("/logs/game.csv"), 7, 1000).unwrap();
        tail.fill(0, 1000);
        tail.set_count(1);
        for i in 1..(SLOTS as u64 + 10) {
            tail.put(i, 1000 + i * 5);
        }
        drop(tail); // unmapped, as a killed process's
        let f = TailFile::read(&path).unwrap();
        assert_eq!((f.pid, f.origin), (7, 1000));
        assert_eq!(f.csv, Path::new("/logs/game.csv"));
        assert_eq!(f.count, SLOTS as u64 + 10);
        // The oldest ten were overwritten.
        assert_eq!(f.timestamp(9), None);
        assert_eq!(f.timestamp(10), Some(1050));
        assert_eq!(
            f.timestamp(SLOTS as u64 + 9),
            Some(1000 + (SLOTS as u64 + 9) * 5)
        );
        assert_eq!(f.timestamp(SLOTS as u64 + 10), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Two tails asked for under one name (two logs of one stem in two
    /// folders) get two files: neither writer's mapping is cut short.
    #[test]
    fn a_name_in_use_is_never_reused() {
        let dir = std::env::temp_dir().join(format!("steadyhud-names-{}", std::process::id()));
        let path = dir.join(file_name(3, "game"));
        let a = Tail::create(&path, Path::new("/a.csv"), 3, 1).unwrap();
        let b = Tail::create(&path, Path::new("/b.csv"), 3, 2).unwrap();
        assert_ne!(a.path(), b.path());
        a.put(0, 10);
        b.put(0, 20);
        assert_eq!(TailFile::read(a.path()).unwrap().timestamp(0), Some(10));
        assert_eq!(TailFile::read(b.path()).unwrap().timestamp(0), Some(20));
        drop((a, b));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_live_writers_tail_is_not_claimed_and_a_dead_ones_is() {
        let dir = std::env::temp_dir().join(format!("steadyhud-claim-{}", std::process::id()));
        let path = dir.join(file_name(1, "x"));
        let tail = Tail::create(&path, Path::new("/l.csv"), 1, 5).unwrap();
        // Held by the writer (another open file, even in this process).
        assert!(claim(&path).unwrap().is_none());
        drop(tail);
        let c = claim(&path).unwrap().expect("the writer is gone");
        assert_eq!(c.read().unwrap().origin, 5);
        // Taken once: the name is gone.
        assert!(claim(&path).unwrap().is_none());
        drop(c);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        fs::remove_dir_all(&dir).unwrap();
    }
}
