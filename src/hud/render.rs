//! Vulkan objects of the HUD for one swapchain ([`Target`]): views and
//! framebuffers of its images (direct drawing only), one semaphore per image
//! for the present to wait on, and the command slots (command buffer,
//! fence, imgui mesh) that bound the submissions in flight.
//!
//! The command pool is made at the first draw, in the family of the queue
//! the app presents on (unknown before); a present from another family
//! recreates it once everything in flight is done. Every wait here is
//! bounded; a wait that runs out makes the draw `Skipped` rather than
//! stalling the game.

use super::device::{vk_err, HudDevice, HudError};
use super::imgui_mesh::Mesh;
use super::memory::color_view;
use super::plan::Plan;
use super::semaphores::PresentSemaphores;
use ash::vk;
use steadyhud_gfx::rect_between;

/// Longest wait for a slot's previous submission (or for everything in
/// flight when the queue changes) inside a present.
const PRESENT_WAIT_NS: u64 = 50_000_000;
/// Longest wait for the HUD's submissions at teardown.
const TEARDOWN_WAIT_NS: u64 = 1_000_000_000;

/// Resources of one submission in flight.
struct Slot {
    /// Null until the command pool exists.
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    /// Submitted and not yet seen complete.
    in_flight: bool,
    mesh: Mesh,
}

/// Everything the HUD owns on the device for one swapchain. Created
/// piecewise; [`Target::destroy`] frees whatever was created.
pub struct Target {
    pub extent: vk::Extent2D,
    pub format: vk::Format,
    images: Vec<vk::Image>,
    /// Direct drawing: per image (null until created when views are
    /// deferred); empty for the cached panel, which only copies.
    views: Vec<vk::ImageView>,
    framebuffers: Vec<vk::Framebuffer>,
    /// One per image: signalled by our submit, waited on by the present.
    done: Vec<vk::Semaphore>,
    pool: vk::CommandPool,
    pool_family: u32,
    slots: Vec<Slot>,
    next_slot: usize,
    /// Queue of the last submission: a fence covers its own submission
    /// only, so moving to another queue first waits for everything.
    last_queue: vk::Queue,
    /// Reused wait-stage array (no allocation per present once grown).
    wait_stages: Vec<vk::PipelineStageFlags>,
}

impl Target {
    /// Creates the per-image and per-slot objects; views and framebuffers
    /// too when drawing directly (`overlay_pass`) unless they are deferred.
    /// Submits nothing.
    ///
    /// # Safety
    /// `images` belong to the swapchain `info` describes; `dev` is live.
    pub unsafe fn new(
        dev: &HudDevice,
        info: &vk::SwapchainCreateInfoKHR,
        images: &[vk::Image],
        plan: &Plan,
        overlay_pass: Option<vk::RenderPass>,
        sems: &PresentSemaphores,
    ) -> Result<Target, HudError> {
        if overlay_pass.is_some()
            && !info
                .image_usage
                .contains(vk::ImageUsageFlags::COLOR_ATTACHMENT)
        {
            return Err(HudError::Unsupported(
                "swapchain images are not colour attachments",
            ));
        }
        if images.is_empty() {
            return Err(HudError::Unsupported("swapchain without images"));
        }
        let mut t = Target {
            extent: info.image_extent,
            format: info.image_format,
            images: images.to_vec(),
            views: Vec::new(),
            framebuffers: Vec::new(),
            done: Vec::with_capacity(images.len()),
            pool: vk::CommandPool::null(),
            pool_family: vk::QUEUE_FAMILY_IGNORED,
            slots: Vec::with_capacity(images.len()),
            next_slot: 0,
            last_queue: vk::Queue::null(),
            wait_stages: Vec::with_capacity(4),
        };
        match t.create(dev, plan, overlay_pass, sems) {
            Ok(()) => Ok(t),
            Err(e) => {
                t.destroy(dev, sems);
                Err(e)
            }
        }
    }

    /// # Safety
    /// `dev` is live; `self.images` are live images of it (the swapchain's)
    /// and `overlay_pass` its render pass. On an error `self` holds what was
    /// made, for [`Target::destroy`].
    unsafe fn create(
        &mut self,
        dev: &HudDevice,
        plan: &Plan,
        overlay_pass: Option<vk::RenderPass>,
        sems: &PresentSemaphores,
    ) -> Result<(), HudError> {
        let d = dev.device;
        if let Some(pass) = overlay_pass {
            self.views = vec![vk::ImageView::null(); self.images.len()];
            self.framebuffers = vec![vk::Framebuffer::null(); self.images.len()];
            if !plan.deferred_views {
                for i in 0..self.images.len() {
                    self.ensure_view(dev, i, pass)?;
                }
            }
        }
        // One slot per image: as many submissions in flight as the
        // swapchain can have images queued.
        for _ in 0..self.images.len() {
            self.done.push(sems.take(dev)?);
            let fence_info = vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED);
            let fence = d
                .create_fence(&fence_info, None)
                .map_err(vk_err("vkCreateFence"))?;
            let mesh = match Mesh::new(dev) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_fence(fence, None);
                    return Err(e);
                }
            };
            self.slots.push(Slot {
                cmd: vk::CommandBuffer::null(),
                fence,
                in_flight: false,
                mesh,
            });
        }
        Ok(())
    }

    /// Number of swapchain images.
    pub fn image_count(&self) -> usize {
        self.images.len()
    }

    /// Creates image `i`'s view and framebuffer if they do not exist yet;
    /// returns whether it did.
    ///
    /// # Safety
    /// Image `i` has memory (it was acquired, or views are not deferred).
    pub unsafe fn ensure_view(
        &mut self,
        dev: &HudDevice,
        i: usize,
        pass: vk::RenderPass,
    ) -> Result<bool, HudError> {
        if self
            .framebuffers
            .get(i)
            .is_none_or(|fb| *fb != vk::Framebuffer::null())
        {
            return Ok(false);
        }
        if self.views[i] == vk::ImageView::null() {
            self.views[i] = color_view(dev, self.images[i], self.format)?;
        }
        let attachments = [self.views[i]];
        let fb_info = vk::FramebufferCreateInfo::default()
            .render_pass(pass)
            .attachments(&attachments)
            .width(self.extent.width)
            .height(self.extent.height)
            .layers(1);
        self.framebuffers[i] = dev
            .device
            .create_framebuffer(&fb_info, None)
            .map_err(vk_err("vkCreateFramebuffer"))?;
        Ok(true)
    }

    /// Makes the command pool fit a present on `queue` of `family`
    /// (created at the first draw, recreated when presents move to another
    /// family). Returns false when the draw must be skipped: work in flight
    /// on the previous queue did not finish within the bound.
    ///
    /// # Safety
    /// `queue` belongs to `family` and has the graphics bit.
    pub unsafe fn prepare_queue(
        &mut self,
        dev: &HudDevice,
        queue: vk::Queue,
        family: u32,
    ) -> Result<bool, HudError> {
        if self.last_queue != queue && !self.wait_all(dev, PRESENT_WAIT_NS) {
            return Ok(false);
        }
        if self.pool != vk::CommandPool::null() && self.pool_family == family {
            return Ok(true);
        }
        let d = dev.device;
        if self.pool != vk::CommandPool::null() {
            // Everything in flight is done (waited above): the buffers are free.
            d.destroy_command_pool(self.pool, None);
            self.pool = vk::CommandPool::null();
            for slot in &mut self.slots {
                slot.cmd = vk::CommandBuffer::null();
            }
        }
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        self.pool = d
            .create_command_pool(&pool_info, None)
            .map_err(vk_err("vkCreateCommandPool"))?;
        self.pool_family = family;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(self.slots.len() as u32);
        // The layer's device wrapper registers these with the loader.
        let cmds = d
            .allocate_command_buffers(&alloc)
            .map_err(vk_err("vkAllocateCommandBuffers"))?;
        for (slot, cmd) in self.slots.iter_mut().zip(cmds) {
            slot.cmd = cmd;
        }
        Ok(true)
    }

    /// Waits (at most [`PRESENT_WAIT_NS`]) for the next slot's previous
    /// submission. Returns the slot, or `None` when it is still running.
    ///
    /// # Safety
    /// `dev` is the live device this target was made on.
    pub unsafe fn acquire_slot(&mut self, dev: &HudDevice) -> Result<Option<usize>, HudError> {
        let i = self.next_slot;
        let slot = &mut self.slots[i];
        if slot.in_flight {
            match dev
                .device
                .wait_for_fences(&[slot.fence], true, PRESENT_WAIT_NS)
            {
                Ok(()) => slot.in_flight = false,
                Err(vk::Result::TIMEOUT) => return Ok(None),
                Err(e) => return Err(vk_err("vkWaitForFences")(e)),
            }
        }
        Ok(Some(i))
    }

    /// The fence of slot `i`.
    pub fn fence(&self, i: usize) -> vk::Fence {
        self.slots[i].fence
    }

    /// Which slots have a submission in flight.
    pub fn in_flight(&self) -> impl Iterator<Item = bool> + '_ {
        self.slots.iter().map(|s| s.in_flight)
    }

    /// Resets slot `i`'s fence: from here on the draw submits, or replaces
    /// the fence with [`Target::abandon`].
    ///
    /// # Safety
    /// `dev` is the live device this target was made on; slot `i` is not in
    /// flight (returned by [`Target::acquire_slot`]).
    pub unsafe fn reset_fence(&self, dev: &HudDevice, i: usize) -> Result<(), HudError> {
        dev.device
            .reset_fences(&[self.slots[i].fence])
            .map_err(vk_err("vkResetFences"))
    }

    /// Resets and begins slot `i`'s command buffer.
    ///
    /// # Safety
    /// `dev` is the live device this target was made on; slot `i` is not in
    /// flight (returned by [`Target::acquire_slot`]).
    pub unsafe fn begin(&self, dev: &HudDevice, i: usize) -> Result<vk::CommandBuffer, HudError> {
        let d = dev.device;
        let cmd = self.slots[i].cmd;
        d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
            .map_err(vk_err("vkResetCommandBuffer"))?;
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        d.begin_command_buffer(cmd, &begin)
            .map_err(vk_err("vkBeginCommandBuffer"))?;
        Ok(cmd)
    }

    /// Slot `i`'s mesh.
    pub fn mesh(&mut self, i: usize) -> &mut Mesh {
        &mut self.slots[i].mesh
    }

    /// The swapchain image `i` and (direct drawing) its framebuffer.
    pub fn image(&self, i: usize) -> vk::Image {
        self.images[i]
    }

    pub fn framebuffer(&self, i: usize) -> vk::Framebuffer {
        self.framebuffers.get(i).copied().unwrap_or_default()
    }

    /// Ends slot `i`'s command buffer and submits it on `queue`, waiting on
    /// `wait` at `stage`, signalling image `image`'s semaphore (none for the
    /// set-up, which no present waits on) and the slot's fence (reset by
    /// [`Target::reset_fence`]); returns the semaphore.
    ///
    /// # Safety
    /// Slot `i` was begun for this draw, with any render pass ended; `queue`
    /// is the queue the app presents on, inside its present.
    pub unsafe fn submit(
        &mut self,
        dev: &HudDevice,
        queue: vk::Queue,
        i: usize,
        image: Option<usize>,
        wait: &[vk::Semaphore],
        stage: vk::PipelineStageFlags,
    ) -> Result<Option<vk::Semaphore>, HudError> {
        let d = dev.device;
        let (cmd, fence) = (self.slots[i].cmd, self.slots[i].fence);
        d.end_command_buffer(cmd)
            .map_err(vk_err("vkEndCommandBuffer"))?;
        self.wait_stages.clear();
        self.wait_stages.extend(wait.iter().map(|_| stage));
        let cmds = [cmd];
        let signal = image.map(|i| self.done[i]);
        let submit = [vk::SubmitInfo::default()
            .wait_semaphores(wait)
            .wait_dst_stage_mask(&self.wait_stages)
            .command_buffers(&cmds)
            .signal_semaphores(signal.as_slice())];
        d.queue_submit(queue, &submit, fence)
            .map_err(vk_err("vkQueueSubmit"))?;
        self.slots[i].in_flight = true;
        self.next_slot = (i + 1) % self.slots.len();
        self.last_queue = queue;
        Ok(signal)
    }

    /// After a failed recording or submission of slot `i` (its fence
    /// reset, nothing submitted): discards the recording and gives the slot
    /// a signalled fence again without submitting anything.
    ///
    /// # Safety
    /// `dev` is the live device this target was made on; slot `i`'s fence
    /// was reset and nothing was submitted with it.
    pub unsafe fn abandon(&mut self, dev: &HudDevice, i: usize) {
        let d = dev.device;
        let slot = &mut self.slots[i];
        if slot.cmd != vk::CommandBuffer::null() {
            // Valid from the recording state too (the pool resets buffers).
            let _ = d.reset_command_buffer(slot.cmd, vk::CommandBufferResetFlags::empty());
        }
        let info = vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED);
        if let Ok(fresh) = d.create_fence(&info, None) {
            d.destroy_fence(slot.fence, None);
            slot.fence = fresh;
        }
        slot.in_flight = false;
    }

    /// The render area for a HUD rectangle `[x0, y0, x1, y1]`: rounded out
    /// to whole pixels and clipped to the image (a software rasteriser then
    /// touches only those tiles; LOAD_OP_LOAD keeps everything outside as
    /// the app drew it). An empty rectangle becomes 1x1.
    pub fn render_area(&self, area: [f32; 4]) -> vk::Rect2D {
        let (w, h) = (self.extent.width as f32, self.extent.height as f32);
        let x0 = area[0].floor().clamp(0.0, w - 1.0);
        let y0 = area[1].floor().clamp(0.0, h - 1.0);
        let x1 = area[2].ceil().clamp(x0 + 1.0, w);
        let y1 = area[3].ceil().clamp(y0 + 1.0, h);
        rect_between(x0, y0, x1, y1)
    }

    /// Waits (at most `timeout_ns`) for every submission in flight; returns
    /// whether all are done (and marks them so).
    ///
    /// # Safety
    /// `dev` is the live device this target was made on.
    pub unsafe fn wait_all(&mut self, dev: &HudDevice, timeout_ns: u64) -> bool {
        let fences: Vec<vk::Fence> = self
            .slots
            .iter()
            .filter(|s| s.in_flight)
            .map(|s| s.fence)
            .collect();
        if fences.is_empty() {
            return true;
        }
        if dev
            .device
            .wait_for_fences(&fences, true, timeout_ns)
            .is_err()
        {
            return false;
        }
        for slot in &mut self.slots {
            slot.in_flight = false;
        }
        true
    }

    /// Waits (at most a teardown bound) for every submission of this
    /// target; returns whether all completed.
    ///
    /// # Safety
    /// `dev` is the live device this target was made on.
    pub unsafe fn destroy_wait(&mut self, dev: &HudDevice) -> bool {
        self.wait_all(dev, TEARDOWN_WAIT_NS)
    }

    /// Frees everything but the present semaphores, which go back to
    /// `sems` (a present may still wait on them).
    ///
    /// # Safety
    /// [`Target::destroy_wait`] returned true; no other use afterwards.
    pub unsafe fn destroy(&mut self, dev: &HudDevice, sems: &PresentSemaphores) {
        let d = dev.device;
        for mut slot in self.slots.drain(..) {
            d.destroy_fence(slot.fence, None);
            slot.mesh.destroy(dev);
        }
        if self.pool != vk::CommandPool::null() {
            // Frees the command buffers with it.
            d.destroy_command_pool(self.pool, None);
            self.pool = vk::CommandPool::null();
        }
        sems.give_back(self.done.drain(..));
        for fb in self
            .framebuffers
            .drain(..)
            .filter(|f| *f != vk::Framebuffer::null())
        {
            d.destroy_framebuffer(fb, None);
        }
        for view in self.views.drain(..).filter(|v| *v != vk::ImageView::null()) {
            d.destroy_image_view(view, None);
        }
    }
}
