//! Vulkan side of the HUD for one swapchain: the overlay render pass, image
//! views, framebuffers, command buffers, fences and semaphores.
//!
//! One draw = [`Target::begin_cmd`] (wait for the slot's previous
//! submission), optionally a render pass that loads the app's image
//! (LOAD_OP_LOAD, PRESENT_SRC_KHR in and out), then [`Target::submit`] on the
//! graphics queue waiting on the app's present semaphores and signalling
//! this image's semaphore, which the real present then waits on.
//!
//! Present queue in another family with EXCLUSIVE images: the command
//! buffer carries the acquire (present → graphics) and release (graphics →
//! present) barriers, as Mesa's overlay layer does; the matching halves on
//! the present queue itself are not submitted. Untested: lavapipe has a
//! single queue family.

use super::{HudDevice, HudError};
use ash::vk;

/// Maps a failed Vulkan call to a [`HudError`].
pub(crate) fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> HudError {
    move |result| HudError::Vulkan { call, result }
}

/// Subpass dependencies of both HUD render passes (the swapchain overlay
/// pass and the cached panel's pass). They must be identical: the imgui
/// pipeline is built against one and used in both, and dependencies are
/// part of render pass compatibility.
///
/// Before: the app's semaphores are waited at COLOR_ATTACHMENT_OUTPUT (or
/// TRANSFER), and earlier copies out of the panel (TRANSFER) finish before
/// the pass writes. After: the writes finish before presentation or before
/// copies read the panel.
fn overlay_dependencies() -> [vk::SubpassDependency; 2] {
    [
        vk::SubpassDependency {
            src_subpass: vk::SUBPASS_EXTERNAL,
            dst_subpass: 0,
            src_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT
                | vk::PipelineStageFlags::TRANSFER,
            dst_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
            src_access_mask: vk::AccessFlags::empty(),
            dst_access_mask: vk::AccessFlags::COLOR_ATTACHMENT_READ
                | vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
            dependency_flags: vk::DependencyFlags::empty(),
        },
        vk::SubpassDependency {
            src_subpass: 0,
            dst_subpass: vk::SUBPASS_EXTERNAL,
            src_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
            dst_stage_mask: vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::BOTTOM_OF_PIPE,
            src_access_mask: vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
            dst_access_mask: vk::AccessFlags::TRANSFER_READ,
            dependency_flags: vk::DependencyFlags::empty(),
        },
    ]
}

/// The single mip level and layer of a colour image.
pub fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

/// A render pass of one subpass drawing into one colour attachment of
/// `format`, with [`overlay_dependencies`]: the overlay pass (`LOAD` from and
/// back to `PRESENT_SRC_KHR`) and the panel pass (`CLEAR` to
/// `TRANSFER_SRC_OPTIMAL`) differ only in these arguments, which keeps them
/// compatible, so one imgui pipeline serves both.
pub(crate) unsafe fn color_pass(
    dev: &HudDevice,
    format: vk::Format,
    load: vk::AttachmentLoadOp,
    initial: vk::ImageLayout,
    last: vk::ImageLayout,
) -> Result<vk::RenderPass, HudError> {
    let attachment = [vk::AttachmentDescription::default()
        .format(format)
        .samples(vk::SampleCountFlags::TYPE_1)
        .load_op(load)
        .store_op(vk::AttachmentStoreOp::STORE)
        .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
        .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
        .initial_layout(initial)
        .final_layout(last)];
    let color_ref = [vk::AttachmentReference { attachment: 0, layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL }];
    let subpass = [vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&color_ref)];
    let deps = overlay_dependencies();
    let info = vk::RenderPassCreateInfo::default().attachments(&attachment).subpasses(&subpass).dependencies(&deps);
    dev.device.create_render_pass(&info, None).map_err(vk_err("vkCreateRenderPass"))
}

/// Command buffer + fence used by one submission in flight.
#[derive(Clone, Copy)]
struct Slot {
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
}

/// Everything the HUD owns on the device for one swapchain. Created
/// piecewise; [`Target::destroy`] frees whatever was created, so a failure
/// half-way through `new` leaks nothing.
pub struct Target {
    pub extent: vk::Extent2D,
    pub format: vk::Format,
    render_pass: vk::RenderPass,
    views: Vec<vk::ImageView>,
    framebuffers: Vec<vk::Framebuffer>,
    images: Vec<vk::Image>,
    exclusive: bool,
    pub pool: vk::CommandPool,
    slots: Vec<Slot>,
    next_slot: usize,
    /// One per swapchain image: signalled by our submit, waited on by present.
    done: Vec<vk::Semaphore>,
    /// Reused wait-stage array (no allocation per present once grown).
    wait_stages: Vec<vk::PipelineStageFlags>,
    /// Queue of the last submission. Reusing a slot is safe because a fence
    /// covers everything submitted earlier *to the same queue*; when the
    /// layer hands us another queue (it submits on the app's present queue
    /// when that is in our family), everything in flight is waited for once.
    last_queue: vk::Queue,
}

impl Target {
    /// Creates the render pass and per-image resources.
    ///
    /// # Safety
    /// `images` belong to the swapchain `info` describes; `dev` is live.
    pub unsafe fn new(
        dev: &HudDevice,
        info: &vk::SwapchainCreateInfoKHR,
        images: &[vk::Image],
    ) -> Result<Target, HudError> {
        if !info.image_usage.contains(vk::ImageUsageFlags::COLOR_ATTACHMENT) {
            return Err(HudError::Unsupported("swapchain images are not colour attachments"));
        }
        let mut t = Target {
            extent: info.image_extent,
            format: info.image_format,
            render_pass: vk::RenderPass::null(),
            views: Vec::new(),
            framebuffers: Vec::new(),
            images: images.to_vec(),
            exclusive: info.image_sharing_mode == vk::SharingMode::EXCLUSIVE,
            pool: vk::CommandPool::null(),
            slots: Vec::new(),
            next_slot: 0,
            done: Vec::new(),
            wait_stages: Vec::with_capacity(4),
            last_queue: vk::Queue::null(),
        };
        match t.create(dev, images) {
            Ok(()) => Ok(t),
            Err(e) => {
                t.destroy(dev);
                Err(e)
            }
        }
    }

    unsafe fn create(&mut self, dev: &HudDevice, images: &[vk::Image]) -> Result<(), HudError> {
        let d = dev.device;
        self.render_pass = color_pass(
            dev,
            self.format,
            vk::AttachmentLoadOp::LOAD,
            vk::ImageLayout::PRESENT_SRC_KHR,
            vk::ImageLayout::PRESENT_SRC_KHR,
        )?;

        for &image in images {
            let view_info = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(self.format)
                .subresource_range(color_range());
            let view = d.create_image_view(&view_info, None).map_err(vk_err("vkCreateImageView"))?;
            self.views.push(view);
            let attachments = [view];
            let fb_info = vk::FramebufferCreateInfo::default()
                .render_pass(self.render_pass)
                .attachments(&attachments)
                .width(self.extent.width)
                .height(self.extent.height)
                .layers(1);
            let fb = d.create_framebuffer(&fb_info, None).map_err(vk_err("vkCreateFramebuffer"))?;
            self.framebuffers.push(fb);
            let sem = d
                .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                .map_err(vk_err("vkCreateSemaphore"))?;
            self.done.push(sem);
        }

        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(dev.graphics_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        self.pool = d.create_command_pool(&pool_info, None).map_err(vk_err("vkCreateCommandPool"))?;
        // One slot per image: as many submissions in flight as the swapchain
        // can have images queued.
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(images.len() as u32);
        // The layer's device wrapper registers these with the loader.
        let cmds = d.allocate_command_buffers(&alloc).map_err(vk_err("vkAllocateCommandBuffers"))?;
        for cmd in cmds {
            let fence_info = vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED);
            let fence = match d.create_fence(&fence_info, None) {
                Ok(f) => f,
                Err(e) => {
                    d.free_command_buffers(self.pool, &[cmd]);
                    return Err(vk_err("vkCreateFence")(e));
                }
            };
            self.slots.push(Slot { cmd, fence });
        }
        Ok(())
    }

    pub fn render_pass(&self) -> vk::RenderPass {
        self.render_pass
    }

    /// Number of submissions that can be in flight (the renderer's frame count).
    pub fn in_flight(&self) -> usize {
        self.slots.len()
    }

    /// Waits until the next slot's previous submission is done and returns
    /// its command buffer, reset and begun (with the queue-family acquire
    /// barrier when needed).
    ///
    /// # Safety
    /// `image_index` is an image of this swapchain the app is presenting.
    pub unsafe fn begin_cmd(
        &mut self,
        dev: &HudDevice,
        image_index: u32,
        present_family: u32,
    ) -> Result<vk::CommandBuffer, HudError> {
        let idx = image_index as usize;
        if idx >= self.images.len() {
            return Err(HudError::Unsupported("image index out of range"));
        }
        let cmd = self.begin_slot(dev)?;
        if self.needs_transfer(dev, present_family) {
            // Acquire half of present family -> graphics family.
            self.ownership_barrier(dev, cmd, idx, present_family, dev.graphics_family, false);
        }
        Ok(cmd)
    }

    /// Waits for the next slot's previous submission, then resets and
    /// begins its command buffer.
    unsafe fn begin_slot(&mut self, dev: &HudDevice) -> Result<vk::CommandBuffer, HudError> {
        let d = dev.device;
        if self.last_queue != dev.graphics_queue && self.last_queue != vk::Queue::null() {
            self.wait_idle(dev);
        }
        let slot = &self.slots[self.next_slot];
        d.wait_for_fences(&[slot.fence], true, u64::MAX).map_err(vk_err("vkWaitForFences"))?;
        d.reset_command_buffer(slot.cmd, vk::CommandBufferResetFlags::empty())
            .map_err(vk_err("vkResetCommandBuffer"))?;
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        d.begin_command_buffer(slot.cmd, &begin).map_err(vk_err("vkBeginCommandBuffer"))?;
        Ok(slot.cmd)
    }

    /// Begins a command buffer for setup work that touches no swapchain
    /// image (see [`Target::submit_and_wait`]).
    ///
    /// # Safety
    /// `dev` is live; no other recording on this target is in progress.
    pub unsafe fn begin_setup(&mut self, dev: &HudDevice) -> Result<vk::CommandBuffer, HudError> {
        self.begin_slot(dev)
    }

    /// Ends the setup command buffer, submits it on the graphics queue
    /// without semaphores and waits (bounded) until it has executed. The
    /// slot's fence is signalled again afterwards, so the next present
    /// reuses the slot without waiting.
    ///
    /// # Safety
    /// Follows a successful [`Target::begin_setup`], with any render pass ended.
    pub unsafe fn submit_and_wait(&mut self, dev: &HudDevice) -> Result<(), HudError> {
        let d = dev.device;
        let Slot { cmd, fence } = self.slots[self.next_slot];
        d.end_command_buffer(cmd).map_err(vk_err("vkEndCommandBuffer"))?;
        let cmds = [cmd];
        let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
        d.reset_fences(&[fence]).map_err(vk_err("vkResetFences"))?;
        if let Err(e) = d.queue_submit(dev.graphics_queue, &submit, fence) {
            let _ = d.queue_submit(dev.graphics_queue, &[], fence);
            return Err(vk_err("vkQueueSubmit")(e));
        }
        self.last_queue = dev.graphics_queue;
        // Bounded like `wait_idle`: a lost device must not hang the app.
        d.wait_for_fences(&[fence], true, 2_000_000_000).map_err(vk_err("vkWaitForFences"))
    }

    /// Begins the overlay render pass (LOAD_OP_LOAD on the swapchain image)
    /// limited to `area`.
    pub unsafe fn begin_pass(&self, dev: &HudDevice, cmd: vk::CommandBuffer, image_index: u32, area: [f32; 4]) {
        let rp_begin = vk::RenderPassBeginInfo::default()
            .render_pass(self.render_pass)
            .framebuffer(self.framebuffers[image_index as usize])
            .render_area(self.clamp_area(area));
        dev.device.cmd_begin_render_pass(cmd, &rp_begin, vk::SubpassContents::INLINE);
    }

    /// The swapchain image `image_index`.
    pub fn image(&self, image_index: u32) -> vk::Image {
        self.images[image_index as usize]
    }

    /// Ends the command buffer and submits it, its first use of the
    /// swapchain image waiting on `wait` at `stage`; returns the semaphore
    /// the present must wait on.
    ///
    /// # Safety
    /// Follows a successful [`Target::begin_cmd`] for the same `image_index`,
    /// with any render pass ended.
    pub unsafe fn submit(
        &mut self,
        dev: &HudDevice,
        image_index: u32,
        present_family: u32,
        wait: &[vk::Semaphore],
        stage: vk::PipelineStageFlags,
    ) -> Result<vk::Semaphore, HudError> {
        let d = dev.device;
        let idx = image_index as usize;
        let slot_index = self.next_slot;
        let (cmd, fence) = (self.slots[slot_index].cmd, self.slots[slot_index].fence);
        if self.needs_transfer(dev, present_family) {
            // Release half of graphics family -> present family.
            self.ownership_barrier(dev, cmd, idx, dev.graphics_family, present_family, true);
        }
        d.end_command_buffer(cmd).map_err(vk_err("vkEndCommandBuffer"))?;

        self.wait_stages.clear();
        self.wait_stages.extend(wait.iter().map(|_| stage));
        let cmds = [cmd];
        let signal = [self.done[idx]];
        let submit = [vk::SubmitInfo::default()
            .wait_semaphores(wait)
            .wait_dst_stage_mask(&self.wait_stages)
            .command_buffers(&cmds)
            .signal_semaphores(&signal)];
        d.reset_fences(&[fence]).map_err(vk_err("vkResetFences"))?;
        if let Err(e) = d.queue_submit(dev.graphics_queue, &submit, fence) {
            // Nothing was submitted: leave the fence signalled for the next wait.
            let _ = d.queue_submit(dev.graphics_queue, &[], fence);
            return Err(vk_err("vkQueueSubmit")(e));
        }
        self.next_slot = (slot_index + 1) % self.slots.len();
        self.last_queue = dev.graphics_queue;
        Ok(signal[0])
    }

    /// The render area: the HUD's rectangle rounded out to whole pixels and
    /// clipped to the image (a software rasteriser then touches only those
    /// tiles; LOAD_OP_LOAD keeps everything outside as the app drew it).
    /// An empty rectangle (imgui hides a new window for a frame) becomes 1x1.
    fn clamp_area(&self, area: [f32; 4]) -> vk::Rect2D {
        let (w, h) = (self.extent.width as f32, self.extent.height as f32);
        let x0 = area[0].floor().clamp(0.0, w - 1.0);
        let y0 = area[1].floor().clamp(0.0, h - 1.0);
        let x1 = area[2].ceil().clamp(x0 + 1.0, w);
        let y1 = area[3].ceil().clamp(y0 + 1.0, h);
        vk::Rect2D {
            offset: vk::Offset2D { x: x0 as i32, y: y0 as i32 },
            extent: vk::Extent2D { width: (x1 - x0) as u32, height: (y1 - y0) as u32 },
        }
    }

    /// Abandons a begun command buffer after a recording error (the slot's
    /// fence stays signalled, so the next draw can reuse it). A render pass
    /// left open is discarded with the reset.
    pub unsafe fn abandon(&mut self, dev: &HudDevice) {
        let cmd = self.slots[self.next_slot].cmd;
        let _ = dev.device.end_command_buffer(cmd);
        let _ = dev.device.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty());
    }

    /// Whether the image must change queue family around our pass: the
    /// present queue is in another family than our graphics queue and the
    /// swapchain images are EXCLUSIVE.
    fn needs_transfer(&self, dev: &HudDevice, present_family: u32) -> bool {
        self.exclusive && present_family != dev.graphics_family
    }

    unsafe fn ownership_barrier(
        &self,
        dev: &HudDevice,
        cmd: vk::CommandBuffer,
        idx: usize,
        src_family: u32,
        dst_family: u32,
        release: bool,
    ) {
        // Conservative stages: the image is written by a render pass or a copy.
        let writes = vk::AccessFlags::COLOR_ATTACHMENT_WRITE | vk::AccessFlags::TRANSFER_WRITE;
        let (src_stage, dst_stage, src_access, dst_access) = if release {
            (vk::PipelineStageFlags::ALL_COMMANDS, vk::PipelineStageFlags::BOTTOM_OF_PIPE, writes, vk::AccessFlags::empty())
        } else {
            (
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::AccessFlags::empty(),
                writes | vk::AccessFlags::COLOR_ATTACHMENT_READ,
            )
        };
        let barrier = [vk::ImageMemoryBarrier::default()
            .src_access_mask(src_access)
            .dst_access_mask(dst_access)
            .old_layout(vk::ImageLayout::PRESENT_SRC_KHR)
            .new_layout(vk::ImageLayout::PRESENT_SRC_KHR)
            .src_queue_family_index(src_family)
            .dst_queue_family_index(dst_family)
            .image(self.images[idx])
            .subresource_range(color_range())];
        dev.device.cmd_pipeline_barrier(
            cmd,
            src_stage,
            dst_stage,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &barrier,
        );
    }

    /// Waits (bounded: a lost device must not hang the game's teardown)
    /// until every submission of this target has completed.
    pub unsafe fn wait_idle(&self, dev: &HudDevice) {
        let fences: Vec<vk::Fence> = self.slots.iter().map(|s| s.fence).collect();
        if !fences.is_empty() {
            let _ = dev.device.wait_for_fences(&fences, true, 2_000_000_000);
        }
    }

    /// Waits for every submission of this target, then frees everything.
    ///
    /// # Safety
    /// No other use of this target afterwards.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        let d = dev.device;
        self.wait_idle(dev);
        for slot in self.slots.drain(..) {
            d.destroy_fence(slot.fence, None);
            d.free_command_buffers(self.pool, &[slot.cmd]);
        }
        if self.pool != vk::CommandPool::null() {
            d.destroy_command_pool(self.pool, None);
            self.pool = vk::CommandPool::null();
        }
        for sem in self.done.drain(..) {
            d.destroy_semaphore(sem, None);
        }
        for fb in self.framebuffers.drain(..) {
            d.destroy_framebuffer(fb, None);
        }
        for view in self.views.drain(..) {
            d.destroy_image_view(view, None);
        }
        if self.render_pass != vk::RenderPass::null() {
            d.destroy_render_pass(self.render_pass, None);
            self.render_pass = vk::RenderPass::null();
        }
    }
}
