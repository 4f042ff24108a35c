//! The window and the context: Xlib and GLX through `x11-dl` (which loads
//! libGL with `dlopen` and finds its functions with `dlsym`, as SDL does),
//! EGL through `libloading` (the same way).

use crate::Profile;
use std::ffi::{c_int, c_uint, c_ulong, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use x11_dl::{glx, xlib};

pub(crate) type EglDisplay = *mut c_void;
pub(crate) type EglConfig = *mut c_void;
pub(crate) type EglContext = *mut c_void;
pub(crate) type EglSurface = *mut c_void;

/// The EGL functions this program calls, on X11 (EGL 1.4) and on Wayland
/// (the EGL 1.5 platform functions, `crate::wl`).
pub(crate) struct Egl {
    _lib: libloading::Library,
    pub get_display: unsafe extern "C" fn(*mut c_void) -> EglDisplay,
    pub get_platform_display: unsafe extern "C" fn(c_uint, *mut c_void, *const isize) -> EglDisplay,
    pub initialize: unsafe extern "C" fn(EglDisplay, *mut c_int, *mut c_int) -> c_uint,
    pub bind_api: unsafe extern "C" fn(c_uint) -> c_uint,
    pub choose_config:
        unsafe extern "C" fn(EglDisplay, *const c_int, *mut EglConfig, c_int, *mut c_int) -> c_uint,
    pub create_context:
        unsafe extern "C" fn(EglDisplay, EglConfig, EglContext, *const c_int) -> EglContext,
    pub destroy_context: unsafe extern "C" fn(EglDisplay, EglContext) -> c_uint,
    pub create_window_surface:
        unsafe extern "C" fn(EglDisplay, EglConfig, c_ulong, *const c_int) -> EglSurface,
    pub create_platform_window_surface:
        unsafe extern "C" fn(EglDisplay, EglConfig, *mut c_void, *const isize) -> EglSurface,
    pub make_current:
        unsafe extern "C" fn(EglDisplay, EglSurface, EglSurface, EglContext) -> c_uint,
    pub destroy_surface: unsafe extern "C" fn(EglDisplay, EglSurface) -> c_uint,
    pub swap_buffers: unsafe extern "C" fn(EglDisplay, EglSurface) -> c_uint,
    pub swap_interval: unsafe extern "C" fn(EglDisplay, c_int) -> c_uint,
    pub terminate: unsafe extern "C" fn(EglDisplay) -> c_uint,
    pub get_error: unsafe extern "C" fn() -> c_int,
    pub get_proc_address: unsafe extern "C" fn(*const i8) -> *mut c_void,
}

impl Egl {
    pub(crate) fn load() -> Result<Egl, String> {
        // SAFETY: loading the system's libEGL and reading its symbols with
        // their EGL 1.5 signatures (EGLAttrib is intptr_t).
        unsafe {
            let lib = libloading::Library::new("libEGL.so.1").map_err(|e| e.to_string())?;
            macro_rules! f {
                ($n:literal) => {
                    *lib.get(concat!($n, "\0").as_bytes())
                        .map_err(|e| format!("{}: {e}", $n))?
                };
            }
            Ok(Egl {
                get_display: f!("eglGetDisplay"),
                get_platform_display: f!("eglGetPlatformDisplay"),
                initialize: f!("eglInitialize"),
                bind_api: f!("eglBindAPI"),
                choose_config: f!("eglChooseConfig"),
                create_context: f!("eglCreateContext"),
                destroy_context: f!("eglDestroyContext"),
                create_window_surface: f!("eglCreateWindowSurface"),
                create_platform_window_surface: f!("eglCreatePlatformWindowSurface"),
                make_current: f!("eglMakeCurrent"),
                destroy_surface: f!("eglDestroySurface"),
                swap_buffers: f!("eglSwapBuffers"),
                swap_interval: f!("eglSwapInterval"),
                terminate: f!("eglTerminate"),
                get_error: f!("eglGetError"),
                get_proc_address: f!("eglGetProcAddress"),
                _lib: lib,
            })
        }
    }

    /// `what failed (EGL error 0x…)`.
    pub(crate) fn error(&self, what: &str) -> String {
        // SAFETY: eglGetError takes nothing and only reads thread state.
        format!("{what} failed (EGL error {:#x})", unsafe {
            (self.get_error)()
        })
    }
}

enum Api {
    Glx {
        glx: Box<glx::Glx>,
        ctx: glx::GLXContext,
        visual: *mut xlib::XVisualInfo,
        fbc: glx::GLXFBConfig,
    },
    Egl {
        egl: Egl,
        dpy: EglDisplay,
        surface: EglSurface,
        config: EglConfig,
        ctx: EglContext,
    },
}

/// An X window with a current GL context.
pub struct Context {
    xlib: xlib::Xlib,
    dpy: *mut xlib::Display,
    /// The drawable swapped: the X window, or a `glXCreateWindow` one.
    window: c_ulong,
    /// The X window.
    xwin: c_ulong,
    /// Times [`Context::recreate`] ran.
    recreated: u32,
    /// Keys of the windows ended so far.
    keys: Vec<u64>,
    width: u32,
    height: u32,
    api: Api,
}

/// Contexts made so far, and whether a new one should be made again until
/// the driver hands out an address one of them had (`--lose-context-every`:
/// the case a game meets when its old context died unseen).
static SEEN_CONTEXTS: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
pub static SEEK_REUSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes a context with `create` (destroying misses with `destroy`) until
/// its address is one seen before, when [`SEEK_REUSE`] asks for it.
fn reused(mut create: impl FnMut() -> usize, mut destroy: impl FnMut(usize)) -> usize {
    let mut seen = SEEN_CONTEXTS.lock().unwrap_or_else(|e| e.into_inner());
    let seek = SEEK_REUSE.load(Ordering::Relaxed) && !seen.is_empty();
    // Misses are kept until the end, so each try gets fresh memory.
    let mut misses = Vec::new();
    let ctx = loop {
        let c = create();
        if !seek || c == 0 || seen.contains(&c) || misses.len() == 40 {
            break c;
        }
        misses.push(c);
    };
    for m in misses {
        destroy(m);
    }
    seen.push(ctx);
    ctx
}

/// X errors seen (the destroyed-window mode expects some).
static X_ERRORS: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" fn count_x_error(_: *mut xlib::Display, _: *mut xlib::XErrorEvent) -> c_int {
    X_ERRORS.fetch_add(1, Ordering::Relaxed);
    0
}

const EGL_NONE: c_int = 0x3038;

impl Context {
    pub fn new(profile: Profile, width: u32, height: u32) -> Result<Context, String> {
        let xlib = xlib::Xlib::open().map_err(|e| e.to_string())?;
        // SAFETY: Xlib, GLX and EGL calls in their documented order, every
        // result checked.
        unsafe {
            (xlib.XInitThreads)();
            let dpy = (xlib.XOpenDisplay)(std::ptr::null());
            if dpy.is_null() {
                return Err("cannot open the X display".into());
            }
            (xlib.XSetErrorHandler)(Some(count_x_error));
            let screen = (xlib.XDefaultScreen)(dpy);
            let mut me = Context {
                xlib,
                dpy,
                window: 0,
                xwin: 0,
                recreated: 0,
                keys: Vec::new(),
                width,
                height,
                api: Api::Glx {
                    glx: Box::new(glx::Glx::open().map_err(|e| e.to_string())?),
                    ctx: std::ptr::null_mut(),
                    visual: std::ptr::null_mut(),
                    fbc: std::ptr::null_mut(),
                },
            };
            match profile {
                Profile::Compat | Profile::Core => me.make_glx(screen, profile == Profile::Core)?,
                Profile::Gles3 | Profile::Gles2 => {
                    me.make_egl(if profile == Profile::Gles3 { 3 } else { 2 })?
                }
            }
            Ok(me)
        }
    }

    /// Creates and maps a window of `visual` (null: the default one).
    /// Asks for the key and button presses in the X window (`--input-out`).
    pub fn select_presses(&self) {
        let x = &self.xlib;
        // SAFETY: an open display and our window.
        unsafe {
            let mask = xlib::StructureNotifyMask
                | xlib::ExposureMask
                | xlib::KeyPressMask
                | xlib::ButtonPressMask;
            (x.XSelectInput)(self.dpy, self.xwin, mask);
            (x.XSync)(self.dpy, xlib::False);
        }
    }

    /// The key and button presses that came since the last call, as a game
    /// reads them at its frame's start: (`key` or `button`, the server's
    /// millisecond stamp). Never waits.
    pub fn take_presses(&self) -> Vec<(&'static str, u64)> {
        let x = &self.xlib;
        let mut out = Vec::new();
        // SAFETY: an open display; an event is read only while one is
        // pending, into a whole XEvent.
        unsafe {
            while (x.XPending)(self.dpy) > 0 {
                let mut ev: xlib::XEvent = std::mem::zeroed();
                (x.XNextEvent)(self.dpy, &mut ev);
                match ev.get_type() {
                    // An X Time is 32 bits (a c_ulong: 64 bits on x86_64).
                    xlib::KeyPress => out.push(("key", u64::from(ev.key.time as u32))),
                    xlib::ButtonPress => out.push(("button", u64::from(ev.button.time as u32))),
                    _ => {}
                }
            }
        }
        out
    }

    unsafe fn create_window(&mut self, visual: *mut xlib::XVisualInfo) -> c_ulong {
        let x = &self.xlib;
        // SAFETY: an open display; the caller's visual (or none).
        unsafe {
            let root = (x.XDefaultRootWindow)(self.dpy);
            let mut attrs: xlib::XSetWindowAttributes = std::mem::zeroed();
            let mut mask = xlib::CWEventMask;
            attrs.event_mask = xlib::StructureNotifyMask | xlib::ExposureMask;
            let (depth, vis) = if visual.is_null() {
                (xlib::CopyFromParent, std::ptr::null_mut())
            } else {
                attrs.colormap =
                    (x.XCreateColormap)(self.dpy, root, (*visual).visual, xlib::AllocNone);
                mask |= xlib::CWColormap;
                ((*visual).depth, (*visual).visual)
            };
            let w = (x.XCreateWindow)(
                self.dpy,
                root,
                0,
                0,
                self.width,
                self.height,
                0,
                depth,
                xlib::InputOutput as c_uint,
                vis,
                mask,
                &mut attrs,
            );
            (x.XStoreName)(self.dpy, w, c"steadyhud-gltest".as_ptr());
            (x.XMapWindow)(self.dpy, w);
            let mut ev: xlib::XEvent = std::mem::zeroed();
            loop {
                (x.XNextEvent)(self.dpy, &mut ev);
                if ev.get_type() == xlib::MapNotify {
                    break;
                }
            }
            w
        }
    }

    unsafe fn make_glx(&mut self, screen: c_int, core: bool) -> Result<(), String> {
        let Api::Glx { glx, .. } = &self.api else {
            unreachable!()
        };
        // SAFETY: GLX calls on the open display (caller).
        unsafe {
            let attribs = [
                glx::GLX_X_RENDERABLE,
                1,
                glx::GLX_DRAWABLE_TYPE,
                glx::GLX_WINDOW_BIT,
                glx::GLX_RENDER_TYPE,
                glx::GLX_RGBA_BIT,
                glx::GLX_DOUBLEBUFFER,
                1,
                glx::GLX_RED_SIZE,
                8,
                glx::GLX_GREEN_SIZE,
                8,
                glx::GLX_BLUE_SIZE,
                8,
                0,
            ];
            let mut n = 0;
            let configs = (glx.glXChooseFBConfig)(self.dpy, screen, attribs.as_ptr(), &mut n);
            if configs.is_null() || n == 0 {
                return Err("no GLX framebuffer config".into());
            }
            let fbc = *configs;
            let visual = (glx.glXGetVisualFromFBConfig)(self.dpy, fbc);
            type Create = unsafe extern "C" fn(
                *mut xlib::Display,
                glx::GLXFBConfig,
                glx::GLXContext,
                c_int,
                *const c_int,
            ) -> glx::GLXContext;
            let attribs_arb: Option<Create> = if core {
                let f = (glx.glXGetProcAddressARB)(c"glXCreateContextAttribsARB".as_ptr().cast())
                    .ok_or("no glXCreateContextAttribsARB")?;
                Some(std::mem::transmute::<unsafe extern "C" fn(), Create>(f))
            } else {
                None
            };
            let dpy = self.dpy;
            let ctx = reused(
                || match attribs_arb {
                    Some(f) => {
                        let attrs = [0x2091, 3, 0x2092, 3, 0x9126, 1, 0];
                        f(dpy, fbc, std::ptr::null_mut(), 1, attrs.as_ptr()) as usize
                    }
                    None => (glx.glXCreateNewContext)(
                        dpy,
                        fbc,
                        glx::GLX_RGBA_TYPE,
                        std::ptr::null_mut(),
                        1,
                    ) as usize,
                },
                |c| (glx.glXDestroyContext)(dpy, c as glx::GLXContext),
            ) as glx::GLXContext;
            if ctx.is_null() {
                return Err("cannot create the GLX context".into());
            }
            let window = self.create_window(visual);
            self.window = window;
            self.xwin = window;
            if let Api::Glx {
                glx,
                ctx: c,
                visual: v,
                fbc: f,
            } = &mut self.api
            {
                *c = ctx;
                *v = visual;
                *f = fbc;
                if (glx.glXMakeCurrent)(self.dpy, window, ctx) == 0 {
                    return Err("glXMakeCurrent failed".into());
                }
            }
            Ok(())
        }
    }

    unsafe fn make_egl(&mut self, major: c_int) -> Result<(), String> {
        let egl = Egl::load()?;
        // SAFETY: EGL calls in order on the open X display (caller).
        unsafe {
            let dpy = (egl.get_display)(self.dpy.cast());
            if dpy.is_null()
                || (egl.initialize)(dpy, std::ptr::null_mut(), std::ptr::null_mut()) == 0
            {
                return Err("eglInitialize failed".into());
            }
            (egl.bind_api)(0x30A0);
            let es_bit = if major >= 3 { 0x40 } else { 0x4 };
            let attribs = [
                0x3033, 0x4, 0x3040, es_bit, 0x3024, 8, 0x3023, 8, 0x3022, 8, EGL_NONE,
            ];
            let (mut config, mut n) = (std::ptr::null_mut(), 0);
            if (egl.choose_config)(dpy, attribs.as_ptr(), &mut config, 1, &mut n) == 0 || n == 0 {
                return Err("no EGL config".into());
            }
            let ctx_attribs = [0x3098, major, EGL_NONE];
            let ctx = reused(
                || {
                    (egl.create_context)(dpy, config, std::ptr::null_mut(), ctx_attribs.as_ptr())
                        as usize
                },
                |c| {
                    (egl.destroy_context)(dpy, c as EglContext);
                },
            ) as EglContext;
            if ctx.is_null() {
                return Err("cannot create the EGL context".into());
            }
            self.window = self.create_window(std::ptr::null_mut());
            self.xwin = self.window;
            let surface = (egl.create_window_surface)(dpy, config, self.window, std::ptr::null());
            if surface.is_null() || (egl.make_current)(dpy, surface, surface, ctx) == 0 {
                return Err("cannot make the EGL surface current".into());
            }
            self.api = Api::Egl {
                egl,
                dpy,
                surface,
                config,
                ctx,
            };
            Ok(())
        }
    }

    /// The GL functions of the current context.
    pub fn glow(&self) -> glow::Context {
        // SAFETY: the context is current on this thread; the loader returns
        // its functions.
        unsafe {
            glow::Context::from_loader_function_cstr(|name: &CStr| match &self.api {
                Api::Glx { glx, .. } => (glx.glXGetProcAddressARB)(name.as_ptr().cast())
                    .map_or(std::ptr::null(), |f| f as *const c_void),
                Api::Egl { egl, .. } => (egl.get_proc_address)(name.as_ptr()).cast_const(),
            })
        }
    }

    /// `GL_VERSION`.
    pub fn version(&self, gl: &glow::Context) -> String {
        use glow::HasContext;
        // SAFETY: a query on the current context.
        unsafe { gl.get_parameter_string(glow::VERSION) }
    }

    /// Swaps the window.
    pub fn swap(&self) {
        // SAFETY: the window and the context are live.
        unsafe {
            match &self.api {
                Api::Glx { glx, .. } => (glx.glXSwapBuffers)(self.dpy, self.window),
                Api::Egl {
                    egl, dpy, surface, ..
                } => {
                    (egl.swap_buffers)(*dpy, *surface);
                }
            }
        }
    }

    /// Makes the context current on a second thread (which keeps it), and
    /// swaps the window `frames` times from this one.
    pub fn swap_from_other_thread(&mut self, frames: u64) -> Result<(), String> {
        let Api::Glx { glx, ctx, .. } = &self.api else {
            return Err("--other-thread is for GLX".into());
        };
        // SAFETY: releasing the context on this thread first.
        unsafe { (glx.glXMakeCurrent)(self.dpy, 0, std::ptr::null_mut()) };
        let (dpy, window, ctx) = (self.dpy as usize, self.window, *ctx as usize);
        let make_current = glx.glXMakeCurrent as usize;
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            type F = unsafe extern "C" fn(*mut xlib::Display, c_ulong, glx::GLXContext) -> c_int;
            // SAFETY: glXMakeCurrent's address and the live display,
            // window and context (XInitThreads was called).
            let ok = unsafe {
                std::mem::transmute::<usize, F>(make_current)(
                    dpy as *mut _,
                    window,
                    ctx as glx::GLXContext,
                )
            };
            let _ = tx.send(ok);
            let _ = stop_rx.recv();
        });
        if rx.recv().map_err(|e| e.to_string())? == 0 {
            return Err("glXMakeCurrent on the second thread failed".into());
        }
        println!("gltest: ready other-thread");
        for _ in 0..frames {
            self.swap();
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = stop_tx.send(());
        let _ = holder.join();
        println!("gltest: swaps {frames}");
        Ok(())
    }

    /// Destroys the window, swaps the dead one twice, then makes a new
    /// window current; returns the swaps made.
    pub fn destroy_and_replace(&mut self) -> Result<u64, String> {
        let Api::Glx {
            glx, ctx, visual, ..
        } = &self.api
        else {
            return Err("--destroy-window-at is for GLX".into());
        };
        let (glx_make, ctx, visual) = (glx.glXMakeCurrent, *ctx, *visual);
        // SAFETY: Xlib calls on the open display; errors go to the counter.
        unsafe {
            (self.xlib.XDestroyWindow)(self.dpy, self.window);
            (self.xlib.XSync)(self.dpy, 0);
            self.swap();
            self.swap();
            (self.xlib.XSync)(self.dpy, 0);
            let window = self.create_window(visual);
            self.window = window;
            self.xwin = window;
            if glx_make(self.dpy, window, ctx) == 0 {
                return Err("glXMakeCurrent on the new window failed".into());
            }
        }
        println!(
            "gltest: window destroyed and replaced ({} X errors)",
            X_ERRORS.load(Ordering::Relaxed)
        );
        Ok(2)
    }

    /// Ends the window as a game's video restart does and makes a new one
    /// current with the same context: EGL destroys its surface and the X
    /// window and creates both again (Mesa often hands out the old
    /// surface's address); GLX destroys its `glXCreateWindow` drawable (if
    /// any) and the X window, and swaps a new `glXCreateWindow` drawable.
    pub fn recreate(&mut self) -> Result<(), String> {
        let ended = self.key();
        self.keys.push(ended);
        // SAFETY: GLX/EGL and Xlib calls on the open display with the
        // live context, in the order the specs give.
        unsafe {
            match &mut self.api {
                Api::Egl {
                    egl,
                    dpy,
                    surface,
                    config,
                    ctx,
                } => {
                    let none = std::ptr::null_mut();
                    (egl.make_current)(*dpy, none, none, none);
                    (egl.destroy_surface)(*dpy, *surface);
                    let (egl_dpy, config, ctx) = (*dpy, *config, *ctx);
                    let create = egl.create_window_surface;
                    let make = egl.make_current;
                    let destroy = egl.destroy_surface;
                    self.recreated += 1;
                    // `%`, not `is_multiple_of`: the i686 build's compiler is Rust 1.85.
                    #[allow(clippy::manual_is_multiple_of)]
                    let every_other = self.recreated % 2 == 0;
                    if every_other {
                        // Every other time the X window goes too.
                        (self.xlib.XDestroyWindow)(self.dpy, self.xwin);
                        self.xwin = self.create_window(std::ptr::null_mut());
                        self.window = self.xwin;
                    }
                    // Made again until the driver hands out an address a
                    // destroyed surface had (as it usually does for a game
                    // that recreates one and nothing else), so the test
                    // sees that case every time.
                    let mut tries = 0;
                    let s = loop {
                        let s = create(egl_dpy, config, self.xwin, std::ptr::null());
                        tries += 1;
                        if s.is_null() || self.keys.contains(&(s as u64)) || tries == 20 {
                            break s;
                        }
                        destroy(egl_dpy, s);
                    };
                    if s.is_null() || make(egl_dpy, s, s, ctx) == 0 {
                        return Err("cannot make the new EGL surface current".into());
                    }
                    if let Api::Egl { surface, .. } = &mut self.api {
                        *surface = s;
                    }
                }
                Api::Glx {
                    glx,
                    ctx,
                    visual,
                    fbc,
                } => {
                    (glx.glXMakeCurrent)(self.dpy, 0, std::ptr::null_mut());
                    if self.window != self.xwin {
                        (glx.glXDestroyWindow)(self.dpy, self.window);
                    }
                    (self.xlib.XDestroyWindow)(self.dpy, self.xwin);
                    let (ctx, visual, fbc) = (*ctx, *visual, *fbc);
                    let (create, make) = (glx.glXCreateWindow, glx.glXMakeContextCurrent);
                    self.xwin = self.create_window(visual);
                    self.window = create(self.dpy, fbc, self.xwin, std::ptr::null());
                    if self.window == 0 || make(self.dpy, self.window, self.window, ctx) == 0 {
                        return Err("cannot make the new GLX window current".into());
                    }
                }
            }
        }
        Ok(())
    }

    /// What the GL library keys this window by: the EGL surface's address,
    /// or the GLX drawable (`unsigned long`: 32 bits in a 32-bit build).
    #[allow(clippy::useless_conversion)]
    pub fn key(&self) -> u64 {
        match &self.api {
            Api::Egl { surface, .. } => *surface as u64,
            Api::Glx { .. } => u64::from(self.window),
        }
    }

    /// The context's address (what the GL library keys its records by).
    pub fn context_key(&self) -> u64 {
        match &self.api {
            Api::Egl { ctx, .. } => *ctx as u64,
            Api::Glx { ctx, .. } => *ctx as u64,
        }
    }

    /// Loses the context as a game whose display goes does: EGL terminates
    /// its display, GLX closes the X display, neither destroying the
    /// context first (the display's end takes it along).
    pub fn lose(self) {
        // SAFETY: the display calls on the open display; nothing is used
        // after (self is consumed).
        unsafe {
            if let Api::Egl { egl, dpy, .. } = &self.api {
                let none = std::ptr::null_mut();
                (egl.make_current)(*dpy, none, none, none);
                let terminate: unsafe extern "C" fn(EglDisplay) -> c_uint =
                    *egl._lib.get(b"eglTerminate\0").expect("eglTerminate");
                terminate(*dpy);
            } else if let Api::Glx { glx, .. } = &self.api {
                (glx.glXMakeCurrent)(self.dpy, 0, std::ptr::null_mut());
            }
            (self.xlib.XCloseDisplay)(self.dpy);
        }
    }
}
