//! Injected mid-run work that real games do on their render thread and
//! that steadyhud's counters attribute stutters to: graphics pipeline
//! creation (`--pipelines-at`) and device memory allocation (`--alloc-at`).
//! The work runs right before the chosen present, after the schedule wait,
//! so the frame before it is longer by exactly the work's duration; the
//! schedule is then shifted by that duration so later frames keep their
//! scripted gaps.

use std::io::Cursor;

use ash::vk;
use steadyhud_gfx::{create_pipeline_2d, Pipeline2d};

use crate::error::{Error, VkContext};
use crate::gpu::Gpu;

const VERT_SPV: &[u8] = include_bytes!("../../../shaders/fill.vert.spv");
const FRAG_SPV: &[u8] = include_bytes!("../../../shaders/fill.frag.spv");

/// What to do before one present.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Work {
    /// Create this many graphics pipelines (each compiled anew).
    Pipelines(u32),
    /// Allocate this many MiB of device memory (one vkAllocateMemory).
    AllocMib(u32),
    /// Allocate this many MiB of host memory, every byte written.
    HostMib(u32),
}

/// Objects the work created; destroyed at exit.
#[derive(Default)]
pub struct Leftovers {
    pipelines: Vec<vk::Pipeline>,
    memory: Vec<vk::DeviceMemory>,
    layout: Option<vk::PipelineLayout>,
    modules: Vec<vk::ShaderModule>,
    seed: u32,
    /// Host memory of `Work::HostMib`, kept resident until exit.
    host: Vec<Vec<u8>>,
}

impl Leftovers {
    /// Runs `work` on `gpu` for a swapchain with render pass `render_pass`.
    pub fn run(&mut self, gpu: &Gpu, render_pass: vk::RenderPass, work: Work) -> Result<(), Error> {
        match work {
            Work::Pipelines(n) => self.pipelines(gpu, render_pass, n),
            Work::AllocMib(mib) => self.alloc(gpu, mib),
            Work::HostMib(mib) => {
                // Non-zero bytes: every page is written, so it is resident.
                self.host.push(vec![0x5a; (mib as usize) << 20]);
                Ok(())
            }
        }
    }

    fn ensure_shaders(
        &mut self,
        gpu: &Gpu,
    ) -> Result<(vk::PipelineLayout, vk::ShaderModule, vk::ShaderModule), Error> {
        let d = &gpu.device;
        if self.layout.is_none() {
            let words = |bytes: &[u8]| {
                ash::util::read_spv(&mut Cursor::new(bytes))
                    .map_err(|e| Error::Unsupported(format!("embedded SPIR-V unreadable: {e}")))
            };
            let vert = words(VERT_SPV)?;
            let frag = words(FRAG_SPV)?;
            // SAFETY: valid SPIR-V compiled from shaders/*.vert|frag.
            unsafe {
                let v = d
                    .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&vert), None)
                    .ctx("vkCreateShaderModule")?;
                self.modules.push(v);
                let f = d
                    .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&frag), None)
                    .ctx("vkCreateShaderModule")?;
                self.modules.push(f);
                self.layout = Some(
                    d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default(), None)
                        .ctx("vkCreatePipelineLayout")?,
                );
            }
        }
        Ok((
            self.layout.unwrap_or_default(),
            self.modules[0],
            self.modules[1],
        ))
    }

    fn pipelines(&mut self, gpu: &Gpu, render_pass: vk::RenderPass, n: u32) -> Result<(), Error> {
        let (layout, vert, frag) = self.ensure_shaders(gpu)?;
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        for _ in 0..n {
            self.seed += 1;
            let p = Pipeline2d {
                vert,
                frag,
                frag_constant: (self.seed as f32 * 0.618_034).to_ne_bytes(),
                vertex_input: &vertex_input,
                topology: vk::PrimitiveTopology::TRIANGLE_STRIP,
                blend: vk::PipelineColorBlendAttachmentState::default()
                    .color_write_mask(vk::ColorComponentFlags::RGBA),
                layout,
                render_pass,
            };
            // SAFETY: live device; the shaders, layout and render pass are
            // its objects and fit together (fill.vert/frag, no inputs).
            let p =
                unsafe { create_pipeline_2d(&gpu.device, &p) }.ctx("vkCreateGraphicsPipelines")?;
            self.pipelines.push(p);
        }
        Ok(())
    }

    fn alloc(&mut self, gpu: &Gpu, mib: u32) -> Result<(), Error> {
        let types = &gpu.memory_types;
        let index = types
            .iter()
            .position(|f| f.contains(vk::MemoryPropertyFlags::DEVICE_LOCAL))
            .unwrap_or(0) as u32;
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(mib as u64 * 1024 * 1024)
            .memory_type_index(index);
        // SAFETY: valid allocate info; freed in `destroy`.
        let m = unsafe { gpu.device.allocate_memory(&info, None) }.ctx("vkAllocateMemory")?;
        self.memory.push(m);
        Ok(())
    }

    /// Destroys everything created. The device must be idle.
    pub fn destroy(self, gpu: &Gpu) {
        let d = &gpu.device;
        // SAFETY: nothing uses these objects any more.
        unsafe {
            for p in self.pipelines {
                d.destroy_pipeline(p, None);
            }
            for m in self.memory {
                d.free_memory(m, None);
            }
            if let Some(l) = self.layout {
                d.destroy_pipeline_layout(l, None);
            }
            for m in self.modules {
                d.destroy_shader_module(m, None);
            }
        }
    }
}

/// Parses `FRAME:N` for `--pipelines-at` / `--alloc-at`.
pub fn parse_at(s: &str) -> Result<(u64, u32), String> {
    let (f, n) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}` is not FRAME:N"))?;
    let f: u64 = f
        .parse()
        .map_err(|_| format!("bad frame number in `{s}`"))?;
    let n: u32 = n.parse().map_err(|_| format!("bad count in `{s}`"))?;
    if n == 0 {
        return Err(format!("count in `{s}` must be at least 1"));
    }
    Ok((f, n))
}
