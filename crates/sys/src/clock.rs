//! The clock every timestamp of the layer, its log and its test app is on.

/// `CLOCK_MONOTONIC` now, in ns: the clock of present timestamps, GPU
/// calibration and the test app's own record of its presents.
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
