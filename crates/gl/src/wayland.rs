//! EGL displays on Wayland: which EGL display is which `wl_display`, so a
//! swap on a Wayland surface can hand the hotkeys their display
//! (`steadyhud_input::wayland`, as the layer does for
//! `vkCreateWaylandSurfaceKHR`). A handle map, filled by the
//! `eglGetDisplay`/`eglGetPlatformDisplay` hooks. And the `wl_surface` of
//! a window surface's `wl_egl_window` ([`wl_surface_of`]), for the
//! presentation feedback.

use std::ffi::c_void;
use std::sync::Mutex;
use steadyhud_sys::lock::Recover;

/// A handle map of ours: an EGL handle (display or surface) → the Wayland
/// object it is on, the last word for a handle kept.
struct OnWayland(Mutex<Vec<(u64, usize)>>);

impl OnWayland {
    const fn new() -> OnWayland {
        OnWayland(Mutex::new(Vec::new()))
    }

    fn remember(&self, key: u64, object: *mut c_void) {
        let mut pairs = self.0.lock_or_recover();
        pairs.retain(|p| p.0 != key);
        pairs.push((key, object as usize));
    }

    fn get(&self, key: u64) -> Option<*mut c_void> {
        let pairs = self.0.lock_or_recover();
        pairs
            .iter()
            .find(|p| p.0 == key)
            .map(|p| p.1 as *mut c_void)
    }

    fn forget(&self, key: u64) {
        self.0.lock_or_recover().retain(|p| p.0 != key);
    }
}

/// EGL display → `wl_display`.
static DISPLAYS: OnWayland = OnWayland::new();

/// Remembers that EGL display `egl` is on `wl`.
pub fn remember(egl: usize, wl: *mut c_void) {
    if egl == 0 || wl.is_null() {
        return;
    }
    DISPLAYS.remember(egl as u64, wl);
}

/// The `wl_display` of EGL display `egl`, if it is on Wayland.
pub fn display_of(egl: usize) -> Option<*mut c_void> {
    DISPLAYS.get(egl as u64)
}

/// EGL window surface → its `wl_surface`, recorded when the surface is
/// made (before the process record exists: it is made at the first swap,
/// which hands the pair to the presentation feedback).
static SURFACES: OnWayland = OnWayland::new();

/// Remembers that EGL surface `surface` shows `wl_surface`.
pub fn remember_surface(surface: u64, wl_surface: *mut c_void) {
    SURFACES.remember(surface, wl_surface);
}

/// The `wl_surface` of EGL surface `surface`, if it is on Wayland.
pub fn wl_surface_for(surface: u64) -> Option<*mut c_void> {
    SURFACES.get(surface)
}

/// Forgets EGL surface `surface` (destroyed).
pub fn forget_surface(surface: u64) {
    SURFACES.forget(surface);
}

/// Whether `native` (an `eglGetDisplay` argument) is a `wl_display`: as
/// Mesa tells, its first word points at libwayland-client's
/// `wl_display_interface` (absent: nothing here is Wayland). The word is
/// read through the kernel ([`steadyhud_sys::probe::read_word`]): the
/// argument is any value the game passes (an X11 `Display *`, a GBM
/// device, `EGL_DEFAULT_DISPLAY`, garbage), and a bad one gets the real
/// call's EGL error, not a crash in our hook.
pub fn is_wl_display(native: *mut c_void) -> bool {
    if native.is_null() {
        return false;
    }
    // SAFETY: a plain lookup in the global scope.
    let iface = unsafe { crate::real::real_dlsym(libc::RTLD_DEFAULT, c"wl_display_interface") };
    !iface.is_null() && steadyhud_sys::probe::read_word(native as usize) == Some(iface as usize)
}

/// `struct wl_egl_window` of libwayland's `wayland-egl-backend.h`
/// (version 3; the same layout on i686 and x86_64).
#[repr(C)]
struct WlEglWindow {
    version: isize,
    width: std::ffi::c_int,
    height: std::ffi::c_int,
    dx: std::ffi::c_int,
    dy: std::ffi::c_int,
    attached_width: std::ffi::c_int,
    attached_height: std::ffi::c_int,
    driver_private: *mut c_void,
    resize_callback: *mut c_void,
    destroy_window_callback: *mut c_void,
    surface: *mut c_void,
}

/// The `wl_surface` of `win`, an EGL window surface's native window on
/// Wayland (a `wl_egl_window`). Only versions 1 to 3 are read: the ABI
/// before 2017 put the surface pointer where `version` is now (Mesa tells
/// the two apart the same way); anything else gives `None`.
///
/// # Safety
/// `win` is null or the `wl_egl_window` the game made its surface from.
pub unsafe fn wl_surface_of(win: *mut c_void) -> Option<*mut c_void> {
    if win.is_null() {
        return None;
    }
    let w = win.cast::<WlEglWindow>();
    // SAFETY: the game's live wl_egl_window (caller); its first word is
    // the version in every ABI since 2017.
    let version = unsafe { (*w).version };
    if !(1..=3).contains(&version) {
        return None;
    }
    // SAFETY: a versioned wl_egl_window has every field above.
    let surface = unsafe { (*w).surface };
    (!surface.is_null()).then_some(surface)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `eglGetDisplay` with a handle that points nowhere: the real call
    /// answers with an EGL error; our hook must not fault reading it.
    #[test]
    fn a_bad_native_display_is_not_a_wl_display_and_no_crash() {
        // libwayland-client loaded, as in a Wayland game: the hook then
        // reads the handle's first word.
        // SAFETY: dlopen of a system library by name.
        let lib = unsafe {
            libc::dlopen(
                c"libwayland-client.so.0".as_ptr(),
                libc::RTLD_NOW | libc::RTLD_GLOBAL,
            )
        };
        assert!(
            !lib.is_null(),
            "libwayland-client.so.0 (a GL test dependency)"
        );
        // SAFETY: a plain lookup in the global scope.
        let iface = unsafe { crate::real::real_dlsym(libc::RTLD_DEFAULT, c"wl_display_interface") };
        assert!(!iface.is_null());
        // A word that is the interface: a wl_display as Mesa tells.
        let fake: [*mut c_void; 2] = [iface, std::ptr::null_mut()];
        assert!(is_wl_display(fake.as_ptr() as *mut c_void));
        let other: usize = 7;
        assert!(!is_wl_display(&other as *const usize as *mut c_void));
        // Unmapped addresses: no fault, not Wayland.
        for bad in [16usize, usize::MAX - 7, 0x7] {
            assert!(!is_wl_display(bad as *mut c_void), "{bad:#x}");
        }
    }
}
