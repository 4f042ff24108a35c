//! GPU time of the app's submissions ([`GpuTimer`], one per device): how
//! long each `vkQueueSubmit`/`vkQueueSubmit2` the app makes runs on the
//! GPU, measured without touching the app's command buffers.
//!
//! A call gets one pair of the layer's own pre-recorded command buffers
//! ([`build_patched`]): one before the command buffers of its first timed
//! batch (reset two queries, write a `TOP_OF_PIPE` timestamp), one after
//! those of its last (write a `BOTTOM_OF_PIPE` timestamp: it lands when
//! everything before it on the queue is done). So the call's batches are
//! one interval, semaphore waits between them included; an untimed batch
//! between timed ones splits the call into runs with a pair each. Whether a
//! device is timed at all is [`wanted`] (config `gpu_timing`: `auto` leaves
//! CPU devices out, where the timestamp work would run on the app's
//! cores). The pair of queries is a slot of a per-queue ring:
//! - the submit hook (the app serializes submits on a queue, so one
//!   producer per ring) reserves the slot, stamps it with the CPU time of the
//!   call and patches the batches: no allocation once the scratch arrays have
//!   grown, no lock anyone else takes, no wait;
//! - the analysis thread ([`GpuTimer::poll`]) reads finished slots in order
//!   with `vkGetQueryPoolResults` without `WAIT` (availability bit), turns
//!   them into [`Interval`]s and frees the slots. A slot's queries are
//!   reset by its begin command buffer, so until the GPU runs that, a
//!   reused slot still reads as available with its previous results: those
//!   are known (the slot's last begin value is kept) and read as not ready.
//!
//! On a CPU device (lavapipe) the analysis thread never calls
//! `vkGetQueryPoolResults`: lavapipe answers it on the context its own
//! queue thread is running, so a call while the queue works races it
//! (timestamps that never become available, and crashes, seen with
//! `gpu_timing=1`). There the end command buffer also copies the pair's
//! results (`vkCmdCopyQueryPoolResults` with `WAIT`) into a mapped buffer
//! ([`HostResults`]) on the queue's own thread, and the analysis thread
//! reads that memory and zeroes it for the slot's next use. Not on GPUs:
//! a `WAIT` copy holds the command processor until the submission is done,
//! so the next submission's work could no longer overlap its tail.
//!
//! Skipped, with one line each: queue families without timestamps
//! (`timestampValidBits == 0`), protected submits, batches with a
//! `VkDeviceGroupSubmitInfo` (its per-command-buffer masks would no longer
//! line up), batches without command buffers (nothing runs), and runs of
//! batches that find the ring full (counted, never waited for).
//!
//! Clock: GPU timestamps are mapped to CLOCK_MONOTONIC (the clock of the
//! present timestamps) with `VK_EXT_calibrated_timestamps`, which the layer
//! enables at `vkCreateDevice` when the device has it and GPU timing is on
//! (it only adds a query function; the app sees no difference), and
//! re-calibrates every second. Without it the offset is estimated from the
//! intervals themselves: work cannot start before its submit call, so
//! offset ≥ submit time − GPU start for every interval, and the largest such
//! bound (one that started on an idle GPU) is used: durations are exact
//! either way, only the placement on the CPU timeline is that much less
//! sure. The command pools, query pools and command buffers of a queue are
//! made inside the app's first submit on it (recording needs no queue) and
//! booked as the layer's setup time.

use crate::guard;
use crate::hud::memory::pick_memory_type;
use ash::vk;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use steadyhud_capture::gpu_times::{Collected, GpuTimes, Interval};
use steadyhud_config::GpuTiming;
use steadyhud_sys::clock::now_ns;
use steadyhud_sys::lock::Recover;

/// Timed intervals (submit calls, normally) in flight per queue. A slot is
/// freed as soon as the analysis thread (every 10 ms while a device times
/// its submits) sees its results, so 256 covers bursts of many small
/// submits; a full ring skips timing, it never waits.
pub const SLOTS: usize = 256;

/// A slot whose submission failed (nothing will ever be written).
const FAILED: u64 = u64::MAX;
/// A reserved slot whose CPU time is not stamped yet.
const UNSTAMPED: u64 = 0;
/// Results not available this long after the submit are given up (a
/// batch waiting on a semaphore that is never signalled, a lost device).
const GIVE_UP_NS: u64 = 2_000_000_000;
/// Intervals older than this (by submit time) are dropped from
/// [`Collected`], whether or not a stream looked at them.
const KEEP_NS: u64 = 10_000_000_000;

/// The device extension that maps GPU timestamps to the CPU clock.
pub const CALIBRATION_EXTENSION: &std::ffi::CStr = c"VK_EXT_calibrated_timestamps";
/// How often the layer re-calibrates.
const CALIBRATE_EVERY_NS: u64 = 1_000_000_000;

/// Next-layer functions the timer uses.
struct Fns {
    device: ash::Device,
    /// `vkGetCalibratedTimestampsEXT`, when the extension is enabled.
    calibrate: Option<vk::PFN_vkGetCalibratedTimestampsKHR>,
    /// The device's memory types, on a CPU device (its results go through
    /// host memory, [`HostResults`]); `None` on a GPU.
    host_memory: Option<vk::PhysicalDeviceMemoryProperties>,
}

/// The objects of one timed queue, made at its first timed submit.
struct QueueObjects {
    cmd_pool: vk::CommandPool,
    query_pool: vk::QueryPool,
    /// Per slot: reset + start timestamp; end timestamp.
    begin: Vec<vk::CommandBuffer>,
    end: Vec<vk::CommandBuffer>,
    /// Where the results are read on a CPU device.
    host: Option<HostResults>,
}

/// Words per slot in [`HostResults`]: begin value, begin available, end
/// value, end available (`VK_QUERY_RESULT_64_BIT | WITH_AVAILABILITY`).
const HOST_WORDS: usize = 4;

/// A mapped, host-coherent buffer the end command buffers copy their
/// pair's results into ([`HOST_WORDS`] per slot), for CPU devices.
struct HostResults {
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
    fn take(&self, k: usize) -> Option<(u64, u64)> {
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
    fn clear(&self, k: usize) {
        for i in 0..HOST_WORDS {
            // SAFETY: in the mapping (see `take`); the slot is being freed.
            unsafe { self.words.add(k * HOST_WORDS + i).write_volatile(0) };
        }
    }
}

/// Reused arrays of the patched submit (only the queue's submits use them,
/// and the app serializes those: never contended).
#[derive(Default)]
pub struct TimingScratch {
    infos: Vec<vk::SubmitInfo<'static>>,
    cmds: Vec<vk::CommandBuffer>,
    infos2: Vec<vk::SubmitInfo2<'static>>,
    cmds2: Vec<vk::CommandBufferSubmitInfo<'static>>,
    /// Slots reserved by the current call, stamped FAILED if it fails.
    slots: Vec<usize>,
}

/// A batch of a submit call: `VkSubmitInfo` (`vkQueueSubmit`) or
/// `VkSubmitInfo2` (`vkQueueSubmit2`), so one patching routine serves both.
/// The `'static` lifetime stands for "valid during the call": the layer
/// keeps no pointer past it.
pub trait Batch: Copy {
    /// One element of its command buffer array.
    type Cmd: Copy;
    /// The app's command buffers.
    ///
    /// # Safety
    /// A valid batch of the app's.
    unsafe fn cmds(&self) -> &[Self::Cmd];
    /// Why the batch is not timed, if it is not.
    ///
    /// # Safety
    /// A valid batch (its `pNext` chain is read).
    unsafe fn untimed(&self) -> Option<&'static str>;
    /// The element for one of the layer's command buffers.
    fn ours(cb: vk::CommandBuffer) -> Self::Cmd;
    /// This batch with another command buffer array.
    fn with_cmds(self, n: u32, p: *const Self::Cmd) -> Self;
    fn cmds_ptr(&self) -> *const Self::Cmd;
    fn cmds_len(&self) -> u32;
    /// The queue's reused arrays for this batch type.
    fn scratch(s: &mut TimingScratch) -> (&mut Vec<Self>, &mut Vec<Self::Cmd>);
}

/// A raw array of `n` elements (empty when null).
///
/// # Safety
/// `p` points to `n` valid elements, or `n` is 0.
unsafe fn array<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

impl Batch for vk::SubmitInfo<'static> {
    type Cmd = vk::CommandBuffer;
    /// # Safety
    /// As [`Batch::cmds`]: a valid batch of the app's.
    unsafe fn cmds(&self) -> &[vk::CommandBuffer] {
        // SAFETY: the app's array (caller).
        unsafe { array(self.p_command_buffers, self.command_buffer_count) }
    }
    /// # Safety
    /// As [`Batch::untimed`]: a valid batch (its `pNext` chain is read).
    unsafe fn untimed(&self) -> Option<&'static str> {
        // SAFETY: the app's chain (caller).
        let (protected, group) = unsafe { chain_flags(self.p_next) };
        untimed_reason(self.command_buffer_count, protected, group)
    }
    fn ours(cb: vk::CommandBuffer) -> vk::CommandBuffer {
        cb
    }
    fn with_cmds(mut self, n: u32, p: *const vk::CommandBuffer) -> Self {
        self.command_buffer_count = n;
        self.p_command_buffers = p;
        self
    }
    fn cmds_ptr(&self) -> *const vk::CommandBuffer {
        self.p_command_buffers
    }
    fn cmds_len(&self) -> u32 {
        self.command_buffer_count
    }
    fn scratch(s: &mut TimingScratch) -> (&mut Vec<Self>, &mut Vec<vk::CommandBuffer>) {
        (&mut s.infos, &mut s.cmds)
    }
}

impl Batch for vk::SubmitInfo2<'static> {
    type Cmd = vk::CommandBufferSubmitInfo<'static>;
    /// # Safety
    /// As [`Batch::cmds`]: a valid batch of the app's.
    unsafe fn cmds(&self) -> &[Self::Cmd] {
        // SAFETY: the app's array (caller).
        unsafe { array(self.p_command_buffer_infos, self.command_buffer_info_count) }
    }
    /// # Safety
    /// As [`Batch::untimed`]: a valid batch (its `pNext` chain is read).
    unsafe fn untimed(&self) -> Option<&'static str> {
        // SAFETY: the app's chain (caller).
        let (_, group) = unsafe { chain_flags(self.p_next) };
        let protected = self.flags.contains(vk::SubmitFlags::PROTECTED);
        untimed_reason(self.command_buffer_info_count, protected, group)
    }
    fn ours(cb: vk::CommandBuffer) -> Self::Cmd {
        vk::CommandBufferSubmitInfo {
            command_buffer: cb,
            ..Default::default()
        }
    }
    fn with_cmds(mut self, n: u32, p: *const Self::Cmd) -> Self {
        self.command_buffer_info_count = n;
        self.p_command_buffer_infos = p;
        self
    }
    fn cmds_ptr(&self) -> *const Self::Cmd {
        self.p_command_buffer_infos
    }
    fn cmds_len(&self) -> u32 {
        self.command_buffer_info_count
    }
    fn scratch(s: &mut TimingScratch) -> (&mut Vec<Self>, &mut Vec<Self::Cmd>) {
        (&mut s.infos2, &mut s.cmds2)
    }
}

/// Timing state of one queue of the app's.
pub struct QueueTimer {
    pub queue: vk::Queue,
    family: u32,
    /// Mask of the valid timestamp bits.
    mask: u64,
    objects: OnceLock<Option<QueueObjects>>,
    /// Slots reserved (producer: the submit hook).
    head: AtomicU64,
    /// Slots read (consumer: the analysis thread).
    tail: AtomicU64,
    submit_ns: Box<[AtomicU64]>,
    /// Per slot, the begin timestamp its last use read (the analysis
    /// thread's): the same value again is the old results, not yet reset.
    last_begin: Box<[AtomicU64]>,
    scratch: Mutex<TimingScratch>,
}

/// GPU timing of one device.
pub struct GpuTimer {
    fns: Fns,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
    pub queues: Vec<QueueTimer>,
    /// False once the device is being destroyed: no more polling.
    alive: Mutex<bool>,
    collected: Mutex<Collected>,
    /// Runs of batches (normally whole calls) not timed because their
    /// queue's ring was full (summary `ring_full_batches`).
    pub ring_full: AtomicU64,
    /// Intervals whose results never came.
    pub given_up: AtomicU64,
    /// Whether the "skipped" lines were printed.
    said_protected: AtomicBool,
    said_group: AtomicBool,
}

/// Whether `physical_device` gets GPU timing under the config's `setting`:
/// [`GpuTiming::wanted`] with its device type (read only for `auto`).
/// When `auto` turns it off on a CPU device it says so, one line per device.
///
/// # Safety
/// `physical_device` is a live physical device of `instance`.
pub unsafe fn wanted(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    setting: GpuTiming,
) -> bool {
    if setting != GpuTiming::Auto {
        return setting.wanted(false);
    }
    // SAFETY: live handles (caller).
    let props = unsafe { instance.get_physical_device_properties(physical_device) };
    let cpu = props.device_type == vk::PhysicalDeviceType::CPU;
    let on = setting.wanted(cpu);
    if !on {
        let name = props
            .device_name_as_c_str()
            .unwrap_or_default()
            .to_string_lossy();
        // "llvmpipe (LLVM 15.0.7, 256 bits)" → "llvmpipe".
        let short = name.split(" (").next().unwrap_or_default();
        guard::say(format_args!(
            "steadyhud: GPU timing off on a CPU device ({short}): its timestamps would run on the game's cores; gpu_timing=1 forces it"
        ));
    }
    on
}

/// What `vkCreateDevice` does about [`CALIBRATION_EXTENSION`]: whether the
/// device will have it, and the extension list to pass instead of the
/// app's when the layer adds it (`None`: pass the app's).
///
/// # Safety
/// `info` is the app's valid create info for `physical_device`.
pub unsafe fn calibration_for(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    info: &vk::DeviceCreateInfo<'_>,
) -> (bool, Option<Vec<*const std::ffi::c_char>>) {
    // SAFETY: the app's names (caller).
    let app: Vec<*const std::ffi::c_char> =
        if info.enabled_extension_count == 0 || info.pp_enabled_extension_names.is_null() {
            Vec::new()
        } else {
            unsafe {
                std::slice::from_raw_parts(
                    info.pp_enabled_extension_names,
                    info.enabled_extension_count as usize,
                )
            }
            .to_vec()
        };
    // SAFETY: valid C strings (the app's contract).
    let enabled = app
        .iter()
        .any(|&n| unsafe { std::ffi::CStr::from_ptr(n) } == CALIBRATION_EXTENSION);
    if enabled {
        return (true, None);
    }
    // SAFETY: a live physical device.
    let supported = unsafe { instance.enumerate_device_extension_properties(physical_device) }
        .map(|props| {
            props
                .iter()
                .any(|p| p.extension_name_as_c_str() == Ok(CALIBRATION_EXTENSION))
        })
        .unwrap_or(false);
    if !supported {
        return (false, None);
    }
    let mut names = app;
    names.push(CALIBRATION_EXTENSION.as_ptr());
    (true, Some(names))
}

/// Why a batch is not timed (`None`: timed).
pub fn untimed_reason(
    command_buffers: u32,
    protected: bool,
    device_group: bool,
) -> Option<&'static str> {
    if command_buffers == 0 {
        Some("no command buffers")
    } else if protected {
        Some("protected submit")
    } else if device_group {
        Some("VkDeviceGroupSubmitInfo")
    } else {
        None
    }
}

/// What a `VkSubmitInfo`'s chain says: (protected, device group).
///
/// # Safety
/// `next` is a valid Vulkan structure chain.
unsafe fn chain_flags(next: *const std::ffi::c_void) -> (bool, bool) {
    let (mut protected, mut group) = (false, false);
    // SAFETY: a valid chain (caller).
    for l in unsafe { super::chain::links(next) } {
        match l.s_type {
            vk::StructureType::PROTECTED_SUBMIT_INFO => {
                // SAFETY: the sType says what it is.
                let p = unsafe { &*(l.ptr as *const vk::ProtectedSubmitInfo<'_>) };
                protected |= p.protected_submit == vk::TRUE;
            }
            vk::StructureType::DEVICE_GROUP_SUBMIT_INFO => group = true,
            _ => {}
        }
    }
    (protected, group)
}

/// Fills `infos` and `cmds` with the app's `batches`, where each run of
/// consecutive batches that `timed` accepts gets one timestamp pair from
/// `reserve` (begin, end): the begin command buffer before the run's first
/// batch's command buffers, the end after its last batch's. So a call is
/// one interval (one pair, one slot), whatever number of batches it has;
/// an untimed batch (protected, device group, no command buffers) is never
/// patched and never inside an interval: it ends the run before it, and
/// the timable batches after it start another run with their own pair. A
/// run whose `reserve` gives nothing (ring full, no objects) is passed as
/// the app's. `timed` is asked once per batch. No allocation once `infos`
/// and `cmds` have grown.
///
/// # Safety
/// `batches` are valid per the Vulkan spec (their command buffer arrays are
/// read); the built `infos` point into `cmds`, valid until either changes.
unsafe fn build_patched<B: Batch>(
    batches: &[B],
    timed: impl Fn(&B) -> bool,
    reserve: &mut dyn FnMut() -> Option<(B::Cmd, B::Cmd)>,
    infos: &mut Vec<B>,
    cmds: &mut Vec<B::Cmd>,
) {
    infos.clear();
    cmds.clear();
    // First the command buffer array (its pointers must not move), then
    // the batches pointing into it.
    let mut prev = false;
    let mut this = batches.first().is_some_and(&timed);
    // The end command buffer of the run in progress, if it got a pair.
    let mut end = None;
    for (i, b) in batches.iter().enumerate() {
        let next = batches.get(i + 1).is_some_and(&timed);
        let start = cmds.len();
        if this && !prev {
            end = reserve().map(|(begin, end)| {
                cmds.push(begin);
                end
            });
        }
        // SAFETY: the app's valid batch (caller).
        cmds.extend_from_slice(unsafe { b.cmds() });
        if this && !next {
            cmds.extend(end.take());
        }
        // The pointer holds the start index until `cmds` is complete.
        infos.push(b.with_cmds((cmds.len() - start) as u32, start as *const B::Cmd));
        (prev, this) = (this, next);
    }
    let base = cmds.as_ptr();
    for info in infos.iter_mut() {
        let start = info.cmds_ptr() as usize;
        // SAFETY: `start` is an index into `cmds` (set above).
        *info = info.with_cmds(info.cmds_len(), unsafe { base.add(start) });
    }
}

impl GpuTimer {
    /// The timer of a device whose queues are `queues` (handle, family), or
    /// `None` when no family has timestamps.
    ///
    /// # Safety
    /// `device` (whose command buffer allocations are registered with the
    /// loader) and `physical_device` are live and belong together.
    pub unsafe fn new(
        instance: &ash::Instance,
        physical_device: vk::PhysicalDevice,
        device: ash::Device,
        calibrate: Option<vk::PFN_vkGetCalibratedTimestampsKHR>,
        queues: &[(vk::Queue, u32)],
    ) -> Option<GpuTimer> {
        // SAFETY: live handles (caller).
        let (props, families) = unsafe {
            (
                instance.get_physical_device_properties(physical_device),
                instance.get_physical_device_queue_family_properties(physical_device),
            )
        };
        let timers: Vec<QueueTimer> = queues
            .iter()
            .filter_map(|&(queue, family)| {
                let bits = families.get(family as usize)?.timestamp_valid_bits;
                (bits > 0).then(|| QueueTimer {
                    queue,
                    family,
                    mask: if bits >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << bits) - 1
                    },
                    objects: OnceLock::new(),
                    head: AtomicU64::new(0),
                    tail: AtomicU64::new(0),
                    submit_ns: (0..SLOTS).map(|_| AtomicU64::new(UNSTAMPED)).collect(),
                    last_begin: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
                    scratch: Mutex::new(TimingScratch::default()),
                })
            })
            .collect();
        if timers.len() < queues.len() {
            guard::say(format_args!(
                "steadyhud: GPU timing: {} of {} queues are in families without timestamps (timestampValidBits = 0): their work is not timed",
                queues.len() - timers.len(),
                queues.len()
            ));
        }
        if timers.is_empty() || props.limits.timestamp_period <= 0.0 {
            return None;
        }
        let host_memory = (props.device_type == vk::PhysicalDeviceType::CPU)
            // SAFETY: live handles (caller).
            .then(|| unsafe { instance.get_physical_device_memory_properties(physical_device) });
        Some(GpuTimer {
            fns: Fns {
                device,
                calibrate,
                host_memory,
            },
            period_ns: props.limits.timestamp_period as f64,
            queues: timers,
            alive: Mutex::new(true),
            collected: Mutex::new(Collected::default()),
            ring_full: AtomicU64::new(0),
            given_up: AtomicU64::new(0),
            said_protected: AtomicBool::new(false),
            said_group: AtomicBool::new(false),
        })
    }

    fn queue(&self, q: vk::Queue) -> Option<&QueueTimer> {
        self.queues.iter().find(|t| t.queue == q)
    }

    fn say_untimed(&self, why: &'static str) {
        let flag = match why {
            "protected submit" => &self.said_protected,
            "VkDeviceGroupSubmitInfo" => &self.said_group,
            _ => return,
        };
        if !flag.swap(true, Ordering::Relaxed) {
            guard::say(format_args!(
                "steadyhud: GPU timing skips batches with a {why} (their GPU time is not counted)"
            ));
        }
    }

    /// `vkQueueSubmit` / `vkQueueSubmit2` with its timable batches inside
    /// one timestamp pair: calls `next` with the patched batches (or the
    /// app's own when nothing is timed). Returns `next`'s result and whether
    /// this call did first-time setup (the layer's cost, not the app's).
    ///
    /// # Safety
    /// Inside the app's submit call on `queue` with its arguments.
    pub unsafe fn submit<B: Batch>(
        &self,
        queue: vk::Queue,
        count: u32,
        submits: *const B,
        next: impl FnOnce(u32, *const B) -> vk::Result,
    ) -> (vk::Result, bool) {
        let Some(qt) = self.queue(queue) else {
            return (next(count, submits), false);
        };
        let mut scratch = qt.scratch.lock_or_recover();
        // A panic while patching falls back to the app's own submit.
        let patched = guard::try_run(|| {
            // SAFETY: the app's arguments (caller).
            unsafe { self.patch(qt, &mut scratch, count, submits) }
        });
        match patched {
            Some(Some(setup)) => {
                let infos = B::scratch(&mut scratch).0;
                let r = next(infos.len() as u32, infos.as_ptr());
                qt.settle(&mut scratch, r);
                (r, setup)
            }
            _ => {
                qt.settle(&mut scratch, vk::Result::ERROR_UNKNOWN);
                (next(count, submits), false)
            }
        }
    }

    /// Builds the scratch batches from the app's ([`build_patched`]: one
    /// timestamp pair per run of consecutive timable batches, normally one
    /// per call); `None` when nothing is timed (the app's array goes down
    /// unchanged). `Some(setup)`: patched, and whether the queue's objects
    /// were made now.
    ///
    /// # Safety
    /// Inside the app's submit call on `qt`'s queue: `submits` is null or
    /// points to `count` batches valid per the Vulkan spec, which stay valid
    /// until the scratch batches built from them have been submitted.
    unsafe fn patch<B: Batch>(
        &self,
        qt: &QueueTimer,
        scratch: &mut TimingScratch,
        count: u32,
        submits: *const B,
    ) -> Option<bool> {
        if submits.is_null() || count == 0 {
            return None;
        }
        // SAFETY: `count` valid structures (Vulkan's contract with the app).
        let batches = unsafe { std::slice::from_raw_parts(submits, count as usize) };
        let timed = |b: &B| {
            // SAFETY: the app's valid batch.
            match unsafe { b.untimed() } {
                None => true,
                Some(why) => {
                    self.say_untimed(why);
                    false
                }
            }
        };
        scratch.slots.clear();
        let mut slots = std::mem::take(&mut scratch.slots);
        // The queue's objects are made (or found) at the first timed run.
        let mut objects: Option<Option<(&QueueObjects, bool)>> = None;
        let mut reserve = || {
            let (o, _) = (*objects.get_or_insert_with(|| qt.objects(&self.fns)))?;
            let k = qt.reserve(self)?;
            slots.push(k);
            Some((B::ours(o.begin[k]), B::ours(o.end[k])))
        };
        let (infos, cmds) = B::scratch(scratch);
        // SAFETY: the app's valid batches (caller).
        unsafe { build_patched(batches, timed, &mut reserve, infos, cmds) };
        let setup = objects.flatten().is_some_and(|(_, made)| made);
        let patched = !slots.is_empty();
        scratch.slots = slots;
        patched.then_some(setup)
    }

    /// Reads every finished slot of every queue into [`Collected`] (the
    /// analysis thread, every tick); never waits for the GPU.
    pub fn poll(&self) {
        self.poll_until(false);
    }

    /// The last poll, inside `vkDestroyDevice` before the device's streams
    /// finish: the app has waited for its work and submits no more, so once
    /// every slot is read, every batch there will ever be is in
    /// [`Collected`] and no frame is decided without its results (the
    /// usual margin of a poll, 1 ms, would leave out a last present made
    /// just before the app tore down).
    ///
    /// # Safety
    /// Inside `vkDestroyDevice`.
    pub unsafe fn last_poll(&self) {
        self.poll_until(true);
    }

    fn poll_until(&self, last: bool) {
        let alive = self.alive.lock_or_recover();
        if !*alive {
            return;
        }
        let now = now_ns();
        let mut collected = self.collected.lock_or_recover();
        if collected
            .calibrated_at()
            .is_none_or(|at| now.saturating_sub(at) >= CALIBRATE_EVERY_NS)
        {
            if let Some(o) = self.calibrate() {
                collected.calibrate(o, now);
            }
        }
        let mut complete = if last {
            u64::MAX
        } else {
            now.saturating_sub(1_000_000)
        };
        for qt in &self.queues {
            let Some(Some(objects)) = qt.objects.get() else {
                continue;
            };
            let pending = qt.read(self, objects, now, &mut collected);
            if let Some(t) = pending {
                complete = complete.min(t);
            }
        }
        collected.complete_before_ns = collected.complete_before_ns.max(complete);
        while collected
            .intervals
            .front()
            .is_some_and(|i| i.submit_ns + KEEP_NS < now)
        {
            collected.intervals.pop_front();
        }
    }

    /// CPU ns − GPU ns now, from `vkGetCalibratedTimestampsEXT`.
    fn calibrate(&self) -> Option<i128> {
        let f = self.fns.calibrate?;
        let infos = [
            vk::CalibratedTimestampInfoKHR::default().time_domain(vk::TimeDomainKHR::DEVICE),
            vk::CalibratedTimestampInfoKHR::default()
                .time_domain(vk::TimeDomainKHR::CLOCK_MONOTONIC),
        ];
        let mut ts = [0u64; 2];
        let mut deviation = 0u64;
        // SAFETY: live device (alive checked by the caller), two valid
        // infos and two outputs.
        let r = unsafe {
            f(
                self.fns.device.handle(),
                2,
                infos.as_ptr(),
                ts.as_mut_ptr(),
                &mut deviation,
            )
        };
        (r == vk::Result::SUCCESS).then(|| ts[1] as i128 - (ts[0] as f64 * self.period_ns) as i128)
    }

    /// Stops polling and frees the layer's objects.
    ///
    /// # Safety
    /// Inside `vkDestroyDevice`: the app has waited for its work, so no
    /// submission using these objects is still running.
    pub unsafe fn destroy(&self) {
        *self.alive.lock_or_recover() = false;
        let d = &self.fns.device;
        for qt in &self.queues {
            if let Some(Some(o)) = qt.objects.get() {
                // SAFETY: idle (caller).
                unsafe { o.free(d) };
            }
        }
    }
}

impl QueueTimer {
    /// The queue's objects, made now if this is its first timed submit
    /// (`.1`); `None` if making them failed (timing stays off for it).
    fn objects(&self, fns: &Fns) -> Option<(&QueueObjects, bool)> {
        let mut made = false;
        let o = self.objects.get_or_init(|| {
            made = true;
            // SAFETY: live device; no queue is used.
            match unsafe { QueueObjects::new(&fns.device, self.family, fns.host_memory.as_ref()) } {
                Ok(o) => Some(o),
                Err(e) => {
                    guard::say(format_args!("steadyhud: GPU timing off for a queue: {e:?}"));
                    None
                }
            }
        });
        o.as_ref().map(|o| (o, made))
    }

    /// Reserves the next slot, or `None` (counted) when the ring is full.
    fn reserve(&self, timer: &GpuTimer) -> Option<usize> {
        let head = self.head.load(Ordering::Relaxed);
        if head - self.tail.load(Ordering::Acquire) >= SLOTS as u64 {
            timer.ring_full.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let k = (head % SLOTS as u64) as usize;
        self.submit_ns[k].store(UNSTAMPED, Ordering::Relaxed);
        self.head.store(head + 1, Ordering::Release);
        // Stamped after the slot is visible, so a poll that does not see the
        // slot yet knows its stamp will be later than the poll.
        self.submit_ns[k].store(now_ns(), Ordering::Release);
        Some(k)
    }

    /// Slot `k`'s (begin, end) timestamps, if its current use has both.
    fn results(&self, timer: &GpuTimer, o: &QueueObjects, k: usize) -> Option<(u64, u64)> {
        if let Some(host) = &o.host {
            return host.take(k);
        }
        let mut r = [[0u64; 2]; 2];
        // SAFETY: live pool (alive checked by the poll); no WAIT.
        let got = unsafe {
            timer.fns.device.get_query_pool_results(
                o.query_pool,
                2 * k as u32,
                &mut r,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
            )
        };
        let available = got.is_ok() && r[0][1] != 0 && r[1][1] != 0;
        // The previous use's results until the begin command buffer resets
        // the pair (a fresh pool reads as zeros on some drivers: 0 is the
        // first "previous" value).
        let last = &self.last_begin[k];
        if !available || r[0][0] == last.load(Ordering::Relaxed) {
            return None;
        }
        last.store(r[0][0], Ordering::Relaxed);
        Some((r[0][0], r[1][0]))
    }

    /// After the real submit: a failed one never writes its queries.
    fn settle(&self, scratch: &mut TimingScratch, r: vk::Result) {
        if r != vk::Result::SUCCESS {
            for &k in &scratch.slots {
                self.submit_ns[k].store(FAILED, Ordering::Release);
            }
        }
        scratch.slots.clear();
    }

    /// Reads finished slots in order into `out`; returns the submit time of
    /// the oldest slot still pending (`None`: none pending).
    fn read(
        &self,
        timer: &GpuTimer,
        o: &QueueObjects,
        now: u64,
        out: &mut Collected,
    ) -> Option<u64> {
        let head = self.head.load(Ordering::Acquire);
        let mut tail = self.tail.load(Ordering::Relaxed);
        let mut pending = None;
        while tail < head {
            let k = (tail % SLOTS as u64) as usize;
            let submit = self.submit_ns[k].load(Ordering::Acquire);
            if submit == UNSTAMPED {
                pending = Some(now.saturating_sub(1_000_000));
                break;
            }
            if submit != FAILED {
                match self.results(timer, o, k) {
                    Some((begin, end)) => {
                        let ticks = end.wrapping_sub(begin) & self.mask;
                        let gpu_start = (begin as f64 * timer.period_ns) as u64;
                        let offset = out.offset(submit, gpu_start);
                        let start = (gpu_start as i128 + offset).max(0) as u64;
                        let end = start + (ticks as f64 * timer.period_ns) as u64;
                        insert_by_submit(
                            &mut out.intervals,
                            Interval {
                                submit_ns: submit,
                                start_ns: start,
                                end_ns: end,
                            },
                        );
                    }
                    None if now.saturating_sub(submit) < GIVE_UP_NS => {
                        pending = Some(submit);
                        break;
                    }
                    None => {
                        timer.given_up.fetch_add(1, Ordering::Relaxed);
                        if let Some(h) = &o.host {
                            h.clear(k);
                        }
                    }
                }
            }
            tail += 1;
            self.tail.store(tail, Ordering::Release);
        }
        pending
    }
}

/// Inserts keeping `out` ordered by submit time (queues interleave).
fn insert_by_submit(out: &mut VecDeque<Interval>, i: Interval) {
    let at = out.partition_point(|x| x.submit_ns <= i.submit_ns);
    out.insert(at, i);
}

impl QueueObjects {
    /// A query pool of 2 × [`SLOTS`] timestamps and the pre-recorded
    /// command buffers of every slot, in `family`; with `host_memory` (a
    /// CPU device) also the [`HostResults`] buffer, in one of its
    /// host-visible, coherent memory types.
    ///
    /// # Safety
    /// `d` is the live device and `family` one of its queue families.
    unsafe fn new(
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
    unsafe fn free(&self, d: &ash::Device) {
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

/// What the analysis thread reads of the timer.
impl GpuTimes for GpuTimer {
    fn poll(&self) {
        GpuTimer::poll(self);
    }
    fn collected(&self) -> std::sync::MutexGuard<'_, Collected> {
        self.collected.lock_or_recover()
    }
    fn ring_full(&self) -> u64 {
        self.ring_full.load(Ordering::Relaxed)
    }
    fn given_up(&self) -> u64 {
        self.given_up.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_batches_are_timed() {
        assert_eq!(untimed_reason(3, false, false), None);
        assert_eq!(untimed_reason(0, false, false), Some("no command buffers"));
        assert_eq!(untimed_reason(1, true, false), Some("protected submit"));
        assert_eq!(
            untimed_reason(1, false, true),
            Some("VkDeviceGroupSubmitInfo")
        );
    }

    /// Raw handles standing for the layer's pair k (begin, end).
    const BEGIN: u64 = 1000;
    const END: u64 = 2000;

    /// Builds the patched batches of `batches` with a ring that has `free`
    /// slots; returns every batch's command buffers as raw handles and the
    /// slots reserved.
    fn patched<B: Batch>(
        batches: &[B],
        free: usize,
        raw: impl Fn(&B::Cmd) -> u64,
    ) -> (Vec<Vec<u64>>, usize) {
        let mut k = 0;
        let mut reserve = || {
            (k < free).then(|| {
                k += 1;
                let ours = |h| B::ours(vk::Handle::from_raw(h + k as u64 - 1));
                (ours(BEGIN), ours(END))
            })
        };
        let (mut infos, mut cmds) = (Vec::new(), Vec::new());
        // SAFETY: the test's batches are valid (arrays alive, chains
        // well formed).
        unsafe {
            build_patched(
                batches,
                |b| b.untimed().is_none(),
                &mut reserve,
                &mut infos,
                &mut cmds,
            )
        };
        let got = infos
            .iter()
            // SAFETY: `infos` point into `cmds`, alive here.
            .map(|i| unsafe { i.cmds() }.iter().map(&raw).collect())
            .collect();
        (got, k)
    }

    fn cbs(raw: &[u64]) -> Vec<vk::CommandBuffer> {
        raw.iter().map(|&h| vk::Handle::from_raw(h)).collect()
    }

    /// One pair per call: the begin before the first batch's command
    /// buffers, the end after the last's; an untimed batch ends a run and
    /// is left as it is; a full ring leaves the run as the app's.
    #[test]
    fn one_pair_per_run_of_timed_batches() {
        let arrays = [cbs(&[1]), cbs(&[2, 3]), cbs(&[4]), cbs(&[5]), cbs(&[6])];
        let sem = [<vk::Semaphore as vk::Handle>::from_raw(77)];
        let info = |a: &[vk::CommandBuffer]| vk::SubmitInfo {
            command_buffer_count: a.len() as u32,
            p_command_buffers: a.as_ptr(),
            ..Default::default()
        };
        let raw = |c: &vk::CommandBuffer| vk::Handle::as_raw(*c);
        let (b0, e0, b1, e1, b2, e2) = (BEGIN, END, BEGIN + 1, END + 1, BEGIN + 2, END + 2);

        // Three batches, one wait semaphore on the second: one pair.
        let mut three = [info(&arrays[0]), info(&arrays[1]), info(&arrays[2])];
        three[1].wait_semaphore_count = 1;
        three[1].p_wait_semaphores = sem.as_ptr();
        let (got, slots) = patched(&three, 8, raw);
        assert_eq!(got, [vec![b0, 1], vec![2, 3], vec![4, e0]]);
        assert_eq!(slots, 1);
        // One batch: the pair around its command buffers.
        let (got, _) = patched(&three[1..2], 8, raw);
        assert_eq!(got, [vec![b0, 2, 3, e0]]);

        // Untimed batches in between: a protected one, one without command
        // buffers. Each run of timed batches gets its own pair.
        let protected = vk::ProtectedSubmitInfo {
            protected_submit: vk::TRUE,
            ..Default::default()
        };
        let mut prot = info(&arrays[1]);
        prot.p_next = (&protected as *const vk::ProtectedSubmitInfo<'_>).cast();
        let mixed = [
            info(&arrays[0]),
            prot,
            info(&arrays[2]),
            info(&[]),
            info(&arrays[3]),
            info(&arrays[4]),
        ];
        let (got, slots) = patched(&mixed, 8, raw);
        assert_eq!(
            got,
            [
                vec![b0, 1, e0],
                vec![2, 3],
                vec![b1, 4, e1],
                vec![],
                vec![b2, 5],
                vec![6, e2],
            ]
        );
        assert_eq!(slots, 3);
        // A ring with one free slot times the first run only.
        let (got, slots) = patched(&mixed, 1, raw);
        assert_eq!(
            got,
            [
                vec![b0, 1, e0],
                vec![2, 3],
                vec![4],
                vec![],
                vec![5],
                vec![6]
            ]
        );
        assert_eq!(slots, 1);
        // A full ring: the app's batches as they were.
        let (got, slots) = patched(&three, 0, raw);
        assert_eq!((got, slots), (vec![vec![1], vec![2, 3], vec![4]], 0));
        // Nothing timable: no pair.
        let (got, slots) = patched(&[prot, info(&[])], 8, raw);
        assert_eq!((got, slots), (vec![vec![2, 3], vec![]], 0));

        // The batches keep everything but their command buffer arrays.
        let (mut infos, mut cmds) = (Vec::new(), Vec::new());
        let mut reserve = || None;
        // SAFETY: valid batches; `infos` point into `cmds`.
        unsafe {
            build_patched(&three, |_| true, &mut reserve, &mut infos, &mut cmds);
            assert_eq!(infos[1].wait_semaphore_count, 1);
            assert_eq!(infos[1].p_wait_semaphores, sem.as_ptr());
            assert_eq!(infos[1].p_command_buffers, cmds.as_ptr().add(1));
        }
    }

    /// `VkSubmitInfo2` goes through the same routine: its command buffer
    /// infos get the pair, a protected batch (a flag there) none.
    #[test]
    fn one_pair_per_run_of_timed_batches_submit2() {
        let cbi = |raw: &[u64]| -> Vec<vk::CommandBufferSubmitInfo<'static>> {
            raw.iter()
                .map(|&h| vk::CommandBufferSubmitInfo {
                    command_buffer: vk::Handle::from_raw(h),
                    device_mask: 1,
                    ..Default::default()
                })
                .collect()
        };
        let arrays = [cbi(&[1]), cbi(&[2]), cbi(&[3]), cbi(&[4])];
        let info = |a: &[vk::CommandBufferSubmitInfo<'static>]| vk::SubmitInfo2 {
            command_buffer_info_count: a.len() as u32,
            p_command_buffer_infos: a.as_ptr(),
            ..Default::default()
        };
        let mut prot = info(&arrays[2]);
        prot.flags = vk::SubmitFlags::PROTECTED;
        let batches = [info(&arrays[0]), info(&arrays[1]), prot, info(&arrays[3])];
        let raw = |c: &vk::CommandBufferSubmitInfo<'static>| vk::Handle::as_raw(c.command_buffer);
        let (got, slots) = patched(&batches, 8, raw);
        assert_eq!(
            got,
            [
                vec![BEGIN, 1],
                vec![2, END],
                vec![3],
                vec![BEGIN + 1, 4, END + 1]
            ]
        );
        assert_eq!(slots, 2);
        // The app's own entries are copied whole (device mask kept).
        let (mut infos, mut cmds) = (Vec::new(), Vec::new());
        let mut reserve = || None;
        // SAFETY: valid batches; `infos` point into `cmds`.
        unsafe {
            build_patched(&batches, |_| true, &mut reserve, &mut infos, &mut cmds);
            assert!(infos
                .iter()
                .all(|i| i.cmds().iter().all(|c| c.device_mask == 1)));
        }
    }

    #[test]
    fn intervals_stay_ordered_by_submit_time() {
        let mut q = VecDeque::new();
        for s in [5, 1, 3, 3, 9] {
            insert_by_submit(
                &mut q,
                Interval {
                    submit_ns: s,
                    start_ns: s * 10,
                    end_ns: s * 10 + 1,
                },
            );
        }
        let got: Vec<u64> = q.iter().map(|i| i.submit_ns).collect();
        assert_eq!(got, [1, 3, 3, 5, 9]);
    }
}
