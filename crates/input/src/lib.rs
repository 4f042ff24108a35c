//! Input: the key combinations the analysis thread watches (the HUD
//! toggle, the frame-cap cycle), on X11 ([`x11`]) or on the app's Wayland
//! connection ([`wayland`]); [`KeyWatch`] picks one. No graphics API: the
//! Vulkan layer and the GL library hand it the app's Wayland display.

pub mod watch;
pub mod wayland;
pub mod x11;

pub use watch::KeyWatch;
