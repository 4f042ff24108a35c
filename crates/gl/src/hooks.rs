//! The one hook table: every symbol this library exports, and
//! [`ours`], which the three lookup paths (`dlsym`, `glXGetProcAddress(ARB)`,
//! `eglGetProcAddress`) consult, so a game gets our swap however it finds
//! it: linked directly (the preload's exports come first), fetched by name,
//! or looked up with `dlsym` on a `dlopen`ed libGL/libEGL (SDL2, GLFW,
//! Wine). Each hook hands the real call, as a closure, to [`crate::swap`].

#![allow(non_snake_case)]

use crate::real::{self, Api};
use crate::swap::{self, Target};
use std::ffi::{c_char, c_int, c_ulong, c_void, CStr};

type Display = *mut c_void;
type EglBoolean = u32;

/// Defines each hook twice: the exported symbol, which only forwards, and
/// the function that does the work, in `local`, whose address is what
/// [`ours`] hands out. (The address of an exported function, taken inside
/// this library, is whatever the dynamic linker bound that name to: a
/// tool preloaded before us that defines it too would get its own function
/// back from a lookup, and call itself.) Both are `"C-unwind"`, and so is
/// each real function as they call it: a thread ended inside the real call
/// (`pthread_exit`, `pthread_cancel`) unwinds through them as through the
/// driver alone (see `steadyhud_sys::guard`).
macro_rules! hooks {
    ($(
        $(#[$doc:meta])*
        fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? $body:block
    )*) => {
        $(
            $(#[$doc])*
            ///
            /// # Safety
            /// As the function of that name.
            #[no_mangle]
            pub unsafe extern "C-unwind" fn $name($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the caller's contract, passed on.
                unsafe { local::$name($($arg),*) }
            }
        )*

        /// The hooks' bodies (see `hooks!`).
        mod local {
            #![allow(non_snake_case)]
            use super::*;
            $(
                pub(super) unsafe extern "C-unwind" fn $name($($arg: $ty),*) $(-> $ret)? $body
            )*
        }

        /// Our function for `name`, if we hook it.
        pub fn ours(name: &CStr) -> Option<*mut c_void> {
            let p: *const () = match name.to_bytes() {
                $( n if n == stringify!($name).as_bytes() => local::$name as *const (), )*
                _ => return None,
            };
            Some(p as *mut c_void)
        }
    };
}

hooks! {
    /// As `glXGetProcAddressARB`.
    fn glXGetProcAddressARB(name: *const c_char) -> *mut c_void {
        // SAFETY: the caller's C string.
        unsafe { get_proc(Api::Glx, name) }
    }

    /// As `glXGetProcAddress`.
    fn glXGetProcAddress(name: *const c_char) -> *mut c_void {
        // SAFETY: the caller's C string.
        unsafe { get_proc(Api::Glx, name) }
    }

    /// As `eglGetProcAddress`.
    fn eglGetProcAddress(name: *const c_char) -> *mut c_void {
        // SAFETY: the caller's C string.
        unsafe { get_proc(Api::Egl, name) }
    }

    /// As `glXSwapBuffers`.
    fn glXSwapBuffers(dpy: Display, drawable: c_ulong) {
        let Some(f) = crate::real!(
            Api::Glx,
            "glXSwapBuffers",
            unsafe extern "C-unwind" fn(Display, c_ulong)
        ) else {
            return crate::process::missing("glXSwapBuffers");
        };
        let t = Target::glx(dpy, drawable);
        // SAFETY: the real function with the game's arguments.
        swap::swap(t, || unsafe { f(dpy, drawable) })
    }

    /// As `glXSwapBuffersMscOML`.
    fn glXSwapBuffersMscOML(
        dpy: Display,
        drawable: c_ulong,
        target_msc: i64,
        divisor: i64,
        remainder: i64,
    ) -> i64 {
        type F = unsafe extern "C-unwind" fn(Display, c_ulong, i64, i64, i64) -> i64;
        let Some(f) = crate::real!(Api::Glx, "glXSwapBuffersMscOML", F) else {
            crate::process::missing("glXSwapBuffersMscOML");
            return 0;
        };
        let t = Target::glx(dpy, drawable);
        // SAFETY: the real function with the game's arguments.
        swap::swap(t, || unsafe {
            f(dpy, drawable, target_msc, divisor, remainder)
        })
    }

    /// As `glXDestroyContext`.
    fn glXDestroyContext(dpy: Display, ctx: *mut c_void) {
        type F = unsafe extern "C-unwind" fn(Display, *mut c_void);
        crate::process::context_destroyed(ctx as usize);
        if let Some(f) = crate::real!(Api::Glx, "glXDestroyContext", F) {
            // SAFETY: the real function with the game's arguments.
            unsafe { f(dpy, ctx) }
        }
    }

    /// As `eglSwapBuffers`.
    fn eglSwapBuffers(dpy: Display, surface: *mut c_void) -> EglBoolean {
        type F = unsafe extern "C-unwind" fn(Display, *mut c_void) -> EglBoolean;
        let Some(f) = crate::real!(Api::Egl, "eglSwapBuffers", F) else {
            crate::process::missing("eglSwapBuffers");
            return 0;
        };
        let t = Target::egl(dpy, surface);
        // SAFETY: the real function with the game's arguments.
        swap::swap(t, || unsafe { f(dpy, surface) })
    }

    /// As `eglSwapBuffersWithDamageKHR`.
    fn eglSwapBuffersWithDamageKHR(
        dpy: Display,
        surface: *mut c_void,
        rects: *const c_int,
        n: c_int,
    ) -> EglBoolean {
        let f = crate::real!(Api::Egl, "eglSwapBuffersWithDamageKHR", SwapDamage);
        // SAFETY: the game's arguments.
        unsafe { swap_with_damage("eglSwapBuffersWithDamageKHR", f, dpy, surface, rects, n) }
    }

    /// As `eglSwapBuffersWithDamageEXT`.
    fn eglSwapBuffersWithDamageEXT(
        dpy: Display,
        surface: *mut c_void,
        rects: *const c_int,
        n: c_int,
    ) -> EglBoolean {
        let f = crate::real!(Api::Egl, "eglSwapBuffersWithDamageEXT", SwapDamage);
        // SAFETY: the game's arguments.
        unsafe { swap_with_damage("eglSwapBuffersWithDamageEXT", f, dpy, surface, rects, n) }
    }

    /// As `eglDestroyContext`.
    fn eglDestroyContext(dpy: Display, ctx: *mut c_void) -> EglBoolean {
        type F = unsafe extern "C-unwind" fn(Display, *mut c_void) -> EglBoolean;
        crate::process::context_destroyed(ctx as usize);
        match crate::real!(Api::Egl, "eglDestroyContext", F) {
            // SAFETY: the real function with the game's arguments.
            Some(f) => unsafe { f(dpy, ctx) },
            None => 0,
        }
    }

    /// As `eglDestroySurface`.
    fn eglDestroySurface(dpy: Display, surface: *mut c_void) -> EglBoolean {
        type F = unsafe extern "C-unwind" fn(Display, *mut c_void) -> EglBoolean;
        crate::process::window_destroyed(true, dpy as usize, surface as u64);
        match crate::real!(Api::Egl, "eglDestroySurface", F) {
            // SAFETY: the real function with the game's arguments.
            Some(f) => unsafe { f(dpy, surface) },
            None => 0,
        }
    }
    /// As `XDestroyWindow`: a GLX window's log ends with it.
    fn XDestroyWindow(dpy: Display, window: c_ulong) -> c_int {
        type F = unsafe extern "C-unwind" fn(Display, c_ulong) -> c_int;
        crate::process::window_destroyed(false, dpy as usize, crate::swap::xid(window));
        match crate::real!(Api::Glx, "XDestroyWindow", F) {
            // SAFETY: the real function with the game's arguments.
            Some(f) => unsafe { f(dpy, window) },
            None => 0,
        }
    }

    /// As `eglCreateWindowSurface`: a surface at the address of a
    /// destroyed one is a new window, with a log of its own.
    fn eglCreateWindowSurface(
        dpy: Display,
        config: *mut c_void,
        win: *mut c_void,
        attribs: *const c_int,
    ) -> *mut c_void {
        let f = crate::real!(Api::Egl, "eglCreateWindowSurface", CreateSurface<c_int>);
        // SAFETY: the game's arguments.
        unsafe { create_surface(f, dpy, config, win, attribs) }
    }

    /// As `eglCreatePlatformWindowSurface` (see `eglCreateWindowSurface`).
    fn eglCreatePlatformWindowSurface(
        dpy: Display,
        config: *mut c_void,
        win: *mut c_void,
        attribs: *const isize,
    ) -> *mut c_void {
        let f = crate::real!(Api::Egl, "eglCreatePlatformWindowSurface", CreateSurface<isize>);
        // SAFETY: the game's arguments.
        unsafe { create_surface(f, dpy, config, win, attribs) }
    }

    /// As `eglCreatePlatformWindowSurfaceEXT` (see `eglCreateWindowSurface`).
    fn eglCreatePlatformWindowSurfaceEXT(
        dpy: Display,
        config: *mut c_void,
        win: *mut c_void,
        attribs: *const c_int,
    ) -> *mut c_void {
        let f = crate::real!(Api::Egl, "eglCreatePlatformWindowSurfaceEXT", CreateSurface<c_int>);
        // SAFETY: the game's arguments.
        unsafe { create_surface(f, dpy, config, win, attribs) }
    }

    /// As `glXCreateWindow` (see `eglCreateWindowSurface`).
    fn glXCreateWindow(
        dpy: Display,
        config: *mut c_void,
        win: c_ulong,
        attribs: *const c_int,
    ) -> c_ulong {
        type F = unsafe extern "C-unwind" fn(Display, *mut c_void, c_ulong, *const c_int) -> c_ulong;
        let Some(f) = crate::real!(Api::Glx, "glXCreateWindow", F) else {
            return 0;
        };
        // SAFETY: the real function with the game's arguments.
        let drawable = unsafe { f(dpy, config, win, attribs) };
        crate::process::window_created(false, dpy as usize, crate::swap::xid(drawable));
        // SAFETY: the game's live display, whose drawable was just made on
        // its window `win`.
        unsafe {
            crate::process::glx_window(dpy, crate::swap::xid(drawable), crate::swap::xid(win))
        };
        drawable
    }

    /// As `glXDestroyWindow`: the GLX window's log ends with it, as with
    /// `XDestroyWindow`.
    fn glXDestroyWindow(dpy: Display, win: c_ulong) {
        type F = unsafe extern "C-unwind" fn(Display, c_ulong);
        crate::process::window_destroyed(false, dpy as usize, crate::swap::xid(win));
        if let Some(f) = crate::real!(Api::Glx, "glXDestroyWindow", F) {
            // SAFETY: the real function with the game's arguments.
            unsafe { f(dpy, win) }
        }
    }

    /// As `glXCreateContext`: a record at the new context's address goes.
    fn glXCreateContext(
        dpy: Display,
        vis: *mut c_void,
        share: *mut c_void,
        direct: c_int,
    ) -> *mut c_void {
        type F = unsafe extern "C-unwind" fn(Display, *mut c_void, *mut c_void, c_int) -> *mut c_void;
        let Some(f) = crate::real!(Api::Glx, "glXCreateContext", F) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the real function with the game's arguments.
        let ctx = unsafe { f(dpy, vis, share, direct) };
        crate::process::context_created(ctx as usize);
        ctx
    }

    /// As `glXCreateNewContext` (see `glXCreateContext`).
    fn glXCreateNewContext(
        dpy: Display,
        config: *mut c_void,
        render_type: c_int,
        share: *mut c_void,
        direct: c_int,
    ) -> *mut c_void {
        type F = unsafe extern "C-unwind" fn(Display, *mut c_void, c_int, *mut c_void, c_int) -> *mut c_void;
        let Some(f) = crate::real!(Api::Glx, "glXCreateNewContext", F) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the real function with the game's arguments.
        let ctx = unsafe { f(dpy, config, render_type, share, direct) };
        crate::process::context_created(ctx as usize);
        ctx
    }

    /// As `glXCreateContextAttribsARB` (see `glXCreateContext`).
    fn glXCreateContextAttribsARB(
        dpy: Display,
        config: *mut c_void,
        share: *mut c_void,
        direct: c_int,
        attribs: *const c_int,
    ) -> *mut c_void {
        type F = unsafe extern "C-unwind" fn(Display, *mut c_void, *mut c_void, c_int, *const c_int) -> *mut c_void;
        let Some(f) = crate::real!(Api::Glx, "glXCreateContextAttribsARB", F) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the real function with the game's arguments.
        let ctx = unsafe { f(dpy, config, share, direct, attribs) };
        crate::process::context_created(ctx as usize);
        ctx
    }

    /// As `eglCreateContext` (see `glXCreateContext`).
    fn eglCreateContext(
        dpy: Display,
        config: *mut c_void,
        share: *mut c_void,
        attribs: *const c_int,
    ) -> *mut c_void {
        type F = unsafe extern "C-unwind" fn(Display, *mut c_void, *mut c_void, *const c_int) -> *mut c_void;
        let Some(f) = crate::real!(Api::Egl, "eglCreateContext", F) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the real function with the game's arguments.
        let ctx = unsafe { f(dpy, config, share, attribs) };
        crate::process::context_created(ctx as usize);
        ctx
    }

    /// As `eglTerminate`: the display's contexts and surfaces go with it.
    fn eglTerminate(dpy: Display) -> EglBoolean {
        type F = unsafe extern "C-unwind" fn(Display) -> EglBoolean;
        crate::process::display_closed(true, dpy as usize);
        match crate::real!(Api::Egl, "eglTerminate", F) {
            // SAFETY: the real function with the game's argument.
            Some(f) => unsafe { f(dpy) },
            None => 0,
        }
    }

    /// As Xlib's `XCloseDisplay`: the display's GLX contexts and windows go
    /// with it.
    fn XCloseDisplay(dpy: Display) -> c_int {
        type F = unsafe extern "C-unwind" fn(Display) -> c_int;
        crate::process::display_closed(false, dpy as usize);
        match crate::real!(Api::Glx, "XCloseDisplay", F) {
            // SAFETY: the real function with the game's argument.
            Some(f) => unsafe { f(dpy) },
            None => 0,
        }
    }

    /// As `eglGetDisplay`.
    fn eglGetDisplay(native: *mut c_void) -> Display {
        type F = unsafe extern "C-unwind" fn(*mut c_void) -> Display;
        let Some(f) = crate::real!(Api::Egl, "eglGetDisplay", F) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the real function with the game's argument.
        let dpy = unsafe { f(native) };
        // Whatever `native` is: it is read only if readable.
        if crate::wayland::is_wl_display(native) {
            crate::process::wayland_display(dpy as usize, native);
        }
        dpy
    }

    /// As `eglGetPlatformDisplay`.
    fn eglGetPlatformDisplay(platform: u32, native: *mut c_void, attribs: *const isize) -> Display {
        type F = unsafe extern "C-unwind" fn(u32, *mut c_void, *const isize) -> Display;
        let Some(f) = crate::real!(Api::Egl, "eglGetPlatformDisplay", F) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the real function with the game's arguments.
        platform_display(platform, native, unsafe { f(platform, native, attribs) })
    }

    /// As `eglGetPlatformDisplayEXT`.
    fn eglGetPlatformDisplayEXT(
        platform: u32,
        native: *mut c_void,
        attribs: *const c_int,
    ) -> Display {
        type F = unsafe extern "C-unwind" fn(u32, *mut c_void, *const c_int) -> Display;
        let Some(f) = crate::real!(Api::Egl, "eglGetPlatformDisplayEXT", F) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the real function with the game's arguments.
        platform_display(platform, native, unsafe { f(platform, native, attribs) })
    }
}

/// The EGL window-surface constructors, by the type of their attributes.
type CreateSurface<A> =
    unsafe extern "C-unwind" fn(Display, *mut c_void, *mut c_void, *const A) -> *mut c_void;

/// One of the EGL window-surface constructors: the real one `f` (null
/// without it), then the new surface is told to the process record.
///
/// # Safety
/// The game's arguments for `f`.
unsafe fn create_surface<A>(
    f: Option<CreateSurface<A>>,
    dpy: Display,
    config: *mut c_void,
    win: *mut c_void,
    attribs: *const A,
) -> *mut c_void {
    let Some(f) = f else {
        return std::ptr::null_mut();
    };
    // SAFETY: the real function with the game's arguments (caller).
    let surface = unsafe { f(dpy, config, win, attribs) };
    crate::process::window_created(true, dpy as usize, surface as u64);
    if !surface.is_null() {
        // SAFETY: `win` is the native window the surface was just made
        // from (the game's).
        unsafe { crate::process::egl_window_surface(dpy as usize, surface as u64, win) };
    }
    surface
}

/// `dlsym`, as this library exports it: a call with `RTLD_NEXT` jumps
/// straight into glibc's `dlsym`, so glibc sees the caller's own return
/// address and finds the next definition after the caller (another tool
/// that wraps `glXSwapBuffers` and looks up "its next" gets it, never a
/// loop through us); every other call goes to [`dlsym_hook`].
///
/// # Safety
/// As `dlsym(3)`.
#[cfg(target_arch = "x86_64")]
#[no_mangle]
#[unsafe(naked)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    std::arch::naked_asm!(
        "cmp rdi, -1",
        "jne 2f",
        "mov rax, qword ptr [rip + {real}]",
        "test rax, rax",
        "jz 2f",
        "jmp rax",
        "2:",
        "jmp {hook}",
        real = sym real::REAL_DLSYM,
        hook = sym dlsym_hook,
    )
}

// `dlsym` on 32-bit x86: the same entry as the naked one above, written
// as a symbol of its own in `global_asm!` (the build's compiler, Debian's
// Rust 1.85, has no naked functions), so no compiler prologue can precede
// it whatever the flags: `-Cforce-frame-pointers=yes`, which some
// distributions put in their Rust flags, gives every Rust function a
// `push %ebp`, and an entry written inside one would read the return
// address as the handle. The block sees the caller's arguments and return
// address where the caller put them (`[esp+4]`: the handle). glibc's
// `dlsym` is read through the library's GOT base (`call`/`pop`, as
// position-independent i386 code does); both jumps leave the stack as the
// caller made it, so `RTLD_NEXT` resolves from the caller.
//
// rustc's version script exports only the names Rust defines, so the
// exported `dlsym` is the Rust function below, and `build.rs` points that
// name at this entry (`--defsym=dlsym=steadyhud_dlsym_entry`: a linker
// definition wins over the object's). The 32-bit pass of
// `es2gears_x11_logs_every_swap_and_shows_the_hud` checks it (a tool
// preloaded after us would otherwise find itself and recurse), and
// `scripts/test.sh` runs it with the library built with frame pointers
// forced.
#[cfg(target_arch = "x86")]
std::arch::global_asm!(
    ".pushsection .text.steadyhud_dlsym_entry,\"ax\",@progbits",
    ".globl steadyhud_dlsym_entry",
    ".type steadyhud_dlsym_entry,@function",
    "steadyhud_dlsym_entry:",
    "cmpl $-1, 4(%esp)",
    "jne 2f",
    "call 1f",
    "1:",
    "popl %ecx",
    "addl $_GLOBAL_OFFSET_TABLE_+[.-1b], %ecx",
    "movl {real}@GOTOFF(%ecx), %eax",
    "testl %eax, %eax",
    "jz 2f",
    "jmp *%eax",
    "2:",
    "jmp {hook}",
    ".size steadyhud_dlsym_entry, .-steadyhud_dlsym_entry",
    ".popsection",
    real = sym real::REAL_DLSYM,
    hook = sym dlsym_hook,
    options(att_syntax),
);

/// The name rustc exports on 32-bit x86, whose symbol the link points at
/// `steadyhud_dlsym_entry` (above); this body is never reached through it.
///
/// # Safety
/// As `dlsym(3)`.
#[cfg(target_arch = "x86")]
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { dlsym_hook(handle, name) }
}

/// `dlsym` on other architectures: [`dlsym_hook`] for every handle, so
/// `RTLD_NEXT` is resolved from this library. As it is preloaded first,
/// that is every object after the main program, and a tool preloaded
/// before it that looks up its next `glXSwapBuffers` gets ours (our own
/// function, see `hooks!`). A tool preloaded after it that does the same
/// would get ours too, and the two would call each other: there, such a
/// tool goes before steadyhud in `LD_PRELOAD`.
///
/// # Safety
/// As `dlsym(3)`.
#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { dlsym_hook(handle, name) }
}

/// glibc's `dlsym`, except that a name of ours found in the library asked
/// gets our hook. Reached for every handle but `RTLD_NEXT` on x86_64 (see
/// [`dlsym`]; before the library's constructor ran, for that too, and then
/// resolved from this library).
///
/// # Safety
/// As `dlsym(3)`.
unsafe extern "C" fn dlsym_hook(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    let Some(real) = real::dlsym_fn() else {
        return std::ptr::null_mut();
    };
    // SAFETY: the caller's arguments, as glibc's dlsym takes them.
    let found = unsafe { real(handle, name) };
    if found.is_null() || name.is_null() {
        return found;
    }
    // SAFETY: a non-null name dlsym found a symbol for is a C string.
    let name = unsafe { CStr::from_ptr(name) };
    match ours(name) {
        Some(p) if !crate::process::left_alone_cheap() => {
            real::remember_handle(handle, name, found as usize);
            p
        }
        _ => found,
    }
}

/// `GetProcAddress` of `api`: ours for a hooked name the real one knows.
unsafe fn get_proc(api: Api, name: *const c_char) -> *mut c_void {
    // SAFETY: the caller's C string.
    let found = unsafe { real::real_get_proc(api, name) };
    if found.is_null() || name.is_null() {
        return found;
    }
    // SAFETY: as above.
    match ours(unsafe { CStr::from_ptr(name) }) {
        Some(p) if !crate::process::left_alone_cheap() => p,
        _ => found,
    }
}

type SwapDamage =
    unsafe extern "C-unwind" fn(Display, *mut c_void, *const c_int, c_int) -> EglBoolean;

/// `eglSwapBuffersWithDamage{KHR,EXT}` (`name`) through its real function
/// `real`. The HUD's rectangle is not added to the damage: the compositor
/// may then show it a frame late where the game damaged nothing, which a
/// HUD redrawn every frame never notices.
///
/// # Safety
/// The game's arguments to `name`.
unsafe fn swap_with_damage(
    name: &str,
    real: Option<SwapDamage>,
    dpy: Display,
    surface: *mut c_void,
    rects: *const c_int,
    n: c_int,
) -> EglBoolean {
    let Some(f) = real else {
        crate::process::missing(name);
        return 0;
    };
    // SAFETY: the real function with the game's arguments.
    swap::swap(Target::egl(dpy, surface), || unsafe {
        f(dpy, surface, rects, n)
    })
}

/// What `eglGetPlatformDisplay(EXT)` returned: `dpy`, remembered as a
/// Wayland display when `platform` is Wayland's.
fn platform_display(platform: u32, native: *mut c_void, dpy: Display) -> Display {
    if platform == PLATFORM_WAYLAND {
        crate::process::wayland_display(dpy as usize, native);
    }
    dpy
}

/// `EGL_PLATFORM_WAYLAND_KHR` (= `_EXT`).
const PLATFORM_WAYLAND: u32 = 0x31D8;
