//! The cached HUD panel: imgui renders the HUD into a small image of our own
//! only when the live stats change (the analysis thread publishes ~10×/s),
//! and every present just copies that opaque panel into the swapchain image.
//!
//! Used when the swapchain images allow transfers (`TRANSFER_DST`). A copy
//! costs a memcpy of the panel, whereas drawing imgui into every frame costs
//! the full blend-and-sample fill of the HUD per present, which on a
//! software rasteriser (lavapipe) is as expensive as a simple game frame.
//!
//! The panel image only grows. Growing never waits: the old image is
//! retired and freed once every submission that may still read it has
//! been seen complete.

use super::memory::OwnImage;
use super::passes::AFTER_APP;
use super::{vk_err, HudDevice, HudError};
use ash::vk;
use steadyhud_gfx::transition;

/// Panel sizes are rounded up to this, so small layout changes (a wider
/// number) do not recreate the image.
const GROW_STEP: u32 = 32;

/// A panel image with its framebuffer.
struct PanelImage {
    image: OwnImage,
    framebuffer: vk::Framebuffer,
}

impl PanelImage {
    /// # Safety
    /// `dev` is live, and no pending submission uses the image or the
    /// framebuffer.
    unsafe fn destroy(&mut self, dev: &HudDevice) {
        if self.framebuffer != vk::Framebuffer::null() {
            dev.device.destroy_framebuffer(self.framebuffer, None);
            self.framebuffer = vk::Framebuffer::null();
        }
        self.image.destroy(dev);
    }
}

/// A replaced panel image and the command slots whose submissions may
/// still read it.
struct Retired {
    image: PanelImage,
    pending: Vec<bool>,
}

/// The panel image of one swapchain.
pub struct Panel {
    format: vk::Format,
    clear: vk::ClearColorValue,
    current: Option<PanelImage>,
    retired: Vec<Retired>,
    /// Allocated size (grow-only).
    capacity: vk::Extent2D,
    /// Size of the last rendered HUD inside the panel (0 before the first).
    pub content: vk::Extent2D,
}

impl Panel {
    /// An empty panel; the image comes with the first [`Panel::reserve`].
    /// `clear` is the panel background as the target encodes it.
    pub fn new(format: vk::Format, clear: [f32; 4]) -> Panel {
        Panel {
            format,
            clear: vk::ClearColorValue { float32: clear },
            current: None,
            retired: Vec::new(),
            capacity: vk::Extent2D {
                width: 0,
                height: 0,
            },
            content: vk::Extent2D {
                width: 0,
                height: 0,
            },
        }
    }

    /// Whether the panel image must grow to hold `size`.
    pub fn needs_growth(&self, size: vk::Extent2D) -> bool {
        size.width > self.capacity.width || size.height > self.capacity.height
    }

    /// Makes the image at least `size`. A smaller current image is retired
    /// until the slots flagged in `in_flight` (their submissions may copy
    /// from it) are seen complete by [`Panel::slots_done`].
    ///
    /// # Safety
    /// `pass` is the entry's panel pass; `dev` is live.
    pub unsafe fn reserve(
        &mut self,
        dev: &HudDevice,
        size: vk::Extent2D,
        pass: vk::RenderPass,
        in_flight: impl Iterator<Item = bool>,
    ) -> Result<(), HudError> {
        if !self.needs_growth(size) {
            return Ok(());
        }
        if let Some(image) = self.current.take() {
            self.retired.push(Retired {
                image,
                pending: in_flight.collect(),
            });
        }
        self.capacity = vk::Extent2D {
            width: 0,
            height: 0,
        };
        self.content = vk::Extent2D {
            width: 0,
            height: 0,
        };
        let round = |v: u32| v.div_ceil(GROW_STEP).max(1) * GROW_STEP;
        let extent = vk::Extent2D {
            width: round(size.width),
            height: round(size.height),
        };
        let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        let mut image = PanelImage {
            image: OwnImage::new(dev, self.format, extent, usage)?,
            framebuffer: vk::Framebuffer::null(),
        };
        let views = [image.image.view];
        let fb_info = vk::FramebufferCreateInfo::default()
            .render_pass(pass)
            .attachments(&views)
            .width(extent.width)
            .height(extent.height)
            .layers(1);
        match dev.device.create_framebuffer(&fb_info, None) {
            Ok(fb) => image.framebuffer = fb,
            Err(e) => {
                image.destroy(dev);
                return Err(vk_err("vkCreateFramebuffer")(e));
            }
        }
        self.current = Some(image);
        self.capacity = extent;
        Ok(())
    }

    /// Frees retired images no submission can read any more; `in_flight`
    /// says whether a slot still has a submission in flight.
    ///
    /// # Safety
    /// `in_flight` is accurate for the slots the retirements recorded.
    pub unsafe fn slots_done(&mut self, dev: &HudDevice, in_flight: impl Fn(usize) -> bool) {
        if self.retired.is_empty() {
            return;
        }
        for r in &mut self.retired {
            for (slot, p) in r.pending.iter_mut().enumerate() {
                *p &= in_flight(slot);
            }
        }
        let mut i = 0;
        while i < self.retired.len() {
            if self.retired[i].pending.iter().any(|&p| p) {
                i += 1;
            } else {
                let mut r = self.retired.swap_remove(i);
                r.image.destroy(dev);
            }
        }
    }

    /// The panel's full rectangle (its render area).
    pub fn area(&self) -> vk::Rect2D {
        vk::Rect2D {
            offset: vk::Offset2D { x: 0, y: 0 },
            extent: self.capacity,
        }
    }

    /// Begins the panel's render pass (clears it to the background).
    ///
    /// # Safety
    /// [`Panel::reserve`] succeeded; `cmd` is recording outside a render pass.
    pub unsafe fn begin_pass(&self, dev: &HudDevice, cmd: vk::CommandBuffer, pass: vk::RenderPass) {
        let Some(current) = self.current.as_ref() else {
            return;
        };
        let clear = [vk::ClearValue { color: self.clear }];
        let info = vk::RenderPassBeginInfo::default()
            .render_pass(pass)
            .framebuffer(current.framebuffer)
            .render_area(self.area())
            .clear_values(&clear);
        dev.device
            .cmd_begin_render_pass(cmd, &info, vk::SubpassContents::INLINE);
    }

    /// The rectangle of a `dst_extent` image that a copy of the content at
    /// `offset` covers; `None` before the first render or when nothing of
    /// it is inside.
    pub fn copy_rect(&self, offset: vk::Offset2D, dst_extent: vk::Extent2D) -> Option<vk::Rect2D> {
        clip_copy(offset, self.content, dst_extent).filter(|_| self.ready())
    }

    /// Copies the panel's content into `rect` of `dst` (presentable in
    /// `layout`), which ends in `layout` again.
    ///
    /// # Safety
    /// `rect` comes from [`Panel::copy_rect`]; `cmd` is recording outside a
    /// render pass, after the panel was rendered on this queue.
    pub unsafe fn copy_to(
        &self,
        dev: &HudDevice,
        cmd: vk::CommandBuffer,
        dst: vk::Image,
        layout: vk::ImageLayout,
        rect: vk::Rect2D,
    ) {
        let Some(current) = self.current.as_ref() else {
            return;
        };
        let d = dev.device;
        // A shared presentable image stays in its layout.
        let copy_layout = if layout == vk::ImageLayout::SHARED_PRESENT_KHR {
            layout
        } else {
            vk::ImageLayout::TRANSFER_DST_OPTIMAL
        };
        // The app's last writes, whatever wrote them, even without a
        // semaphore (same queue); chains with the semaphore wait otherwise.
        transition(
            dev.device,
            cmd,
            dst,
            (layout, copy_layout),
            (AFTER_APP.1, vk::AccessFlags::TRANSFER_WRITE),
            (AFTER_APP.0, vk::PipelineStageFlags::TRANSFER),
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
            dst_offset: vk::Offset3D {
                x: rect.offset.x,
                y: rect.offset.y,
                z: 0,
            },
            extent: vk::Extent3D {
                width: rect.extent.width,
                height: rect.extent.height,
                depth: 1,
            },
        }];
        d.cmd_copy_image(
            cmd,
            current.image.image,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            dst,
            copy_layout,
            &region,
        );
        transition(
            dev.device,
            cmd,
            dst,
            (copy_layout, layout),
            (vk::AccessFlags::TRANSFER_WRITE, vk::AccessFlags::empty()),
            (
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
            ),
        );
    }

    /// Whether the panel holds a rendered HUD.
    pub fn ready(&self) -> bool {
        self.current.is_some() && self.content.width > 0 && self.content.height > 0
    }

    /// Frees everything.
    ///
    /// # Safety
    /// No submission using the panel may be pending.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        for mut r in self.retired.drain(..) {
            r.image.destroy(dev);
        }
        if let Some(mut image) = self.current.take() {
            image.destroy(dev);
        }
    }
}

/// `content` placed at `offset` in an image of `dst_extent`, clipped to it.
fn clip_copy(
    offset: vk::Offset2D,
    content: vk::Extent2D,
    dst_extent: vk::Extent2D,
) -> Option<vk::Rect2D> {
    let x = offset.x.clamp(0, dst_extent.width as i32);
    let y = offset.y.clamp(0, dst_extent.height as i32);
    let w = content.width.min(dst_extent.width - x as u32);
    let h = content.height.min(dst_extent.height - y as u32);
    (w > 0 && h > 0).then_some(vk::Rect2D {
        offset: vk::Offset2D { x, y },
        extent: vk::Extent2D {
            width: w,
            height: h,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x: i32, y: i32, width: u32, height: u32) -> vk::Rect2D {
        vk::Rect2D {
            offset: vk::Offset2D { x, y },
            extent: vk::Extent2D { width, height },
        }
    }

    #[test]
    fn copies_are_clipped_to_the_image() {
        let dst = vk::Extent2D {
            width: 100,
            height: 80,
        };
        let content = vk::Extent2D {
            width: 50,
            height: 40,
        };
        let at = |x, y| vk::Offset2D { x, y };
        assert_eq!(
            clip_copy(at(10, 10), content, dst),
            Some(rect(10, 10, 50, 40))
        );
        assert_eq!(
            clip_copy(at(70, 60), content, dst),
            Some(rect(70, 60, 30, 20))
        );
        assert_eq!(
            clip_copy(at(-5, -5), content, dst),
            Some(rect(0, 0, 50, 40))
        );
        assert_eq!(clip_copy(at(100, 0), content, dst), None);
        assert_eq!(
            clip_copy(
                at(0, 0),
                vk::Extent2D {
                    width: 0,
                    height: 0
                },
                dst
            ),
            None
        );
        let p = Panel::new(vk::Format::B8G8R8A8_UNORM, [0.0; 4]);
        assert_eq!(p.copy_rect(at(10, 10), dst), None, "nothing rendered yet");
    }
}
