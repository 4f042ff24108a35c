//! Device memory for the HUD's own buffers and images: memory type choice,
//! persistently mapped host-visible buffers, device-local images, and the
//! sharing mode that lets them be used on any graphics queue family (the HUD
//! draws on whichever queue the app presents on).

use super::device::{vk_err, HudDevice, HudError};
use ash::vk;

/// The queue families the HUD may draw on: those with the graphics bit.
pub(crate) struct Families(Vec<u32>);

impl Families {
    /// # Safety
    /// `dev` is live.
    pub unsafe fn graphics(dev: &HudDevice) -> Families {
        let props = dev
            .instance
            .get_physical_device_queue_family_properties(dev.physical_device);
        Families(
            (0..props.len() as u32)
                .filter(|&i| {
                    props[i as usize]
                        .queue_flags
                        .contains(vk::QueueFlags::GRAPHICS)
                })
                .collect(),
        )
    }

    /// EXCLUSIVE with a single graphics family; CONCURRENT across all of them
    /// otherwise, so no ownership transfer is needed when presents move to
    /// a queue of another family.
    pub fn sharing(&self) -> (vk::SharingMode, &[u32]) {
        if self.0.len() > 1 {
            (vk::SharingMode::CONCURRENT, &self.0)
        } else {
            (vk::SharingMode::EXCLUSIVE, &[])
        }
    }
}

/// The first memory type among `bits` (a resource's `memoryTypeBits`) that
/// has every flag of `want`.
pub(crate) fn pick_memory_type(
    props: &vk::PhysicalDeviceMemoryProperties,
    bits: u32,
    want: vk::MemoryPropertyFlags,
) -> Option<u32> {
    (0..props.memory_type_count).find(|&i| {
        bits & (1 << i) != 0 && props.memory_types[i as usize].property_flags.contains(want)
    })
}

/// A memory type allowed by `req` with `want`, else any allowed type when
/// `want` is only a preference (`required` false).
///
/// # Safety
/// `dev` is live.
unsafe fn memory_type(
    dev: &HudDevice,
    req: &vk::MemoryRequirements,
    want: vk::MemoryPropertyFlags,
    required: bool,
) -> Option<u32> {
    let props = dev
        .instance
        .get_physical_device_memory_properties(dev.physical_device);
    let pick = |want| pick_memory_type(&props, req.memory_type_bits, want);
    pick(want).or_else(|| {
        if required {
            None
        } else {
            pick(vk::MemoryPropertyFlags::empty())
        }
    })
}

/// # Safety
/// `dev` is live and `req` the requirements of one of its resources.
unsafe fn allocate(
    dev: &HudDevice,
    req: &vk::MemoryRequirements,
    want: vk::MemoryPropertyFlags,
    required: bool,
) -> Result<vk::DeviceMemory, HudError> {
    let index = memory_type(dev, req, want, required)
        .ok_or(HudError::Unsupported("no memory type for the HUD"))?;
    let info = vk::MemoryAllocateInfo::default()
        .allocation_size(req.size)
        .memory_type_index(index);
    dev.device
        .allocate_memory(&info, None)
        .map_err(vk_err("vkAllocateMemory"))
}

/// A buffer in host-visible, coherent memory, mapped for its whole life.
pub(crate) struct HostBuffer {
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// Usable bytes at `ptr`.
    pub size: u64,
    ptr: *mut u8,
}

// SAFETY: the mapping is plain memory owned by this buffer; every access
// goes through `&mut self` or the owner's exclusive borrow.
unsafe impl Send for HostBuffer {}

impl HostBuffer {
    /// A mapped buffer of `size` bytes for `usage`.
    ///
    /// # Safety
    /// `dev` is live.
    pub unsafe fn new(
        dev: &HudDevice,
        size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Result<HostBuffer, HudError> {
        let d = dev.device;
        let families = Families::graphics(dev);
        let (mode, queues) = families.sharing();
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
            .sharing_mode(mode)
            .queue_family_indices(queues);
        let buffer = d
            .create_buffer(&info, None)
            .map_err(vk_err("vkCreateBuffer"))?;
        let req = d.get_buffer_memory_requirements(buffer);
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let memory = match allocate(dev, &req, host, true) {
            Ok(m) => m,
            Err(e) => {
                d.destroy_buffer(buffer, None);
                return Err(e);
            }
        };
        let mapped = d
            .bind_buffer_memory(buffer, memory, 0)
            .map_err(vk_err("vkBindBufferMemory"))
            .and_then(|()| {
                d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                    .map_err(vk_err("vkMapMemory"))
            });
        match mapped {
            Ok(ptr) => Ok(HostBuffer {
                buffer,
                memory,
                size,
                ptr: ptr.cast(),
            }),
            Err(e) => {
                d.destroy_buffer(buffer, None);
                d.free_memory(memory, None);
                Err(e)
            }
        }
    }

    /// The mapped bytes.
    pub fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` maps `size` bytes of this buffer's memory for as long
        // as `self` lives; `&mut self` makes this the only view of them.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.size as usize) }
    }

    /// Frees the buffer and its memory (unmapped with it).
    ///
    /// # Safety
    /// No pending submission uses the buffer.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        if self.buffer != vk::Buffer::null() {
            dev.device.destroy_buffer(self.buffer, None);
            dev.device.free_memory(self.memory, None);
            self.buffer = vk::Buffer::null();
            self.memory = vk::DeviceMemory::null();
            self.ptr = std::ptr::null_mut();
            self.size = 0;
        }
    }
}

/// A 2D colour image of the HUD's own with its memory and view.
pub(crate) struct OwnImage {
    pub image: vk::Image,
    memory: vk::DeviceMemory,
    pub view: vk::ImageView,
}

impl OwnImage {
    /// A single-level optimal-tiling image in device-local memory (any
    /// memory when there is none), usable on every graphics family.
    ///
    /// # Safety
    /// `dev` is live.
    pub unsafe fn new(
        dev: &HudDevice,
        format: vk::Format,
        extent: vk::Extent2D,
        usage: vk::ImageUsageFlags,
    ) -> Result<OwnImage, HudError> {
        let d = dev.device;
        let families = Families::graphics(dev);
        let (mode, queues) = families.sharing();
        let info = vk::ImageCreateInfo::default()
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
            .sharing_mode(mode)
            .queue_family_indices(queues)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let mut img = OwnImage {
            image: d
                .create_image(&info, None)
                .map_err(vk_err("vkCreateImage"))?,
            memory: vk::DeviceMemory::null(),
            view: vk::ImageView::null(),
        };
        if let Err(e) = img.bind_and_view(dev, format) {
            img.destroy(dev);
            return Err(e);
        }
        Ok(img)
    }

    /// # Safety
    /// `dev` is live and `self.image` its fresh image, with no memory bound
    /// yet.
    unsafe fn bind_and_view(
        &mut self,
        dev: &HudDevice,
        format: vk::Format,
    ) -> Result<(), HudError> {
        let d = dev.device;
        let req = d.get_image_memory_requirements(self.image);
        self.memory = allocate(dev, &req, vk::MemoryPropertyFlags::DEVICE_LOCAL, false)?;
        d.bind_image_memory(self.image, self.memory, 0)
            .map_err(vk_err("vkBindImageMemory"))?;
        self.view = color_view(dev, self.image, format)?;
        Ok(())
    }

    /// Frees the view, image and memory.
    ///
    /// # Safety
    /// No pending submission uses the image.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        let d = dev.device;
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
    }
}

/// A 2D view of the single level and layer of a colour image.
///
/// # Safety
/// `dev` is live and `image` its live colour image of `format`, with one
/// level and one layer.
pub(crate) unsafe fn color_view(
    dev: &HudDevice,
    image: vk::Image,
    format: vk::Format,
) -> Result<vk::ImageView, HudError> {
    let info = vk::ImageViewCreateInfo::default()
        .image(image)
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(format)
        .subresource_range(steadyhud_gfx::color_range());
    dev.device
        .create_image_view(&info, None)
        .map_err(vk_err("vkCreateImageView"))
}
