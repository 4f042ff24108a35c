//! Per-queue knowledge: what the layer may do on each queue of the app's.
//!
//! The rule (a `VkQueue` is externally synchronized by the app): the layer
//! submits only on the queue the app passes to `vkQueuePresentKHR`, inside
//! that call. Whether the HUD can draw there depends on the queue's family:
//! drawing imgui needs `GRAPHICS`. A present from a compute- or
//! transfer-only family could copy a ready panel, but rendering that panel
//! would need a graphics queue the layer does not own at that moment, so
//! the HUD is off for such presents (one line) and capture goes on.

use super::regions::PresentScratch;
use ash::vk;
use std::sync::Mutex;

/// One queue the app created, as the layer knows it.
pub struct QueueInfo {
    pub handle: vk::Queue,
    pub family: u32,
    pub flags: vk::QueueFlags,
    /// Scratch for the present's patched structures. Only presents on this
    /// queue touch it, and the app serializes those: never contended.
    pub scratch: Mutex<PresentScratch>,
}

/// What the HUD does for a present on a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HudRole {
    /// Draw on this queue, inside the app's present.
    Draw,
    /// No HUD for presents on this queue; the reason, for one line.
    Off(&'static str),
}

/// The decision for a queue of family `flags` (`None`: a queue the layer
/// did not see created, e.g. a protected one fetched with
/// `vkGetDeviceQueue2`).
pub fn hud_role(flags: Option<vk::QueueFlags>) -> HudRole {
    match flags {
        None => HudRole::Off("present on a queue the layer does not know (protected?)"),
        Some(f) if f.contains(vk::QueueFlags::GRAPHICS) => HudRole::Draw,
        Some(_) => HudRole::Off("present queue family has no graphics (compute/transfer only)"),
    }
}

impl QueueInfo {
    /// A queue of `family` whose family has `flags`.
    pub fn new(handle: vk::Queue, family: u32, flags: vk::QueueFlags) -> QueueInfo {
        QueueInfo {
            handle,
            family,
            flags,
            scratch: Mutex::new(PresentScratch::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// lavapipe has one graphics family; AMD-style present-capable compute
    /// and transfer families are decided here.
    #[test]
    fn hud_draws_only_on_graphics_queues() {
        let g = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER;
        assert_eq!(hud_role(Some(g)), HudRole::Draw);
        assert!(
            matches!(hud_role(Some(vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER)), HudRole::Off(r) if r.contains("no graphics"))
        );
        assert!(matches!(
            hud_role(Some(vk::QueueFlags::TRANSFER)),
            HudRole::Off(_)
        ));
        assert!(matches!(hud_role(None), HudRole::Off(_)));
    }
}
