//! The headless Vulkan rig that `tests/hud_render.rs` and
//! `benches/present_cost.rs` share: real images standing in for a window's
//! swapchain (no window, no present engine), and the stand-in app's frame
//! that clears one and hands it to the present. The test renders the HUD
//! into them and reads them back; the bench's shim, the layer below the one
//! under test, hands them out as its swapchains.
//!
//! Included by both: `mod rig;` from `tests/`, and
//! `#[path = "../tests/rig/mod.rs"] mod rig;` from `benches/`.
// Each of the two uses part of it.
#![allow(dead_code)]

use ash::vk;
use steadyhud_gfx::transition;

/// Real images standing in for a window's swapchain, each bound to memory
/// of its own.
pub struct FakeSwapchain {
    pub format: vk::Format,
    pub extent: vk::Extent2D,
    /// Colour space the create info declares (sRGB unless set).
    pub color_space: vk::ColorSpaceKHR,
    pub images: Vec<vk::Image>,
    pub memory: Vec<vk::DeviceMemory>,
}

impl FakeSwapchain {
    /// `count` 2D images of `format` and `extent` with `usage` (optimal
    /// tiling, one level and layer, one sample, as a swapchain's), each in
    /// memory of the type `memory_type` picks for its requirements.
    ///
    /// # Safety
    /// `d` is a live device whose memory types `memory_type` answers with.
    pub unsafe fn create(
        d: &ash::Device,
        format: vk::Format,
        extent: vk::Extent2D,
        usage: vk::ImageUsageFlags,
        count: usize,
        memory_type: impl Fn(&vk::MemoryRequirements) -> u32,
    ) -> FakeSwapchain {
        let mut s = FakeSwapchain {
            format,
            extent,
            color_space: vk::ColorSpaceKHR::SRGB_NONLINEAR,
            images: Vec::new(),
            memory: Vec::new(),
        };
        for _ in 0..count {
            let ii = vk::ImageCreateInfo::default()
                .image_type(vk::ImageType::TYPE_2D)
                .format(format)
                .extent(vk::Extent3D {
                    width: extent.width,
                    height: extent.height,
                    depth: 1,
                })
                .mip_levels(1)
                .array_layers(1)
                .samples(vk::SampleCountFlags::TYPE_1)
                .tiling(vk::ImageTiling::OPTIMAL)
                .usage(usage)
                .initial_layout(vk::ImageLayout::UNDEFINED);
            let image = d.create_image(&ii, None).expect("vkCreateImage");
            let req = d.get_image_memory_requirements(image);
            let mem = allocate(d, &req, memory_type(&req));
            d.bind_image_memory(image, mem, 0)
                .expect("vkBindImageMemory");
            s.images.push(image);
            s.memory.push(mem);
        }
        s
    }

    /// Destroys the images and frees their memory, leaving none.
    ///
    /// # Safety
    /// `d` made them, and no work on them is pending.
    pub unsafe fn free(&mut self, d: &ash::Device) {
        for (i, m) in self.images.drain(..).zip(self.memory.drain(..)) {
            d.destroy_image(i, None);
            d.free_memory(m, None);
        }
    }
}

/// `req.size` bytes of memory type `index`.
///
/// # Safety
/// `d` is a live device with memory type `index`.
pub unsafe fn allocate(
    d: &ash::Device,
    req: &vk::MemoryRequirements,
    index: u32,
) -> vk::DeviceMemory {
    let ai = vk::MemoryAllocateInfo::default()
        .allocation_size(req.size)
        .memory_type_index(index);
    d.allocate_memory(&ai, None).expect("vkAllocateMemory")
}

/// What the app's frame must come after on its queue.
#[derive(Clone, Copy, Debug)]
pub enum Before {
    /// Nothing: the image's earlier work is done (the bench's game idles
    /// its queue every frame).
    Nothing,
    /// Every earlier command on the queue, its reads and writes (the
    /// test's frames may follow unfinished work, under synchronization
    /// validation).
    AnyCommand,
}

/// Records a layout transition of `image` ordered after every earlier
/// command and before every later one, for all memory reads and writes.
///
/// # Safety
/// `cb` is a command buffer of `d` in the recording state, outside a
/// render pass; `image` is a live colour image of `d` in layout `old`.
pub unsafe fn all_commands_transition(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    image: vk::Image,
    old: vk::ImageLayout,
    new: vk::ImageLayout,
) {
    transition(
        d,
        cb,
        image,
        (old, new),
        (
            vk::AccessFlags::MEMORY_WRITE,
            vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
        ),
        (
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::ALL_COMMANDS,
        ),
    );
}

/// Records the stand-in app's frame: clears `image` to `color` (after
/// `before`) and leaves it in `PRESENT_SRC_KHR` with the usual pre-present
/// barrier (nothing after it is ordered by it: the present's semaphore, or
/// the HUD, must be).
///
/// # Safety
/// `cb` is a command buffer of `d` in the recording state, outside a
/// render pass; `image` is a live colour image of `d`, a transfer target.
pub unsafe fn record_clear(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    image: vk::Image,
    color: &vk::ClearColorValue,
    before: Before,
) {
    let (from, to) = (
        vk::ImageLayout::UNDEFINED,
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
    );
    match before {
        Before::Nothing => transition(
            d,
            cb,
            image,
            (from, to),
            (vk::AccessFlags::empty(), vk::AccessFlags::TRANSFER_WRITE),
            (
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
            ),
        ),
        Before::AnyCommand => all_commands_transition(d, cb, image, from, to),
    }
    d.cmd_clear_color_image(
        cb,
        image,
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        color,
        &[steadyhud_gfx::color_range()],
    );
    transition(
        d,
        cb,
        image,
        (
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            vk::ImageLayout::PRESENT_SRC_KHR,
        ),
        (vk::AccessFlags::TRANSFER_WRITE, vk::AccessFlags::empty()),
        (
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::BOTTOM_OF_PIPE,
        ),
    );
}
