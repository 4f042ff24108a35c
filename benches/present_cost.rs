//! What a Vulkan layer adds on the game's thread to each `vkQueuePresentKHR`
//! and `vkQueueSubmit`, and what its own threads cost: steadyhud (HUD
//! hidden, HUD shown) and MangoHud (shown, hidden), measured the same way.
//!
//! Whole-process FPS cannot resolve a sub-microsecond cost on a noisy
//! machine (../shared/TESTBED.md), and a present to a real window spends
//! hundreds of microseconds in the window system. So this bench is the
//! game and the bottom of the layer chain at once:
//!
//! - **the game**: one thread that, per frame, submits a pre-recorded
//!   command buffer (clear the image, move it to `PRESENT_SRC`) that
//!   signals a semaphore, idles the queue, presents that image waiting on
//!   the semaphore, idles the queue again and sleeps to the next tick; only
//!   the submit and the present calls are timed, each by two clock reads
//!   around it (so a software driver's waiting for earlier work is never
//!   counted as the layer's);
//! - **the layer under test**, entered exactly as the Vulkan loader enters
//!   it: its negotiation or `vkGetInstanceProcAddr`, `vkCreateInstance` and
//!   `vkCreateDevice` with the loader's link chain — steadyhud's own code
//!   (this package's library), or MangoHud's `libMangoHud.so`;
//! - **the next layer below it** (a shim in this file): every call goes to
//!   the real driver (Mesa's lavapipe through the real loader) except the
//!   window system, which is replaced by a swapchain of real images and a
//!   present that returns at once (its wait semaphores are consumed by an
//!   empty submit after the timed call). So the HUD really records, uploads
//!   and submits its draws on the driver.
//!
//! Mode `none` calls the shim directly (the same present, no layer); the
//! difference of a mode's median from `none`'s is what the layer adds.
//! Two figures per present: **in the frame loop** (the game's thread comes
//! back from sleeping and idling the queue: caches and branch predictors
//! cold, as in a game, whose frame's work evicts them), and **warm** (where
//! no HUD draws, the same present issued again at once: the code's own
//! cost). `+process %` is the CPU of every thread of the process against
//! `none`'s (MangoHud's threads are unnamed); steadyhud's threads are also
//! listed by name. `--no-warm` leaves the second present out (for the
//! threads' CPU share, which the extra presents would change).
//!
//!   cargo bench --bench present_cost                 # every mode, ABBA rounds
//!   cargo bench --bench present_cost -- --fps 144    # the pacing (default 500)
//!   cargo bench --bench present_cost -- --size 320x240 --fps 1000 --no-warm
//!   cargo bench --bench present_cost -- --child hidden --fps 60 --frames 600
//!
//! `scripts/present-cost.sh` runs it under a private Xvfb and config (the
//! hotkeys poll X like in a game) and at 60, 144 and 1,000 presents per
//! second for the threads' CPU share. Results: docs/measurements.md.

#[path = "../tests/rig/mod.rs"]
mod rig;

use ash::vk;
use rig::{Before, FakeSwapchain};
use std::ffi::{c_char, c_void, CStr};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use steadyhud::layer::loader::{
    LayerDeviceCreateInfo, LayerDeviceLink, LayerFunction, LayerInstanceCreateInfo,
    LayerInstanceLink, NegotiateLayerInterface, LAYER_INTERFACE_VERSION,
    LAYER_NEGOTIATE_INTERFACE_STRUCT,
};

extern "system" {
    /// The layer's one exported Vulkan name (this package's library).
    fn vkNegotiateLoaderLayerInterfaceVersion(p: *mut NegotiateLayerInterface) -> vk::Result;
}

/// MangoHud's layer library (Debian's `mangohud` package).
const MANGOHUD_LIB: &str = "/usr/lib/x86_64-linux-gnu/mangohud/libMangoHud.so";

/// The measured setups.
const MODES: [&str; 10] = [
    "none",
    "hidden",
    "shown",
    "preset0",
    "preset1",
    "preset3",
    "strip",
    "alpha0.5",
    "mangohud",
    "mangohud-hidden",
];

/// steadyhud's setups and their config: HUD hidden; shown (the standard
/// preset, the default); each other preset; a strip; a see-through
/// background (drawn into the frame, no cached panel).
const STEADYHUD_MODES: [(&str, &str); 7] = [
    ("hidden", "hud_hidden=1"),
    ("shown", "hud_hidden=0"),
    ("preset0", "preset=0"),
    ("preset1", "preset=1"),
    ("preset3", "preset=3"),
    ("strip", "horizontal=1"),
    ("alpha0.5", "hud_alpha=0.5"),
];

/// The config of a steadyhud setup (`None`: not one).
fn steadyhud_config(mode: &str) -> Option<&'static str> {
    STEADYHUD_MODES
        .iter()
        .find(|(m, _)| *m == mode)
        .map(|(_, c)| *c)
}

/// Swapchain images, and the size when `--size` gives none.
const IMAGES: u32 = 3;
const DEFAULT_SIZE: (u32, u32) = (1280, 720);

/// The swapchain size of this run (`--size WxH`).
static EXTENT: OnceLock<vk::Extent2D> = OnceLock::new();

fn extent() -> vk::Extent2D {
    *EXTENT.get_or_init(|| vk::Extent2D {
        width: DEFAULT_SIZE.0,
        height: DEFAULT_SIZE.1,
    })
}
const FORMAT: vk::Format = vk::Format::B8G8R8A8_UNORM;

// ---------------------------------------------------------------------------
// The shim: the next layer below the one under test.
// ---------------------------------------------------------------------------

/// The real loader's entry points and the shim's fake swapchains.
struct Shim {
    _entry: ash::Entry,
    real_gipa: vk::PFN_vkGetInstanceProcAddr,
    instance: Mutex<vk::Instance>,
    device: Mutex<Option<ash::Device>>,
    swapchains: Mutex<Vec<FakeSwapchain>>,
}

static SHIM: OnceLock<Shim> = OnceLock::new();

fn shim() -> &'static Shim {
    SHIM.get_or_init(|| {
        // SAFETY: loading the system's Vulkan loader.
        let entry = unsafe { ash::Entry::load() }.expect("no Vulkan loader (libvulkan1)");
        let real_gipa = entry.static_fn().get_instance_proc_addr;
        Shim {
            _entry: entry,
            real_gipa,
            instance: Mutex::new(vk::Instance::null()),
            device: Mutex::new(None),
            swapchains: Mutex::new(Vec::new()),
        }
    })
}

/// A typed function from a `PFN_vkVoidFunction`.
///
/// # Safety
/// `F` is the function-pointer type of the function `f` points to.
unsafe fn cast<F: Copy>(f: vk::PFN_vkVoidFunction) -> Option<F> {
    // SAFETY: same size (a function pointer); the type is the caller's.
    f.map(|f| unsafe { std::mem::transmute_copy::<unsafe extern "system" fn(), F>(&f) })
}

/// The real loader's function `name` for `instance`.
fn real_instance_fn<F: Copy>(instance: vk::Instance, name: &CStr) -> F {
    // SAFETY: the loader's gipa with a NUL-terminated name; F is the
    // caller's type for that name.
    unsafe { cast((shim().real_gipa)(instance, name.as_ptr())) }
        .unwrap_or_else(|| panic!("the loader has no {name:?}"))
}

/// A `pNext` chain without the loader's link entries (what the real
/// loader below must not see): the create infos of this bench have no
/// other entries.
fn strip_links(p: *const c_void, loader: vk::StructureType) -> *const c_void {
    let mut p = p;
    while !p.is_null() {
        // SAFETY: entries of a valid chain start with sType and pNext.
        let base = unsafe { &*(p as *const vk::BaseInStructure) };
        if base.s_type != loader {
            return p;
        }
        p = base.p_next as *const c_void;
    }
    p
}

unsafe extern "system" fn shim_create_instance(
    info: *const vk::InstanceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Instance,
) -> vk::Result {
    // SAFETY: the caller's valid create info.
    let mut own = unsafe { *info };
    own.p_next = strip_links(own.p_next, vk::StructureType::LOADER_INSTANCE_CREATE_INFO);
    let create: vk::PFN_vkCreateInstance =
        real_instance_fn(vk::Instance::null(), c"vkCreateInstance");
    // SAFETY: the real loader's vkCreateInstance with a valid create info.
    let r = unsafe { create(&own, alloc, out) };
    if r == vk::Result::SUCCESS {
        // SAFETY: `out` was written on success.
        *shim().instance.lock().unwrap() = unsafe { *out };
    }
    r
}

unsafe extern "system" fn shim_create_device(
    pd: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Device,
) -> vk::Result {
    let instance = *shim().instance.lock().unwrap();
    // SAFETY: the caller's valid create info.
    let mut own = unsafe { *info };
    own.p_next = strip_links(own.p_next, vk::StructureType::LOADER_DEVICE_CREATE_INFO);
    let create: vk::PFN_vkCreateDevice = real_instance_fn(instance, c"vkCreateDevice");
    // SAFETY: the real vkCreateDevice with a valid create info.
    let r = unsafe { create(pd, &own, alloc, out) };
    if r == vk::Result::SUCCESS {
        let real: ash::Instance =
            // SAFETY: the live instance this shim created.
            unsafe { ash::Instance::load(&ash::StaticFn { get_instance_proc_addr: shim().real_gipa }, instance) };
        // SAFETY: `out` is the new live device of `real`.
        *shim().device.lock().unwrap() = Some(unsafe { ash::Device::load(real.fp_v1_0(), *out) });
    }
    r
}

/// The loader's `vkSetDeviceLoaderData`: a dispatchable object made by a
/// layer gets its device's dispatch pointer.
unsafe extern "system" fn set_device_loader_data(
    device: vk::Device,
    object: *mut c_void,
) -> vk::Result {
    // SAFETY: both are dispatchable objects: their first word is the
    // loader's dispatch pointer, which the driver leaves to the loader.
    unsafe { *(object as *mut usize) = *(vk::Handle::as_raw(device) as *const usize) };
    vk::Result::SUCCESS
}

fn real_device() -> ash::Device {
    shim()
        .device
        .lock()
        .unwrap()
        .clone()
        .expect("device created")
}

unsafe extern "system" fn shim_get_device_queue(
    device: vk::Device,
    family: u32,
    index: u32,
    out: *mut vk::Queue,
) {
    let d = real_device();
    // SAFETY: the app's arguments for the live device.
    unsafe { (d.fp_v1_0().get_device_queue)(device, family, index, out) };
    // As the loader's trampoline does: the queue dispatches like its device.
    // SAFETY: `*out` is a live dispatchable queue.
    let _ = unsafe { set_device_loader_data(device, vk::Handle::as_raw(*out) as *mut c_void) };
}

unsafe extern "system" fn shim_surface_caps(
    _: vk::PhysicalDevice,
    _: vk::SurfaceKHR,
    caps: *mut vk::SurfaceCapabilitiesKHR,
) -> vk::Result {
    // SAFETY: the caller's out pointer.
    unsafe {
        *caps = vk::SurfaceCapabilitiesKHR {
            min_image_count: IMAGES,
            max_image_count: IMAGES,
            current_extent: extent(),
            min_image_extent: extent(),
            max_image_extent: extent(),
            max_image_array_layers: 1,
            supported_transforms: vk::SurfaceTransformFlagsKHR::IDENTITY,
            current_transform: vk::SurfaceTransformFlagsKHR::IDENTITY,
            supported_composite_alpha: vk::CompositeAlphaFlagsKHR::OPAQUE,
            supported_usage_flags: vk::ImageUsageFlags::COLOR_ATTACHMENT
                | vk::ImageUsageFlags::TRANSFER_DST
                | vk::ImageUsageFlags::TRANSFER_SRC,
        }
    };
    vk::Result::SUCCESS
}

unsafe extern "system" fn shim_create_swapchain(
    _: vk::Device,
    info: *const vk::SwapchainCreateInfoKHR,
    _: *const vk::AllocationCallbacks,
    out: *mut vk::SwapchainKHR,
) -> vk::Result {
    let d = real_device();
    // SAFETY: the caller's valid create info.
    let info = unsafe { &*info };
    // SAFETY: plain image and memory creation on the live device; the
    // first memory type each image allows.
    let fake = unsafe {
        FakeSwapchain::create(
            &d,
            info.image_format,
            info.image_extent,
            info.image_usage,
            IMAGES as usize,
            |req| req.memory_type_bits.trailing_zeros(),
        )
    };
    let mut all = shim().swapchains.lock().unwrap();
    all.push(fake);
    // SAFETY: the caller's out pointer; handles are 1-based indexes.
    unsafe { *out = vk::Handle::from_raw(all.len() as u64) };
    vk::Result::SUCCESS
}

unsafe extern "system" fn shim_destroy_swapchain(
    _: vk::Device,
    sc: vk::SwapchainKHR,
    _: *const vk::AllocationCallbacks,
) {
    let d = real_device();
    let mut all = shim().swapchains.lock().unwrap();
    if let Some(fake) = all.get_mut((vk::Handle::as_raw(sc) as usize).wrapping_sub(1)) {
        // SAFETY: idle images of this shim.
        unsafe { fake.free(&d) };
    }
}

unsafe extern "system" fn shim_get_swapchain_images(
    _: vk::Device,
    sc: vk::SwapchainKHR,
    count: *mut u32,
    out: *mut vk::Image,
) -> vk::Result {
    let all = shim().swapchains.lock().unwrap();
    let Some(fake) = all.get((vk::Handle::as_raw(sc) as usize).wrapping_sub(1)) else {
        return vk::Result::ERROR_SURFACE_LOST_KHR;
    };
    // SAFETY: the caller's count and array of *count images.
    unsafe {
        if out.is_null() {
            *count = fake.images.len() as u32;
        } else {
            let n = (*count as usize).min(fake.images.len());
            std::ptr::copy_nonoverlapping(fake.images.as_ptr(), out, n);
            *count = n as u32;
        }
    }
    vk::Result::SUCCESS
}

/// The window system's present: returns at once, keeping its wait
/// semaphores for [`consume_presented`], which the game calls after the
/// timed call (a real present engine waits on them too).
unsafe extern "system" fn shim_present(
    _: vk::Queue,
    info: *const vk::PresentInfoKHR,
) -> vk::Result {
    // SAFETY: the caller's valid present info and its semaphore array.
    let waits = unsafe {
        let info = &*info;
        std::slice::from_raw_parts(info.p_wait_semaphores, info.wait_semaphore_count as usize)
    };
    PRESENTED.lock().unwrap().extend_from_slice(waits);
    vk::Result::SUCCESS
}

/// Semaphores the shim's presents were asked to wait on.
static PRESENTED: Mutex<Vec<vk::Semaphore>> = Mutex::new(Vec::new());

/// Consumes the presented semaphores with an empty submit on `queue`, and
/// idles it (outside the timed calls).
fn consume_presented(queue: vk::Queue) {
    let d = real_device();
    let waits = std::mem::take(&mut *PRESENTED.lock().unwrap());
    let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; waits.len()];
    let submit = vk::SubmitInfo::default()
        .wait_semaphores(&waits)
        .wait_dst_stage_mask(&stages);
    // SAFETY: the game's queue, with semaphores pending a signal.
    unsafe {
        d.queue_submit(queue, &[submit], vk::Fence::null()).unwrap();
        d.queue_wait_idle(queue).unwrap();
    }
}

unsafe extern "system" fn shim_acquire(
    _: vk::Device,
    _: vk::SwapchainKHR,
    _: u64,
    _: vk::Semaphore,
    _: vk::Fence,
    index: *mut u32,
) -> vk::Result {
    // SAFETY: the caller's out pointer.
    unsafe { *index = 0 };
    vk::Result::SUCCESS
}

fn void(f: *const ()) -> vk::PFN_vkVoidFunction {
    // SAFETY: `f` is one of this file's extern "system" functions.
    Some(unsafe { std::mem::transmute::<*const (), unsafe extern "system" fn()>(f) })
}

unsafe extern "system" fn shim_gipa(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: a NUL-terminated name (Vulkan's contract).
    let n = unsafe { CStr::from_ptr(name) }.to_bytes();
    match n {
        b"vkGetInstanceProcAddr" => void(shim_gipa as *const ()),
        b"vkCreateInstance" => void(shim_create_instance as *const ()),
        b"vkCreateDevice" => void(shim_create_device as *const ()),
        b"vkGetDeviceProcAddr" => void(shim_gdpa as *const ()),
        b"vkGetPhysicalDeviceSurfaceCapabilitiesKHR" => void(shim_surface_caps as *const ()),
        _ => {
            if let Some(f) = device_level(n) {
                return f;
            }
            // SAFETY: the loader's gipa with the caller's arguments.
            unsafe { (shim().real_gipa)(instance, name) }
        }
    }
}

fn device_level(n: &[u8]) -> Option<vk::PFN_vkVoidFunction> {
    Some(match n {
        b"vkGetDeviceQueue" => void(shim_get_device_queue as *const ()),
        b"vkCreateSwapchainKHR" => void(shim_create_swapchain as *const ()),
        b"vkDestroySwapchainKHR" => void(shim_destroy_swapchain as *const ()),
        b"vkGetSwapchainImagesKHR" => void(shim_get_swapchain_images as *const ()),
        b"vkQueuePresentKHR" => void(shim_present as *const ()),
        b"vkAcquireNextImageKHR" => void(shim_acquire as *const ()),
        _ => return None,
    })
}

unsafe extern "system" fn shim_gdpa(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: a NUL-terminated name (Vulkan's contract).
    let n = unsafe { CStr::from_ptr(name) }.to_bytes();
    if n == b"vkGetDeviceProcAddr" {
        return void(shim_gdpa as *const ());
    }
    if let Some(f) = device_level(n) {
        return f;
    }
    let instance = *shim().instance.lock().unwrap();
    let gdpa: vk::PFN_vkGetDeviceProcAddr = real_instance_fn(instance, c"vkGetDeviceProcAddr");
    // SAFETY: the loader's gdpa with the caller's arguments.
    unsafe { gdpa(device, name) }
}

// ---------------------------------------------------------------------------
// The layer under test: its two proc-address functions.
// ---------------------------------------------------------------------------

struct Top {
    gipa: vk::PFN_vkGetInstanceProcAddr,
    gdpa: vk::PFN_vkGetDeviceProcAddr,
    /// Whether the top is a layer that must be handed the link chain.
    layer: bool,
    _lib: Option<libloading::Library>,
}

fn top(mode: &str) -> Top {
    match mode {
        "none" => Top {
            gipa: shim_gipa,
            gdpa: shim_gdpa,
            layer: false,
            _lib: None,
        },
        m if steadyhud_config(m).is_some() => {
            let mut n = NegotiateLayerInterface {
                s_type: LAYER_NEGOTIATE_INTERFACE_STRUCT,
                p_next: std::ptr::null_mut(),
                loader_layer_interface_version: LAYER_INTERFACE_VERSION,
                pfn_get_instance_proc_addr: None,
                pfn_get_device_proc_addr: None,
                pfn_get_physical_device_proc_addr: None,
            };
            // SAFETY: a valid negotiation struct, as the loader passes.
            let r = unsafe { vkNegotiateLoaderLayerInterfaceVersion(&mut n) };
            assert_eq!(r, vk::Result::SUCCESS);
            Top {
                gipa: n.pfn_get_instance_proc_addr.unwrap(),
                gdpa: n.pfn_get_device_proc_addr.unwrap(),
                layer: true,
                _lib: None,
            }
        }
        _ => {
            // SAFETY: MangoHud's layer library; its initialisers are the
            // ones the loader would run.
            let lib = unsafe { libloading::Library::new(MANGOHUD_LIB) }
                .unwrap_or_else(|e| panic!("{MANGOHUD_LIB}: {e} (apt-get install mangohud)"));
            // SAFETY: the names its manifest gives, with these types.
            let (gipa, gdpa) = unsafe {
                (
                    *lib.get::<vk::PFN_vkGetInstanceProcAddr>(b"overlay_GetInstanceProcAddr\0")
                        .unwrap(),
                    *lib.get::<vk::PFN_vkGetDeviceProcAddr>(b"overlay_GetDeviceProcAddr\0")
                        .unwrap(),
                )
            };
            Top {
                gipa,
                gdpa,
                layer: true,
                _lib: Some(lib),
            }
        }
    }
}

impl Top {
    fn instance_fn<F: Copy>(&self, instance: vk::Instance, name: &CStr) -> F {
        // SAFETY: the top's gipa with a NUL-terminated name; F is the
        // caller's type for that name.
        unsafe { cast((self.gipa)(instance, name.as_ptr())) }
            .unwrap_or_else(|| panic!("{name:?} missing"))
    }
    fn device_fn<F: Copy>(&self, device: vk::Device, name: &CStr) -> F {
        // SAFETY: as above, at device level.
        unsafe { cast((self.gdpa)(device, name.as_ptr())) }
            .unwrap_or_else(|| panic!("{name:?} missing"))
    }
}

// ---------------------------------------------------------------------------
// The game.
// ---------------------------------------------------------------------------

/// One child's results.
struct Run {
    present_ns: Vec<u64>,
    /// The second present of each frame, right after the first (`--warm`).
    warm_ns: Vec<u64>,
    submit_ns: Vec<u64>,
    /// (thread name, CPU ns during the timed frames) of every thread.
    threads: Vec<(String, u64)>,
    wall_ns: u64,
}

fn now_ns() -> u64 {
    steadyhud_sys::clock::now_ns()
}

/// CPU time (ns) of every thread of this process: (tid, name, ns). The
/// name is from `/proc/self/task/TID/stat`; the time from the thread's CPU
/// clock (Linux's `MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`), which
/// counts nanoseconds where `stat`'s utime + stime count 10 ms ticks.
fn thread_cpu() -> Vec<(u32, String, u64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(tid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        let clock = ((!(tid as libc::clockid_t)) << 3) | 6;
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out pointer; an ended thread's clock just fails.
        if unsafe { libc::clock_gettime(clock, &mut ts) } == 0 {
            out.push((
                tid,
                name,
                ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
            ));
        }
    }
    out
}

fn run_child(mode: &str, fps: u32, frames: usize, warmup: usize, warm: bool) -> Run {
    let top = top(mode);
    let s = shim();
    // A HUD that draws cannot present one image twice (its semaphores and
    // the image are the app's frame's): warm presents only where none draws.
    let draws = mode == "mangohud" || (mode != "hidden" && steadyhud_config(mode).is_some());
    // Instance, through the top as the loader would call it.
    let app = vk::ApplicationInfo::default()
        .application_name(c"present_cost")
        .api_version(vk::API_VERSION_1_1);
    let exts = [c"VK_KHR_surface".as_ptr()];
    let mut ilink = LayerInstanceLink {
        p_next: std::ptr::null_mut(),
        pfn_next_get_instance_proc_addr: shim_gipa,
        pfn_next_get_physical_device_proc_addr: None,
    };
    let ichain = LayerInstanceCreateInfo {
        s_type: vk::StructureType::LOADER_INSTANCE_CREATE_INFO,
        p_next: std::ptr::null(),
        function: LayerFunction::LAYER_LINK_INFO,
        u: [&mut ilink as *mut _ as *mut c_void, std::ptr::null_mut()],
    };
    let mut ici = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_extension_names(&exts);
    if top.layer {
        ici.p_next = &ichain as *const _ as *const c_void;
    }
    let create_instance: vk::PFN_vkCreateInstance =
        top.instance_fn(vk::Instance::null(), c"vkCreateInstance");
    let mut instance = vk::Instance::null();
    // SAFETY: a valid create info with the loader's chain.
    let r = unsafe { create_instance(&ici, std::ptr::null(), &mut instance) };
    assert_eq!(r, vk::Result::SUCCESS, "{mode}: vkCreateInstance");

    let enumerate: vk::PFN_vkEnumeratePhysicalDevices =
        top.instance_fn(instance, c"vkEnumeratePhysicalDevices");
    let mut n = 1u32;
    let mut pd = vk::PhysicalDevice::null();
    // SAFETY: room for one physical device.
    let r = unsafe { enumerate(instance, &mut n, &mut pd) };
    assert!(r == vk::Result::SUCCESS || r == vk::Result::INCOMPLETE);
    // lavapipe: one family, with graphics.
    let family = 0u32;

    let dev_exts = [c"VK_KHR_swapchain".as_ptr()];
    let prio = [1.0f32];
    let qci = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(family)
        .queue_priorities(&prio)];
    let mut dlink = LayerDeviceLink {
        p_next: std::ptr::null_mut(),
        pfn_next_get_instance_proc_addr: shim_gipa,
        pfn_next_get_device_proc_addr: shim_gdpa,
    };
    let dchain_cb = LayerDeviceCreateInfo {
        s_type: vk::StructureType::LOADER_DEVICE_CREATE_INFO,
        p_next: std::ptr::null(),
        function: LayerFunction::LOADER_DATA_CALLBACK,
        u: [set_device_loader_data as *mut c_void],
    };
    let dchain = LayerDeviceCreateInfo {
        s_type: vk::StructureType::LOADER_DEVICE_CREATE_INFO,
        p_next: &dchain_cb as *const _ as *const c_void,
        function: LayerFunction::LAYER_LINK_INFO,
        u: [&mut dlink as *mut _ as *mut c_void],
    };
    let mut dci = vk::DeviceCreateInfo::default()
        .queue_create_infos(&qci)
        .enabled_extension_names(&dev_exts);
    if top.layer {
        dci.p_next = &dchain as *const _ as *const c_void;
    }
    let create_device: vk::PFN_vkCreateDevice = top.instance_fn(instance, c"vkCreateDevice");
    let mut device = vk::Device::null();
    // SAFETY: a valid create info with the loader's chain.
    let r = unsafe { create_device(pd, &dci, std::ptr::null(), &mut device) };
    assert_eq!(r, vk::Result::SUCCESS, "{mode}: vkCreateDevice");

    let get_queue: vk::PFN_vkGetDeviceQueue = top.device_fn(device, c"vkGetDeviceQueue");
    let mut queue = vk::Queue::null();
    // SAFETY: queue 0 of the family the device was created with.
    unsafe { get_queue(device, family, 0, &mut queue) };

    let create_sc: vk::PFN_vkCreateSwapchainKHR = top.device_fn(device, c"vkCreateSwapchainKHR");
    let sci = vk::SwapchainCreateInfoKHR::default()
        .surface(vk::Handle::from_raw(0x5eed))
        .min_image_count(IMAGES)
        .image_format(FORMAT)
        .image_color_space(vk::ColorSpaceKHR::SRGB_NONLINEAR)
        .image_extent(extent())
        .image_array_layers(1)
        .image_usage(vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_DST)
        .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
        .pre_transform(vk::SurfaceTransformFlagsKHR::IDENTITY)
        .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
        .present_mode(vk::PresentModeKHR::FIFO)
        .clipped(true);
    let mut swapchain = vk::SwapchainKHR::null();
    // SAFETY: a valid create info (the shim ignores the surface).
    let r = unsafe { create_sc(device, &sci, std::ptr::null(), &mut swapchain) };
    assert_eq!(r, vk::Result::SUCCESS, "{mode}: vkCreateSwapchainKHR");
    let images = {
        let all = s.swapchains.lock().unwrap();
        all.last().unwrap().images.clone()
    };

    // The game's own objects, made directly on the driver (not timed).
    let d = real_device();
    let present: vk::PFN_vkQueuePresentKHR = top.device_fn(device, c"vkQueuePresentKHR");
    let submit: vk::PFN_vkQueueSubmit = top.device_fn(device, c"vkQueueSubmit");
    // SAFETY: plain object creation and recording on the live device.
    let (cmds, sems) = unsafe {
        let pool = d
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(family),
                None,
            )
            .unwrap();
        let cmds = d
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .command_buffer_count(IMAGES),
            )
            .unwrap();
        for (k, (&cmd, &image)) in cmds.iter().zip(&images).enumerate() {
            let _ = set_device_loader_data(device, vk::Handle::as_raw(cmd) as *mut c_void);
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .unwrap();
            let shade = 0.2 + 0.2 * k as f32;
            let color = vk::ClearColorValue {
                float32: [shade, 0.3, 0.5, 1.0],
            };
            // The game idles its queue every frame: nothing to wait for.
            rig::record_clear(&d, cmd, image, &color, Before::Nothing);
            d.end_command_buffer(cmd).unwrap();
        }
        let sems: Vec<vk::Semaphore> = (0..IMAGES)
            .map(|_| {
                d.create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                    .unwrap()
            })
            .collect();
        (cmds, sems)
    };

    let period = Duration::from_secs_f64(1.0 / fps as f64);
    let mut present_ns = Vec::with_capacity(frames);
    let mut warm_ns = Vec::with_capacity(frames);
    let mut submit_ns = Vec::with_capacity(frames);
    let mut cpu_before = Vec::new();
    let mut wall0 = 0;
    let start = Instant::now();
    for i in 0..warmup + frames {
        if i == warmup {
            cpu_before = thread_cpu();
            wall0 = now_ns();
        }
        let k = i % IMAGES as usize;
        let si = vk::SubmitInfo::default()
            .command_buffers(std::slice::from_ref(&cmds[k]))
            .signal_semaphores(std::slice::from_ref(&sems[k]));
        let t0 = now_ns();
        // SAFETY: the game's own submit on its queue.
        let r = unsafe { submit(queue, 1, &si, vk::Fence::null()) };
        let t1 = now_ns();
        assert_eq!(r, vk::Result::SUCCESS, "{mode}: submit");
        // The frame's GPU work ends before the present (not timed): a
        // software driver's waiting is not the layer's cost.
        // SAFETY: the game owns the queue.
        unsafe { d.queue_wait_idle(queue) }.unwrap();
        let index = k as u32;
        let pi = vk::PresentInfoKHR::default()
            .wait_semaphores(std::slice::from_ref(&sems[k]))
            .swapchains(std::slice::from_ref(&swapchain))
            .image_indices(std::slice::from_ref(&index));
        let t2 = now_ns();
        // SAFETY: the game's present of image k, rendered by the submit above.
        let r = unsafe { present(queue, &pi) };
        let t3 = now_ns();
        assert_eq!(r, vk::Result::SUCCESS, "{mode}: present");
        let mut t_warm = 0;
        if warm && !draws {
            // The same present again at once, on warm caches: the code's
            // own cost, without the misses a frame's other work causes.
            let again = vk::PresentInfoKHR::default()
                .swapchains(std::slice::from_ref(&swapchain))
                .image_indices(std::slice::from_ref(&index));
            let t4 = now_ns();
            // SAFETY: as above (nothing to wait on: the image is presented).
            let r = unsafe { present(queue, &again) };
            t_warm = now_ns() - t4;
            assert_eq!(r, vk::Result::SUCCESS, "{mode}: present again");
        }
        consume_presented(queue);
        if i >= warmup {
            submit_ns.push(t1 - t0);
            present_ns.push(t3 - t2);
            if warm && !draws {
                warm_ns.push(t_warm);
            }
        }
        let due = start + period * (i as u32 + 1);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    let wall_ns = now_ns() - wall0;
    let cpu_after = thread_cpu();
    let threads = cpu_after
        .iter()
        .map(|(tid, name, after)| {
            let before = cpu_before
                .iter()
                .find(|(t, _, _)| t == tid)
                .map_or(0, |b| b.2);
            (name.clone(), after.saturating_sub(before))
        })
        .collect();

    // Teardown through the top: the layer ends its logs.
    let destroy_sc: vk::PFN_vkDestroySwapchainKHR = top.device_fn(device, c"vkDestroySwapchainKHR");
    let destroy_device: vk::PFN_vkDestroyDevice = top.device_fn(device, c"vkDestroyDevice");
    let destroy_instance: vk::PFN_vkDestroyInstance =
        top.instance_fn(instance, c"vkDestroyInstance");
    // SAFETY: idle objects, destroyed in order; the game's own pool and
    // semaphores are left to the driver's device teardown.
    unsafe {
        d.device_wait_idle().unwrap();
        for sem in sems {
            d.destroy_semaphore(sem, None);
        }
        destroy_sc(device, swapchain, std::ptr::null());
        destroy_device(device, std::ptr::null());
        destroy_instance(instance, std::ptr::null());
    }
    Run {
        present_ns,
        warm_ns,
        submit_ns,
        threads,
        wall_ns,
    }
}

// ---------------------------------------------------------------------------
// The runs, and the table.
// ---------------------------------------------------------------------------

fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Prints one child's results as `key value` lines (read by the parent).
fn print_run(mode: &str, fps: u32, run: &Run) {
    let mut p = run.present_ns.clone();
    p.sort_unstable();
    let mut s = run.submit_ns.clone();
    s.sort_unstable();
    let mut w = run.warm_ns.clone();
    w.sort_unstable();
    // The HUD panel is re-rendered when its numbers change, ~10 times a
    // second: the slowest presents of that count are those frames.
    let seconds = run.wall_ns as f64 / 1e9;
    let rerender = ((seconds * 10.0).round() as usize).clamp(1, p.len().max(1));
    let top = &p[p.len().saturating_sub(rerender)..];
    println!(
        "result {mode} fps={fps} frames={} present_p50={} present_p99={} present_top10hz_p50={} warm_p50={} warm_p99={} submit_p50={} submit_p99={} seconds={seconds:.3}",
        p.len(),
        quantile(&p, 0.5),
        quantile(&p, 0.99),
        quantile(top, 0.5),
        quantile(&w, 0.5),
        quantile(&w, 0.99),
        quantile(&s, 0.5),
        quantile(&s, 0.99),
    );
    let all: u64 = run.threads.iter().map(|t| t.1).sum();
    println!(
        "process {mode} fps={fps} cpu_pct={:.3}",
        100.0 * all as f64 / run.wall_ns as f64
    );
    for (name, ns) in &run.threads {
        println!(
            "thread {mode} fps={fps} name={} cpu_ms={:.3} share_pct={:.4}",
            name.replace(' ', "_"),
            *ns as f64 / 1e6,
            100.0 * *ns as f64 / run.wall_ns as f64
        );
    }
}

/// The argument after `flag`, parsed.
fn arg<T: std::str::FromStr>(args: &[String], flag: &str) -> Option<T> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let fps: u32 = arg(&args, "--fps").unwrap_or(500);
    let frames: usize = arg(&args, "--frames").unwrap_or(3000);
    let warmup: usize = arg(&args, "--warmup").unwrap_or(300);
    let size: String =
        arg(&args, "--size").unwrap_or(format!("{}x{}", DEFAULT_SIZE.0, DEFAULT_SIZE.1));
    if let Some(mode) = arg::<String>(&args, "--child") {
        let (w, h) = size.split_once('x').expect("--size WxH");
        let _ = EXTENT.set(vk::Extent2D {
            width: w.parse().expect("--size WxH"),
            height: h.parse().expect("--size WxH"),
        });
        let run = run_child(
            &mode,
            fps,
            frames,
            warmup,
            args.iter().any(|a| a == "--warm"),
        );
        print_run(&mode, fps, &run);
        return;
    }
    let rounds: usize = arg(&args, "--rounds").unwrap_or(4);
    let modes: Vec<&str> = match arg::<String>(&args, "--modes") {
        Some(m) => MODES
            .iter()
            .copied()
            .filter(|x| m.split(',').any(|y| y == *x))
            .collect(),
        None => MODES
            .iter()
            .copied()
            .filter(|m| !m.starts_with("mangohud") || std::path::Path::new(MANGOHUD_LIB).exists())
            .collect(),
    };
    let warm = !args.iter().any(|a| a == "--no-warm");
    let exe = std::env::current_exe().unwrap();
    let logs = tempfile::tempdir().unwrap();
    // Per mode: each round's result fields, and each round's (thread, %).
    type Fields = Vec<(String, f64)>;
    type ModeRow<'a> = (&'a str, Vec<Fields>, Vec<(String, f64)>);
    let mut table: Vec<ModeRow> = modes.iter().map(|m| (*m, Vec::new(), Vec::new())).collect();
    for round in 0..rounds {
        let mut order = modes.clone();
        if round % 2 == 1 {
            order.reverse(); // ABBA: the second run of a pair is slower here
        }
        for mode in order {
            let mut cmd = Command::new(&exe);
            cmd.args(["--child", mode, "--fps", &fps.to_string(), "--size", &size])
                .args([
                    "--frames",
                    &frames.to_string(),
                    "--warmup",
                    &warmup.to_string(),
                ])
                .args(warm.then_some("--warm"))
                .env("DISABLE_STEADYHUD", "1")
                .env("NODEVICE_SELECT", "1")
                .env("STEADYHUD_LOG_DIR", logs.path())
                .env_remove("MANGOHUD")
                .env_remove("VK_INSTANCE_LAYERS");
            if let Some(config) = steadyhud_config(mode) {
                cmd.env("STEADYHUD_CONFIG", config);
            }
            if mode == "mangohud-hidden" {
                cmd.env("MANGOHUD_CONFIG", "no_display");
            }
            let out = cmd.output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{mode} failed: {}{}",
                text,
                String::from_utf8_lossy(&out.stderr)
            );
            let row = table.iter_mut().find(|r| r.0 == mode).unwrap();
            for line in text.lines() {
                let fields: Fields = line
                    .split(' ')
                    .filter_map(|w| w.split_once('='))
                    .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                    .collect();
                if line.starts_with("result ") {
                    eprintln!("round {round} {line}");
                    row.1.push(fields);
                } else if line.starts_with("process ") {
                    if let Some(last) = row.1.last_mut() {
                        last.extend(fields);
                    }
                } else if line.starts_with("thread ") {
                    let name = line
                        .split(' ')
                        .find_map(|w| w.strip_prefix("name="))
                        .unwrap_or("?")
                        .to_string();
                    let share = fields
                        .iter()
                        .find(|f| f.0 == "share_pct")
                        .map_or(0.0, |f| f.1);
                    row.2.push((name, share));
                }
            }
        }
    }
    // The median over the rounds of a result field of a mode.
    let med = |rounds: &[Fields], key: &str| {
        let mut v: Vec<f64> = rounds
            .iter()
            .filter_map(|r| r.iter().find(|f| f.0 == key).map(|f| f.1))
            .collect();
        median(&mut v)
    };
    println!(
        "present_cost: {rounds} rounds of {frames} frames of {size} at {fps} presents/s; medians of the rounds, ns on the game's thread"
    );
    println!(
        "{:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}",
        "mode",
        "present",
        "p99",
        "10Hz",
        "warm",
        "warm p99",
        "submit",
        "p99",
        "+present",
        "+warm",
        "+submit"
    );
    let base = &table[0].1;
    for (mode, rounds, threads) in &table {
        let m = |k: &str| med(rounds, k);
        println!(
            "{mode:<16} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} | {:>+9.0} {:>+9.0} {:>+9.0} {:>+11.3}",
            m("present_p50"),
            m("present_p99"),
            m("present_top10hz_p50"),
            m("warm_p50"),
            m("warm_p99"),
            m("submit_p50"),
            m("submit_p99"),
            m("present_p50") - med(base, "present_p50"),
            m("warm_p50") - med(base, "warm_p50"),
            m("submit_p50") - med(base, "submit_p50"),
            m("cpu_pct") - med(base, "cpu_pct"),
        );
        // The layer's threads: every thread but the game's (named after
        // this program) and the driver's (llvmpipe-N; a ":disk$0" cache).
        let mut names: Vec<&str> = threads.iter().map(|(n, _)| n.as_str()).collect();
        names.sort();
        names.dedup();
        for name in names {
            if name.starts_with("present_cost")
                || name.starts_with("llvmpipe")
                || name.contains("disk$")
            {
                continue;
            }
            let mut shares: Vec<f64> = threads
                .iter()
                .filter(|(n, _)| n == name)
                .map(|t| t.1)
                .collect();
            println!(
                "{:<16}   thread {name}: {:.3} % of one core",
                "",
                median(&mut shares)
            );
        }
    }
}
