//! steadyhud's Vulkan layer, `VK_LAYER_STEADYHUD_overlay`: the library a
//! game loads when the user sets `STEADYHUD=1`. It timestamps every present,
//! keeps time-weighted frame-pacing metrics and draws them as a HUD.
//!
//! Data flow: present hook ([`layer`]) → lock-free ring → analysis thread →
//! rolling metrics (`steadyhud_metrics`) for the HUD ([`hud`], through
//! [`live`]) and the session log (`steadyhud_log`). The pure crates it
//! builds on, and the CLI and test app beside it, are mapped in
//! `docs/design.md`.

pub mod guard;
pub mod hud;
pub mod input;
pub mod layer;
pub mod live;
pub mod sensors;
