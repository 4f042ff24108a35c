//! `--submit-thread`: a second thread that keeps submitting small real GPU
//! work on the queue the app presents on, as DXVK's and vkd3d-proton's
//! submission threads do while another thread presents and recreates
//! swapchains.
//!
//! Each slot owns a command buffer (recorded once: a barrier, then a clear
//! of the slot's own image), an image and a fence; the thread waits for the
//! slot's fence before submitting it again. Every vkQueueSubmit happens
//! under the device's queue lock (`Gpu::queue`), the same lock the present
//! path and vkDeviceWaitIdle take, so the app itself keeps the queue
//! externally synchronised as Vulkan requires. A layer that touches the
//! queue outside the app's own calls on it races with this thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use steadyhud_gfx::color_range;
use steadyhud_sys::lock::Recover;

use ash::vk;

use crate::error::{Error, VkContext};
use crate::gpu::Gpu;

/// Submissions that may be in flight at once.
const SLOTS: usize = 2;
/// Side of the square image each slot clears.
const SIZE: u32 = 64;
/// How long one fence wait may take before the thread gives up (a hung GPU
/// must not hang the test that runs the app).
const FENCE_TIMEOUT_NS: u64 = 10_000_000_000;

struct Slot {
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    image: vk::Image,
    memory: vk::DeviceMemory,
}

/// The submit thread's objects on one device.
pub struct SubmitWork {
    pool: vk::CommandPool,
    slots: Vec<Slot>,
    /// Pause after each submit (0: submit again as soon as a slot is free).
    gap: Duration,
}

/// How the slots' command buffers are recorded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Each slot clears its own image after a barrier on the previous clear.
    Correct,
    /// A deliberate synchronization error for checking that synchronization
    /// validation is active: the image is cleared twice with no barrier in
    /// between (a write-after-write hazard inside the command buffer, which
    /// synchronization validation reports when it is recorded; nothing else
    /// is wrong).
    Hazard,
}

impl SubmitWork {
    /// Creates the images, command buffers and fences on `gpu` and records
    /// the command buffers.
    pub fn new(gpu: &Gpu, gap: Duration, mode: Mode) -> Result<SubmitWork, Error> {
        let mut w = SubmitWork {
            pool: vk::CommandPool::null(),
            slots: Vec::new(),
            gap,
        };
        match w.create(gpu, mode) {
            Ok(()) => Ok(w),
            Err(e) => {
                w.destroy(gpu);
                Err(e)
            }
        }
    }

    fn create(&mut self, gpu: &Gpu, mode: Mode) -> Result<(), Error> {
        let d = &gpu.device;
        // SAFETY: plain object creation on a live device; everything is
        // destroyed in `destroy`, after the thread has stopped and the
        // device is idle.
        unsafe {
            self.pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default().queue_family_index(gpu.family),
                    None,
                )
                .ctx("vkCreateCommandPool")?;
            let cmds = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(SLOTS as u32),
                )
                .ctx("vkAllocateCommandBuffers")?;
            for cmd in cmds {
                let image = d
                    .create_image(
                        &vk::ImageCreateInfo::default()
                            .image_type(vk::ImageType::TYPE_2D)
                            .format(vk::Format::R8G8B8A8_UNORM)
                            .extent(vk::Extent3D {
                                width: SIZE,
                                height: SIZE,
                                depth: 1,
                            })
                            .mip_levels(1)
                            .array_layers(1)
                            .samples(vk::SampleCountFlags::TYPE_1)
                            .tiling(vk::ImageTiling::OPTIMAL)
                            .usage(vk::ImageUsageFlags::TRANSFER_DST)
                            .sharing_mode(vk::SharingMode::EXCLUSIVE)
                            .initial_layout(vk::ImageLayout::UNDEFINED),
                        None,
                    )
                    .ctx("vkCreateImage")?;
                // Registered at once so `destroy` frees it whatever fails next.
                self.slots.push(Slot {
                    cmd,
                    fence: vk::Fence::null(),
                    image,
                    memory: vk::DeviceMemory::null(),
                });
                let slot = self.slots.last_mut().expect("just pushed");
                let req = d.get_image_memory_requirements(image);
                let index = gpu.pick_memory(req.memory_type_bits, "the submit thread's image")?;
                slot.memory = d
                    .allocate_memory(
                        &vk::MemoryAllocateInfo::default()
                            .allocation_size(req.size)
                            .memory_type_index(index),
                        None,
                    )
                    .ctx("vkAllocateMemory")?;
                d.bind_image_memory(image, slot.memory, 0)
                    .ctx("vkBindImageMemory")?;
                slot.fence = d
                    .create_fence(
                        &vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED),
                        None,
                    )
                    .ctx("vkCreateFence")?;
                record(gpu, cmd, image, mode)?;
            }
        }
        Ok(())
    }

    /// The thread body: submits slot after slot on `gpu`'s queue until
    /// `stop` is set; returns the number of submits.
    pub fn run(&self, gpu: &Gpu, stop: &AtomicBool) -> Result<u64, Error> {
        let d = &gpu.device;
        let mut submits = 0u64;
        let mut i = 0;
        while !stop.load(Ordering::Relaxed) {
            let slot = &self.slots[i];
            i = (i + 1) % self.slots.len();
            let cmds = [slot.cmd];
            let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
            // SAFETY: the fence wait guarantees the command buffer is no
            // longer pending; the queue lock makes the submit externally
            // synchronised with every other use of the queue by the app.
            unsafe {
                match d.wait_for_fences(&[slot.fence], true, FENCE_TIMEOUT_NS) {
                    Ok(()) => {}
                    Err(vk::Result::TIMEOUT) => {
                        return Err(Error::Unsupported(
                            "submit thread: fence not signalled within 10 s".into(),
                        ))
                    }
                    Err(e) => {
                        return Err(Error::Vulkan {
                            what: "vkWaitForFences (submit thread)",
                            result: e,
                        })
                    }
                }
                d.reset_fences(&[slot.fence]).ctx("vkResetFences")?;
                let q = gpu.queue.lock_or_recover();
                d.queue_submit(*q, &submit, slot.fence)
                    .ctx("vkQueueSubmit (submit thread)")?;
            }
            submits += 1;
            if !self.gap.is_zero() {
                std::thread::sleep(self.gap);
            }
        }
        Ok(submits)
    }

    /// Destroys everything. The thread has stopped and the device is idle.
    pub fn destroy(self, gpu: &Gpu) {
        let d = &gpu.device;
        // SAFETY: nothing uses these objects any more (see above).
        unsafe {
            for s in &self.slots {
                if s.fence != vk::Fence::null() {
                    d.destroy_fence(s.fence, None);
                }
                d.destroy_image(s.image, None);
                if s.memory != vk::DeviceMemory::null() {
                    d.free_memory(s.memory, None);
                }
            }
            if self.pool != vk::CommandPool::null() {
                // Frees the command buffers too.
                d.destroy_command_pool(self.pool, None);
            }
        }
    }
}

/// Records: make the image a transfer destination (waiting for the previous
/// clear of it, so consecutive submits do not race on it), then clear it.
/// [`Mode::Hazard`] adds a second clear with no barrier before it.
fn record(gpu: &Gpu, cmd: vk::CommandBuffer, image: vk::Image, mode: Mode) -> Result<(), Error> {
    let d = &gpu.device;
    let range = color_range();
    let barrier = [vk::ImageMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .old_layout(vk::ImageLayout::UNDEFINED)
        .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(range)];
    let color = vk::ClearColorValue {
        float32: [0.2, 0.4, 0.6, 1.0],
    };
    // SAFETY: fresh command buffer, not pending.
    unsafe {
        d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
            .ctx("vkBeginCommandBuffer")?;
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &barrier,
        );
        let clears = if mode == Mode::Hazard { 2 } else { 1 };
        for _ in 0..clears {
            d.cmd_clear_color_image(
                cmd,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &color,
                &[range],
            );
        }
        d.end_command_buffer(cmd).ctx("vkEndCommandBuffer")?;
    }
    Ok(())
}
