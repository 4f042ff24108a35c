//! One X connection of our own per X display, shared by every reader of
//! that display: the hotkeys (`steadyhud-input`: XInput 2 raw key events,
//! `XQueryKeymap`), X11 Present (`steadyhud-x11present`: `CompleteNotify`)
//! and, next, the input timing.
//!
//! - [`ffi`]: libX11, libX11-xcb and libxcb, loaded at run time.
//! - [`conn`]: the connection ([`conn::XConn`]: Xlib opens it, so the
//!   hotkeys' Xlib and XInput 2 calls work on it, and hands its xcb side to
//!   libxcb, which owns its event queue; one pump reads every event and
//!   files it for the reader of its extension) and the process's record of
//!   them ([`conn::Displays`], one per X display name).
//!
//! The game's own X connection is never read or written.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod conn;
pub mod ffi;
