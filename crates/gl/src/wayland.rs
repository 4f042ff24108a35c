//! EGL displays on Wayland: which EGL display is which `wl_display`, so a
//! swap on a Wayland surface can hand the hotkeys their display
//! (`steadyhud_input::wayland`, as the layer does for
//! `vkCreateWaylandSurfaceKHR`). A handle map, filled by the
//! `eglGetDisplay`/`eglGetPlatformDisplay` hooks.

use std::ffi::c_void;
use std::sync::Mutex;
use steadyhud_sys::lock::Recover;

/// (EGL display, `wl_display`) pairs.
static DISPLAYS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Remembers that EGL display `egl` is on `wl`.
pub fn remember(egl: usize, wl: *mut c_void) {
    if egl == 0 || wl.is_null() {
        return;
    }
    let mut d = DISPLAYS.lock_or_recover();
    d.retain(|p| p.0 != egl);
    d.push((egl, wl as usize));
}

/// The `wl_display` of EGL display `egl`, if it is on Wayland.
pub fn display_of(egl: usize) -> Option<*mut c_void> {
    DISPLAYS
        .lock_or_recover()
        .iter()
        .find(|p| p.0 == egl)
        .map(|p| p.1 as *mut c_void)
}

/// Whether `native` (an `eglGetDisplay` argument) is a `wl_display`: as
/// Mesa tells, its first word points at libwayland-client's
/// `wl_display_interface` (absent: nothing here is Wayland).
///
/// # Safety
/// `native` is null or a native display pointer (its first word readable).
pub unsafe fn is_wl_display(native: *mut c_void) -> bool {
    if native.is_null() {
        return false;
    }
    // SAFETY: a plain lookup in the global scope.
    let iface = unsafe { crate::real::real_dlsym(libc::RTLD_DEFAULT, c"wl_display_interface") };
    // SAFETY: the caller's native display, whose first word is readable.
    !iface.is_null() && unsafe { *(native as *const *const c_void) } == iface.cast_const()
}
