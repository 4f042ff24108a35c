//! The game's own Wayland connection, used without disturbing it.
//!
//! - [`ffi`]: libwayland-client, loaded at run time (the game has it
//!   mapped already), with the interface tables we use.
//! - [`connection`]: one connection of ours per game `wl_display` (a
//!   private event queue, one registry, the seat with its keyboard and
//!   pointer, `wp_presentation`, the surface map, one pump), shared by
//!   every reader of the display: the hotkeys' keyboard (`steadyhud-input`,
//!   a [`connection::Keys`] reader), the presentation feedback, and the
//!   input timing.
//! - [`input_times`]: the times of the key and button presses the game's
//!   windows receive, as our seat devices see them.
//! - [`presentation`]: `wp_presentation` feedback on the game's surfaces,
//!   asked for on each present, so each frame's answer (when it reached
//!   the screen, or that it never did) reaches the frame's
//!   [`presentation::Sink`].
//!
//! Nothing here ever reads the game's socket: see [`connection`].

#![deny(unsafe_op_in_unsafe_fn)]

pub mod connection;
pub mod ffi;
pub mod input_times;
pub mod presentation;
