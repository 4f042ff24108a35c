//! Our imgui renderer, device side: the graphics pipeline that draws imgui's
//! triangles ([`Pipeline`], shaders `shaders/hud.{vert,frag}`) and the font
//! atlas texture ([`FontTexture`]). Neither touches a queue: the font's
//! upload is recorded into a command buffer the caller submits (the HUD's
//! first draw), and per-frame geometry lives in [`super::imgui_mesh`].

use super::encoding::Encoding;
use super::memory::{HostBuffer, OwnImage};
use super::{vk_err, HudDevice, HudError};
use ash::vk;
use steadyhud_gfx::transition;
use steadyhud_gfx::{create_pipeline_2d, whole_image_copy, Pipeline2d};

const VERT_SPV: &[u8] = include_bytes!("../../shaders/hud.vert.spv");
const FRAG_SPV: &[u8] = include_bytes!("../../shaders/hud.frag.spv");

/// Format of the font atlas (imgui's RGBA32 texture data).
const FONT_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// Push constants of `hud.vert`: display → clip space.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    pub scale: [f32; 2],
    pub translate: [f32; 2],
}

impl Transform {
    /// Maps imgui's display rectangle onto the viewport.
    pub fn for_display(pos: [f32; 2], size: [f32; 2]) -> Transform {
        let scale = [2.0 / size[0], 2.0 / size[1]];
        Transform {
            scale,
            translate: [-1.0 - pos[0] * scale[0], -1.0 - pos[1] * scale[1]],
        }
    }

    pub fn bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        for (i, v) in [
            self.scale[0],
            self.scale[1],
            self.translate[0],
            self.translate[1],
        ]
        .iter()
        .enumerate()
        {
            out[i * 4..i * 4 + 4].copy_from_slice(&v.to_ne_bytes());
        }
        out
    }
}

/// The imgui pipeline for one render pass (and every pass compatible with
/// it) and one [`Encoding`], with its layouts and the font sampler.
pub struct Pipeline {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set_layout: vk::DescriptorSetLayout,
    sampler: vk::Sampler,
}

impl Pipeline {
    /// Builds the pipeline for subpass 0 of `render_pass`.
    ///
    /// # Safety
    /// `dev` is live; `render_pass` outlives nothing here (only its
    /// compatibility class matters after creation).
    pub unsafe fn new(
        dev: &HudDevice,
        render_pass: vk::RenderPass,
        encoding: Encoding,
    ) -> Result<Pipeline, HudError> {
        let mut p = Pipeline {
            pipeline: vk::Pipeline::null(),
            layout: vk::PipelineLayout::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            sampler: vk::Sampler::null(),
        };
        match p.create(dev, render_pass, encoding) {
            Ok(()) => Ok(p),
            Err(e) => {
                p.destroy(dev);
                Err(e)
            }
        }
    }

    /// # Safety
    /// `dev` is live and `render_pass` one of its render passes; on an
    /// error `self` holds what was made, for [`Pipeline::destroy`].
    unsafe fn create(
        &mut self,
        dev: &HudDevice,
        render_pass: vk::RenderPass,
        encoding: Encoding,
    ) -> Result<(), HudError> {
        let d = dev.device;
        let sampler_info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::LINEAR)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .max_lod(0.0);
        self.sampler = d
            .create_sampler(&sampler_info, None)
            .map_err(vk_err("vkCreateSampler"))?;
        let samplers = [self.sampler];
        let bindings = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::FRAGMENT)
            .immutable_samplers(&samplers)];
        let set_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        self.set_layout = d
            .create_descriptor_set_layout(&set_info, None)
            .map_err(vk_err("vkCreateDescriptorSetLayout"))?;
        let set_layouts = [self.set_layout];
        let push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::VERTEX,
            offset: 0,
            size: std::mem::size_of::<Transform>() as u32,
        }];
        let layout_info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&set_layouts)
            .push_constant_ranges(&push);
        self.layout = d
            .create_pipeline_layout(&layout_info, None)
            .map_err(vk_err("vkCreatePipelineLayout"))?;

        let vert = shader_module(dev, VERT_SPV)?;
        let frag = match shader_module(dev, FRAG_SPV) {
            Ok(m) => m,
            Err(e) => {
                d.destroy_shader_module(vert, None);
                return Err(e);
            }
        };
        let result = self.create_pipeline(dev, render_pass, encoding, vert, frag);
        d.destroy_shader_module(vert, None);
        d.destroy_shader_module(frag, None);
        result
    }

    /// # Safety
    /// `dev` is live; `render_pass`, `vert` and `frag` are its objects (the
    /// HUD's shaders) and `self.layout` is made.
    unsafe fn create_pipeline(
        &mut self,
        dev: &HudDevice,
        render_pass: vk::RenderPass,
        encoding: Encoding,
        vert: vk::ShaderModule,
        frag: vk::ShaderModule,
    ) -> Result<(), HudError> {
        // imgui::DrawVert: pos [f32; 2], uv [f32; 2], col [u8; 4].
        let bindings = [vk::VertexInputBindingDescription {
            binding: 0,
            stride: std::mem::size_of::<imgui::DrawVert>() as u32,
            input_rate: vk::VertexInputRate::VERTEX,
        }];
        let attributes = [
            vk::VertexInputAttributeDescription {
                location: 0,
                binding: 0,
                format: vk::Format::R32G32_SFLOAT,
                offset: 0,
            },
            vk::VertexInputAttributeDescription {
                location: 1,
                binding: 0,
                format: vk::Format::R32G32_SFLOAT,
                offset: 8,
            },
            vk::VertexInputAttributeDescription {
                location: 2,
                binding: 0,
                format: vk::Format::R8G8B8A8_UNORM,
                offset: 16,
            },
        ];
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
            .vertex_binding_descriptions(&bindings)
            .vertex_attribute_descriptions(&attributes);
        // Straight alpha over the image; the destination's alpha only grows
        // (an opaque panel stays opaque).
        let blend = vk::PipelineColorBlendAttachmentState::default()
            .blend_enable(true)
            .src_color_blend_factor(vk::BlendFactor::SRC_ALPHA)
            .dst_color_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
            .color_blend_op(vk::BlendOp::ADD)
            .src_alpha_blend_factor(vk::BlendFactor::ONE)
            .dst_alpha_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
            .alpha_blend_op(vk::BlendOp::ADD)
            .color_write_mask(vk::ColorComponentFlags::RGBA);
        let p = Pipeline2d {
            vert,
            frag,
            frag_constant: encoding.shader_id().to_ne_bytes(),
            vertex_input: &vertex_input,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            blend,
            layout: self.layout,
            render_pass,
        };
        self.pipeline =
            create_pipeline_2d(dev.device, &p).map_err(vk_err("vkCreateGraphicsPipelines"))?;
        Ok(())
    }

    /// Frees the pipeline, its layouts and the sampler.
    ///
    /// # Safety
    /// No pending submission uses the pipeline.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        let d = dev.device;
        if self.pipeline != vk::Pipeline::null() {
            d.destroy_pipeline(self.pipeline, None);
            self.pipeline = vk::Pipeline::null();
        }
        if self.layout != vk::PipelineLayout::null() {
            d.destroy_pipeline_layout(self.layout, None);
            self.layout = vk::PipelineLayout::null();
        }
        if self.set_layout != vk::DescriptorSetLayout::null() {
            d.destroy_descriptor_set_layout(self.set_layout, None);
            self.set_layout = vk::DescriptorSetLayout::null();
        }
        if self.sampler != vk::Sampler::null() {
            d.destroy_sampler(self.sampler, None);
            self.sampler = vk::Sampler::null();
        }
    }
}

/// # Safety
/// `dev` is live.
unsafe fn shader_module(dev: &HudDevice, spv: &[u8]) -> Result<vk::ShaderModule, HudError> {
    let words = ash::util::read_spv(&mut std::io::Cursor::new(spv))
        .map_err(|_| HudError::Unsupported("HUD shader is not valid SPIR-V"))?;
    let info = vk::ShaderModuleCreateInfo::default().code(&words);
    dev.device
        .create_shader_module(&info, None)
        .map_err(vk_err("vkCreateShaderModule"))
}

/// The font atlas: image, the staging buffer holding its pixels until the
/// upload has executed, and the descriptor set that samples it.
pub struct FontTexture {
    image: OwnImage,
    extent: vk::Extent2D,
    staging: Option<HostBuffer>,
    pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
}

impl FontTexture {
    /// Creates the texture with `rgba` (`width` × `height` RGBA8 pixels)
    /// staged for [`FontTexture::record_upload`].
    ///
    /// # Safety
    /// `dev` is live; `pipeline` outlives the texture.
    pub unsafe fn new(
        dev: &HudDevice,
        pipeline: &Pipeline,
        width: u32,
        height: u32,
        rgba: &[u8],
    ) -> Result<FontTexture, HudError> {
        if width == 0 || height == 0 || rgba.len() != (width * height * 4) as usize {
            return Err(HudError::Unsupported("font atlas of unexpected size"));
        }
        let extent = vk::Extent2D { width, height };
        let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let mut font = FontTexture {
            image: OwnImage::new(dev, FONT_FORMAT, extent, usage)?,
            extent,
            staging: None,
            pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
        };
        if let Err(e) = font.create(dev, pipeline, rgba) {
            font.destroy(dev);
            return Err(e);
        }
        Ok(font)
    }

    /// # Safety
    /// `dev` is live and `pipeline` its HUD pipeline; on an error `self`
    /// holds what was made, for [`FontTexture::destroy`].
    unsafe fn create(
        &mut self,
        dev: &HudDevice,
        pipeline: &Pipeline,
        rgba: &[u8],
    ) -> Result<(), HudError> {
        let d = dev.device;
        let mut staging =
            HostBuffer::new(dev, rgba.len() as u64, vk::BufferUsageFlags::TRANSFER_SRC)?;
        staging.bytes()[..rgba.len()].copy_from_slice(rgba);
        self.staging = Some(staging);

        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            descriptor_count: 1,
        }];
        let pool_info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(1)
            .pool_sizes(&sizes);
        self.pool = d
            .create_descriptor_pool(&pool_info, None)
            .map_err(vk_err("vkCreateDescriptorPool"))?;
        let layouts = [pipeline.set_layout];
        let alloc = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.pool)
            .set_layouts(&layouts);
        self.set = d
            .allocate_descriptor_sets(&alloc)
            .map_err(vk_err("vkAllocateDescriptorSets"))?[0];
        let image_info = [vk::DescriptorImageInfo {
            sampler: vk::Sampler::null(), // immutable sampler of the set layout
            image_view: self.image.view,
            image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        }];
        let write = [vk::WriteDescriptorSet::default()
            .dst_set(self.set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
            .image_info(&image_info)];
        d.update_descriptor_sets(&write, &[]);
        Ok(())
    }

    /// Records staging → image with its layout transitions (the image ends
    /// in SHADER_READ_ONLY_OPTIMAL, visible to fragment shaders of every
    /// later command on the same queue).
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass; the staging buffer exists.
    pub unsafe fn record_upload(&self, dev: &HudDevice, cmd: vk::CommandBuffer) {
        let Some(staging) = self.staging.as_ref() else {
            return;
        };
        let d = dev.device;
        let image = self.image.image;
        transition(
            dev.device,
            cmd,
            image,
            (
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            ),
            (vk::AccessFlags::empty(), vk::AccessFlags::TRANSFER_WRITE),
            (
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
            ),
        );
        let region = [whole_image_copy(self.extent)];
        d.cmd_copy_buffer_to_image(
            cmd,
            staging.buffer,
            self.image.image,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &region,
        );
        transition(
            dev.device,
            cmd,
            image,
            (
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            ),
            (
                vk::AccessFlags::TRANSFER_WRITE,
                vk::AccessFlags::SHADER_READ,
            ),
            (
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::FRAGMENT_SHADER,
            ),
        );
    }

    /// Frees the staging buffer.
    ///
    /// # Safety
    /// The submission carrying the upload has completed.
    pub unsafe fn free_staging(&mut self, dev: &HudDevice) {
        if let Some(mut s) = self.staging.take() {
            s.destroy(dev);
        }
    }

    /// Frees everything.
    ///
    /// # Safety
    /// No pending submission uses the texture.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        self.free_staging(dev);
        if self.pool != vk::DescriptorPool::null() {
            dev.device.destroy_descriptor_pool(self.pool, None);
            self.pool = vk::DescriptorPool::null();
            self.set = vk::DescriptorSet::null();
        }
        self.image.destroy(dev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transform_maps_the_display_onto_clip_space() {
        let t = Transform::for_display([0.0, 0.0], [1280.0, 720.0]);
        let clip = |p: [f32; 2]| {
            [
                p[0] * t.scale[0] + t.translate[0],
                p[1] * t.scale[1] + t.translate[1],
            ]
        };
        assert_eq!(clip([0.0, 0.0]), [-1.0, -1.0]);
        assert_eq!(clip([1280.0, 720.0]), [1.0, 1.0]);
        assert_eq!(clip([640.0, 360.0]), [0.0, 0.0]);
        let moved = Transform::for_display([100.0, 50.0], [200.0, 100.0]);
        assert_eq!(moved.translate, [-2.0, -2.0]);
        assert_eq!(&t.bytes()[..4], &t.scale[0].to_ne_bytes());
    }

    #[test]
    fn vertex_layout_matches_imgui() {
        // The pipeline's attribute offsets assume this layout.
        assert_eq!(std::mem::size_of::<imgui::DrawVert>(), 20);
        assert_eq!(std::mem::size_of::<imgui::DrawIdx>(), 2);
    }

    #[test]
    fn shaders_are_spirv() {
        for spv in [VERT_SPV, FRAG_SPV] {
            let words = ash::util::read_spv(&mut std::io::Cursor::new(spv)).unwrap();
            assert_eq!(words[0], 0x0723_0203);
        }
    }
}
