//! The clock every timestamp of the layer, its log and its test app is on.

/// `CLOCK_MONOTONIC` now, in ns: the clock of present timestamps, GPU
/// calibration and the test app's own record of its presents.
#[inline]
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Clock `id` now, in ns (0 for a clock this system lacks); e.g.
/// `CLOCK_MONOTONIC_RAW`, the clock a compositor may time its frames on.
#[inline]
pub fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; an unknown id only returns EINVAL.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
