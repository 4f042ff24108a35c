//! One window's swapchain and everything drawn into it: render pass, per-image
//! framebuffers and pre-recorded command buffers (the band pattern), and the
//! acquire/submit/present synchronisation. Recreated on resize or when the
//! driver reports the swapchain out of date or suboptimal.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use steadyhud_gfx::color_range;
use steadyhud_sys::clock::now_ns;
use steadyhud_sys::lock::Recover;

use ash::vk;

use crate::error::{Error, VkContext};
use crate::gpu::{Gpu, Instance};
use crate::gpu_work::{FrameTimer, GpuWork};

/// Frames in flight (acquire semaphores + fences).
const SLOTS: usize = 2;
/// Width in pixels of each vertical colour band.
pub const BAND: u32 = 16;
/// The two band colours (linear values as written by the clear).
pub const COLOR_A: [f32; 4] = [0.05, 0.25, 0.55, 1.0];
pub const COLOR_B: [f32; 4] = [0.90, 0.55, 0.10, 1.0];

/// Duration (us) of every vkCreateSwapchainKHR call of the process, in call
/// order (all threads, devices and `--repeat` rounds).
static CREATE_SWAPCHAIN_US: Mutex<Vec<u64>> = Mutex::new(Vec::new());

fn record_create_time(d: Duration) {
    CREATE_SWAPCHAIN_US
        .lock_or_recover()
        .push(d.as_micros() as u64);
}

/// `first=.. median_after_first=.. max_after_first=.. n=..` of the
/// vkCreateSwapchainKHR durations in us (the first call pays one-time costs
/// of the driver and of layers, so it is reported on its own; medians of
/// an even count are the mean of the two middle values).
pub fn create_swapchain_summary() -> String {
    let v = CREATE_SWAPCHAIN_US.lock_or_recover().clone();
    let Some((&first, rest)) = v.split_first() else {
        return "n=0".into();
    };
    let mut rest = rest.to_vec();
    rest.sort_unstable();
    let median = match rest.len() {
        0 => "-".to_string(),
        n if n % 2 == 1 => rest[n / 2].to_string(),
        n => ((rest[n / 2 - 1] + rest[n / 2]) / 2).to_string(),
    };
    let max = rest.last().map_or("-".to_string(), |m| m.to_string());
    format!(
        "first={first} median_after_first={median} max_after_first={max} n={}",
        v.len()
    )
}

/// What the user asked for the swapchain.
#[derive(Clone, Copy, Debug)]
pub struct SwapchainWish {
    pub format: vk::Format,
    pub present_mode: vk::PresentModeKHR,
    pub width: u32,
    pub height: u32,
}

/// Per-swapchain-image resources.
struct ImageRes {
    view: vk::ImageView,
    framebuffer: vk::Framebuffer,
    cmd: vk::CommandBuffer,
    /// Signalled by the submit, waited by the present of this image.
    render_done: vk::Semaphore,
    /// The slot fence of the last submit that used this image.
    in_flight: vk::Fence,
}

/// One window's swapchain.
pub struct Target {
    /// Index of the device (in the app's device list) this swapchain is on.
    pub gpu: usize,
    pub surface: vk::SurfaceKHR,
    pub swapchain: vk::SwapchainKHR,
    pub extent: vk::Extent2D,
    pub wish: SwapchainWish,
    pub recreations: u64,
    pub presented: u64,
    render_pass: vk::RenderPass,
    pool: vk::CommandPool,
    images: Vec<ImageRes>,
    acquired: [vk::Semaphore; SLOTS],
    fences: [vk::Fence; SLOTS],
    slot: usize,
    /// With `--gpu-work`: the load of this target's device (shared by
    /// every target of the device; main destroys it after the targets).
    work: Option<Arc<GpuWork>>,
    /// With `--gpu-work`: the timestamps of each slot's frame.
    timer: Option<FrameTimer>,
}

/// An image acquired and rendered, ready to present.
#[derive(Clone, Copy)]
pub struct Ready {
    pub index: u32,
    pub wait: vk::Semaphore,
}

impl Target {
    /// `work` is the `--gpu-work` load of `gpu`, if any: each frame then
    /// runs it and is timed.
    pub fn new(
        inst: &Instance,
        gpu: &Gpu,
        gpu_index: usize,
        work: Option<Arc<GpuWork>>,
        surface: vk::SurfaceKHR,
        wish: SwapchainWish,
    ) -> Result<Target, Error> {
        let d = &gpu.device;
        // SAFETY: plain object creation on a live device; every handle is
        // destroyed in `destroy`.
        unsafe {
            let formats = inst
                .surface_fn
                .get_physical_device_surface_formats(gpu.physical, surface)
                .ctx("vkGetPhysicalDeviceSurfaceFormatsKHR")?;
            if !formats.iter().any(|f| f.format == wish.format) {
                return Err(Error::Unsupported(format!(
                    "surface format {:?} not offered (offered: {:?})",
                    wish.format,
                    formats.iter().map(|f| f.format).collect::<Vec<_>>()
                )));
            }
            let modes = inst
                .surface_fn
                .get_physical_device_surface_present_modes(gpu.physical, surface)
                .ctx("vkGetPhysicalDeviceSurfacePresentModesKHR")?;
            if !modes.contains(&wish.present_mode) {
                return Err(Error::Unsupported(format!(
                    "present mode {:?} not offered (offered: {:?})",
                    wish.present_mode, modes
                )));
            }
            let attachment = [vk::AttachmentDescription::default()
                .format(wish.format)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                .initial_layout(vk::ImageLayout::UNDEFINED)
                .final_layout(vk::ImageLayout::PRESENT_SRC_KHR)];
            let color_ref = [vk::AttachmentReference::default()
                .attachment(0)
                .layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)];
            let subpass = [vk::SubpassDescription::default()
                .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
                .color_attachments(&color_ref)];
            // The acquire semaphore is waited at COLOR_ATTACHMENT_OUTPUT: the
            // layout transition must wait for it too.
            let deps = [vk::SubpassDependency::default()
                .src_subpass(vk::SUBPASS_EXTERNAL)
                .dst_subpass(0)
                .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
                .dst_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
                .src_access_mask(vk::AccessFlags::empty())
                .dst_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)];
            let rp_info = vk::RenderPassCreateInfo::default()
                .attachments(&attachment)
                .subpasses(&subpass)
                .dependencies(&deps);
            let render_pass = d
                .create_render_pass(&rp_info, None)
                .ctx("vkCreateRenderPass")?;
            // With --gpu-work the image's command buffer is recorded anew
            // every frame (the iteration count and query slot change).
            let pool_info = vk::CommandPoolCreateInfo::default()
                .queue_family_index(gpu.family)
                .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
            let pool = d
                .create_command_pool(&pool_info, None)
                .ctx("vkCreateCommandPool")?;
            let mut acquired = [vk::Semaphore::null(); SLOTS];
            let mut fences = [vk::Fence::null(); SLOTS];
            for i in 0..SLOTS {
                acquired[i] = d
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                    .ctx("vkCreateSemaphore")?;
                fences[i] = d
                    .create_fence(
                        &vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED),
                        None,
                    )
                    .ctx("vkCreateFence")?;
            }
            let mut t = Target {
                gpu: gpu_index,
                surface,
                swapchain: vk::SwapchainKHR::null(),
                extent: vk::Extent2D {
                    width: wish.width,
                    height: wish.height,
                },
                wish,
                recreations: 0,
                presented: 0,
                render_pass,
                pool,
                images: Vec::new(),
                acquired,
                fences,
                slot: 0,
                timer: match work {
                    Some(_) => Some(FrameTimer::new(gpu, SLOTS)?),
                    None => None,
                },
                work,
            };
            t.build_swapchain(inst, gpu)?;
            Ok(t)
        }
    }

    /// (Re)creates the swapchain at the surface's current size (or the wished
    /// size when the surface leaves it to us), then the per-image resources.
    /// The caller makes sure the device is idle.
    fn build_swapchain(&mut self, inst: &Instance, gpu: &Gpu) -> Result<(), Error> {
        let d = &gpu.device;
        // SAFETY: the device is idle (caller), so no old resource is in use.
        unsafe {
            let caps = inst
                .surface_fn
                .get_physical_device_surface_capabilities(gpu.physical, self.surface)
                .ctx("vkGetPhysicalDeviceSurfaceCapabilitiesKHR")?;
            let extent = if caps.current_extent.width != u32::MAX {
                caps.current_extent
            } else {
                vk::Extent2D {
                    width: self
                        .wish
                        .width
                        .clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                    height: self
                        .wish
                        .height
                        .clamp(caps.min_image_extent.height, caps.max_image_extent.height),
                }
            };
            if extent.width == 0 || extent.height == 0 {
                return Err(Error::Unsupported("window has zero size".into()));
            }
            let mut count = caps.min_image_count + 1;
            if caps.max_image_count != 0 {
                count = count.min(caps.max_image_count);
            }
            let composite = [
                vk::CompositeAlphaFlagsKHR::OPAQUE,
                vk::CompositeAlphaFlagsKHR::INHERIT,
                vk::CompositeAlphaFlagsKHR::PRE_MULTIPLIED,
                vk::CompositeAlphaFlagsKHR::POST_MULTIPLIED,
            ]
            .into_iter()
            .find(|c| caps.supported_composite_alpha.contains(*c))
            .unwrap_or(vk::CompositeAlphaFlagsKHR::OPAQUE);
            let old = self.swapchain;
            let info = vk::SwapchainCreateInfoKHR::default()
                .surface(self.surface)
                .min_image_count(count)
                .image_format(self.wish.format)
                .image_color_space(vk::ColorSpaceKHR::SRGB_NONLINEAR)
                .image_extent(extent)
                .image_array_layers(1)
                .image_usage(vk::ImageUsageFlags::COLOR_ATTACHMENT)
                .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
                .pre_transform(caps.current_transform)
                .composite_alpha(composite)
                .present_mode(self.wish.present_mode)
                .clipped(true)
                .old_swapchain(old);
            let t0 = std::time::Instant::now();
            let created = gpu.swapchain_fn.create_swapchain(&info, None);
            record_create_time(t0.elapsed());
            let swapchain = created.ctx("vkCreateSwapchainKHR")?;
            self.destroy_images(gpu);
            if old != vk::SwapchainKHR::null() {
                gpu.swapchain_fn.destroy_swapchain(old, None);
            }
            self.swapchain = swapchain;
            self.extent = extent;
            let images = gpu
                .swapchain_fn
                .get_swapchain_images(swapchain)
                .ctx("vkGetSwapchainImagesKHR")?;
            let cmds = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(images.len() as u32),
                )
                .ctx("vkAllocateCommandBuffers")?;
            for (&image, &cmd) in images.iter().zip(&cmds) {
                let view = d
                    .create_image_view(
                        &vk::ImageViewCreateInfo::default()
                            .image(image)
                            .view_type(vk::ImageViewType::TYPE_2D)
                            .format(self.wish.format)
                            .subresource_range(color_range()),
                        None,
                    )
                    .ctx("vkCreateImageView")?;
                let views = [view];
                let framebuffer = d
                    .create_framebuffer(
                        &vk::FramebufferCreateInfo::default()
                            .render_pass(self.render_pass)
                            .attachments(&views)
                            .width(extent.width)
                            .height(extent.height)
                            .layers(1),
                        None,
                    )
                    .ctx("vkCreateFramebuffer")?;
                let render_done = d
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                    .ctx("vkCreateSemaphore")?;
                self.images.push(ImageRes {
                    view,
                    framebuffer,
                    cmd,
                    render_done,
                    in_flight: vk::Fence::null(),
                });
                self.record(gpu, cmd, framebuffer, None)?;
            }
        }
        Ok(())
    }

    /// Records the band pattern once per image: clear to colour A, then
    /// every other band of `BAND` pixels to colour B. With `timed` (the
    /// `--gpu-work` load, the timer and the frame's slot; re-recorded each
    /// frame) the load runs before the render pass, and the whole command
    /// buffer sits between the slot's two timestamps. Returns the load's
    /// iteration count (0 without it).
    fn record(
        &self,
        gpu: &Gpu,
        cmd: vk::CommandBuffer,
        framebuffer: vk::Framebuffer,
        timed: Option<(&GpuWork, &FrameTimer, usize)>,
    ) -> Result<u32, Error> {
        let d = &gpu.device;
        let area = vk::Rect2D {
            offset: vk::Offset2D { x: 0, y: 0 },
            extent: self.extent,
        };
        let clear = [vk::ClearValue {
            color: vk::ClearColorValue { float32: COLOR_A },
        }];
        let rects: Vec<vk::ClearRect> = (0..self.extent.width)
            .step_by(2 * BAND as usize)
            .map(|x0| {
                let x = x0 + BAND;
                vk::ClearRect {
                    rect: vk::Rect2D {
                        offset: vk::Offset2D { x: x as i32, y: 0 },
                        extent: vk::Extent2D {
                            width: BAND.min(self.extent.width.saturating_sub(x)),
                            height: self.extent.height,
                        },
                    },
                    base_array_layer: 0,
                    layer_count: 1,
                }
            })
            .filter(|r| r.rect.extent.width > 0)
            .collect();
        let begin = match timed {
            Some(_) => vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            None => vk::CommandBufferBeginInfo::default(),
        };
        // SAFETY: the command buffer is not pending (fresh allocation, or
        // its image's fence waited on in `render`).
        unsafe {
            d.begin_command_buffer(cmd, &begin)
                .ctx("vkBeginCommandBuffer")?;
            let mut iterations = 0;
            if let Some((work, timer, slot)) = timed {
                timer.begin(d, cmd, slot);
                iterations = work.record(d, cmd);
            }
            d.cmd_begin_render_pass(
                cmd,
                &vk::RenderPassBeginInfo::default()
                    .render_pass(self.render_pass)
                    .framebuffer(framebuffer)
                    .render_area(area)
                    .clear_values(&clear),
                vk::SubpassContents::INLINE,
            );
            if !rects.is_empty() {
                let att = [vk::ClearAttachment {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    color_attachment: 0,
                    clear_value: vk::ClearValue {
                        color: vk::ClearColorValue { float32: COLOR_B },
                    },
                }];
                d.cmd_clear_attachments(cmd, &att, &rects);
            }
            d.cmd_end_render_pass(cmd);
            if let Some((_, timer, slot)) = timed {
                timer.end(d, cmd, slot);
            }
            d.end_command_buffer(cmd).ctx("vkEndCommandBuffer")?;
            Ok(iterations)
        }
    }

    fn destroy_images(&mut self, gpu: &Gpu) {
        let sems = self.destroy_image_objects(gpu);
        // SAFETY: the device is idle (caller).
        unsafe {
            for s in sems {
                gpu.device.destroy_semaphore(s, None);
            }
        }
    }

    /// Destroys the per-image objects but the present semaphores, which it
    /// returns.
    fn destroy_image_objects(&mut self, gpu: &Gpu) -> Vec<vk::Semaphore> {
        let d = &gpu.device;
        // SAFETY: the device is idle, or the app's own fences were waited on
        // (callers).
        unsafe {
            self.images
                .drain(..)
                .map(|img| {
                    d.destroy_framebuffer(img.framebuffer, None);
                    d.destroy_image_view(img.view, None);
                    d.free_command_buffers(self.pool, &[img.cmd]);
                    img.render_done
                })
                .collect()
        }
    }

    /// Waits for the app's own submissions (`--fence-teardown`).
    pub fn wait_own_fences(&self, gpu: &Gpu) -> Result<(), Error> {
        // SAFETY: live fences of this device.
        unsafe { gpu.device.wait_for_fences(&self.fences, true, u64::MAX) }.ctx("vkWaitForFences")
    }

    /// The render pass the pattern is drawn with (pipelines made for it are compatible).
    pub fn render_pass(&self) -> vk::RenderPass {
        self.render_pass
    }

    /// Whether the surface's current extent differs from the swapchain's.
    pub fn surface_changed(&self, inst: &Instance, gpu: &Gpu) -> Result<bool, Error> {
        // SAFETY: plain query on live objects.
        let caps = unsafe {
            inst.surface_fn
                .get_physical_device_surface_capabilities(gpu.physical, self.surface)
        }
        .ctx("vkGetPhysicalDeviceSurfaceCapabilitiesKHR")?;
        Ok(caps.current_extent.width != u32::MAX && caps.current_extent != self.extent)
    }

    /// Recreates the swapchain (resize, out of date, suboptimal).
    pub fn recreate(&mut self, inst: &Instance, gpu: &Gpu) -> Result<(), Error> {
        gpu.wait_idle()?;
        self.build_swapchain(inst, gpu)?;
        self.recreations += 1;
        Ok(())
    }

    /// Acquires the next image and submits its pattern; recreates the
    /// swapchain when it is out of date and tries again.
    pub fn render(&mut self, inst: &Instance, gpu: &Gpu) -> Result<Ready, Error> {
        let d = &gpu.device;
        let slot = self.slot;
        let fence = self.fences[slot];
        let acquired = self.acquired[slot];
        // SAFETY: the slot fence guards reuse of the slot's semaphore; the
        // image fence guards reuse of the image's command buffer.
        unsafe {
            d.wait_for_fences(&[fence], true, u64::MAX)
                .ctx("vkWaitForFences")?;
            if let (Some(timer), Some(work)) = (&mut self.timer, self.work.as_deref()) {
                timer.collect(gpu, work, slot)?;
            }
            let mut tries = 0;
            let index = loop {
                match gpu.swapchain_fn.acquire_next_image(
                    self.swapchain,
                    u64::MAX,
                    acquired,
                    vk::Fence::null(),
                ) {
                    // Suboptimal still signals the semaphore: draw this frame,
                    // the present result triggers the recreation.
                    Ok((index, _suboptimal)) => break index,
                    Err(vk::Result::ERROR_OUT_OF_DATE_KHR) if tries < 3 => {
                        tries += 1;
                        self.recreate(inst, gpu)?;
                    }
                    Err(e) => {
                        return Err(Error::Vulkan {
                            what: "vkAcquireNextImageKHR",
                            result: e,
                        })
                    }
                }
            };
            let img = &mut self.images[index as usize];
            if img.in_flight != vk::Fence::null() && img.in_flight != fence {
                d.wait_for_fences(&[img.in_flight], true, u64::MAX)
                    .ctx("vkWaitForFences")?;
            }
            img.in_flight = fence;
            let (cmd, framebuffer, render_done) = (img.cmd, img.framebuffer, img.render_done);
            let mut iterations = 0;
            if let (Some(timer), Some(work)) = (&self.timer, self.work.as_deref()) {
                iterations = self.record(gpu, cmd, framebuffer, Some((work, timer, slot)))?;
            }
            d.reset_fences(&[fence]).ctx("vkResetFences")?;
            let waits = [acquired];
            let stages = [vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT];
            let cmds = [cmd];
            let signals = [render_done];
            let submit = [vk::SubmitInfo::default()
                .wait_semaphores(&waits)
                .wait_dst_stage_mask(&stages)
                .command_buffers(&cmds)
                .signal_semaphores(&signals)];
            {
                let q = gpu.queue.lock_or_recover();
                d.queue_submit(*q, &submit, fence).ctx("vkQueueSubmit")?;
            }
            if let Some(timer) = &mut self.timer {
                timer.submitted(slot, iterations);
            }
            self.slot = (self.slot + 1) % SLOTS;
            Ok(Ready {
                index,
                wait: render_done,
            })
        }
    }

    /// Destroys everything but the surface. The device must be idle, or
    /// (`--fence-teardown`) the app's own fences waited on.
    ///
    /// The swapchain goes before the present semaphores: a layer that waits
    /// on them in its own submissions retires those in vkDestroySwapchainKHR.
    pub fn destroy(mut self, gpu: &Gpu) -> vk::SurfaceKHR {
        if let Some(timer) = self.timer.take() {
            timer.finish(gpu, self.work.as_deref());
        }
        let present_sems = self.destroy_image_objects(gpu);
        let d = &gpu.device;
        // SAFETY: device idle, or the app's own fences waited on (caller).
        unsafe {
            gpu.swapchain_fn.destroy_swapchain(self.swapchain, None);
            for s in present_sems {
                d.destroy_semaphore(s, None);
            }
            for i in 0..SLOTS {
                d.destroy_semaphore(self.acquired[i], None);
                d.destroy_fence(self.fences[i], None);
            }
            d.destroy_command_pool(self.pool, None);
            d.destroy_render_pass(self.render_pass, None);
        }
        self.surface
    }
}

/// What a present reported for one swapchain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PresentOutcome {
    Ok,
    /// Suboptimal or out of date: recreate before the next frame.
    Recreate,
}

/// When a vkQueuePresentKHR call was entered: right before the call, after
/// the queue lock (both clocks).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub at: std::time::Instant,
    pub monotonic_ns: u64,
}

/// Presents the given (swapchain, image) pairs with ONE vkQueuePresentKHR
/// call; appends each swapchain's outcome to `outcomes`.
pub fn present(
    gpu: &Gpu,
    targets: &mut [&mut Target],
    ready: &[Ready],
    outcomes: &mut Vec<PresentOutcome>,
) -> Result<Entry, Error> {
    let swapchains: Vec<vk::SwapchainKHR> = targets.iter().map(|t| t.swapchain).collect();
    let indices: Vec<u32> = ready.iter().map(|r| r.index).collect();
    let waits: Vec<vk::Semaphore> = ready.iter().map(|r| r.wait).collect();
    let mut results = vec![vk::Result::SUCCESS; swapchains.len()];
    let info = vk::PresentInfoKHR::default()
        .wait_semaphores(&waits)
        .swapchains(&swapchains)
        .image_indices(&indices)
        .results(&mut results);
    let (overall, entry) = {
        let q = gpu.queue.lock_or_recover();
        let entry = Entry {
            at: std::time::Instant::now(),
            monotonic_ns: now_ns(),
        };
        // SAFETY: every image was acquired and its render submitted.
        (unsafe { gpu.swapchain_fn.queue_present(*q, &info) }, entry)
    };
    match overall {
        Ok(_) | Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {}
        Err(e) => {
            return Err(Error::Vulkan {
                what: "vkQueuePresentKHR",
                result: e,
            })
        }
    }
    for (t, r) in targets.iter_mut().zip(&results) {
        t.presented += 1;
        outcomes.push(match *r {
            vk::Result::SUCCESS => PresentOutcome::Ok,
            vk::Result::SUBOPTIMAL_KHR | vk::Result::ERROR_OUT_OF_DATE_KHR => {
                PresentOutcome::Recreate
            }
            e => {
                return Err(Error::Vulkan {
                    what: "vkQueuePresentKHR (per-swapchain result)",
                    result: e,
                })
            }
        });
    }
    Ok(entry)
}
