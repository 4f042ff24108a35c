//! One X connection of our own per X display, shared by every reader of
//! that display: the hotkeys (`steadyhud-input`: XInput 2 raw key events,
//! the keymap), X11 Present (`steadyhud-x11present`: `CompleteNotify`)
//! and input timing.
//!
//! - [`ffi`]: libxcb, loaded at run time, and the bytes of its events.
//! - [`conn`]: the connection ([`conn::XConn`]: requests by their wire
//!   bytes, one pump that files each event for the reader of its
//!   extension) and the process's record of them ([`conn::Displays`], one
//!   per X display name).
//! - [`inputs`]: input timing's reader (key and button presses, their
//!   server times mapped to CLOCK_MONOTONIC, kept while the game has the
//!   focus).
//! - [`keyboard`]: the core keyboard requests the hotkeys use.
//! - [`xinput`]: the XInput 2 requests and raw events the readers use.
//!
//! Only libxcb is used, never Xlib: Xlib keeps process-wide state (error
//! handlers that exit, the display list, its threads' locks) that the
//! game's own Xlib shares, and a connection of ours must not touch it.
//! The game's own X connection is never read or written.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod conn;
pub mod ffi;
pub mod inputs;
pub mod keyboard;
pub mod xinput;

pub use conn::{Displays, OpenError, Reader, Shared, XConn};
