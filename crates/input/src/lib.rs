//! Input: the key combinations the analysis thread watches (the HUD
//! toggle, the frame-cap cycle), on X11 ([`x11`]) or on the app's Wayland
//! connection ([`wayland`]); [`KeyWatch`] picks one. Input timing's X11
//! side ([`x11_inputs`]: the game's X windows and the presses they got). No graphics API: the
//! Vulkan layer and the GL library hand it the app's Wayland display.

pub mod watch;
pub mod wayland;
pub mod x11;
pub mod x11_inputs;

pub use watch::KeyWatch;
