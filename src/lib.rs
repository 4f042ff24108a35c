//! steadyhud's Vulkan layer, `VK_LAYER_STEADYHUD_overlay`: the library a
//! game loads when the user sets `STEADYHUD=1`. It timestamps every present,
//! keeps time-weighted frame-pacing metrics and draws them as a HUD.
//!
//! Data flow: present hook ([`layer`]) → the capture core
//! (`steadyhud_capture`: lock-free ring → analysis thread → rolling
//! metrics, live statistics, the session log) → the HUD ([`hud`]). The
//! crates it builds on, and the CLI and test app beside it, are mapped in
//! `docs/design.md`.

pub mod hud;
pub mod layer;

/// Panic containment, used by every entry point.
pub use steadyhud_sys::guard;
