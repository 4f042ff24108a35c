//! What GPU timing adds to each `vkQueueSubmit` of the app: the same
//! one-command-buffer submit on lavapipe, plain and through
//! [`GpuTimer::submit`] (slot reserve, stamp, patched batch with the two
//! timestamp command buffers, the driver's work for those two). Only the
//! submit calls are timed; every 64 submits the queue is idled and the
//! results are read, as the analysis thread does.
//!
//! Needs a Vulkan device (lavapipe here); prints a SKIPPED line without one.
//! `cargo bench --bench gpu_timing -- --warm-up-time 1 --measurement-time 3`

use ash::vk;
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::{Duration, Instant};
use steadyhud::layer::gpu_timing::GpuTimer;

struct Vk {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    physical: vk::PhysicalDevice,
    queue: vk::Queue,
    family: u32,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
}

fn vulkan() -> Option<Vk> {
    // SAFETY: plain instance/device creation with valid structures; the
    // objects live until the end of the process.
    unsafe {
        let entry = ash::Entry::load().ok()?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_1);
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
            .ok()?;
        let physical = *instance.enumerate_physical_devices().ok()?.first()?;
        let family = instance
            .get_physical_device_queue_family_properties(physical)
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS))?
            as u32;
        let prio = [1.0];
        let qi = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        let device = instance
            .create_device(
                physical,
                &vk::DeviceCreateInfo::default().queue_create_infos(&qi),
                None,
            )
            .ok()?;
        let queue = device.get_device_queue(family, 0);
        let pool = device
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(family),
                None,
            )
            .ok()?;
        let cmd = device
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .command_buffer_count(1),
            )
            .ok()?[0];
        device
            .begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE),
            )
            .ok()?;
        device.end_command_buffer(cmd).ok()?;
        Some(Vk {
            _entry: entry,
            instance,
            device,
            physical,
            queue,
            family,
            pool,
            cmd,
        })
    }
}

fn submits(c: &mut Criterion) {
    let Some(v) = vulkan() else {
        eprintln!("SKIPPED gpu_timing bench: no Vulkan device");
        return;
    };
    // SAFETY: live handles of one device.
    let timer = unsafe {
        GpuTimer::new(
            &v.instance,
            v.physical,
            v.device.clone(),
            None,
            &[(v.queue, v.family)],
        )
    }
    .expect("a queue family with timestamps");
    let cmds = [v.cmd];
    let info: [vk::SubmitInfo<'static>; 1] = [vk::SubmitInfo {
        command_buffer_count: 1,
        p_command_buffers: cmds.as_ptr(),
        ..Default::default()
    }];
    let submit = |n: u32, p: *const vk::SubmitInfo<'static>| {
        // SAFETY: valid submit infos of this device's queue.
        unsafe { (v.device.fp_v1_0().queue_submit)(v.queue, n, p, vk::Fence::null()) }
    };
    let idle = || {
        // SAFETY: the bench owns the queue.
        unsafe { v.device.queue_wait_idle(v.queue) }.expect("vkQueueWaitIdle");
        timer.poll();
    };
    let mut group = c.benchmark_group("submit");
    group.bench_function("plain vkQueueSubmit (1 command buffer)", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let t = Instant::now();
                let _ = submit(1, info.as_ptr());
                total += t.elapsed();
                if i % 64 == 63 {
                    idle();
                }
            }
            idle();
            total
        })
    });
    group.bench_function("through GpuTimer::submit (timed batch)", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let t = Instant::now();
                // SAFETY: the bench's own arguments for this queue.
                let _ = unsafe { timer.submit(v.queue, 1, info.as_ptr(), submit) };
                total += t.elapsed();
                if i % 64 == 63 {
                    idle();
                }
            }
            idle();
            total
        })
    });
    group.finish();
    // SAFETY: idle; nothing in use.
    unsafe {
        v.device.queue_wait_idle(v.queue).ok();
        timer.destroy();
        v.device.destroy_command_pool(v.pool, None);
        v.device.destroy_device(None);
        v.instance.destroy_instance(None);
    }
}

criterion_group!(benches, submits);
criterion_main!(benches);
