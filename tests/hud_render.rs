//! The HUD renderer on its own, without the layer or a window: lavapipe
//! renders the HUD into stand-in "swapchain" images (cleared to a known
//! colour, in PRESENT_SRC_KHR layout, handed over with a semaphore exactly as
//! a present would), the pixels are read back and checked, under the
//! Khronos validation layer when it is installed.
//!
//! Screenshots land in `target/hud-shots/` for a human to look at.

use ash::vk;
use std::ffi::{c_void, CStr};
use std::path::PathBuf;
use std::sync::Mutex;
use steadyhud::config::{Config, Position};
use steadyhud::hud::{color_range, view, HudDevice, SwapchainHud};
use steadyhud::live::LiveStats;
use steadyhud::metrics::Summary;

/// Validation messages of warning/error severity seen so far.
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
    if severity.intersects(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) || text.contains("VUID-") {
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
    validated: bool,
}

impl Gpu {
    unsafe fn new() -> Gpu {
        let entry = ash::Entry::load().expect("libvulkan");
        let validation = c"VK_LAYER_KHRONOS_validation";
        let validated = entry
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
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_1);
        let info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&exts);
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
        // VK_KHR_swapchain makes PRESENT_SRC_KHR a valid layout.
        let dexts = [ash::khr::swapchain::NAME.as_ptr()];
        let di = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qi)
            .enabled_extension_names(&dexts);
        let device = instance
            .create_device(physical, &di, None)
            .expect("vkCreateDevice");
        let queue = device.get_device_queue(family, 0);
        let pool = device
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(family),
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
            validated,
        }
    }

    fn hud_device(&self) -> HudDevice<'_> {
        HudDevice {
            instance: &self.instance,
            device: &self.device,
            physical_device: self.physical,
            graphics_queue: self.queue,
            graphics_family: self.family,
        }
    }

    unsafe fn memory(
        &self,
        req: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
    ) -> vk::DeviceMemory {
        let props = self
            .instance
            .get_physical_device_memory_properties(self.physical);
        let index = (0..props.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize]
                        .property_flags
                        .contains(flags)
            })
            .unwrap();
        let ai = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(index);
        self.device.allocate_memory(&ai, None).unwrap()
    }

    /// Runs `record` in a one-off command buffer, waiting on / signalling
    /// the given semaphores, and waits for it.
    unsafe fn run(
        &self,
        wait: &[vk::Semaphore],
        signal: &[vk::Semaphore],
        record: impl FnOnce(vk::CommandBuffer),
    ) {
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
        d.wait_for_fences(&[fence], true, u64::MAX).unwrap();
        d.destroy_fence(fence, None);
        d.free_command_buffers(self.pool, &cbs);
    }

    unsafe fn destroy(self) {
        self.device.device_wait_idle().unwrap();
        self.device.destroy_command_pool(self.pool, None);
        self.device.destroy_device(None);
        if let Some((du, m)) = &self.messenger {
            du.destroy_debug_utils_messenger(*m, None);
        }
        self.instance.destroy_instance(None);
    }
}

fn barrier(
    image: vk::Image,
    from: vk::ImageLayout,
    to: vk::ImageLayout,
) -> vk::ImageMemoryBarrier<'static> {
    vk::ImageMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)
        .old_layout(from)
        .new_layout(to)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(color_range())
}

/// Stand-in swapchain: `count` images of `format`, usable as colour
/// attachments like real swapchain images.
struct FakeSwapchain {
    format: vk::Format,
    extent: vk::Extent2D,
    images: Vec<vk::Image>,
    memory: Vec<vk::DeviceMemory>,
}

impl FakeSwapchain {
    unsafe fn new(gpu: &Gpu, format: vk::Format, width: u32, height: u32, count: usize) -> Self {
        let extent = vk::Extent2D { width, height };
        let mut s = FakeSwapchain {
            format,
            extent,
            images: vec![],
            memory: vec![],
        };
        for _ in 0..count {
            let ii = vk::ImageCreateInfo::default()
                .image_type(vk::ImageType::TYPE_2D)
                .format(format)
                .extent(vk::Extent3D {
                    width,
                    height,
                    depth: 1,
                })
                .mip_levels(1)
                .array_layers(1)
                .samples(vk::SampleCountFlags::TYPE_1)
                .tiling(vk::ImageTiling::OPTIMAL)
                .usage(
                    vk::ImageUsageFlags::COLOR_ATTACHMENT
                        | vk::ImageUsageFlags::TRANSFER_SRC
                        | vk::ImageUsageFlags::TRANSFER_DST,
                )
                .initial_layout(vk::ImageLayout::UNDEFINED);
            let image = gpu.device.create_image(&ii, None).unwrap();
            let mem = gpu.memory(
                gpu.device.get_image_memory_requirements(image),
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
            );
            gpu.device.bind_image_memory(image, mem, 0).unwrap();
            s.images.push(image);
            s.memory.push(mem);
        }
        s
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
            .image_color_space(vk::ColorSpaceKHR::SRGB_NONLINEAR)
            .image_extent(self.extent)
            .image_array_layers(1)
            .image_usage(
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC | extra,
            )
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
    }

    /// The "app" frame: clears image `i` to [`CLEAR`] and leaves it in
    /// PRESENT_SRC_KHR, signalling `done` like a render before present.
    unsafe fn app_frame(&self, gpu: &Gpu, i: usize, done: vk::Semaphore) {
        let image = self.images[i];
        // The clear value is in the image's numeric format: linear for SRGB.
        let f = |b: u8| {
            let c = b as f32 / 255.0;
            if view::is_srgb(self.format) {
                view::srgb_to_linear(c)
            } else {
                c
            }
        };
        let color = vk::ClearColorValue {
            float32: [f(CLEAR[0]), f(CLEAR[1]), f(CLEAR[2]), 1.0],
        };
        gpu.run(&[], &[done], |cb| {
            let d = &gpu.device;
            let b = [barrier(
                image,
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            )];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &b,
            );
            d.cmd_clear_color_image(
                cb,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &color,
                &[color_range()],
            );
            let b = [barrier(
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::ImageLayout::PRESENT_SRC_KHR,
            )];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &b,
            );
        });
    }

    /// The "present": waits on `wait`, reads image `i` back as RGBA bytes.
    unsafe fn read_back(&self, gpu: &Gpu, i: usize, wait: vk::Semaphore) -> Vec<u8> {
        let d = &gpu.device;
        let (w, h) = (self.extent.width, self.extent.height);
        let size = u64::from(w * h * 4);
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
        gpu.run(&[wait], &[], |cb| {
            let b = [barrier(
                image,
                vk::ImageLayout::PRESENT_SRC_KHR,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            )];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &b,
            );
            let region = [vk::BufferImageCopy::default()
                .image_subresource(vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: 0,
                    base_array_layer: 0,
                    layer_count: 1,
                })
                .image_extent(vk::Extent3D {
                    width: w,
                    height: h,
                    depth: 1,
                })];
            d.cmd_copy_image_to_buffer(
                cb,
                image,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                buf,
                &region,
            );
            let b = [barrier(
                image,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                vk::ImageLayout::PRESENT_SRC_KHR,
            )];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &b,
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

    unsafe fn destroy(self, gpu: &Gpu) {
        for (i, m) in self.images.into_iter().zip(self.memory) {
            gpu.device.destroy_image(i, None);
            gpu.device.free_memory(m, None);
        }
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
            stutter_count: 3,
            stutter_frames: vec![100, 180, 260],
            osc: false,
        }),
        window_s: 10.0,
        recent_ms,
        recent_stutter,
        last_frame_ms: 16.7,
        ring_overflows: 0,
        counters: Vec::new(),
        last_stutter: None,
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

/// Renders `frames` HUD frames into a fake swapchain and returns the last
/// image's pixels.
unsafe fn render(
    gpu: &Gpu,
    format: vk::Format,
    w: u32,
    h: u32,
    config: &Config,
    panel: bool,
    name: &str,
) -> Vec<u8> {
    let sc = FakeSwapchain::new(gpu, format, w, h, 3);
    let dev = gpu.hud_device();
    let mut hud =
        SwapchainHud::new(&dev, &sc.create_info(panel), &sc.images, config).expect("HUD setup");
    assert_eq!(hud.uses_panel(), panel);
    let sem = gpu
        .device
        .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
        .unwrap();
    let stats = stats();
    let mut last = Vec::new();
    // More frames than images: every slot and fence gets reused.
    for frame in 0..7 {
        let i = frame % sc.images.len();
        sc.app_frame(gpu, i, sem);
        let done = hud
            .draw(&dev, gpu.family, i as u32, &[sem], &stats)
            .expect("HUD draw");
        last = sc.read_back(gpu, i, done);
    }
    hud.destroy(&dev);
    gpu.device.destroy_semaphore(sem, None);
    sc.destroy(gpu);
    save_png(&last, w, h, name);
    last
}

fn validation_errors() -> Vec<String> {
    VALIDATION.lock().unwrap().clone()
}

/// Both HUD paths on UNORM and SRGB: the app's frame kept outside the HUD,
/// the HUD's colours exact on both encodings.
unsafe fn check_colours(panel: bool) {
    let gpu = Gpu::new();
    let config = Config::default();
    let (w, h) = (1280, 720);
    let mode = if panel { "panel" } else { "direct" };
    let unorm = render(
        &gpu,
        vk::Format::B8G8R8A8_UNORM,
        w,
        h,
        &config,
        panel,
        &format!("offscreen_{mode}_unorm_720p"),
    );
    let srgb = render(
        &gpu,
        vk::Format::B8G8R8A8_SRGB,
        w,
        h,
        &config,
        panel,
        &format!("offscreen_{mode}_srgb_720p"),
    );
    let errors = validation_errors();
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
        let hud_changed = (0..300usize)
            .flat_map(|y| (0..300usize).map(move |x| (y, x)))
            .filter(|&(y, x)| {
                let q = &px[(y * w as usize + x) * 4..][..3];
                q.iter().zip(&CLEAR).any(|(a, b)| a.abs_diff(*b) > 3)
            })
            .count();
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
    if validated {
        assert!(
            errors.is_empty(),
            "validation errors:\n{}",
            errors.join("\n")
        );
    } else {
        eprintln!("VK_LAYER_KHRONOS_validation not installed: validation not checked");
    }
}

#[test]
fn hud_draws_over_the_app_frame_with_correct_colours_on_unorm_and_srgb() {
    unsafe { check_colours(false) }
}

#[test]
fn cached_panel_is_copied_with_correct_colours_on_unorm_and_srgb() {
    unsafe { check_colours(true) }
}

#[test]
fn hud_scales_with_the_swapchain_and_sits_in_the_configured_corner() {
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
            let px = render(
                &gpu,
                vk::Format::R8G8B8A8_UNORM,
                w,
                h,
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
        let errors = validation_errors();
        let validated = gpu.validated;
        gpu.destroy();
        if validated {
            assert!(
                errors.is_empty(),
                "validation errors:\n{}",
                errors.join("\n")
            );
        }
    }
}

#[test]
fn setup_failure_is_an_error_not_a_crash() {
    unsafe {
        let gpu = Gpu::new();
        let dev = gpu.hud_device();
        let sc = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_UNORM, 320, 240, 2);
        // Images that cannot be colour attachments: the HUD declines, the
        // layer logs the error and keeps capturing.
        let info = sc
            .create_info(false)
            .image_usage(vk::ImageUsageFlags::TRANSFER_DST);
        let err = SwapchainHud::new(&dev, &info, &sc.images, &Config::default())
            .err()
            .expect("must fail");
        assert!(err.to_string().contains("colour attachments"), "{err}");
        sc.destroy(&gpu);
        gpu.destroy();
    }
}

#[test]
fn several_swapchains_draw_alternately() {
    unsafe {
        let gpu = Gpu::new();
        let dev = gpu.hud_device();
        let config = Config::default();
        let a = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_UNORM, 640, 480, 2);
        let b = FakeSwapchain::new(&gpu, vk::Format::B8G8R8A8_SRGB, 800, 600, 3);
        // One draws directly, the other through its cached panel.
        let mut ha = SwapchainHud::new(&dev, &a.create_info(false), &a.images, &config).unwrap();
        let mut hb = SwapchainHud::new(&dev, &b.create_info(true), &b.images, &config).unwrap();
        let sem = gpu
            .device
            .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            .unwrap();
        let stats = stats();
        let bar = to_bytes(view::colors::BAR);
        for frame in 0..6 {
            for (sc, hud) in [(&a, &mut ha), (&b, &mut hb)] {
                let i = frame % sc.images.len();
                sc.app_frame(&gpu, i, sem);
                let done = hud
                    .draw(&dev, gpu.family, i as u32, &[sem], &stats)
                    .unwrap();
                let px = sc.read_back(&gpu, i, done);
                // imgui hides an auto-sized window on its first frame.
                if frame > 0 {
                    assert!(
                        count_near(&px, bar, 3) > 1000,
                        "frame {frame}: no graph bars"
                    );
                }
            }
        }
        ha.destroy(&dev);
        hb.destroy(&dev);
        gpu.device.destroy_semaphore(sem, None);
        a.destroy(&gpu);
        b.destroy(&gpu);
        let errors = validation_errors();
        let validated = gpu.validated;
        gpu.destroy();
        if validated {
            assert!(
                errors.is_empty(),
                "validation errors:\n{}",
                errors.join("\n")
            );
        }
    }
}
