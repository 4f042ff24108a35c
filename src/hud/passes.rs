//! The HUD's render passes: the overlay pass (LOAD, on the swapchain image,
//! from and back to the presentable layout) and the panel pass (CLEAR, on
//! the cached panel, ending ready to be copied). Both have one subpass and
//! the same dependencies, so they are compatible and one imgui pipeline per
//! format serves both.

use super::device::{vk_err, HudDevice, HudError};
use ash::vk;

/// First scope of the HUD's first dependency on a swapchain image: every
/// earlier command on the queue and every write, whatever stage made it.
pub const AFTER_APP: (vk::PipelineStageFlags, vk::AccessFlags) = (
    vk::PipelineStageFlags::ALL_COMMANDS,
    vk::AccessFlags::MEMORY_WRITE,
);

/// Subpass dependencies of every HUD render pass (identical: dependencies
/// are part of render pass compatibility).
///
/// Before: everything earlier on the queue, whatever stage wrote the image
/// (ALL_COMMANDS / MEMORY_WRITE). That covers the app's own writes even
/// when it presents with no wait semaphore after writing the image with a
/// compute shader or a copy on the same queue, and chains with the wait on
/// the app's semaphores (at COLOR_ATTACHMENT_OUTPUT or TRANSFER) otherwise;
/// for the panel it orders the pass after earlier copies out of it. After:
/// the HUD's writes are done before copies read the panel; the semaphore
/// the present waits on covers the rest.
fn dependencies() -> [vk::SubpassDependency; 2] {
    [
        vk::SubpassDependency {
            src_subpass: vk::SUBPASS_EXTERNAL,
            dst_subpass: 0,
            src_stage_mask: AFTER_APP.0,
            dst_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
            src_access_mask: AFTER_APP.1,
            dst_access_mask: vk::AccessFlags::COLOR_ATTACHMENT_READ
                | vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
            dependency_flags: vk::DependencyFlags::empty(),
        },
        vk::SubpassDependency {
            src_subpass: 0,
            dst_subpass: vk::SUBPASS_EXTERNAL,
            src_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
            dst_stage_mask: vk::PipelineStageFlags::TRANSFER
                | vk::PipelineStageFlags::BOTTOM_OF_PIPE,
            src_access_mask: vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
            dst_access_mask: vk::AccessFlags::TRANSFER_READ,
            dependency_flags: vk::DependencyFlags::empty(),
        },
    ]
}

/// The overlay pass for swapchain images of `format` presented in
/// `layout` (PRESENT_SRC_KHR, or SHARED_PRESENT_KHR, which a shared
/// presentable image keeps even while it is drawn to).
///
/// # Safety
/// `dev` is live.
pub unsafe fn overlay(
    dev: &HudDevice,
    format: vk::Format,
    layout: vk::ImageLayout,
) -> Result<vk::RenderPass, HudError> {
    let drawing = if layout == vk::ImageLayout::SHARED_PRESENT_KHR {
        layout
    } else {
        vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL
    };
    color_pass(
        dev,
        format,
        vk::AttachmentLoadOp::LOAD,
        (layout, drawing, layout),
    )
}

/// The panel pass: clears the panel and leaves it in TRANSFER_SRC_OPTIMAL.
///
/// # Safety
/// `dev` is live.
pub unsafe fn panel(dev: &HudDevice, format: vk::Format) -> Result<vk::RenderPass, HudError> {
    color_pass(
        dev,
        format,
        vk::AttachmentLoadOp::CLEAR,
        (
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        ),
    )
}

/// One subpass drawing into one colour attachment of `format`; `layouts` =
/// (initial, during the subpass, final).
///
/// # Safety
/// `dev` is live.
unsafe fn color_pass(
    dev: &HudDevice,
    format: vk::Format,
    load: vk::AttachmentLoadOp,
    (initial, drawing, last): (vk::ImageLayout, vk::ImageLayout, vk::ImageLayout),
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
    let color_ref = [vk::AttachmentReference {
        attachment: 0,
        layout: drawing,
    }];
    let subpass = [vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&color_ref)];
    let deps = dependencies();
    let info = vk::RenderPassCreateInfo::default()
        .attachments(&attachment)
        .subpasses(&subpass)
        .dependencies(&deps);
    dev.device
        .create_render_pass(&info, None)
        .map_err(vk_err("vkCreateRenderPass"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The installed validation layer does not check hazards between
    /// submissions, so the masks that order the HUD after an app that
    /// presents without a semaphore are pinned here.
    #[test]
    fn the_first_dependency_covers_any_earlier_write() {
        assert_eq!(
            AFTER_APP,
            (
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::AccessFlags::MEMORY_WRITE
            )
        );
        let [before, after] = dependencies();
        assert_eq!(
            (before.src_subpass, before.dst_subpass),
            (vk::SUBPASS_EXTERNAL, 0)
        );
        assert_eq!((before.src_stage_mask, before.src_access_mask), AFTER_APP);
        assert!(before
            .dst_access_mask
            .contains(vk::AccessFlags::COLOR_ATTACHMENT_WRITE));
        assert_eq!(after.dst_access_mask, vk::AccessFlags::TRANSFER_READ);
    }
}
