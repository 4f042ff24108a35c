//! `--gpu-work MS`: a known amount of GPU execution in every frame, and the
//! app's own measurement of it, for the layer's per-frame GPU busy time.
//!
//! Owns the load (a compute dispatch of `shaders/gpu_work.comp`, recorded
//! at the start of each frame's command buffer, whose push constant is the
//! iteration count), its calibration against measured time, and the
//! measurement: `vkCmdWriteTimestamp` at the very start and the very end of
//! the frame's command buffer (the app's own query pool, [`FrameTimer`]),
//! read after the frame's fence. That is the GPU execution of exactly the
//! command buffer the layer sees submitted, whatever else is queued.
//!
//! On lavapipe the "GPU" is the CPU (llvmpipe threads), shared with every
//! other process, so a constant iteration count would give a different
//! duration on every machine and under every load. The count is calibrated
//! at start-up on the idle queue and then adapted after every measured
//! frame, so the frames' GPU time stays near MS even when the load changes.

use std::collections::VecDeque;
use std::io::Cursor;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use steadyhud_gfx::bind_pipeline_and_set;
use steadyhud_sys::lock::Recover;

use ash::vk;

use crate::error::{Error, VkContext};
use crate::gpu::{Gpu, Instance};

const COMP_SPV: &[u8] = include_bytes!("../../../shaders/gpu_work.comp.spv");
/// Workgroup size of `gpu_work.comp` (`local_size_x`).
const GROUP: u32 = 64;
/// Workgroups per dispatch: enough to keep every llvmpipe thread (or every
/// unit of a small real GPU) busy; the iteration count sets the duration.
const GROUPS: u32 = 64;
/// How long a calibration submission may take before we give up (a hung
/// device must not hang the test that runs the app).
const FENCE_TIMEOUT_NS: u64 = 10_000_000_000;
/// Largest accepted `--gpu-work`: a frame longer than this is a hang, not a
/// workload.
const MAX_MS: f64 = 1000.0;
/// Per-frame adaptation: the last WINDOW measured frames of the device,
/// each scaled to the current iteration count, give the median time of a
/// frame at the current count; the count is then multiplied by (wanted /
/// that median)^GAIN, the ratio clamped to [1/CLAMP, CLAMP]. The median
/// ignores a few preempted frames, GAIN < 1 keeps the count from chasing
/// every change of the machine's load; in steady state the frames' median
/// is the wanted time whatever fixed cost (the render pass, the dispatch)
/// each frame has.
const WINDOW: usize = 9;
const GAIN: f64 = 0.5;
const CLAMP: f64 = 2.0;

/// Measured GPU time (ms) of every timed frame of the process (all
/// swapchains, threads, devices and `--repeat` rounds), in completion order.
static FRAME_MS: Mutex<Vec<f64>> = Mutex::new(Vec::new());

/// Parses `--gpu-work MS`: a finite number of milliseconds, 0..=1000.
pub fn parse_ms(s: &str) -> Result<f64, String> {
    let ms: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of milliseconds (e.g. 8 or 0.5)"))?;
    if !ms.is_finite() || !(0.0..=MAX_MS).contains(&ms) {
        return Err(format!("`{s}`: GPU work must be between 0 and {MAX_MS} ms"));
    }
    Ok(ms)
}

/// The load of one device: pipeline, its storage buffer, and the
/// current (calibrated, then adapted) iteration count.
pub struct GpuWork {
    wanted_ms: f64,
    /// `--trace`: print every frame's measurement.
    trace: bool,
    iterations: AtomicU32,
    /// (iterations, measured ms) of the last [`WINDOW`] frames.
    recent: Mutex<VecDeque<(u32, f64)>>,
    /// Nanoseconds per timestamp tick (`timestampPeriod`).
    tick_ns: f64,
    /// Mask of the valid timestamp bits of the queue family.
    tick_mask: u64,
    module: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    descriptor_pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
}

impl GpuWork {
    /// Creates the load on `gpu` and calibrates it to `ms` per frame. The
    /// queue must be idle (nothing else submitted yet): calibration times
    /// its own submissions. With `trace`, every frame's measurement is
    /// printed.
    pub fn new(inst: &Instance, gpu: &Gpu, ms: f64, trace: bool) -> Result<GpuWork, Error> {
        // SAFETY: plain queries on live handles.
        let (props, families) = unsafe {
            (
                inst.instance.get_physical_device_properties(gpu.physical),
                inst.instance
                    .get_physical_device_queue_family_properties(gpu.physical),
            )
        };
        let family = families
            .get(gpu.family as usize)
            .ok_or_else(|| Error::Unsupported("queue family index out of range".into()))?;
        if !family.queue_flags.contains(vk::QueueFlags::COMPUTE) {
            return Err(Error::Unsupported(
                "--gpu-work: the present queue family cannot run compute shaders".into(),
            ));
        }
        let bits = family.timestamp_valid_bits;
        if bits == 0 {
            return Err(Error::Unsupported(
                "--gpu-work: the present queue family has no timestamps (timestampValidBits 0)"
                    .into(),
            ));
        }
        let mut w = GpuWork {
            wanted_ms: ms,
            trace,
            iterations: AtomicU32::new(0),
            recent: Mutex::new(VecDeque::with_capacity(WINDOW)),
            tick_ns: f64::from(props.limits.timestamp_period),
            tick_mask: if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            },
            module: vk::ShaderModule::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            descriptor_pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
            buffer: vk::Buffer::null(),
            memory: vk::DeviceMemory::null(),
        };
        // Whatever fails, what was created is destroyed (null handles are
        // ignored by vkDestroy*).
        let made = w.create(gpu).and_then(|()| w.calibrate(gpu));
        match made {
            Ok(()) => Ok(w),
            Err(e) => {
                w.destroy(&gpu.device);
                Err(e)
            }
        }
    }

    fn create(&mut self, gpu: &Gpu) -> Result<(), Error> {
        let d = &gpu.device;
        let code = ash::util::read_spv(&mut Cursor::new(COMP_SPV))
            .map_err(|e| Error::Unsupported(format!("embedded SPIR-V unreadable: {e}")))?;
        let size = u64::from(GROUP * GROUPS) * 4;
        // SAFETY: object creation on a live device; each handle is stored
        // in `self` as soon as it exists so `destroy` frees it.
        unsafe {
            self.module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
                .ctx("vkCreateShaderModule (gpu work)")?;
            let bindings = [vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)];
            self.set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .ctx("vkCreateDescriptorSetLayout (gpu work)")?;
            let set_layouts = [self.set_layout];
            let push = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .offset(0)
                .size(4)];
            self.layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&set_layouts)
                        .push_constant_ranges(&push),
                    None,
                )
                .ctx("vkCreatePipelineLayout (gpu work)")?;
            let info = [vk::ComputePipelineCreateInfo::default()
                .stage(
                    vk::PipelineShaderStageCreateInfo::default()
                        .stage(vk::ShaderStageFlags::COMPUTE)
                        .module(self.module)
                        .name(c"main"),
                )
                .layout(self.layout)];
            self.pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
                .map_err(|(_, result)| Error::Vulkan {
                    what: "vkCreateComputePipelines (gpu work)",
                    result,
                })?
                .first()
                .copied()
                .unwrap_or_default();
            self.buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(size)
                        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE),
                    None,
                )
                .ctx("vkCreateBuffer (gpu work)")?;
            let req = d.get_buffer_memory_requirements(self.buffer);
            self.memory = d
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(
                            gpu.pick_memory(req.memory_type_bits, "the gpu work buffer")?,
                        ),
                    None,
                )
                .ctx("vkAllocateMemory (gpu work)")?;
            d.bind_buffer_memory(self.buffer, self.memory, 0)
                .ctx("vkBindBufferMemory (gpu work)")?;
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)];
            self.descriptor_pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .ctx("vkCreateDescriptorPool (gpu work)")?;
            self.set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(self.descriptor_pool)
                        .set_layouts(&set_layouts),
                )
                .ctx("vkAllocateDescriptorSets (gpu work)")?
                .first()
                .copied()
                .unwrap_or_default();
            let buffers = [vk::DescriptorBufferInfo::default()
                .buffer(self.buffer)
                .offset(0)
                .range(vk::WHOLE_SIZE)];
            let write = [vk::WriteDescriptorSet::default()
                .dst_set(self.set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&buffers)];
            d.update_descriptor_sets(&write, &[]);
        }
        Ok(())
    }

    /// Records the load with the current iteration count, which it
    /// returns: a barrier on the previous frame's writes of the shared
    /// buffer (every frame writes the same buffer; the barrier orders them,
    /// including frames of other swapchains on the same queue), then the
    /// dispatch. Outside a render pass. Nothing is recorded for
    /// `--gpu-work 0`.
    pub fn record(&self, d: &ash::Device, cmd: vk::CommandBuffer) -> u32 {
        if self.wanted_ms == 0.0 {
            return 0;
        }
        let n = self.iterations.load(Ordering::Relaxed);
        let barrier = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::SHADER_WRITE)];
        // SAFETY: `cmd` is recording (caller); every handle is alive.
        unsafe {
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &barrier,
                &[],
                &[],
            );
            bind_pipeline_and_set(
                d,
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                self.pipeline,
                self.layout,
                self.set,
            );
            d.cmd_push_constants(
                cmd,
                self.layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                &n.to_ne_bytes(),
            );
            d.cmd_dispatch(cmd, GROUPS, 1, 1);
        }
        n
    }

    /// Milliseconds between two raw timestamps of this device's queue.
    fn ticks_ms(&self, start: u64, end: u64) -> f64 {
        let ticks = end.wrapping_sub(start) & self.tick_mask;
        ticks as f64 * self.tick_ns / 1e6
    }

    /// Records the measured GPU time of one frame recorded with `n`
    /// iterations and adapts the iteration count (see [`WINDOW`]).
    fn frame_done(&self, n: u32, ms: f64) {
        FRAME_MS.lock_or_recover().push(ms);
        if self.trace {
            crate::say::say(format!(
                "testapp: trace gpu work {ms:.3} ms at {n} iterations"
            ));
        }
        if self.wanted_ms == 0.0 || n == 0 || ms <= 0.0 {
            return;
        }
        // One lock for the window and the count: threads presenting on one
        // device share both.
        let mut recent = self.recent.lock_or_recover();
        if recent.len() == WINDOW {
            recent.pop_front();
        }
        recent.push_back((n, ms));
        let now = self.iterations.load(Ordering::Relaxed);
        let mut at_now: Vec<f64> = recent
            .iter()
            .map(|&(n, ms)| ms * f64::from(now) / f64::from(n))
            .collect();
        at_now.sort_by(f64::total_cmp);
        let median = at_now[at_now.len() / 2];
        let step = (self.wanted_ms / median)
            .clamp(1.0 / CLAMP, CLAMP)
            .powf(GAIN);
        self.iterations.store(scale(now, step), Ordering::Relaxed);
    }

    /// Finds the iteration count for `wanted_ms` on the idle queue: the
    /// fixed cost (0 iterations), then a growing probe until the loop
    /// dominates, then a few corrections at the estimated count, each timed
    /// with timestamps exactly as frames are (median of 3 submissions).
    fn calibrate(&self, gpu: &Gpu) -> Result<(), Error> {
        if self.wanted_ms == 0.0 {
            return Ok(());
        }
        let probe = Probe::new(gpu)?;
        let result = (|| {
            let time = |n: u32| -> Result<(f64, f64), Error> {
                let mut runs = [(0.0, 0.0); 3];
                for r in &mut runs {
                    *r = probe.time(gpu, self, n)?;
                }
                runs.sort_by(|a, b| a.0.total_cmp(&b.0));
                Ok(runs[1])
            };
            // The first dispatch pays for compiling the shader (llvmpipe
            // compiles at first use).
            time(1)?;
            let fixed = time(0)?.0;
            // Grow until the loop takes a quarter of the wanted time (at
            // most 4 ms): long enough to measure its cost per iteration.
            let goal = (self.wanted_ms / 4.0).min(4.0);
            let mut n: u32 = 64;
            let mut t = time(n)?.0;
            while t - fixed < goal && n < u32::MAX / 16 {
                let grow = if t - fixed > 0.0 {
                    (goal / (t - fixed) * 1.5).clamp(2.0, 16.0)
                } else {
                    16.0
                };
                n = scale(n, grow);
                t = time(n)?.0;
            }
            let mut wall = 0.0;
            for _ in 0..3 {
                // At most 4x either way per step: a noisy measurement (the
                // loop's time lost in the fixed cost's noise) must not turn
                // into a dispatch that runs for seconds.
                let step = if t > fixed {
                    ((self.wanted_ms - fixed) / (t - fixed)).clamp(0.25, 4.0)
                } else {
                    4.0
                };
                n = scale(n, step);
                (t, wall) = time(n)?;
            }
            self.iterations.store(n, Ordering::Relaxed);
            crate::say::say(format!(
                "testapp: gpu work calibrated on {:?}: {n} iterations = {t:.3} ms \
                 (fence wall time {wall:.3} ms, fixed cost {fixed:.3} ms) for {} ms wanted",
                gpu.device_name, self.wanted_ms
            ));
            Ok(())
        })();
        probe.destroy(gpu);
        result
    }

    /// Destroys everything; the device must be idle.
    pub fn destroy(&self, d: &ash::Device) {
        // SAFETY: nothing uses these objects any more (caller); null handles
        // are ignored.
        unsafe {
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_pool(self.descriptor_pool, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_shader_module(self.module, None);
            d.destroy_buffer(self.buffer, None);
            d.free_memory(self.memory, None);
        }
    }
}

/// `n * factor`, rounded, at least 1 and at most u32::MAX.
fn scale(n: u32, factor: f64) -> u32 {
    (f64::from(n) * factor)
        .round()
        .clamp(1.0, f64::from(u32::MAX)) as u32
}

/// Writes a start or end timestamp of a measured command buffer.
fn write_timestamp(d: &ash::Device, cmd: vk::CommandBuffer, pool: vk::QueryPool, query: u32) {
    // ALL_COMMANDS for both: the timestamp is written once every earlier
    // command on the queue is done, so the start one is when this command
    // buffer's own work can begin (work of earlier submissions still
    // running is not counted) and the end one when all of it is done. On
    // lavapipe the pair matches the fence wall time of a lone submission
    // (the calibration line prints both).
    // SAFETY: `cmd` is recording, outside a render pass (callers).
    unsafe {
        d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::ALL_COMMANDS, pool, query);
    }
}

/// One calibration submission at a time on the idle queue.
struct Probe {
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    queries: vk::QueryPool,
}

impl Probe {
    fn new(gpu: &Gpu) -> Result<Probe, Error> {
        let d = &gpu.device;
        let mut p = Probe {
            pool: vk::CommandPool::null(),
            cmd: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            queries: vk::QueryPool::null(),
        };
        // SAFETY: object creation on a live device; `destroy` frees what exists.
        let made = unsafe {
            (|| {
                p.pool = d
                    .create_command_pool(
                        &vk::CommandPoolCreateInfo::default()
                            .queue_family_index(gpu.family)
                            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                        None,
                    )
                    .ctx("vkCreateCommandPool (gpu work calibration)")?;
                p.cmd = d
                    .allocate_command_buffers(
                        &vk::CommandBufferAllocateInfo::default()
                            .command_pool(p.pool)
                            .level(vk::CommandBufferLevel::PRIMARY)
                            .command_buffer_count(1),
                    )
                    .ctx("vkAllocateCommandBuffers (gpu work calibration)")?
                    .first()
                    .copied()
                    .unwrap_or_default();
                p.fence = d
                    .create_fence(&vk::FenceCreateInfo::default(), None)
                    .ctx("vkCreateFence (gpu work calibration)")?;
                p.queries = d
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(2),
                        None,
                    )
                    .ctx("vkCreateQueryPool (gpu work calibration)")?;
                Ok(())
            })()
        };
        match made {
            Ok(()) => Ok(p),
            Err(e) => {
                p.destroy(gpu);
                Err(e)
            }
        }
    }

    /// Submits the load at `n` iterations alone and waits for it: (GPU time
    /// by timestamps, wall time from submit to fence) in ms.
    fn time(&self, gpu: &Gpu, work: &GpuWork, n: u32) -> Result<(f64, f64), Error> {
        let d = &gpu.device;
        work.iterations.store(n, Ordering::Relaxed);
        // SAFETY: the previous submission of `cmd` was waited on (fence),
        // so it is not pending; the pool allows resetting it.
        unsafe {
            d.begin_command_buffer(
                self.cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .ctx("vkBeginCommandBuffer (gpu work calibration)")?;
            d.cmd_reset_query_pool(self.cmd, self.queries, 0, 2);
            write_timestamp(d, self.cmd, self.queries, 0);
            work.record(d, self.cmd);
            write_timestamp(d, self.cmd, self.queries, 1);
            d.end_command_buffer(self.cmd)
                .ctx("vkEndCommandBuffer (gpu work calibration)")?;
            let cmds = [self.cmd];
            let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
            let start = Instant::now();
            {
                let q = gpu.queue.lock_or_recover();
                d.queue_submit(*q, &submit, self.fence)
                    .ctx("vkQueueSubmit (gpu work calibration)")?;
            }
            match d.wait_for_fences(&[self.fence], true, FENCE_TIMEOUT_NS) {
                Ok(()) => {}
                Err(vk::Result::TIMEOUT) => {
                    return Err(Error::Unsupported(format!(
                        "--gpu-work calibration: {n} iterations did not finish within 10 s"
                    )))
                }
                Err(result) => {
                    return Err(Error::Vulkan {
                        what: "vkWaitForFences (gpu work calibration)",
                        result,
                    })
                }
            }
            let wall = start.elapsed().as_secs_f64() * 1e3;
            d.reset_fences(&[self.fence])
                .ctx("vkResetFences (gpu work calibration)")?;
            let mut ticks = [0u64; 2];
            d.get_query_pool_results(
                self.queries,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
            .ctx("vkGetQueryPoolResults (gpu work calibration)")?;
            Ok((work.ticks_ms(ticks[0], ticks[1]), wall))
        }
    }

    fn destroy(self, gpu: &Gpu) {
        let d = &gpu.device;
        // SAFETY: the last submission was waited on (or never made); null
        // handles are ignored.
        unsafe {
            d.destroy_query_pool(self.queries, None);
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
        }
    }
}

/// One swapchain's timestamp queries: a start/end pair per frame slot,
/// read once the slot's fence has signalled (never waited on by itself).
pub struct FrameTimer {
    pool: vk::QueryPool,
    /// The iteration count of the slot's frame, when its pair was
    /// submitted and not read yet.
    pending: Vec<Option<u32>>,
}

impl FrameTimer {
    pub fn new(gpu: &Gpu, slots: usize) -> Result<FrameTimer, Error> {
        // SAFETY: object creation on a live device; destroyed in `destroy`.
        let pool = unsafe {
            gpu.device.create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(2 * slots as u32),
                None,
            )
        }
        .ctx("vkCreateQueryPool (gpu work)")?;
        Ok(FrameTimer {
            pool,
            pending: vec![None; slots],
        })
    }

    /// Records the start of a frame's command buffer for `slot`: resets the
    /// slot's pair and writes the start timestamp. First command of `cmd`.
    pub fn begin(&self, d: &ash::Device, cmd: vk::CommandBuffer, slot: usize) {
        let q = 2 * slot as u32;
        // SAFETY: `cmd` is recording, outside a render pass (caller).
        unsafe { d.cmd_reset_query_pool(cmd, self.pool, q, 2) };
        write_timestamp(d, cmd, self.pool, q);
    }

    /// Records the end timestamp for `slot`. Last command of `cmd`.
    pub fn end(&self, d: &ash::Device, cmd: vk::CommandBuffer, slot: usize) {
        write_timestamp(d, cmd, self.pool, 2 * slot as u32 + 1);
    }

    /// The slot's command buffer, recorded with `iterations`, was
    /// submitted: its pair is to be read.
    pub fn submitted(&mut self, slot: usize, iterations: u32) {
        self.pending[slot] = Some(iterations);
    }

    /// Reads the slot's pair if one is pending; its fence has signalled
    /// (caller), so the results are available and nothing waits.
    pub fn collect(&mut self, gpu: &Gpu, work: &GpuWork, slot: usize) -> Result<(), Error> {
        let Some(n) = self.pending[slot].take() else {
            return Ok(());
        };
        let mut ticks = [0u64; 2];
        // SAFETY: the queries were reset and written by a submission whose
        // fence has signalled.
        let got = unsafe {
            gpu.device.get_query_pool_results(
                self.pool,
                2 * slot as u32,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64,
            )
        };
        match got {
            Ok(()) => {
                work.frame_done(n, work.ticks_ms(ticks[0], ticks[1]));
                Ok(())
            }
            // Not expected after the fence; the frame is simply not counted.
            Err(vk::Result::NOT_READY) => Ok(()),
            Err(result) => Err(Error::Vulkan {
                what: "vkGetQueryPoolResults (gpu work)",
                result,
            }),
        }
    }

    /// Reads every pending pair into `work` (the load of the device the
    /// timer's frames ran on; the device is idle or the app's fences were
    /// waited on), then destroys the pool.
    pub fn finish(mut self, gpu: &Gpu, work: Option<&GpuWork>) {
        if let Some(work) = work {
            for slot in 0..self.pending.len() {
                // At teardown a failed read only loses that frame's sample.
                let _ = self.collect(gpu, work, slot);
            }
        }
        // SAFETY: no submission using the pool is pending (caller).
        unsafe { gpu.device.destroy_query_pool(self.pool, None) };
    }
}

/// The `testapp: gpu work ms: ...` line printed at exit: median, 10th and
/// 90th percentile of the measured frames' GPU time, frame count, and the
/// requested time.
pub fn summary_line(wanted_ms: f64) -> String {
    let mut v = FRAME_MS.lock_or_recover().clone();
    v.sort_by(f64::total_cmp);
    // Nearest rank: the value at position round(p * (n - 1)).
    let at = |p: f64| {
        v.get((p * (v.len().saturating_sub(1)) as f64).round() as usize)
            .map_or("-".to_string(), |x| format!("{x:.3}"))
    };
    format!(
        "testapp: gpu work ms: median={} p10={} p90={} frames={} requested={}",
        at(0.5),
        at(0.1),
        at(0.9),
        v.len(),
        wanted_ms
    )
}
