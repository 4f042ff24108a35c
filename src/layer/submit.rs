//! The app's queue submits: the CPU time of the call counted (`submit_ms`,
//! `submits`) and, with GPU timing, the call's timable batches put inside
//! one timestamp pair of the layer's ([`super::gpu_timing`]). A submit whose call made
//! the layer's GPU-timing objects for its queue books its whole time as
//! `layer_setup_ms` instead, as for the HUD's first draw.

use super::device::Device;
use super::gpu_timing::Batch;
use ash::vk;
use steadyhud_sys::clock::now_ns;

impl Device {
    /// `vkQueueSubmit`.
    ///
    /// # Safety
    /// The app's arguments, for a queue of this device.
    pub unsafe fn queue_submit(
        &self,
        queue: vk::Queue,
        count: u32,
        submits: *const vk::SubmitInfo<'_>,
        fence: vk::Fence,
    ) -> vk::Result {
        let next = self.next.core.fp_v1_0().queue_submit;
        // SAFETY: the app's arguments (caller); `next` is the next layer's
        // `vkQueueSubmit`, called with them or with the patched batches.
        unsafe {
            self.submit_batches(
                queue,
                count,
                submits.cast::<vk::SubmitInfo<'static>>(),
                |n, p| next(queue, n, p.cast(), fence),
            )
        }
    }

    /// `vkQueueSubmit2` / `vkQueueSubmit2KHR`.
    ///
    /// # Safety
    /// The app's arguments, for a queue of this device.
    pub unsafe fn queue_submit2(
        &self,
        queue: vk::Queue,
        count: u32,
        submits: *const vk::SubmitInfo2<'_>,
        fence: vk::Fence,
    ) -> vk::Result {
        let Some(next) = self.next.ext.queue_submit2 else {
            return vk::Result::ERROR_OUT_OF_HOST_MEMORY;
        };
        // SAFETY: as for `queue_submit`, with `vkQueueSubmit2`.
        unsafe {
            self.submit_batches(
                queue,
                count,
                submits.cast::<vk::SubmitInfo2<'static>>(),
                |n, p| next(queue, n, p.cast(), fence),
            )
        }
    }

    /// Either submit: timed batches when GPU timing is on, then the call's
    /// CPU time booked.
    ///
    /// # Safety
    /// The app's arguments; `next` forwards to the next layer's submit.
    unsafe fn submit_batches<B: Batch>(
        &self,
        queue: vk::Queue,
        count: u32,
        submits: *const B,
        next: impl FnOnce(u32, *const B) -> vk::Result,
    ) -> vk::Result {
        let t0 = now_ns();
        let (r, setup) = match self.gpu.as_ref() {
            // SAFETY: the app's arguments (caller).
            Some(gpu) => unsafe { gpu.submit(queue, count, submits, next) },
            None => (next(count, submits), false),
        };
        let Some(dc) = self.counters.as_ref() else {
            return r;
        };
        if setup {
            self.add_setup_time(t0);
        } else {
            dc.table.add(dc.ids.submit_ns, now_ns().saturating_sub(t0));
        }
        dc.table.add(dc.ids.submits, 1);
        r
    }
}
