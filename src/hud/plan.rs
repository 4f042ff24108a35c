//! The per-swapchain decision, made from the create info alone (pure, no
//! Vulkan calls): whether the HUD can draw into this swapchain and how —
//! colour encoding, the layout its images are presented in, cached panel or
//! direct drawing, and when image views may be created.

use super::encoding::Encoding;
use ash::vk;

/// How the HUD draws into one swapchain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// What the shader writes for the HUD's sRGB colours.
    pub encoding: Encoding,
    /// The layout the app presents its images in, which the HUD's render
    /// passes and barriers start and end in: `PRESENT_SRC_KHR`, or
    /// `SHARED_PRESENT_KHR` for the shared present modes.
    pub layout: vk::ImageLayout,
    /// The images accept `TRANSFER_DST`: copy a cached panel (rendered into
    /// an image of the HUD's own) instead of drawing imgui into every frame;
    /// the swapchain images then need no view and no other usage.
    pub panel: bool,
    /// `DEFERRED_MEMORY_ALLOCATION_EXT`: an image has no memory until first
    /// acquired, so its view and framebuffer are created at its first draw,
    /// never at swapchain creation.
    pub deferred_views: bool,
}

/// Decides how (and whether) the HUD draws into the swapchain `info`
/// creates; `Err` says why the HUD stays off for it.
pub fn plan(info: &vk::SwapchainCreateInfoKHR) -> Result<Plan, &'static str> {
    if info.flags.contains(vk::SwapchainCreateFlagsKHR::PROTECTED) {
        return Err("protected swapchain: HUD off");
    }
    let usage = info.image_usage;
    let panel = usage.contains(vk::ImageUsageFlags::TRANSFER_DST);
    if !panel && !usage.contains(vk::ImageUsageFlags::COLOR_ATTACHMENT) {
        return Err(
            "swapchain images are neither colour attachments nor transfer destinations: HUD off",
        );
    }
    let encoding = Encoding::for_swapchain(info.image_format, info.image_color_space)?;
    let layout = match info.present_mode {
        vk::PresentModeKHR::SHARED_DEMAND_REFRESH
        | vk::PresentModeKHR::SHARED_CONTINUOUS_REFRESH => vk::ImageLayout::SHARED_PRESENT_KHR,
        _ => vk::ImageLayout::PRESENT_SRC_KHR,
    };
    let deferred_views = info
        .flags
        .contains(vk::SwapchainCreateFlagsKHR::DEFERRED_MEMORY_ALLOCATION_EXT);
    Ok(Plan {
        encoding,
        layout,
        panel,
        deferred_views,
    })
}

impl Plan {
    /// The plan for a HUD whose background is seen through (`hud_alpha`
    /// below 1): drawn straight into images that are colour attachments,
    /// since a copied panel replaces the pixels under it. Images that only
    /// take copies keep the (opaque) panel.
    pub fn see_through(mut self, info: &vk::SwapchainCreateInfoKHR) -> Plan {
        if info
            .image_usage
            .contains(vk::ImageUsageFlags::COLOR_ATTACHMENT)
        {
            self.panel = false;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> vk::SwapchainCreateInfoKHR<'static> {
        vk::SwapchainCreateInfoKHR::default()
            .image_format(vk::Format::B8G8R8A8_UNORM)
            .image_color_space(vk::ColorSpaceKHR::SRGB_NONLINEAR)
            .image_usage(vk::ImageUsageFlags::COLOR_ATTACHMENT)
            .present_mode(vk::PresentModeKHR::FIFO)
    }

    #[test]
    fn ordinary_swapchain_draws_directly() {
        let p = plan(&info()).unwrap();
        assert_eq!(
            p,
            Plan {
                encoding: Encoding::Unorm,
                layout: vk::ImageLayout::PRESENT_SRC_KHR,
                panel: false,
                deferred_views: false
            }
        );
    }

    #[test]
    fn transfer_dst_selects_the_panel() {
        let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_DST;
        assert!(plan(&info().image_usage(usage)).unwrap().panel);
        // Copies alone suffice: the panel is rendered in an image of our own.
        assert!(
            plan(&info().image_usage(vk::ImageUsageFlags::TRANSFER_DST))
                .unwrap()
                .panel
        );
    }

    #[test]
    fn a_see_through_hud_draws_directly_where_it_can() {
        let both = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_DST;
        let i = info().image_usage(both);
        assert!(!plan(&i).unwrap().see_through(&i).panel);
        let copies = info().image_usage(vk::ImageUsageFlags::TRANSFER_DST);
        assert!(plan(&copies).unwrap().see_through(&copies).panel);
    }

    #[test]
    fn no_usable_usage_is_an_error() {
        for usage in [
            vk::ImageUsageFlags::STORAGE,
            vk::ImageUsageFlags::TRANSFER_SRC,
            vk::ImageUsageFlags::empty(),
        ] {
            let e = plan(&info().image_usage(usage)).unwrap_err();
            assert!(e.contains("colour attachments"), "{e}");
        }
    }

    #[test]
    fn protected_swapchain_is_an_error() {
        let i = info().flags(vk::SwapchainCreateFlagsKHR::PROTECTED);
        assert_eq!(plan(&i), Err("protected swapchain: HUD off"));
    }

    #[test]
    fn shared_present_modes_use_the_shared_layout() {
        for (mode, layout) in [
            (
                vk::PresentModeKHR::IMMEDIATE,
                vk::ImageLayout::PRESENT_SRC_KHR,
            ),
            (
                vk::PresentModeKHR::MAILBOX,
                vk::ImageLayout::PRESENT_SRC_KHR,
            ),
            (
                vk::PresentModeKHR::FIFO_RELAXED,
                vk::ImageLayout::PRESENT_SRC_KHR,
            ),
            (
                vk::PresentModeKHR::SHARED_DEMAND_REFRESH,
                vk::ImageLayout::SHARED_PRESENT_KHR,
            ),
            (
                vk::PresentModeKHR::SHARED_CONTINUOUS_REFRESH,
                vk::ImageLayout::SHARED_PRESENT_KHR,
            ),
        ] {
            assert_eq!(
                plan(&info().present_mode(mode)).unwrap().layout,
                layout,
                "{mode:?}"
            );
        }
    }

    #[test]
    fn deferred_allocation_defers_views() {
        let i = info().flags(vk::SwapchainCreateFlagsKHR::DEFERRED_MEMORY_ALLOCATION_EXT);
        assert!(plan(&i).unwrap().deferred_views);
        let i = info().flags(vk::SwapchainCreateFlagsKHR::MUTABLE_FORMAT);
        assert!(!plan(&i).unwrap().deferred_views);
    }

    #[test]
    fn colour_spaces_pick_the_encoding() {
        let hdr = |f, s| plan(&info().image_format(f).image_color_space(s));
        use vk::ColorSpaceKHR as S;
        use vk::Format as F;
        assert_eq!(
            hdr(F::B8G8R8A8_SRGB, S::SRGB_NONLINEAR).unwrap().encoding,
            Encoding::Srgb
        );
        assert_eq!(
            hdr(F::A2B10G10R10_UNORM_PACK32, S::HDR10_ST2084_EXT)
                .unwrap()
                .encoding,
            Encoding::Pq
        );
        assert_eq!(
            hdr(F::R16G16B16A16_SFLOAT, S::EXTENDED_SRGB_LINEAR_EXT)
                .unwrap()
                .encoding,
            Encoding::ScRgb
        );
        assert_eq!(
            hdr(F::R16G16B16A16_SFLOAT, S::SRGB_NONLINEAR)
                .unwrap()
                .encoding,
            Encoding::Unorm
        );
        assert!(hdr(F::B8G8R8A8_SRGB, S::HDR10_ST2084_EXT)
            .unwrap_err()
            .contains("HUD off"));
        assert!(hdr(F::A2B10G10R10_UNORM_PACK32, S::BT2020_LINEAR_EXT)
            .unwrap_err()
            .contains("BT2020_LINEAR"));
    }
}
