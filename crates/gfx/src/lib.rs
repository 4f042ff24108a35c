//! Small Vulkan building blocks that the HUD renderer shares with the test
//! app (`steadyhud-testapp`) and the tests: the one graphics pipeline shape
//! both draw with, whole-image copies, layout transitions, binding a pipeline
//! with its set, and pixel rectangles from float corners.

use ash::vk;

/// What differs between the 2D graphics pipelines drawn by steadyhud and
/// its test app. The rest is fixed: a vertex and a fragment stage (entry
/// `main`, the fragment stage specialised through constant 0), dynamic
/// viewport and scissor, filled triangles without culling, one sample, no
/// depth test, subpass 0 of `render_pass`.
pub struct Pipeline2d<'a> {
    pub vert: vk::ShaderModule,
    pub frag: vk::ShaderModule,
    /// Value of the fragment shader's specialization constant 0.
    pub frag_constant: [u8; 4],
    pub vertex_input: &'a vk::PipelineVertexInputStateCreateInfo<'a>,
    pub topology: vk::PrimitiveTopology,
    /// How the single colour attachment is written.
    pub blend: vk::PipelineColorBlendAttachmentState,
    pub layout: vk::PipelineLayout,
    pub render_pass: vk::RenderPass,
}

/// Creates the graphics pipeline `p` describes.
///
/// # Safety
/// `device` is live and every handle in `p` is a live object of it; the
/// shaders' interfaces match `p.vertex_input`, `p.layout` and a 4-byte
/// specialization constant 0; subpass 0 of `p.render_pass` has one colour
/// attachment.
pub unsafe fn create_pipeline_2d(
    device: &ash::Device,
    p: &Pipeline2d<'_>,
) -> Result<vk::Pipeline, vk::Result> {
    let spec_entries = [vk::SpecializationMapEntry {
        constant_id: 0,
        offset: 0,
        size: 4,
    }];
    let spec = vk::SpecializationInfo::default()
        .map_entries(&spec_entries)
        .data(&p.frag_constant);
    let stages = [
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::VERTEX)
            .module(p.vert)
            .name(c"main"),
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::FRAGMENT)
            .module(p.frag)
            .name(c"main")
            .specialization_info(&spec),
    ];
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(p.topology);
    let viewport = vk::PipelineViewportStateCreateInfo::default()
        .viewport_count(1)
        .scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
        .line_width(1.0);
    let multisample = vk::PipelineMultisampleStateCreateInfo::default()
        .rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let blend = [p.blend];
    let blend_state = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend);
    let dynamic = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic_state = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic);
    let depth = vk::PipelineDepthStencilStateCreateInfo::default();
    let info = [vk::GraphicsPipelineCreateInfo::default()
        .stages(&stages)
        .vertex_input_state(p.vertex_input)
        .input_assembly_state(&assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .depth_stencil_state(&depth)
        .color_blend_state(&blend_state)
        .dynamic_state(&dynamic_state)
        .layout(p.layout)
        .render_pass(p.render_pass)
        .subpass(0)];
    // SAFETY: every state referenced by `info` lives until the call
    // returns; the handles are the caller's live objects.
    let pipelines = unsafe {
        device
            .create_graphics_pipelines(vk::PipelineCache::null(), &info, None)
            .map_err(|(_, e)| e)?
    };
    Ok(pipelines[0])
}

/// A buffer ↔ image copy of a whole single-level, single-layer colour
/// image of `extent`, tightly packed at buffer offset 0.
pub fn whole_image_copy(extent: vk::Extent2D) -> vk::BufferImageCopy {
    vk::BufferImageCopy::default()
        .image_subresource(vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        })
        .image_extent(vk::Extent3D {
            width: extent.width,
            height: extent.height,
            depth: 1,
        })
}

/// Binds `pipeline` at `point` and `set` as its set 0 (layout `layout`).
///
/// # Safety
/// `cmd` is recording; the handles are live objects of `device`, and `set`
/// matches set 0 of `layout`, the layout of `pipeline`.
pub unsafe fn bind_pipeline_and_set(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    point: vk::PipelineBindPoint,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set: vk::DescriptorSet,
) {
    // SAFETY: the caller's recording command buffer and live handles.
    unsafe {
        device.cmd_bind_pipeline(cmd, point, pipeline);
        device.cmd_bind_descriptor_sets(cmd, point, layout, 0, &[set], &[]);
    }
}

/// The pixel rectangle from corner (x0, y0) to (x1, y1), whole pixels
/// already (the callers round and clip first), x1 ≥ x0 and y1 ≥ y0.
pub fn rect_between(x0: f32, y0: f32, x1: f32, y1: f32) -> vk::Rect2D {
    vk::Rect2D {
        offset: vk::Offset2D {
            x: x0 as i32,
            y: y0 as i32,
        },
        extent: vk::Extent2D {
            width: (x1 - x0) as u32,
            height: (y1 - y0) as u32,
        },
    }
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

/// Records one layout transition of the colour image `image` (same queue
/// family): (old, new) layouts, (src, dst) access and (src, dst) stages.
///
/// # Safety
/// `cmd` is a command buffer of `device` in the recording state, outside a
/// render pass; `image` is a live colour image of `device` in layout `old`
/// (any layout when `old` is `UNDEFINED`).
pub unsafe fn transition(
    device: &ash::Device,
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
    device.cmd_pipeline_barrier(
        cmd,
        src_stage,
        dst_stage,
        vk::DependencyFlags::empty(),
        &[],
        &[],
        &barrier,
    );
}
