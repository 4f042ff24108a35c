//! The cached HUD panel: imgui renders the HUD into a small image of our own
//! only when the live stats change (the analysis thread publishes ~10×/s),
//! and every present just copies that opaque panel into the swapchain image.
//!
//! Used when the swapchain images allow transfers (`TRANSFER_DST`). A copy
//! costs a memcpy of the panel, whereas drawing imgui into every frame costs
//! the full blend-and-sample fill of the HUD per present, which on a
//! software rasteriser (lavapipe) is as expensive as a simple game frame.

use super::render::{color_pass, color_range, vk_err};
use super::{HudDevice, HudError};
use ash::vk;

/// Panel sizes are rounded up to this, so small layout changes (a wider
/// number) do not recreate the image.
const GROW_STEP: u32 = 32;

/// The panel image, its render pass and framebuffer.
pub struct Panel {
    format: vk::Format,
    clear: vk::ClearColorValue,
    render_pass: vk::RenderPass,
    image: vk::Image,
    memory: vk::DeviceMemory,
    view: vk::ImageView,
    framebuffer: vk::Framebuffer,
    /// Allocated size (grow-only).
    capacity: vk::Extent2D,
    /// Size of the last rendered HUD inside the panel (0 before the first).
    pub content: vk::Extent2D,
}

impl Panel {
    /// Creates the render pass; the image comes with the first [`Panel::reserve`].
    /// `clear` is the panel background in the format's numeric encoding.
    pub unsafe fn new(dev: &HudDevice, format: vk::Format, clear: [f32; 4]) -> Result<Panel, HudError> {
        let render_pass = color_pass(
            dev,
            format,
            vk::AttachmentLoadOp::CLEAR,
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        )?;
        Ok(Panel {
            format,
            clear: vk::ClearColorValue { float32: clear },
            render_pass,
            image: vk::Image::null(),
            memory: vk::DeviceMemory::null(),
            view: vk::ImageView::null(),
            framebuffer: vk::Framebuffer::null(),
            capacity: vk::Extent2D { width: 0, height: 0 },
            content: vk::Extent2D { width: 0, height: 0 },
        })
    }

    /// Whether the panel image must grow to hold `size`.
    pub fn needs_growth(&self, size: vk::Extent2D) -> bool {
        size.width > self.capacity.width || size.height > self.capacity.height
    }

    /// Makes the image at least `size`.
    ///
    /// # Safety
    /// No submission that uses the current image may be pending.
    pub unsafe fn reserve(&mut self, dev: &HudDevice, size: vk::Extent2D) -> Result<(), HudError> {
        if !self.needs_growth(size) {
            return Ok(());
        }
        self.free_image(dev);
        let round = |v: u32| v.div_ceil(GROW_STEP).max(1) * GROW_STEP;
        let extent = vk::Extent2D { width: round(size.width), height: round(size.height) };
        let d = dev.device;
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(self.format)
            .extent(vk::Extent3D { width: extent.width, height: extent.height, depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        self.image = d.create_image(&info, None).map_err(vk_err("vkCreateImage"))?;
        let req = d.get_image_memory_requirements(self.image);
        let props = dev.instance.get_physical_device_memory_properties(dev.physical_device);
        let pick = |want: vk::MemoryPropertyFlags| {
            (0..props.memory_type_count).find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize].property_flags.contains(want)
            })
        };
        let index = pick(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            .or_else(|| pick(vk::MemoryPropertyFlags::empty()))
            .ok_or(HudError::Unsupported("no memory type for the HUD panel"))?;
        let alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(index);
        self.memory = d.allocate_memory(&alloc, None).map_err(vk_err("vkAllocateMemory"))?;
        d.bind_image_memory(self.image, self.memory, 0).map_err(vk_err("vkBindImageMemory"))?;
        let view_info = vk::ImageViewCreateInfo::default()
            .image(self.image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(self.format)
            .subresource_range(color_range());
        self.view = d.create_image_view(&view_info, None).map_err(vk_err("vkCreateImageView"))?;
        let views = [self.view];
        let fb_info = vk::FramebufferCreateInfo::default()
            .render_pass(self.render_pass)
            .attachments(&views)
            .width(extent.width)
            .height(extent.height)
            .layers(1);
        self.framebuffer = d.create_framebuffer(&fb_info, None).map_err(vk_err("vkCreateFramebuffer"))?;
        self.capacity = extent;
        self.content = vk::Extent2D { width: 0, height: 0 };
        Ok(())
    }

    /// Begins the panel's render pass (clears it to the background).
    pub unsafe fn begin_pass(&self, dev: &HudDevice, cmd: vk::CommandBuffer) {
        let clear = [vk::ClearValue { color: self.clear }];
        let info = vk::RenderPassBeginInfo::default()
            .render_pass(self.render_pass)
            .framebuffer(self.framebuffer)
            .render_area(vk::Rect2D { offset: vk::Offset2D { x: 0, y: 0 }, extent: self.capacity })
            .clear_values(&clear);
        dev.device.cmd_begin_render_pass(cmd, &info, vk::SubpassContents::INLINE);
    }

    /// Copies the panel's content into `dst` (in PRESENT_SRC_KHR) at
    /// `offset`, clipped to `dst_extent`, and returns it to PRESENT_SRC_KHR.
    pub unsafe fn copy_to(
        &self,
        dev: &HudDevice,
        cmd: vk::CommandBuffer,
        dst: vk::Image,
        offset: vk::Offset2D,
        dst_extent: vk::Extent2D,
    ) {
        let x = offset.x.clamp(0, dst_extent.width as i32);
        let y = offset.y.clamp(0, dst_extent.height as i32);
        let w = self.content.width.min(dst_extent.width - x as u32);
        let h = self.content.height.min(dst_extent.height - y as u32);
        if w == 0 || h == 0 {
            return;
        }
        let d = dev.device;
        // The app's semaphores are waited at TRANSFER: chain from there.
        transition(
            dev,
            cmd,
            dst,
            (vk::ImageLayout::PRESENT_SRC_KHR, vk::ImageLayout::TRANSFER_DST_OPTIMAL),
            (vk::AccessFlags::empty(), vk::AccessFlags::TRANSFER_WRITE),
            (vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER),
        );
        let layers = vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let region = [vk::ImageCopy {
            src_subresource: layers,
            src_offset: vk::Offset3D { x: 0, y: 0, z: 0 },
            dst_subresource: layers,
            dst_offset: vk::Offset3D { x, y, z: 0 },
            extent: vk::Extent3D { width: w, height: h, depth: 1 },
        }];
        d.cmd_copy_image(
            cmd,
            self.image,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            dst,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &region,
        );
        transition(
            dev,
            cmd,
            dst,
            (vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::ImageLayout::PRESENT_SRC_KHR),
            (vk::AccessFlags::TRANSFER_WRITE, vk::AccessFlags::empty()),
            (vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::BOTTOM_OF_PIPE),
        );
    }

    /// Whether the panel holds a rendered HUD.
    pub fn ready(&self) -> bool {
        self.content.width > 0 && self.content.height > 0
    }

    unsafe fn free_image(&mut self, dev: &HudDevice) {
        let d = dev.device;
        if self.framebuffer != vk::Framebuffer::null() {
            d.destroy_framebuffer(self.framebuffer, None);
            self.framebuffer = vk::Framebuffer::null();
        }
        if self.view != vk::ImageView::null() {
            d.destroy_image_view(self.view, None);
            self.view = vk::ImageView::null();
        }
        if self.image != vk::Image::null() {
            d.destroy_image(self.image, None);
            self.image = vk::Image::null();
        }
        if self.memory != vk::DeviceMemory::null() {
            d.free_memory(self.memory, None);
            self.memory = vk::DeviceMemory::null();
        }
        self.capacity = vk::Extent2D { width: 0, height: 0 };
    }

    /// Frees everything.
    ///
    /// # Safety
    /// No submission using the panel may be pending.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        self.free_image(dev);
        if self.render_pass != vk::RenderPass::null() {
            dev.device.destroy_render_pass(self.render_pass, None);
            self.render_pass = vk::RenderPass::null();
        }
    }
}

/// Records one layout transition of the colour image `image` (same queue
/// family): (old, new) layouts, (src, dst) access and (src, dst) stages.
unsafe fn transition(
    dev: &HudDevice,
    cmd: vk::CommandBuffer,
    image: vk::Image,
    (old, new): (vk::ImageLayout, vk::ImageLayout),
    (src_access, dst_access): (vk::AccessFlags, vk::AccessFlags),
    (src_stage, dst_stage): (vk::PipelineStageFlags, vk::PipelineStageFlags),
) {
    let barrier = [vk::ImageMemoryBarrier::default()
        .src_access_mask(src_access)
        .dst_access_mask(dst_access)
        .old_layout(old)
        .new_layout(new)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(color_range())];
    dev.device.cmd_pipeline_barrier(cmd, src_stage, dst_stage, vk::DependencyFlags::empty(), &[], &[], &barrier);
}
