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
//!
//! One module per job: [`policy`] (which devices and batches),
//! [`calibration`] (the CPU clock), [`patch`] (the submit's batches),
//! [`ring`] (a queue's slots and their reading), [`objects`] (the Vulkan
//! objects); the device's [`GpuTimer`] here ties them together.

mod calibration;
mod objects;
mod patch;
mod policy;
mod ring;

pub use calibration::{calibration_for, CALIBRATION_EXTENSION};
pub use objects::SLOTS;
pub use patch::{Batch, TimingScratch};
pub use policy::{untimed_reason, wanted};
pub use ring::QueueTimer;

use calibration::{offset_now, CALIBRATE_EVERY_NS};
use objects::{Fns, QueueObjects};
use patch::build_patched;

use crate::guard;
use ash::vk;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use steadyhud_capture::gpu_times::{Collected, GpuTimes};
use steadyhud_sys::clock::now_ns;
use steadyhud_sys::lock::Recover;

/// Intervals older than this (by submit time) are dropped from
/// [`Collected`], whether or not a stream looked at them.
const KEEP_NS: u64 = 10_000_000_000;

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
                (bits > 0).then(|| QueueTimer::new(queue, family, bits))
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
            let k = qt.reserve(&self.ring_full)?;
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
            let Some(objects) = qt.made() else {
                continue;
            };
            let pending = qt.read(
                &self.fns,
                self.period_ns,
                &self.given_up,
                objects,
                now,
                &mut collected,
            );
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

    /// CPU ns − GPU ns now ([`offset_now`]), when the device calibrates.
    fn calibrate(&self) -> Option<i128> {
        let f = self.fns.calibrate?;
        // SAFETY: live device (alive checked by the caller) and its own
        // function.
        unsafe { offset_now(f, self.fns.device.handle(), self.period_ns) }
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
            if let Some(o) = qt.made() {
                // SAFETY: idle (caller).
                unsafe { o.free(d) };
            }
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
