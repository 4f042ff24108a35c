//! Reading a word at an address a caller handed us without trusting it
//! ([`read_word`]): `eglGetDisplay` takes any `void *` as its native
//! display, and the real call answers a bad one with an EGL error, so our
//! hook must not crash on it where the real call would not.

/// The pointer-sized word at address `addr` (a number: nothing here
/// dereferences it), or `None` when it cannot be read
/// (unmapped, not readable, null). The kernel reads it, not this process:
/// the bytes are written into a pipe (`write(2)` fails with `EFAULT` on a
/// bad address instead of faulting) and read back. Three system calls and
/// two descriptors: for a call made once or twice per game, never on the
/// swap path.
pub fn read_word(addr: usize) -> Option<usize> {
    if addr == 0 {
        return None;
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return None;
    }
    let n = std::mem::size_of::<usize>();
    // SAFETY: write(2) reads `n` bytes at `addr` in the kernel, which
    // answers EFAULT for an address this process cannot read.
    let wrote = unsafe { libc::write(fds[1], addr as *const libc::c_void, n) };
    let mut word = 0usize;
    let read = if wrote == n as isize {
        // SAFETY: reads at most `n` bytes into `word`, which is `n` bytes.
        unsafe { libc::read(fds[0], (&mut word as *mut usize).cast(), n) }
    } else {
        -1
    };
    // SAFETY: the two descriptors pipe2 made, closed once.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    (read == n as isize).then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_readable_word_is_read_and_a_bad_address_is_not() {
        let x: usize = 0x1234_5678;
        assert_eq!(read_word(&x as *const usize as usize), Some(0x1234_5678));
        assert_eq!(read_word(0), None);
        // A page mapped and unmapped again: nothing is there.
        // SAFETY: a fresh anonymous mapping, unmapped at once.
        let gone = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            libc::munmap(p, 4096);
            p
        };
        assert_eq!(read_word(gone as usize), None);
        assert_eq!(read_word(8), None);
    }
}
