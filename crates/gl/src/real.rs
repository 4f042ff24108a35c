//! The real entry points our hooks forward to, and the one way we look
//! symbols up.
//!
//! Our library exports `dlsym` (games that `dlopen` libGL and `dlsym` their
//! swap function must get ours), so the name `dlsym` inside this library is
//! our own hook: glibc's is found by version with `dlvsym`
//! ([`dlsym_fn`]). A real function is looked up, in order:
//! 1. as the next definition after this library (`RTLD_NEXT`) when that
//!    is another preloaded tool's hook: the chain of tools stays whole;
//! 2. in the library the game itself looked a hooked name of that family
//!    up in, with `dlsym(handle, …)` ([`remember_handle`]): a bundled
//!    libGL the game `dlopen`ed gets its own swap even where the system's
//!    is linked too, and SDL's libX11 opened `RTLD_LOCAL` its own
//!    `XDestroyWindow`; then `RTLD_NEXT`'s system library (libGL, libEGL,
//!    libX11 when the game links them);
//! 3. in the system library itself (`libGL.so.1`, `libEGL.so.1`, opened
//!    here when the game opened its own copy with `RTLD_LOCAL`; Xlib's
//!    functions in `libX11.so.6`, only when it is loaded already);
//! 4. through that API's `GetProcAddress` (extension functions that no
//!    library exports).

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// glibc's `dlsym`.
pub type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
/// `glXGetProcAddressARB` / `eglGetProcAddress`.
pub type GetProcFn = unsafe extern "C" fn(*const c_char) -> *mut c_void;

/// The windowing API a function belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Glx,
    Egl,
}

impl Api {
    fn library(self) -> &'static CStr {
        match self {
            Api::Glx => c"libGL.so.1",
            Api::Egl => c"libEGL.so.1",
        }
    }

    fn get_proc_name(self) -> &'static CStr {
        match self {
            Api::Glx => c"glXGetProcAddressARB",
            Api::Egl => c"eglGetProcAddress",
        }
    }
}

/// glibc's `dlsym` for the assembly entry of our `dlsym`
/// (`crate::hooks`), set by this library's constructor; 0 before.
pub static REAL_DLSYM: AtomicUsize = AtomicUsize::new(0);

/// Finds glibc's `dlsym` when the library is loaded, before any code of
/// the game can call ours.
extern "C" fn on_load() {
    REAL_DLSYM.store(dlsym_fn().map_or(0, |f| f as usize), Ordering::Release);
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;

/// glibc's own `dlsym` (our export shadows the name), or `None` on a libc
/// that has none of the versions we know.
pub fn dlsym_fn() -> Option<DlsymFn> {
    static REAL: OnceLock<usize> = OnceLock::new();
    let p = *REAL.get_or_init(|| {
        // glibc ≥ 2.34 keeps dlsym in libc under GLIBC_2.34; before, and as
        // the compatibility version, GLIBC_2.2.5 (x86_64) or GLIBC_2.0 (i386).
        for version in [c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.0"] {
            // SAFETY: plain symbol lookups with valid C strings.
            let p = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) };
            if !p.is_null() {
                return p as usize;
            }
        }
        0
    });
    // SAFETY: a non-zero value is glibc's `dlsym`, of this signature.
    (p != 0).then(|| unsafe { std::mem::transmute::<usize, DlsymFn>(p) })
}

/// `dlsym(handle, name)` through glibc's own `dlsym`; null when it has none.
///
/// # Safety
/// `handle` is a handle `dlsym` accepts.
pub unsafe fn real_dlsym(handle: *mut c_void, name: &CStr) -> *mut c_void {
    match dlsym_fn() {
        // SAFETY: glibc's dlsym with the caller's handle and a C string.
        Some(f) => unsafe { f(handle, name.as_ptr()) },
        None => std::ptr::null_mut(),
    }
}

/// A family of hooked names, by the library that defines them.
#[derive(Clone, Copy)]
enum Family {
    Glx = 0,
    Egl = 1,
    Xlib = 2,
}

impl Family {
    fn of(name: &CStr) -> Option<Family> {
        let b = name.to_bytes();
        if b.starts_with(b"glX") {
            Some(Family::Glx)
        } else if b.starts_with(b"egl") {
            Some(Family::Egl)
        } else if b.first() == Some(&b'X') {
            Some(Family::Xlib)
        } else {
            None
        }
    }
}

/// The handle the game passed to `dlsym` for each family (0: none yet).
static GAME_LIBS: [AtomicUsize; 3] = [
    AtomicUsize::new(0),
    AtomicUsize::new(0),
    AtomicUsize::new(0),
];

/// The game looked `name`, one of our hooks, up in `handle` and found
/// `found` (an address) there: that library is where the family's real functions are
/// first looked for (the first library seen per family). It is opened
/// again here by its path, never to be unloaded (`RTLD_NODELETE`): the
/// game may `dlclose` its handle, and the real functions we keep must stay
/// valid. The pseudo handles (`RTLD_DEFAULT`, `RTLD_NEXT`) name no library.
pub fn remember_handle(handle: *mut c_void, name: &CStr, found: usize) {
    if handle.is_null() || handle == libc::RTLD_NEXT || found == 0 {
        return;
    }
    let Some(f) = Family::of(name) else { return };
    let cell = &GAME_LIBS[f as usize];
    if cell.load(Ordering::Relaxed) != 0 {
        return;
    }
    // SAFETY: dladdr fills `info` for an address; all zeroes is valid.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::dladdr(found as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
        return;
    }
    // SAFETY: the loaded library's own path; NOLOAD never loads anything.
    let own = unsafe {
        libc::dlopen(
            info.dli_fname,
            libc::RTLD_LAZY | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
        )
    };
    if !own.is_null() {
        // Another thread may have pinned one first: this reference then
        // just stays (pinned, as that one is).
        let _ = cell.compare_exchange(0, own as usize, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// The library of `api`, opened once (never closed).
fn library(api: Api) -> *mut c_void {
    static HANDLES: [OnceLock<usize>; 2] = [OnceLock::new(), OnceLock::new()];
    let cell = &HANDLES[api as usize];
    // SAFETY: dlopen of a library name; the handle stays valid (never closed).
    *cell.get_or_init(|| unsafe { libc::dlopen(api.library().as_ptr(), libc::RTLD_LAZY) } as usize)
        as *mut c_void
}

/// The real `GetProcAddress` of `api`.
fn get_proc(api: Api) -> Option<GetProcFn> {
    static PROCS: [OnceLock<usize>; 2] = [OnceLock::new(), OnceLock::new()];
    let p = *PROCS[api as usize].get_or_init(|| next_or_library(api, api.get_proc_name()) as usize);
    // SAFETY: a non-zero value is that API's GetProcAddress.
    (p != 0).then(|| unsafe { std::mem::transmute::<usize, GetProcFn>(p) })
}

fn next_or_library(api: Api, name: &CStr) -> *mut c_void {
    let family = Family::of(name);
    // SAFETY: RTLD_NEXT is a valid dlsym handle.
    let next = unsafe { real_dlsym(libc::RTLD_NEXT, name) };
    // Another tool's hook after us keeps its place in the chain; a system
    // library's copy gives way to the one the game looked the name up in.
    if !next.is_null() && !in_system_library(next) {
        return next;
    }
    if let Some(f) = family {
        let game = GAME_LIBS[f as usize].load(Ordering::Relaxed);
        if game != 0 {
            // SAFETY: a handle the game passed to dlsym itself.
            let p = unsafe { real_dlsym(game as *mut c_void, name) };
            if !p.is_null() {
                return p;
            }
        }
    }
    if !next.is_null() {
        return next;
    }
    let lib = if matches!(family, Some(Family::Xlib)) {
        xlib()
    } else {
        library(api)
    };
    if lib.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a handle from dlopen.
    unsafe { real_dlsym(lib, name) }
}

/// Whether `f` lies in a GL, EGL, GLX or Xlib library (by its file name),
/// rather than in another tool's hook.
fn in_system_library(f: *mut c_void) -> bool {
    // SAFETY: dladdr fills `info` for an address; all zeroes is valid.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::dladdr(f, &mut info) } == 0 || info.dli_fname.is_null() {
        return false;
    }
    // SAFETY: dladdr's file name is a C string.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
    let file = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    [&b"libGL"[..], b"libEGL", b"libGLX", b"libOpenGL", b"libX11"]
        .iter()
        .any(|p| file.starts_with(p))
}

/// libX11 if the process has loaded it (however privately), else null: an
/// Xlib call comes from a process that has it.
fn xlib() -> *mut c_void {
    // SAFETY: dlopen of a library name, only if already loaded.
    unsafe { libc::dlopen(c"libX11.so.6".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) }
}

/// The real function `name` of `api` (see the module doc for the order),
/// or null.
pub fn lookup(api: Api, name: &CStr) -> *mut c_void {
    let p = next_or_library(api, name);
    if !p.is_null() {
        return p;
    }
    // SAFETY: the real GetProcAddress with a C string.
    get_proc(api).map_or(std::ptr::null_mut(), |f| unsafe { f(name.as_ptr()) })
}

/// What `api`'s real `GetProcAddress` gives for `name` (null without one).
///
/// # Safety
/// `name` is a valid C string.
pub unsafe fn real_get_proc(api: Api, name: *const c_char) -> *mut c_void {
    // SAFETY: the caller's C string.
    get_proc(api).map_or(std::ptr::null_mut(), |f| unsafe { f(name) })
}

/// A real function of `api` looked up once: `real!(Api::Glx, "glXSwapBuffers",
/// unsafe extern "C" fn(...))` gives `Option<that fn type>`.
#[macro_export]
macro_rules! real {
    ($api:expr, $name:literal, $ty:ty) => {{
        static CELL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let p = *CELL.get_or_init(|| {
            $crate::real::lookup($api, {
                const N: &std::ffi::CStr =
                    match std::ffi::CStr::from_bytes_with_nul(concat!($name, "\0").as_bytes()) {
                        Ok(n) => n,
                        Err(_) => panic!("bad name"),
                    };
                N
            }) as usize
        });
        // SAFETY: a non-zero value is the real function `$name`, whose C
        // signature `$ty` declares.
        (p != 0).then(|| unsafe { std::mem::transmute::<usize, $ty>(p) })
    }};
}
