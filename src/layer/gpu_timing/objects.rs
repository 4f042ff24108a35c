//! The Vulkan objects of one timed queue ([`QueueObjects`]): a query pool
//! of [`SLOTS`] timestamp pairs, the pre-recorded begin and end command
//! buffers of every slot and, on a CPU device, the mapped buffer the
//! results are copied into ([`HostResults`]). Made inside the app's first
//! timed submit on the queue, freed at `vkDestroyDevice`.

use crate::hud::memory::pick_memory_type;
use ash::vk;
use std::sync::atomic::Ordering;

/// Timed intervals (submit calls, normally) in flight per queue. A slot is
/// freed as soon as the analysis thread (every 10 ms while a device times
/// its submits) sees its results, so 256 covers bursts of many small
/// submits; a full ring skips timing, it never waits.
pub const SLOTS: usize = 256;

/// Next-layer functions the timer uses.
pub(super) struct Fns {
    pub(super) device: ash::Device,
    /// `vkGetCalibratedTimestampsEXT`, when the extension is enabled.
    pub(super) calibrate: Option<vk::PFN_vkGetCalibratedTimestampsKHR>,
    /// The device's memory types, on a CPU device (its results go through
    /// host memory, [`HostResults`]); `None` on a GPU.
    pub(super) host_memory: Option<vk::PhysicalDeviceMemoryProperties>,
}

/// The objects of one timed queue, made at its first timed submit.
pub(super) struct QueueObjects {
    cmd_pool: vk::CommandPool,
    pub(super) query_pool: vk::QueryPool,
    /// Per slot: reset + start timestamp; end timestamp.
    pub(super) begin: Vec<vk::CommandBuffer>,
    pub(super) end: Vec<vk::CommandBuffer>,
    /// Where the results are read on a CPU device.
    pub(super) host: Option<HostResults>,
}

/// Words per slot in [`HostResults`]: begin value, begin available, end
/// value, end available (`VK_QUERY_RESULT_64_BIT | WITH_AVAILABILITY`).
const HOST_WORDS: usize = 4;

/// A mapped, host-coherent buffer the end command buffers copy their
/// pair's results into ([`HOST_WORDS`] per slot), for CPU devices.
pub(super) struct HostResults {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    words: *mut u64,
}

// SAFETY: `words` maps memory owned by the queue's objects; the queue's
// device thread writes a slot's words only between its submit and its
// results being seen, and only the analysis thread (one at a time, under
// the timer's lock) reads and zeroes them.
unsafe impl Send for HostResults {}
// SAFETY: as above.
unsafe impl Sync for HostResults {}

impl HostResults {
    /// Slot `k`'s (begin, end) timestamps once both are available; then
    /// zeroes them for the slot's next use.
    pub(super) fn take(&self, k: usize) -> Option<(u64, u64)> {
        // SAFETY: `words` maps SLOTS × HOST_WORDS u64s for the objects'
        // life; volatile, because the device writes them behind our back.
        let w = |i: usize| unsafe { self.words.add(k * HOST_WORDS + i) };
        // SAFETY: in the mapping (above).
        let (a, b) = unsafe { (w(1).read_volatile(), w(3).read_volatile()) };
        if a == 0 || b == 0 {
            return None;
        }
        std::sync::atomic::fence(Ordering::Acquire);
        // SAFETY: as above; the slot is not in use again until it is freed.
        let r = unsafe { (w(0).read_volatile(), w(2).read_volatile()) };
        self.clear(k);
        Some(r)
    }

    /// Zeroes slot `k`'s words: read, or given up (results that come after
    /// all must not pass for its next use's).
    pub(super) fn clear(&self, k: usize) {
        for i in 0..HOST_WORDS {
            // SAFETY: in the mapping (see `take`); the slot is being freed.
            unsafe { self.words.add(k * HOST_WORDS + i).write_volatile(0) };
        }
    }
}

impl QueueObjects {
    /// A query pool of 2 × [`SLOTS`] timestamps and the pre-recorded
    /// command buffers of every slot, in `family`; with `host_memory` (a
    /// CPU device) also the [`HostResults`] buffer, in one of its
    /// host-visible, coherent memory types.
    ///
    /// # Safety
    /// `d` is the live device and `family` one of its queue families.
    pub(super) unsafe fn new(
        d: &ash::Device,
        family: u32,
        host_memory: Option<&vk::PhysicalDeviceMemoryProperties>,
    ) -> Result<QueueObjects, vk::Result> {
        let mut o = QueueObjects {
            cmd_pool: vk::CommandPool::null(),
            query_pool: vk::QueryPool::null(),
            begin: Vec::new(),
            end: Vec::new(),
            host: None,
        };
        // SAFETY: live device (caller); what was made is freed on error,
        // before any use.
        match unsafe { o.make(d, family, host_memory) } {
            Ok(()) => Ok(o),
            Err(e) => {
                // SAFETY: nothing of it was submitted.
                unsafe { o.free(d) };
                Err(e)
            }
        }
    }

    /// Makes the objects one by one (see [`QueueObjects::new`]).
    ///
    /// # Safety
    /// As [`QueueObjects::new`].
    unsafe fn make(
        &mut self,
        d: &ash::Device,
        family: u32,
        host_memory: Option<&vk::PhysicalDeviceMemoryProperties>,
    ) -> Result<(), vk::Result> {
        // SAFETY: live device (caller), for each call below.
        unsafe {
            self.query_pool = d.create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(2 * SLOTS as u32),
                None,
            )?;
            self.cmd_pool = d.create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(family),
                None,
            )?;
            if let Some(props) = host_memory {
                self.host = Some(HostResults::new(d, props)?);
            }
            (self.begin, self.end) = self.record(d)?;
        }
        Ok(())
    }

    /// Frees whatever of the objects exists (null handles are no-ops).
    ///
    /// # Safety
    /// No submission using them is pending.
    pub(super) unsafe fn free(&self, d: &ash::Device) {
        // SAFETY: the caller's contract; freeing the pool frees its
        // command buffers.
        unsafe {
            d.destroy_command_pool(self.cmd_pool, None);
            d.destroy_query_pool(self.query_pool, None);
            if let Some(h) = &self.host {
                d.destroy_buffer(h.buffer, None);
                d.free_memory(h.memory, None);
            }
        }
    }

    /// Records slot k's pair: `begin[k]` resets queries 2k, 2k+1 and writes
    /// 2k at the top of the pipe; `end[k]` writes 2k+1 at the bottom and,
    /// with [`HostResults`], copies both into its words once written and
    /// makes them visible to the host.
    /// Simultaneous use: a slot given up may still be pending when reused.
    ///
    /// # Safety
    /// `d` is the live device that made `self`'s pool and query pool, and no
    /// other thread uses the pool meanwhile.
    unsafe fn record(
        &self,
        d: &ash::Device,
    ) -> Result<(Vec<vk::CommandBuffer>, Vec<vk::CommandBuffer>), vk::Result> {
        // SAFETY: live pool; the device table's wrapper registers them with
        // the loader.
        let all = unsafe {
            d.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(self.cmd_pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(2 * SLOTS as u32),
            )
        }?;
        let begin_info = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE);
        for (k, pair) in all.chunks(2).enumerate() {
            let q = 2 * k as u32;
            // SAFETY: fresh command buffers of our pool.
            unsafe {
                d.begin_command_buffer(pair[0], &begin_info)?;
                d.cmd_reset_query_pool(pair[0], self.query_pool, q, 2);
                d.cmd_write_timestamp(
                    pair[0],
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                    self.query_pool,
                    q,
                );
                d.end_command_buffer(pair[0])?;
                d.begin_command_buffer(pair[1], &begin_info)?;
                d.cmd_write_timestamp(
                    pair[1],
                    vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                    self.query_pool,
                    q + 1,
                );
                if let Some(h) = &self.host {
                    h.record_copy(d, pair[1], self.query_pool, k);
                }
                d.end_command_buffer(pair[1])?;
            }
        }
        Ok(all.chunks(2).map(|p| (p[0], p[1])).unzip())
    }
}

impl HostResults {
    /// The buffer of every slot's words, mapped and zeroed.
    ///
    /// # Safety
    /// `d` is a live device whose memory types are `props`. On error, what
    /// was made is freed.
    unsafe fn new(
        d: &ash::Device,
        props: &vk::PhysicalDeviceMemoryProperties,
    ) -> Result<HostResults, vk::Result> {
        let size = (SLOTS * HOST_WORDS * 8) as u64;
        // SAFETY: live device (caller); each object is freed if a later
        // step fails.
        unsafe {
            let buffer = d.create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(size)
                    .usage(vk::BufferUsageFlags::TRANSFER_DST),
                None,
            )?;
            let req = d.get_buffer_memory_requirements(buffer);
            let want =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let Some(index) = pick_memory_type(props, req.memory_type_bits, want) else {
                d.destroy_buffer(buffer, None);
                return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
            };
            let memory = match d.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(index),
                None,
            ) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    return Err(e);
                }
            };
            let mapped = d.bind_buffer_memory(buffer, memory, 0).and_then(|()| {
                d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            });
            match mapped {
                Ok(p) => {
                    let words = p.cast::<u64>();
                    words.write_bytes(0, SLOTS * HOST_WORDS);
                    Ok(HostResults {
                        buffer,
                        memory,
                        words,
                    })
                }
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    d.free_memory(memory, None);
                    Err(e)
                }
            }
        }
    }

    /// Records into `cb` the copy of slot `k`'s pair (queries 2k, 2k+1) into
    /// its words once both are written, and the barrier that makes them
    /// visible to the host.
    ///
    /// # Safety
    /// `cb` is recording; `pool` is the queue's query pool.
    unsafe fn record_copy(
        &self,
        d: &ash::Device,
        cb: vk::CommandBuffer,
        pool: vk::QueryPool,
        k: usize,
    ) {
        let stride = (HOST_WORDS / 2 * 8) as u64;
        let offset = (k * HOST_WORDS * 8) as u64;
        // SAFETY: the caller's contract; the range is inside the buffer.
        unsafe {
            d.cmd_copy_query_pool_results(
                cb,
                pool,
                2 * k as u32,
                2,
                self.buffer,
                offset,
                stride,
                vk::QueryResultFlags::TYPE_64
                    | vk::QueryResultFlags::WAIT
                    | vk::QueryResultFlags::WITH_AVAILABILITY,
            );
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[],
                &[vk::BufferMemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                    .dst_access_mask(vk::AccessFlags::HOST_READ)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .buffer(self.buffer)
                    .offset(offset)
                    .size(2 * stride)],
                &[],
            );
        }
    }
}
