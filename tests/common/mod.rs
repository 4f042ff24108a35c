//! Test harness for everything that needs a real X server and a real Vulkan
//! app: a private Xvfb display per [`Harness`] (so tests run in parallel),
//! private XDG dirs with the steadyhud implicit-layer manifest pointing at
//! this build's `libsteadyhud.so`, a private session-log folder, and helpers
//! to run programs with/without the layer or the validation layer, kill them,
//! find and analyse session logs, and read screenshot pixels.
//!
//! Usage from a test file: `mod common; use common::*;`. Wayland tests:
//! [`wayland::WaylandBed`] (a headless sway or Weston session).
//!
//! `STEADYHUD_TEST_ARCH=i686` ([`ARCH_SWITCH`]) runs the same tests with
//! 32-bit games (the test app, the layer, vkcube, vkd3d-gears on 32-bit
//! lavapipe; built and unpacked by `scripts/build-i686.sh`) and the 64-bit
//! harness and CLI.
//!
//! This file is the index; each job has its file:
//! - `harness.rs`: [`Harness`], one isolated environment, and its commands;
//! - `xserver.rs`, `xvfb.rs`: its Xvfb (`xvfb.rs` also serves the crates'
//!   tests), and xdotool input;
//! - `builds.rs`: the binaries and libraries of this build, gcc for C test
//!   programs, the 32-bit run;
//! - `process.rs`: running, killing and timing processes ([`run`],
//!   [`spawn`], [`RunOutput`], [`CommandExt`], [`CpuLoad`]);
//! - `layers.rs`: the steadyhud and validation layers, and the loader checks;
//! - `testapp.rs`: what the scripted test app prints and draws;
//! - `logs.rs`: session logs;
//! - `export.rs`: `steadyhud export` on a free port, and HTTP to it;
//! - `screenshots.rs`: [`Screenshot`];
//! - `gl.rs`, `wayland.rs`, `hud_panel.rs`: the GL library's tests, a
//!   headless sway, the HUD panel's geometry.
#![allow(dead_code)]

mod builds;
mod export;
mod harness;
mod layers;
mod logs;
mod process;
mod screenshots;
mod testapp;
mod xserver;
mod xvfb;

pub mod feedback;
pub mod gl;
pub mod hud_panel;
pub mod wayland;

// Each test binary uses part of the helpers (hence `dead_code` above), so
// one of these files may go unused in it.
#[allow(unused_imports)]
pub use self::{
    builds::*, export::*, harness::*, layers::*, logs::*, process::*, screenshots::*, testapp::*,
    xserver::*, xvfb::*,
};
