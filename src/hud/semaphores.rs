//! The semaphores a present waits on, kept per device ([`PresentSemaphores`])
//! instead of destroyed with their swapchain.
//!
//! Each HUD draw signals a semaphore that the real `vkQueuePresentKHR`
//! waits on. Nothing tells the layer when a present has consumed its wait:
//! waiting for the HUD's own fences covers the HUD's submissions, not the
//! presents queued after them, and the layer may not idle a queue it does
//! not own (an app like libplacebo waits for its own fences only, then
//! destroys the swapchain). Destroying such a semaphore with its swapchain
//! could free it under a pending present (`VUID-vkDestroySemaphore-
//! semaphore-01137`). So a destroyed swapchain hands its semaphores back
//! here and the next swapchain reuses them (a later signal on the queue
//! follows the earlier present's wait, as for any per-image semaphore); they
//! are destroyed only in `vkDestroyDevice`, after `vkDeviceWaitIdle`, which
//! is legal there because the app must then have every queue of the device
//! to itself.

use super::device::{vk_err, HudDevice, HudError};
use ash::vk;
use std::sync::Mutex;
use steadyhud_sys::lock::Recover;

/// Spare present semaphores of one device, unsignalled with no pending
/// signal (each was last waited on by a present).
#[derive(Default)]
pub struct PresentSemaphores {
    spare: Mutex<Vec<vk::Semaphore>>,
}

impl PresentSemaphores {
    fn spare(&self) -> std::sync::MutexGuard<'_, Vec<vk::Semaphore>> {
        self.spare.lock_or_recover()
    }

    /// A spare semaphore, or a new one.
    ///
    /// # Safety
    /// `dev` is this pool's live device.
    pub unsafe fn take(&self, dev: &HudDevice) -> Result<vk::Semaphore, HudError> {
        if let Some(sem) = self.spare().pop() {
            return Ok(sem);
        }
        dev.device
            .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            .map_err(vk_err("vkCreateSemaphore"))
    }

    /// Takes back semaphores whose last signal has completed (the HUD's
    /// fences were waited on); presents may still be waiting on them.
    pub fn give_back(&self, sems: impl IntoIterator<Item = vk::Semaphore>) {
        self.spare().extend(sems);
    }

    /// Number of spare semaphores.
    pub fn spare_count(&self) -> usize {
        self.spare().len()
    }

    /// Destroys every spare semaphore.
    ///
    /// # Safety
    /// Inside `vkDestroyDevice` for `dev`, after `vkDeviceWaitIdle`: no
    /// present can still wait on them.
    pub unsafe fn destroy(&self, dev: &HudDevice) {
        for sem in std::mem::take(&mut *self.spare()) {
            dev.device.destroy_semaphore(sem, None);
        }
    }
}
