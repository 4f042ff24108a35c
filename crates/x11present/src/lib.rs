//! X11 Present: when each frame reached the screen, for windows presented
//! with the Present extension (Mesa's X11 WSI and GLX DRI3 on a DRI3
//! driver; Xorg and Xwayland).
//!
//! - [`matcher`] (pure, no `unsafe`): the per-chain record of presents the
//!   present hook writes ([`matcher::Chain`]: fixed size, lock-free, no
//!   allocation), and the rules that attribute a `CompleteNotify` (serial,
//!   ust, msc, mode) to the present that made it ([`matcher::Matcher`]).
//! - [`observer`]: our own X connection per display (libxcb and
//!   libxcb-present dlopen'd), `PresentSelectInput` on the game's windows,
//!   and the event reading, which runs on the analysis thread only.
//!
//! The game's own X connection is never read or written.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod ffi;
pub mod matcher;
pub mod observer;
