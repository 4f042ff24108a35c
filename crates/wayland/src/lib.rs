//! The game's own Wayland connection, used without disturbing it.
//!
//! - [`ffi`]: libwayland-client, loaded at run time (the game has it
//!   mapped already), with the interface tables we use.
//! - [`presentation`]: `wp_presentation` feedback on the game's surfaces,
//!   asked for on each present on an event queue of our own, so each
//!   frame's answer (when it reached the screen, or that it never did)
//!   reaches the frame's [`presentation::Sink`].
//!
//! The hotkeys' keyboard (`steadyhud-input`) uses [`ffi`] too. Neither
//! ever reads the game's socket: see each module's docs.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod ffi;
pub mod presentation;
