//! The X11 side: one Xlib display connection (libX11 loaded at run time via
//! `x11-dl`) and plain windows on it, exposed as raw-window-handle values for
//! `ash-window`.

use std::ffi::CString;
use std::os::raw::c_ulong;
use std::ptr::NonNull;

use raw_window_handle::{RawDisplayHandle, RawWindowHandle, XlibDisplayHandle, XlibWindowHandle};
use x11_dl::xlib;

use crate::error::Error;

/// An open X display. Windows borrow it; it closes on drop.
pub struct Display {
    xlib: xlib::Xlib,
    dpy: NonNull<xlib::Display>,
    screen: i32,
}

// The connection is made thread-safe with XInitThreads before it is opened.
unsafe impl Send for Display {}
unsafe impl Sync for Display {}

/// A mapped top-level window.
pub struct Window {
    pub id: c_ulong,
}

impl Display {
    /// Opens `$DISPLAY`.
    pub fn open() -> Result<Display, Error> {
        let xlib =
            xlib::Xlib::open().map_err(|e| Error::X11(format!("cannot load libX11: {e}")))?;
        // SAFETY: plain Xlib calls; XInitThreads precedes every other call.
        unsafe {
            (xlib.XInitThreads)();
            let dpy = (xlib.XOpenDisplay)(std::ptr::null());
            let dpy = NonNull::new(dpy).ok_or_else(|| {
                Error::X11(format!(
                    "cannot open X display {:?} (is an X server / Xvfb running?)",
                    std::env::var("DISPLAY").unwrap_or_default()
                ))
            })?;
            let screen = (xlib.XDefaultScreen)(dpy.as_ptr());
            Ok(Display { xlib, dpy, screen })
        }
    }

    /// Creates and maps a window at (x, y) with the given size and title.
    pub fn create_window(
        &self,
        x: i32,
        y: i32,
        width: u32,
        height: u32,
        title: &str,
    ) -> Result<Window, Error> {
        // SAFETY: the display is open; the window id is checked.
        unsafe {
            let dpy = self.dpy.as_ptr();
            let root = (self.xlib.XRootWindow)(dpy, self.screen);
            let black = (self.xlib.XBlackPixel)(dpy, self.screen);
            let id =
                (self.xlib.XCreateSimpleWindow)(dpy, root, x, y, width, height, 0, black, black);
            if id == 0 {
                return Err(Error::X11("XCreateSimpleWindow failed".into()));
            }
            if let Ok(name) = CString::new(title) {
                (self.xlib.XStoreName)(dpy, id, name.as_ptr());
            }
            (self.xlib.XMapWindow)(dpy, id);
            (self.xlib.XSync)(dpy, xlib::False);
            Ok(Window { id })
        }
    }

    /// Resizes a window and waits until the server has processed it.
    pub fn resize(&self, window: &Window, width: u32, height: u32) {
        // SAFETY: the display is open and the window belongs to it.
        unsafe {
            (self.xlib.XResizeWindow)(self.dpy.as_ptr(), window.id, width, height);
            (self.xlib.XSync)(self.dpy.as_ptr(), xlib::False);
        }
    }

    /// Asks for the key and button presses in `window` (`--input-out`).
    pub fn select_presses(&self, window: &Window) {
        // SAFETY: the display is open and the window belongs to it.
        unsafe {
            let mask = xlib::KeyPressMask | xlib::ButtonPressMask;
            (self.xlib.XSelectInput)(self.dpy.as_ptr(), window.id, mask);
            (self.xlib.XSync)(self.dpy.as_ptr(), xlib::False);
        }
    }

    /// The key and button presses that came since the last call, as a game
    /// reads them at its frame's start: (`key` or `button`, the server's
    /// millisecond stamp). Never waits.
    pub fn take_presses(&self) -> Vec<(&'static str, u64)> {
        let mut out = Vec::new();
        // SAFETY: the display is open (thread-safe: XInitThreads); an
        // event is read only while one is pending, into a whole XEvent.
        unsafe {
            let dpy = self.dpy.as_ptr();
            while (self.xlib.XPending)(dpy) > 0 {
                let mut ev: xlib::XEvent = std::mem::zeroed();
                (self.xlib.XNextEvent)(dpy, &mut ev);
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

    /// Destroys a window (after its Vulkan surface is gone).
    pub fn destroy_window(&self, window: Window) {
        // SAFETY: as above.
        unsafe {
            (self.xlib.XDestroyWindow)(self.dpy.as_ptr(), window.id);
            (self.xlib.XSync)(self.dpy.as_ptr(), xlib::False);
        }
    }

    pub fn raw_display_handle(&self) -> RawDisplayHandle {
        RawDisplayHandle::Xlib(XlibDisplayHandle::new(Some(self.dpy.cast()), self.screen))
    }

    pub fn raw_window_handle(&self, window: &Window) -> RawWindowHandle {
        RawWindowHandle::Xlib(XlibWindowHandle::new(window.id))
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        // SAFETY: closing the connection we opened; nothing uses it afterwards.
        unsafe {
            (self.xlib.XCloseDisplay)(self.dpy.as_ptr());
        }
    }
}
