//! The implicit Vulkan layer `VK_LAYER_STEADYHUD_overlay`.
//!
//! Data flow per present (as in Mesa's overlay layer, see [`present`]):
//! timestamp on entry → push into the window's ring ([`capture`]) → HUD
//! draw on the present queue (waits on the app's semaphores, signals ours)
//! → real present waits on ours. The analysis thread ([`analysis`]) drains
//! the rings, feeds the rolling metrics, publishes live stats for the HUD
//! and streams the session log.
//!
//! Structure: one [`state::Layer`] value (handle maps, config, HUD
//! visibility, fault switches, analysis thread); a [`device::Device`] per
//! `VkDevice` owning its queues ([`queue`]: what the layer may do on each),
//! swapchains ([`swapchain`], streams by [`lineage`]), HUD resources,
//! counters (hooks that count: [`counting_hooks`]; their columns on the analysis
//! thread: [`counter_columns`]) and GPU timing of its submits ([`submit`],
//! [`gpu_timing`]; frames matched on the analysis thread by
//! [`gpu_frames`]); thin entry points from one table ([`entry`]).
//!
//! The cdylib exports one symbol under a Vulkan name:
//! `vkNegotiateLoaderLayerInterfaceVersion`; gipa/gdpa are handed over
//! through the negotiation struct.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod analysis;
pub mod capture;
mod counters;
mod device;
mod faults;
pub mod gpu_timing;
mod handles;
mod hooks;
mod instance;
mod limiter;
mod lineage;
pub mod loader;
mod next;
mod present;
mod queue;
mod regions;
mod state;
mod submit;
mod swapchain;

pub use steadyhud_config::LAYER_NAME;
