//! The HUD renderer on its own, without the layer or a window: lavapipe
//! renders the HUD into stand-in "swapchain" images (cleared to a known
//! colour, in PRESENT_SRC_KHR layout, handed over with a semaphore exactly as
//! a present would, or with none), the pixels are read back and checked,
//! under the Khronos validation layer with synchronization validation when
//! it is installed.
//!
//! Screenshots land in `target/hud-shots/` for a human to look at.

mod require;
mod rig;

use ash::vk;
use rig::{all_commands_transition, Before, FakeSwapchain};
use std::ffi::{c_void, CStr};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use steadyhud::hud::encoding::{self, Encoding};
use steadyhud::hud::{plan, view, Drawn, HudCache, HudDevice, Plan, SwapchainHud};
use steadyhud_capture::live::LiveStats;
use steadyhud_config::{Config, Position};
use steadyhud_gfx::{bind_pipeline_and_set, color_range, transition, whole_image_copy};
use steadyhud_metrics::{Summary, TimeMetrics};

/// Validation messages of error severity (or naming a VUID) seen so far.
static VALIDATION: Mutex<Vec<String>> = Mutex::new(Vec::new());

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    let text = if data.is_null() || (*data).p_message.is_null() {
        String::from("(no message)")
    } else {
        CStr::from_ptr((*data).p_message)
            .to_string_lossy()
            .into_owned()
    };
    if severity.intersects(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
        || text.contains("VUID-")
        || text.contains("SYNC-")
    {
        VALIDATION.lock().unwrap().push(text);
    }
    vk::FALSE
}

/// Clear colour of the stand-in app frame, as bytes in the image.
const CLEAR: [u8; 4] = [40, 60, 90, 255];

struct Gpu {
    _entry: ash::Entry,
    instance: ash::Instance,
    messenger: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    family: u32,
    queue: vk::Queue,
    pool: vk::CommandPool,
    cache: HudCache,
    validated: bool,
}

/// A submission of [`Gpu::submit`] not waited for yet.
struct Pending {
    cb: vk::CommandBuffer,
    fence: vk::Fence,
}

impl Gpu {
    /// A device under the validation layer (with synchronization
    /// validation) when it is installed.
    unsafe fn new() -> Gpu {
        Gpu::with_validation(true)
    }

    unsafe fn with_validation(want: bool) -> Gpu {
        let entry = ash::Entry::load().expect("libvulkan");
        let validation = c"VK_LAYER_KHRONOS_validation";
        let validated = want
            && entry
                .enumerate_instance_layer_properties()
                .unwrap()
                .iter()
                .any(|l| CStr::from_ptr(l.layer_name.as_ptr()) == validation);
        let layers = if validated {
            vec![validation.as_ptr()]
        } else {
            vec![]
        };
        let mut exts = vec![ash::khr::surface::NAME.as_ptr()];
        if validated {
            exts.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        // Synchronization validation: a missing dependency between the
        // app's writes and the HUD's is an error, not luck.
        let enables = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features =
            vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&exts);
        if validated {
            info = info.push_next(&mut features);
        }
        let instance = entry
            .create_instance(&info, None)
            .expect("vkCreateInstance");
        let messenger = validated.then(|| {
            let du = ash::ext::debug_utils::Instance::new(&entry, &instance);
            let mi = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                        | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::GENERAL,
                )
                .pfn_user_callback(Some(on_message));
            let m = du.create_debug_utils_messenger(&mi, None).unwrap();
            (du, m)
        });
        let physical = instance.enumerate_physical_devices().unwrap()[0];
        let family = instance
            .get_physical_device_queue_family_properties(physical)
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS))
            .expect("graphics family") as u32;
        let prio = [1.0];
        let qi = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        // VK_KHR_swapchain makes PRESENT_SRC_KHR a valid layout; timeline
        // semaphores hold the queue back in the skipped-draw test.
        let dexts = [ash::khr::swapchain::NAME.as_ptr()];
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let di = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qi)
            .enabled_extension_names(&dexts)
            .push_next(&mut v12);
        let device = instance
            .create_device(physical, &di, None)
            .expect("vkCreateDevice");
        let queue = device.get_device_queue(family, 0);
        let pool = device
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
            .unwrap();
        Gpu {
            _entry: entry,
            instance,
            messenger,
            physical,
            device,
            family,
            queue,
            pool,
            cache: HudCache::new(),
            validated,
        }
    }

    fn hud_device(&self) -> HudDevice<'_> {
        HudDevice {
            instance: &self.instance,
            device: &self.device,
            physical_device: self.physical,
        }
    }

    /// The first memory type `req` allows with `flags`.
    unsafe fn memory_type(
        &self,
        req: &vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
    ) -> u32 {
        let props = self
            .instance
            .get_physical_device_memory_properties(self.physical);
        (0..props.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize]
                        .property_flags
                        .contains(flags)
            })
            .unwrap()
    }

    unsafe fn memory(
        &self,
        req: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
    ) -> vk::DeviceMemory {
        rig::allocate(&self.device, &req, self.memory_type(&req, flags))
    }

    unsafe fn semaphore(&self) -> vk::Semaphore {
        self.device
            .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            .unwrap()
    }

    /// Submits `record` in a one-off command buffer, waiting on /
    /// signalling the given semaphores, without waiting for it.
    unsafe fn submit(
        &self,
        wait: &[vk::Semaphore],
        signal: &[vk::Semaphore],
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Pending {
        let d = &self.device;
        let ai = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        let cb = d.allocate_command_buffers(&ai).unwrap()[0];
        d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
            .unwrap();
        record(cb);
        d.end_command_buffer(cb).unwrap();
        let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; wait.len()];
        let cbs = [cb];
        let si = [vk::SubmitInfo::default()
            .wait_semaphores(wait)
            .wait_dst_stage_mask(&stages)
            .command_buffers(&cbs)
            .signal_semaphores(signal)];
        let fence = d
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .unwrap();
        d.queue_submit(self.queue, &si, fence).unwrap();
        Pending { cb, fence }
    }

    unsafe fn finish(&self, p: Pending) {
        let d = &self.device;
        d.wait_for_fences(&[p.fence], true, u64::MAX).unwrap();
        d.destroy_fence(p.fence, None);
        d.free_command_buffers(self.pool, &[p.cb]);
    }

    /// [`Gpu::submit`] and wait for it.
    unsafe fn run(
        &self,
        wait: &[vk::Semaphore],
        signal: &[vk::Semaphore],
        record: impl FnOnce(vk::CommandBuffer),
    ) {
        let p = self.submit(wait, signal, record);
        self.finish(p);
    }

    unsafe fn draw(
        &self,
        hud: &mut SwapchainHud,
        image: usize,
        wait: &[vk::Semaphore],
        stats: &LiveStats,
    ) -> Drawn {
        let draw = |hud: &mut SwapchainHud| {
            hud.draw(
                &self.hud_device(),
                &self.cache,
                self.queue,
                self.family,
                image as u32,
                wait,
                stats,
            )
            .expect("HUD draw")
        };
        let drawn = draw(hud);
        if drawn != Drawn::SetUpAfter {
            return drawn;
        }
        // The layer presents this frame without the HUD and sets it up
        // right after; the tests then draw the frame as the next present
        // would, and count the set-up's first-time work as this draw's.
        let set_up = hud
            .set_up(
                &self.hud_device(),
                &self.cache,
                self.queue,
                self.family,
                stats,
            )
            .expect("HUD set-up");
        let Drawn::Submitted { setup: first, .. } = set_up else {
            panic!("the set-up submitted nothing");
        };
        match draw(hud) {
            Drawn::Submitted { signal, setup } => Drawn::Submitted {
                signal,
                setup: setup || first,
            },
            other => other,
        }
    }

    unsafe fn hud(
        &self,
        sc: &FakeSwapchain,
        info: &vk::SwapchainCreateInfoKHR,
        config: &Config,
    ) -> SwapchainHud {
        let plan = plan::plan(info).expect("plan");
        SwapchainHud::new(
            &self.hud_device(),
            &self.cache,
            info,
            &sc.images,
            &plan,
            config,
        )
        .expect("HUD setup")
    }

    unsafe fn destroy_hud(&self, mut hud: SwapchainHud) {
        hud.destroy(&self.hud_device(), &self.cache);
    }

    /// Destroys everything, then checks that validation (when installed)
    /// reported nothing.
    unsafe fn destroy_checked(self) {
        let validated = self.validated;
        self.destroy();
        assert_validation_clean(validated);
    }

    unsafe fn destroy(self) {
        self.device.device_wait_idle().unwrap();
        self.cache.destroy(&self.hud_device());
        self.device.destroy_command_pool(self.pool, None);
        self.device.destroy_device(None);
        if let Some((du, m)) = &self.messenger {
            du.destroy_debug_utils_messenger(*m, None);
        }
        self.instance.destroy_instance(None);
    }
}

/// Bytes per pixel of the stand-in formats.
fn pixel_bytes(format: vk::Format) -> usize {
    match format {
        vk::Format::R16G16B16A16_SFLOAT => 8,
        _ => 4,
    }
}

/// The test's side of the stand-in swapchain ([`rig::FakeSwapchain`]).
impl FakeSwapchain {
    unsafe fn new(gpu: &Gpu, format: vk::Format, width: u32, height: u32, count: usize) -> Self {
        FakeSwapchain::with_usage(
            gpu,
            format,
            width,
            height,
            count,
            vk::ImageUsageFlags::empty(),
        )
    }

    /// `count` images of `format`, usable as colour attachments (and
    /// with `extra`, e.g. storage images for the compute "app") like real
    /// swapchain images.
    unsafe fn with_usage(
        gpu: &Gpu,
        format: vk::Format,
        width: u32,
        height: u32,
        count: usize,
        extra: vk::ImageUsageFlags,
    ) -> Self {
        FakeSwapchain::create(
            &gpu.device,
            format,
            vk::Extent2D { width, height },
            vk::ImageUsageFlags::COLOR_ATTACHMENT
                | vk::ImageUsageFlags::TRANSFER_SRC
                | vk::ImageUsageFlags::TRANSFER_DST
                | extra,
            count,
            |req| gpu.memory_type(req, vk::MemoryPropertyFlags::DEVICE_LOCAL),
        )
    }

    /// The create info of a swapchain of these images; `transfer_dst`
    /// selects the HUD's cached-panel mode.
    fn create_info(&self, transfer_dst: bool) -> vk::SwapchainCreateInfoKHR<'static> {
        let extra = if transfer_dst {
            vk::ImageUsageFlags::TRANSFER_DST
        } else {
            vk::ImageUsageFlags::empty()
        };
        vk::SwapchainCreateInfoKHR::default()
            .min_image_count(self.images.len() as u32)
            .image_format(self.format)
            .image_color_space(self.color_space)
            .image_extent(self.extent)
            .image_array_layers(1)
            .image_usage(
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC | extra,
            )
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .present_mode(vk::PresentModeKHR::FIFO)
    }

    /// The app's clear colour as the image's numbers (linear for SRGB).
    fn clear_value(&self) -> vk::ClearColorValue {
        let f = |b: u8| {
            let c = b as f32 / 255.0;
            if encoding::is_srgb(self.format) {
                encoding::srgb_to_linear(c)
            } else {
                c
            }
        };
        vk::ClearColorValue {
            float32: [f(CLEAR[0]), f(CLEAR[1]), f(CLEAR[2]), 1.0],
        }
    }

    /// Records the "app" frame: clears image `i` to [`CLEAR`] and leaves it
    /// in PRESENT_SRC_KHR with the usual pre-present barrier (nothing after
    /// it is ordered by it: the present's semaphore or the HUD must be).
    unsafe fn record_clear(&self, gpu: &Gpu, cb: vk::CommandBuffer, i: usize) {
        let clear = self.clear_value();
        rig::record_clear(&gpu.device, cb, self.images[i], &clear, Before::AnyCommand);
    }

    /// The "app" frame, signalling `done` like a render before present.
    unsafe fn app_frame(&self, gpu: &Gpu, i: usize, done: vk::Semaphore) {
        gpu.run(&[], &[done], |cb| self.record_clear(gpu, cb, i));
    }

    /// The "present": waits on `wait`, reads image `i` back (RGBA bytes
    /// for 8-bit formats, the raw texels otherwise).
    unsafe fn read_back(&self, gpu: &Gpu, i: usize, wait: vk::Semaphore) -> Vec<u8> {
        let d = &gpu.device;
        let (w, h) = (self.extent.width, self.extent.height);
        let size = (w * h) as u64 * pixel_bytes(self.format) as u64;
        let bi = vk::BufferCreateInfo::default()
            .size(size)
            .usage(vk::BufferUsageFlags::TRANSFER_DST);
        let buf = d.create_buffer(&bi, None).unwrap();
        let mem = gpu.memory(
            d.get_buffer_memory_requirements(buf),
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        );
        d.bind_buffer_memory(buf, mem, 0).unwrap();
        let image = self.images[i];
        let waits: Vec<vk::Semaphore> = [wait]
            .into_iter()
            .filter(|s| *s != vk::Semaphore::null())
            .collect();
        gpu.run(&waits, &[], |cb| {
            all_commands_transition(
                d,
                cb,
                image,
                vk::ImageLayout::PRESENT_SRC_KHR,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            );
            let region = [whole_image_copy(self.extent)];
            d.cmd_copy_image_to_buffer(
                cb,
                image,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                buf,
                &region,
            );
            all_commands_transition(
                d,
                cb,
                image,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                vk::ImageLayout::PRESENT_SRC_KHR,
            );
        });
        let ptr = d
            .map_memory(mem, 0, size, vk::MemoryMapFlags::empty())
            .unwrap() as *const u8;
        let mut px = std::slice::from_raw_parts(ptr, size as usize).to_vec();
        d.unmap_memory(mem);
        d.destroy_buffer(buf, None);
        d.free_memory(mem, None);
        if matches!(
            self.format,
            vk::Format::B8G8R8A8_UNORM | vk::Format::B8G8R8A8_SRGB
        ) {
            px.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
        }
        px
    }

    unsafe fn destroy(mut self, gpu: &Gpu) {
        self.free(&gpu.device);
    }
}

/// Live stats with a steady 60 fps stretch and three stutters.
fn stats() -> LiveStats {
    let mut recent_ms = vec![16.7f32; 300];
    let mut recent_stutter = vec![false; 300];
    for &i in &[100, 180, 260] {
        recent_ms[i] = 50.0;
        recent_stutter[i] = true;
    }
    LiveStats {
        summary: Some(Summary {
            time: TimeMetrics {
                frames: 600,
                duration_s: 10.0,
                average_fps: 59.6,
                low_1pct_fps: 20.0,
                low_0_1pct_fps: 20.0,
                p50_ms: 16.7,
                p90_ms: 16.7,
                p95_ms: 16.7,
                p99_ms: 50.0,
                p99_9_ms: 50.0,
                steady_fps: 20,
                mostly_steady_fps: 59,
                typical_fps: 59,
            },
            stutter_count: 3,
            stutter_frames: vec![100, 180, 260],
            stutter_time_pct: 1.5,
            time_over_budget_pct: 2.5,
            osc: false,
        }),
        window_s: 10.0,
        recent_ms,
        recent_stutter,
        last_frame_ms: 16.7,
        ring_overflows: 0,
        counters: Vec::new(),
        last_stutter: None,
        gpu: Some(steadyhud_capture::live::LiveGpu {
            busy_ms: 7.9,
            bound_pct: 84.0,
        }),
        sensors: Vec::new(),
        fps_cap: 60,
        generation: 1,
        ..LiveStats::default()
    }
}

fn to_bytes(c: [f32; 4]) -> [u8; 3] {
    [0, 1, 2].map(|i| (c[i] * 255.0).round() as u8)
}

/// Pixels within `tol` (per channel) of `rgb`.
fn count_near(px: &[u8], rgb: [u8; 3], tol: u8) -> usize {
    px.chunks_exact(4)
        .filter(|p| (0..3).all(|i| p[i].abs_diff(rgb[i]) <= tol))
        .count()
}

fn shot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../hud-shots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Saves RGBA bytes as PNG with ImageMagick when it is installed.
fn save_png(px: &[u8], w: u32, h: u32, name: &str) {
    let dir = shot_dir();
    let raw = dir.join(format!("{name}.rgba"));
    std::fs::write(&raw, px).unwrap();
    let png = dir.join(format!("{name}.png"));
    let ok = std::process::Command::new("convert")
        .args(["-size", &format!("{w}x{h}"), "-depth", "8"])
        .arg(format!("rgba:{}", raw.display()))
        .arg(&png)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok {
        let _ = std::fs::remove_file(&raw);
        eprintln!("screenshot: {}", png.display());
    }
}

/// Renders HUD frames into a fake swapchain and returns the last image's
/// pixels.
unsafe fn render(gpu: &Gpu, sc: &FakeSwapchain, config: &Config, panel: bool) -> Vec<u8> {
    let mut hud = gpu.hud(sc, &sc.create_info(panel), config);
    assert_eq!(hud.uses_panel(), panel);
    let sem = gpu.semaphore();
    let stats = stats();
    let mut last = Vec::new();
    // More frames than images: every slot and fence gets reused.
    for frame in 0..7 {
        let i = frame % sc.images.len();
        sc.app_frame(gpu, i, sem);
        let Drawn::Submitted { signal, .. } = gpu.draw(&mut hud, i, &[sem], &stats) else {
            panic!("frame {frame}: HUD draw skipped");
        };
        last = sc.read_back(gpu, i, signal);
    }
    gpu.destroy_hud(hud);
    gpu.device.destroy_semaphore(sem, None);
    last
}

/// [`render`] into a new 3-image fake swapchain, saving a screenshot.
unsafe fn render_shot(
    gpu: &Gpu,
    format: vk::Format,
    (w, h): (u32, u32),
    config: &Config,
    panel: bool,
    name: &str,
) -> Vec<u8> {
    let sc = FakeSwapchain::new(gpu, format, w, h, 3);
    let px = render(gpu, &sc, config, panel);
    sc.destroy(gpu);
    save_png(&px, w, h, name);
    px
}

fn validation_errors() -> Vec<String> {
    VALIDATION.lock().unwrap().clone()
}

/// Asserts the validation layer reported nothing; without it, says so
/// (or fails under `STEADYHUD_REQUIRE_TOOLS=1`, tests/require).
fn assert_validation_clean(validated: bool) {
    let errors = validation_errors();
    if validated {
        assert!(
            errors.is_empty(),
            "validation errors:\n{}",
            errors.join("\n")
        );
    } else {
        require::skip_or_fail(
            "validation not checked: VK_LAYER_KHRONOS_validation is not installed \
             (apt-get install vulkan-validationlayers)",
        );
    }
}

/// Pixels of the HUD's corner that differ from the app's clear colour.
fn hud_pixels(px: &[u8], w: u32, corner: u32) -> usize {
    (0..corner as usize)
        .flat_map(|y| (0..corner as usize).map(move |x| (y, x)))
        .filter(|&(y, x)| {
            let q = &px[(y * w as usize + x) * 4..][..3];
            q.iter().zip(&CLEAR).any(|(a, b)| a.abs_diff(*b) > 3)
        })
        .count()
}

/// Both HUD paths on UNORM and SRGB: the app's frame kept outside the HUD,
/// the HUD's colours exact on both encodings.
unsafe fn check_colours(panel: bool) {
    let gpu = Gpu::new();
    let config = Config::default();
    let (w, h) = (1280, 720);
    let mode = if panel { "panel" } else { "direct" };
    let unorm = render_shot(
        &gpu,
        vk::Format::B8G8R8A8_UNORM,
        (w, h),
        &config,
        panel,
        &format!("offscreen_{mode}_unorm_720p"),
    );
    let srgb = render_shot(
        &gpu,
        vk::Format::B8G8R8A8_SRGB,
        (w, h),
        &config,
        panel,
        &format!("offscreen_{mode}_srgb_720p"),
    );
    let validated = gpu.validated;
    gpu.destroy();

    for (name, px) in [("unorm", &unorm), ("srgb", &srgb)] {
        // Far from the top-left HUD the app's frame is untouched.
        let row = (h - 10) as usize;
        let p = &px[(row * w as usize + (w as usize - 10)) * 4..][..4];
        assert!(
            p[..3].iter().zip(&CLEAR).all(|(a, b)| a.abs_diff(*b) <= 1),
            "{mode} {name}: app pixel {p:?}"
        );
        // The HUD covers part of the top-left corner.
        let hud_changed = hud_pixels(px, w, 300);
        assert!(
            hud_changed > 10_000,
            "{mode} {name}: only {hud_changed} HUD pixels"
        );
    }
    // Bars, stutter marks and the target line come out in the intended
    // sRGB colour on both targets: an SRGB target is not washed out.
    let mut checks = vec![
        ("bar", view::colors::BAR, 2000),
        ("stutter", view::colors::STUTTER, 30),
        ("target line", view::colors::TARGET, 150),
    ];
    if panel {
        checks.push(("panel background", view::colors::PANEL_BG, 10_000));
    }
    for (what, color, min) in checks {
        let rgb = to_bytes(color);
        let (u, s) = (count_near(&unorm, rgb, 3), count_near(&srgb, rgb, 3));
        assert!(u >= min, "{mode} unorm: {u} {what} pixels of {rgb:?}");
        assert!(
            s >= min,
            "{mode} srgb: {s} {what} pixels of {rgb:?} (washed out?)"
        );
        let ratio = s as f64 / u as f64;
        assert!(
            (0.9..1.1).contains(&ratio),
            "{mode} {what}: srgb {s} vs unorm {u}"
        );
    }
    assert_validation_clean(validated);
}

#[test]
fn hud_draws_over_the_app_frame_with_correct_colours_on_unorm_and_srgb() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe { check_colours(false) }
}

#[test]
fn cached_panel_is_copied_with_correct_colours_on_unorm_and_srgb() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe { check_colours(true) }
}

#[test]
fn hud_scales_with_the_swapchain_and_sits_in_the_configured_corner() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        let gpu = Gpu::new();
        let config = Config {
            position: Position::BottomRight,
            ..Config::default()
        };
        let (w, h) = (3840, 2160);
        for panel in [false, true] {
            let name = format!(
                "offscreen_4k_bottom_right_{}",
                if panel { "panel" } else { "direct" }
            );
            let px = render_shot(
                &gpu,
                vk::Format::R8G8B8A8_UNORM,
                (w, h),
                &config,
                panel,
                &name,
            );
            // Bounding box of the pixels the HUD changed.
            let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
            for y in 0..h {
                for x in 0..w {
                    let q = &px[((y * w + x) * 4) as usize..][..3];
                    if q.iter().zip(&CLEAR).any(|(a, b)| a.abs_diff(*b) > 3) {
                        (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
                    }
                }
            }
            assert!(x1 > 0, "{name}: no HUD pixels at all");
            eprintln!("{name}: HUD box ({x0},{y0})-({x1},{y1})");
            // Bottom-right corner, with a margin.
            assert!(
                x1 < w - 5 && x1 > w - 80 && y1 < h - 5 && y1 > h - 80,
                "{name}: box ends at ({x1},{y1})"
            );
            // Scaled 3x: the graph alone is 720 px wide at 4K.
            assert!(x1 - x0 > 700, "{name}: HUD only {} px wide at 4K", x1 - x0);
            assert!(
                x0 > w / 2 && y0 > h / 2,
                "{name}: HUD starts at ({x0},{y0})"
            );
        }
        gpu.destroy_checked();
    }
}

#[test]
fn setup_failure_is_an_error_not_a_crash() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        let gpu = Gpu::new();
        let dev = gpu.hud_device();
        let sc = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_UNORM, 320, 240, 2);
        // Images that are neither colour attachments nor copy targets: the
        // plan declines, the layer logs the error and keeps capturing.
        let info = sc
            .create_info(false)
            .image_usage(vk::ImageUsageFlags::TRANSFER_SRC);
        let why = plan::plan(&info).expect_err("must fail");
        assert!(why.contains("colour attachments"), "{why}");
        // A plan that does not fit the swapchain: an error, not a crash.
        let direct = Plan {
            encoding: Encoding::Unorm,
            layout: vk::ImageLayout::PRESENT_SRC_KHR,
            panel: false,
            deferred_views: false,
        };
        let err = SwapchainHud::new(
            &dev,
            &gpu.cache,
            &info,
            &sc.images,
            &direct,
            &Config::default(),
        )
        .err()
        .expect("must fail");
        assert!(err.to_string().contains("colour attachments"), "{err}");
        let protected = sc
            .create_info(false)
            .flags(vk::SwapchainCreateFlagsKHR::PROTECTED);
        assert_eq!(plan::plan(&protected), Err("protected swapchain: HUD off"));
        sc.destroy(&gpu);
        gpu.destroy();
    }
}

#[test]
fn several_swapchains_draw_alternately() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        let gpu = Gpu::new();
        let config = Config::default();
        let a = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_UNORM, 640, 480, 2);
        let b = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_SRGB, 800, 600, 3);
        // One draws directly, the other through its cached panel.
        let mut ha = gpu.hud(&a, &a.create_info(false), &config);
        let mut hb = gpu.hud(&b, &b.create_info(true), &config);
        assert_eq!(gpu.cache.entries(), 2, "one entry per format");
        let sem = gpu.semaphore();
        let stats = stats();
        let bar = to_bytes(view::colors::BAR);
        for frame in 0..6 {
            for (sc, hud) in [(&a, &mut ha), (&b, &mut hb)] {
                let i = frame % sc.images.len();
                sc.app_frame(&gpu, i, sem);
                let Drawn::Submitted { signal, setup } = gpu.draw(hud, i, &[sem], &stats) else {
                    panic!("frame {frame}: skipped");
                };
                // First draw of each entry: font upload and first pipeline use.
                assert_eq!(setup, frame == 0, "frame {frame}: setup {setup}");
                let px = sc.read_back(&gpu, i, signal);
                // imgui hides an auto-sized window on its first frame.
                if frame > 0 {
                    assert!(
                        count_near(&px, bar, 3) > 1000,
                        "frame {frame}: no graph bars"
                    );
                    let rect = hud.last_rect().expect("a rectangle");
                    assert!(
                        rect.extent.width > 200 && rect.extent.height > 100,
                        "{rect:?}"
                    );
                }
            }
        }
        gpu.destroy_hud(ha);
        gpu.destroy_hud(hb);
        gpu.device.destroy_semaphore(sem, None);
        a.destroy(&gpu);
        b.destroy(&gpu);
        gpu.destroy_checked();
    }
}

/// Times creation and the first draws of two swapchains of one format
/// (the second one reuses the cache entry); checks their pixels.
unsafe fn recreate_swapchain(gpu: &Gpu, panel: bool) -> (Duration, Duration, Duration) {
    let config = Config::default();
    let sem = gpu.semaphore();
    let stats = stats();
    let bar = to_bytes(view::colors::BAR);
    let mut times = Vec::new();
    for round in 0..2 {
        let sc = FakeSwapchain::new(gpu, vk::Format::B8G8R8A8_UNORM, 1280, 720, 3);
        let info = sc.create_info(panel);
        let t = Instant::now();
        let mut hud = gpu.hud(&sc, &info, &config);
        times.push(t.elapsed());
        assert_eq!(gpu.cache.entries(), 1, "round {round}: the entry is reused");
        for frame in 0..4 {
            let i = frame % sc.images.len();
            sc.app_frame(gpu, i, sem);
            let t = Instant::now();
            let Drawn::Submitted { signal, setup } = gpu.draw(&mut hud, i, &[sem], &stats) else {
                panic!("round {round} frame {frame}: skipped");
            };
            let px = sc.read_back(gpu, i, signal);
            if round == 0 && frame == 0 {
                times.push(t.elapsed());
            }
            // Only the very first draw of the entry is setup work.
            assert_eq!(
                setup,
                round == 0 && frame == 0,
                "round {round} frame {frame}"
            );
            // The second swapchain draws from its first frame (the shared
            // imgui context has laid the window out already).
            if round == 1 || frame > 0 {
                assert!(
                    count_near(&px, bar, 3) > 1000,
                    "round {round} frame {frame}: no graph bars"
                );
            }
        }
        gpu.destroy_hud(hud);
        sc.destroy(gpu);
    }
    gpu.device.destroy_semaphore(sem, None);
    (times[0], times[2], times[1])
}

#[test]
fn a_recreated_swapchain_reuses_the_cache_entry() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        for panel in [false, true] {
            let mode = if panel { "panel" } else { "direct" };
            let gpu = Gpu::new();
            let (first, second, first_draw) = recreate_swapchain(&gpu, panel);
            eprintln!(
                "{mode}, validation on: first swapchain {first:?}, second {second:?}, first draw (frame + readback) {first_draw:?}"
            );
            gpu.destroy_checked();
            // The numbers that matter: without the validation layer.
            let gpu = Gpu::with_validation(false);
            let (first, second, first_draw) = recreate_swapchain(&gpu, panel);
            eprintln!(
                "{mode}: HUD setup in vkCreateSwapchainKHR: first swapchain of the format {first:?}, a later one {second:?} (goal ≤ 1 ms); first draw (frame + readback) {first_draw:?}"
            );
            gpu.destroy();
            // Generous bound (shared 2-core CI machines): what would fail is
            // redoing the entry (pipeline, font atlas) per swapchain.
            assert!(
                second < Duration::from_millis(20),
                "{mode}: a later swapchain took {second:?}"
            );
            assert!(
                second < first,
                "{mode}: reuse is no faster ({second:?} vs {first:?})"
            );
        }
    }
}

/// How the stand-in app writes its frame before presenting with no wait
/// semaphore.
#[derive(Clone, Copy, Debug)]
enum AppWrite {
    Compute,
    Transfer,
}

/// The stand-in app's compute shader and its objects.
struct ComputeApp {
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    views: Vec<vk::ImageView>,
    sets: Vec<vk::DescriptorSet>,
}

impl ComputeApp {
    unsafe fn new(gpu: &Gpu, sc: &FakeSwapchain) -> ComputeApp {
        let d = &gpu.device;
        let spv = include_bytes!("../shaders/app_fill.comp.spv");
        let words = ash::util::read_spv(&mut std::io::Cursor::new(&spv[..])).unwrap();
        let module = d
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
            .unwrap();
        let bindings = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let set_layout = d
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                None,
            )
            .unwrap();
        let push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: 16,
        }];
        let layouts = [set_layout];
        let layout = d
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&layouts)
                    .push_constant_ranges(&push),
                None,
            )
            .unwrap();
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let info = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout)];
        let pipeline = d
            .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
            .unwrap()[0];
        d.destroy_shader_module(module, None);
        let n = sc.images.len() as u32;
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_IMAGE,
            descriptor_count: n,
        }];
        let pool = d
            .create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(n)
                    .pool_sizes(&sizes),
                None,
            )
            .unwrap();
        let set_layouts = vec![set_layout; n as usize];
        let sets = d
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&set_layouts),
            )
            .unwrap();
        let mut views = Vec::new();
        for (&image, &set) in sc.images.iter().zip(&sets) {
            let vi = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(sc.format)
                .subresource_range(color_range());
            let view = d.create_image_view(&vi, None).unwrap();
            views.push(view);
            let ii = [vk::DescriptorImageInfo {
                sampler: vk::Sampler::null(),
                image_view: view,
                image_layout: vk::ImageLayout::GENERAL,
            }];
            let w = [vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
                .image_info(&ii)];
            d.update_descriptor_sets(&w, &[]);
        }
        ComputeApp {
            set_layout,
            layout,
            pipeline,
            pool,
            views,
            sets,
        }
    }

    /// Records the app frame: fills image `i` with [`CLEAR`] in a compute
    /// shader, then the usual pre-present barrier (compute → nothing).
    unsafe fn record(&self, gpu: &Gpu, sc: &FakeSwapchain, cb: vk::CommandBuffer, i: usize) {
        let d = &gpu.device;
        let image = sc.images[i];
        all_commands_transition(
            d,
            cb,
            image,
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::GENERAL,
        );
        bind_pipeline_and_set(
            d,
            cb,
            vk::PipelineBindPoint::COMPUTE,
            self.pipeline,
            self.layout,
            self.sets[i],
        );
        let color = CLEAR.map(|b| b as f32 / 255.0);
        let bytes: Vec<u8> = color.iter().flat_map(|c| c.to_ne_bytes()).collect();
        d.cmd_push_constants(cb, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &bytes);
        d.cmd_dispatch(
            cb,
            sc.extent.width.div_ceil(8),
            sc.extent.height.div_ceil(8),
            1,
        );
        transition(
            d,
            cb,
            image,
            (vk::ImageLayout::GENERAL, vk::ImageLayout::PRESENT_SRC_KHR),
            (vk::AccessFlags::SHADER_WRITE, vk::AccessFlags::empty()),
            (
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
            ),
        );
    }

    unsafe fn destroy(self, gpu: &Gpu) {
        let d = &gpu.device;
        for v in self.views {
            d.destroy_image_view(v, None);
        }
        d.destroy_descriptor_pool(self.pool, None);
        d.destroy_pipeline(self.pipeline, None);
        d.destroy_pipeline_layout(self.layout, None);
        d.destroy_descriptor_set_layout(self.set_layout, None);
    }
}

/// The app writes its frame (compute shader or copy engine) and presents
/// with ZERO wait semaphores on the same queue: the HUD's own dependency
/// must order its work after the app's writes. Synchronization validation
/// checks the hazard; the pixels check the result.
unsafe fn check_zero_wait(write: AppWrite, panel: bool) {
    let gpu = Gpu::new();
    let config = Config::default();
    let (w, h) = (640, 480);
    let sc = FakeSwapchain::with_usage(
        &gpu,
        vk::Format::R8G8B8A8_UNORM,
        w,
        h,
        2,
        vk::ImageUsageFlags::STORAGE,
    );
    let app = ComputeApp::new(&gpu, &sc);
    let mut hud = gpu.hud(&sc, &sc.create_info(panel), &config);
    let stats = stats();
    let bar = to_bytes(view::colors::BAR);
    for frame in 0..5 {
        let i = frame % sc.images.len();
        // Not waited for: the HUD's submission follows it on the queue.
        let app_work = gpu.submit(&[], &[], |cb| match write {
            AppWrite::Compute => app.record(&gpu, &sc, cb, i),
            AppWrite::Transfer => sc.record_clear(&gpu, cb, i),
        });
        let Drawn::Submitted { signal, .. } = gpu.draw(&mut hud, i, &[], &stats) else {
            panic!("{write:?} frame {frame}: skipped");
        };
        let px = sc.read_back(&gpu, i, signal);
        gpu.finish(app_work);
        let p = &px[((h as usize - 10) * w as usize + (w as usize - 10)) * 4..][..3];
        assert!(
            p.iter().zip(&CLEAR).all(|(a, b)| a.abs_diff(*b) <= 1),
            "{write:?} frame {frame}: app pixel {p:?}"
        );
        if frame > 0 {
            assert!(
                count_near(&px, bar, 3) > 1000,
                "{write:?} frame {frame}: no graph bars"
            );
            assert!(
                hud_pixels(&px, w, 300) > 10_000,
                "{write:?} frame {frame}: HUD missing"
            );
        }
        if frame == 4 {
            let mode = if panel { "panel" } else { "direct" };
            save_png(&px, w, h, &format!("offscreen_zero_wait_{write:?}_{mode}"));
        }
    }
    gpu.destroy_hud(hud);
    app.destroy(&gpu);
    sc.destroy(&gpu);
    gpu.destroy_checked();
}

#[test]
fn hud_follows_a_compute_written_frame_presented_without_semaphores() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        check_zero_wait(AppWrite::Compute, false);
        check_zero_wait(AppWrite::Compute, true);
    }
}

#[test]
fn hud_follows_a_copy_written_frame_presented_without_semaphores() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        check_zero_wait(AppWrite::Transfer, false);
        check_zero_wait(AppWrite::Transfer, true);
    }
}

/// A draw whose slot is still busy (the queue is held back by a timeline
/// semaphore the "host" signals later) returns `Skipped` within its bound,
/// submits nothing and leaves the app's semaphore for the real present: the
/// image then shows only the app's frame.
#[test]
fn a_skipped_draw_leaves_the_image_and_semaphores_untouched() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        let gpu = Gpu::new();
        let d = &gpu.device;
        let config = Config::default();
        let (w, h) = (320, 240);
        // One image, so one command slot.
        let sc = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_UNORM, w, h, 1);
        let mut hud = gpu.hud(&sc, &sc.create_info(false), &config);
        let stats = stats();
        let (app_done, app_done2) = (gpu.semaphore(), gpu.semaphore());
        let mut tinfo =
            vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
        let timeline = d
            .create_semaphore(
                &vk::SemaphoreCreateInfo::default().push_next(&mut tinfo),
                None,
            )
            .unwrap();

        sc.app_frame(&gpu, 0, app_done);
        // The queue stalls until the host signals the timeline. (Nothing
        // submitted before that may wait on a binary semaphore signalled
        // behind the stall: lavapipe would block in vkQueueSubmit.)
        let values = [1u64];
        let mut tsi = vk::TimelineSemaphoreSubmitInfo::default().wait_semaphore_values(&values);
        let (waits, stages) = ([timeline], [vk::PipelineStageFlags::ALL_COMMANDS]);
        let held = vk::SubmitInfo::default()
            .wait_semaphores(&waits)
            .wait_dst_stage_mask(&stages)
            .push_next(&mut tsi);
        d.queue_submit(gpu.queue, &[held], vk::Fence::null())
            .unwrap();
        let Drawn::Submitted { signal, .. } = gpu.draw(&mut hud, 0, &[app_done], &stats) else {
            panic!("first draw skipped");
        };
        // The app's next frame of the same image (after the HUD's first draw).
        let next_frame = gpu.submit(&[], &[app_done2], |cb| sc.record_clear(&gpu, cb, 0));

        // The slot's previous submission cannot finish: skipped, quickly.
        let t = Instant::now();
        let drawn = gpu.draw(&mut hud, 0, &[app_done2], &stats);
        let took = t.elapsed();
        assert_eq!(drawn, Drawn::Skipped);
        eprintln!("skipped draw returned after {took:?}");
        assert!(
            took < Duration::from_millis(500),
            "a skipped draw waited {took:?}"
        );

        d.signal_semaphore(
            &vk::SemaphoreSignalInfo::default()
                .semaphore(timeline)
                .value(1),
        )
        .unwrap();
        // The present of the first draw.
        gpu.run(&[signal], &[], |_| {});
        gpu.finish(next_frame);
        // The real present waits on the app's semaphore (still unwaited):
        // the image is the app's frame, with no HUD drawn into it.
        let px = sc.read_back(&gpu, 0, app_done2);
        let not_clear = px
            .chunks_exact(4)
            .filter(|p| p[..3].iter().zip(&CLEAR).any(|(a, b)| a.abs_diff(*b) > 1))
            .count();
        assert_eq!(not_clear, 0, "the skipped draw changed {not_clear} pixels");

        // The HUD carries on once the queue moves again.
        sc.app_frame(&gpu, 0, app_done);
        let Drawn::Submitted { signal, .. } = gpu.draw(&mut hud, 0, &[app_done], &stats) else {
            panic!("draw after the stall skipped");
        };
        let px = sc.read_back(&gpu, 0, signal);
        assert!(hud_pixels(&px, w, 240) > 1000, "no HUD after the stall");

        gpu.destroy_hud(hud);
        for s in [app_done, app_done2, timeline] {
            d.destroy_semaphore(s, None);
        }
        sc.destroy(&gpu);
        gpu.destroy_checked();
    }
}

/// IEEE half to f32 (normal, subnormal, zero; the HUD writes no inf/NaN).
fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let mant = (h & 0x3ff) as f32;
    sign * if exp == 0 {
        mant * 2f32.powi(-24)
    } else {
        (1.0 + mant / 1024.0) * 2f32.powi(exp - 15)
    }
}

/// Raw texels of `format` as RGBA floats.
fn decode(format: vk::Format, raw: &[u8]) -> Vec<[f32; 4]> {
    match format {
        vk::Format::A2B10G10R10_UNORM_PACK32 => raw
            .chunks_exact(4)
            .map(|b| {
                let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let c = |shift: u32| ((v >> shift) & 0x3ff) as f32 / 1023.0;
                [c(0), c(10), c(20), (v >> 30) as f32 / 3.0]
            })
            .collect(),
        vk::Format::R16G16B16A16_SFLOAT => raw
            .chunks_exact(8)
            .map(|b| {
                [0, 1, 2, 3].map(|i| half_to_f32(u16::from_le_bytes([b[2 * i], b[2 * i + 1]])))
            })
            .collect(),
        other => panic!("no decoder for {other:?}"),
    }
}

/// HDR stand-in swapchains (lavapipe renders to these formats although it
/// cannot present them): the HUD's colours read back as the CPU reference
/// [`Encoding::encode`] says, white at 200 nits rather than 10 000.
#[test]
fn hdr_encodings_write_the_reference_values() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        let gpu = Gpu::new();
        let config = Config::default();
        let (w, h) = (1280, 720);
        let cases = [
            (
                vk::Format::A2B10G10R10_UNORM_PACK32,
                vk::ColorSpaceKHR::HDR10_ST2084_EXT,
                Encoding::Pq,
                1.5 / 1023.0,
            ),
            (
                vk::Format::R16G16B16A16_SFLOAT,
                vk::ColorSpaceKHR::EXTENDED_SRGB_LINEAR_EXT,
                Encoding::ScRgb,
                4e-3,
            ),
        ];
        for (format, space, enc, tol) in cases {
            for panel in [false, true] {
                let mut sc = FakeSwapchain::new(&gpu, format, w, h, 2);
                sc.color_space = space;
                let info = sc.create_info(panel);
                assert_eq!(plan::plan(&info).unwrap().encoding, enc);
                let raw = render(&gpu, &sc, &config, panel);
                sc.destroy(&gpu);
                let px = decode(format, &raw);
                let near = |c: [f32; 4]| {
                    let want = enc.encode(c);
                    // The tolerance scales with the value for half floats.
                    let t = tol * want[0].max(want[1]).max(want[2]).max(1.0);
                    px.iter()
                        .filter(|p| (0..3).all(|i| (p[i] - want[i]).abs() <= t))
                        .count()
                };
                let what = format!("{format:?} {}", if panel { "panel" } else { "direct" });
                let white = near(view::colors::VALUE);
                let bars = near(view::colors::BAR);
                eprintln!(
                    "{what}: white {:?} → {white} px, bar {:?} → {bars} px",
                    enc.encode(view::colors::VALUE),
                    enc.encode(view::colors::BAR)
                );
                assert!(white > 100, "{what}: {white} white text pixels");
                assert!(bars > 2000, "{what}: {bars} bar pixels");
                if panel {
                    let bg = near(view::colors::PANEL_BG);
                    assert!(bg > 10_000, "{what}: {bg} panel background pixels");
                }
                // Nothing brighter than the HUD's 200-nit white.
                let white_value = enc.encode([1.0; 4])[0];
                let brightest = px
                    .iter()
                    .map(|p| p[0].max(p[1]).max(p[2]))
                    .fold(0.0f32, f32::max);
                assert!(
                    brightest <= white_value + tol,
                    "{what}: brightest {brightest} > white {white_value}"
                );
            }
        }
        assert!((Encoding::Pq.encode([1.0; 4])[0] - 0.58).abs() < 0.01);
        gpu.destroy_checked();
    }
}

/// Deferred memory allocation: views and framebuffers come with each
/// image's first draw, which is booked as setup.
#[test]
fn deferred_views_are_created_at_first_draw() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        let gpu = Gpu::new();
        let config = Config::default();
        let sc = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_UNORM, 640, 480, 2);
        let info = sc
            .create_info(false)
            .flags(vk::SwapchainCreateFlagsKHR::DEFERRED_MEMORY_ALLOCATION_EXT);
        assert!(plan::plan(&info).unwrap().deferred_views);
        let mut hud = gpu.hud(&sc, &info, &config);
        let sem = gpu.semaphore();
        let stats = stats();
        let mut setups = Vec::new();
        for frame in 0..4 {
            let i = frame % 2;
            sc.app_frame(&gpu, i, sem);
            let Drawn::Submitted { signal, setup } = gpu.draw(&mut hud, i, &[sem], &stats) else {
                panic!("frame {frame}: skipped");
            };
            setups.push(setup);
            let px = sc.read_back(&gpu, i, signal);
            if frame > 0 {
                assert!(hud_pixels(&px, 640, 300) > 5000, "frame {frame}: no HUD");
            }
        }
        // Image 0: first draw (and entry setup); image 1: its view.
        assert_eq!(setups, [true, true, false, false]);
        gpu.destroy_hud(hud);
        gpu.device.destroy_semaphore(sem, None);
        sc.destroy(&gpu);
        gpu.destroy_checked();
    }
}

/// Fresh stats (a new generation) re-render the cached panel even when
/// their `Arc` lands at the address of the previous ones.
#[test]
fn the_panel_follows_new_stats() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        let gpu = Gpu::new();
        let config = Config::default();
        let sc = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_UNORM, 640, 480, 2);
        let mut hud = gpu.hud(&sc, &sc.create_info(true), &config);
        let sem = gpu.semaphore();
        let cell = steadyhud_capture::live::LiveCell::default();
        let stutter = to_bytes(view::colors::STUTTER);
        let mut last = Vec::new();
        for frame in 0..8 {
            let mut s = stats();
            if frame >= 5 {
                // From frame 5 no stutter any more.
                s.recent_stutter = vec![false; s.recent_ms.len()];
                s.recent_ms = vec![16.7; s.recent_ms.len()];
            }
            cell.publish(s);
            let latest = cell.latest();
            let i = frame % 2;
            sc.app_frame(&gpu, i, sem);
            let Drawn::Submitted { signal, .. } = gpu.draw(&mut hud, i, &[sem], &latest) else {
                panic!("frame {frame}: skipped");
            };
            last.push(count_near(&sc.read_back(&gpu, i, signal), stutter, 3));
        }
        assert!(last[4] >= 30, "stutters shown before: {last:?}");
        assert_eq!(last[7], 0, "stale panel after new stats: {last:?}");
        gpu.destroy_hud(hud);
        gpu.device.destroy_semaphore(sem, None);
        sc.destroy(&gpu);
        gpu.destroy_checked();
    }
}

/// Issue 41: a cached panel's first-time work never lands in the frame the
/// app presents. Its first draw submits nothing and leaves the app's
/// semaphores to the present (`SetUpAfter`); the set-up after the present
/// does the font upload and the first panel, waiting on nothing and
/// signalling nothing; the next draw only copies the panel (no first-time
/// work) and shows the HUD.
#[test]
fn a_panels_set_up_comes_after_the_present_not_in_it() {
    // SAFETY: the test's own Vulkan objects, used on this thread only and
    // destroyed after the device is done with them.
    unsafe {
        let gpu = Gpu::new();
        let config = Config::default();
        let sc = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_UNORM, 640, 480, 2);
        let mut hud = gpu.hud(&sc, &sc.create_info(true), &config);
        assert!(hud.uses_panel());
        let stats = stats();
        let sem = gpu.semaphore();
        let dev = gpu.hud_device();
        sc.app_frame(&gpu, 0, sem);
        let first = hud
            .draw(&dev, &gpu.cache, gpu.queue, gpu.family, 0, &[sem], &stats)
            .expect("first draw");
        assert_eq!(first, Drawn::SetUpAfter, "the first draw submits nothing");
        // The app's own frame, untouched: its semaphore is the present's.
        let px = sc.read_back(&gpu, 0, sem);
        let bar = to_bytes(view::colors::BAR);
        assert_eq!(count_near(&px, bar, 3), 0, "the first frame has a HUD");
        let set_up = hud
            .set_up(&dev, &gpu.cache, gpu.queue, gpu.family, &stats)
            .expect("set-up");
        let Drawn::Submitted { signal, setup } = set_up else {
            panic!("the set-up submitted nothing");
        };
        assert!(setup, "the set-up is the first-time work");
        assert_eq!(signal, vk::Semaphore::null(), "no present waits on it");
        assert_eq!(
            hud.set_up(&dev, &gpu.cache, gpu.queue, gpu.family, &stats)
                .expect("second set-up"),
            Drawn::Skipped,
            "a HUD is set up once"
        );
        sc.app_frame(&gpu, 1, sem);
        let Drawn::Submitted { signal, setup } = hud
            .draw(&dev, &gpu.cache, gpu.queue, gpu.family, 1, &[sem], &stats)
            .expect("second draw")
        else {
            panic!("the second draw skipped");
        };
        assert!(!setup, "the second draw did first-time work");
        let px = sc.read_back(&gpu, 1, signal);
        assert!(count_near(&px, bar, 3) > 1000, "no HUD after the set-up");
        gpu.destroy_hud(hud);
        gpu.device.destroy_semaphore(sem, None);
        sc.destroy(&gpu);
        gpu.destroy_checked();
    }
}
