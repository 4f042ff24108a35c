//! The HUD: imgui drawn into the swapchain image before the real present.
//!
//! Interface between the layer and the HUD (fixed by the lead; the HUD
//! branch implements it). The layer owns all Vulkan dispatch and hands the
//! HUD a [`HudDevice`] whose `device` table already registers every command
//! buffer it allocates with the loader (`vkSetDeviceLoaderData`).

use crate::config::Config;
use crate::live::LiveStats;
use ash::vk;

pub mod hotkey;
mod render;
pub mod view;

use imgui::SuspendedContext;
use imgui_rs_vulkan_renderer::{Options as RendererOptions, Renderer};
use std::sync::Mutex;
use std::time::Instant;

/// Why the HUD could not be set up or drawn; the layer logs it once and
/// keeps capturing without a HUD.
#[derive(Debug, thiserror::Error)]
pub enum HudError {
    #[error("HUD not built into this version")]
    NotBuilt,
    #[error("Vulkan call {call} failed: {result}")]
    Vulkan { call: &'static str, result: vk::Result },
    #[error("HUD unsupported here: {0}")]
    Unsupported(&'static str),
    #[error("imgui renderer: {0}")]
    Renderer(#[from] imgui_rs_vulkan_renderer::RendererError),
    #[error("another imgui context is active in this process")]
    ImguiBusy,
}
/// The layer's per-device state, as the HUD sees it.
pub struct HudDevice<'a> {
    pub instance: &'a ash::Instance,
    pub device: &'a ash::Device,
    pub physical_device: vk::PhysicalDevice,
    /// A queue with the graphics bit (registered with the loader) and its family.
    pub graphics_queue: vk::Queue,
    pub graphics_family: u32,
}

/// Dear ImGui keeps its current context in a process-wide global, so only
/// one swapchain may have its context active at a time: every activation
/// (setup, draw, teardown) happens under this lock. It is uncontended unless
/// two swapchains present at the same instant from different threads.
static IMGUI_LOCK: Mutex<()> = Mutex::new(());

/// A suspended imgui context that may move between threads.
struct ImguiContext(SuspendedContext);

// SAFETY: the context is only activated, used and suspended again while
// IMGUI_LOCK is held and while the owning SwapchainHud is borrowed mutably
// (the layer keeps it in a Mutex'd map), so no two threads ever touch it at
// once; imgui contexts have no thread affinity beyond that.
unsafe impl Send for ImguiContext {}

/// Per-swapchain HUD resources (render pass, framebuffers, imgui, command buffers).
pub struct SwapchainHud {
    target: render::Target,
    // Declared before `imgui`: dropped while the context still exists.
    renderer: Option<Renderer>,
    imgui: Option<ImguiContext>,
    view: view::View,
    last_draw: Option<Instant>,
}

impl SwapchainHud {
    /// Called by the layer right after the real `vkCreateSwapchainKHR`.
    ///
    /// # Safety
    /// `info` describes the swapchain whose `images` are given; `dev` is live.
    pub unsafe fn new(
        dev: &HudDevice,
        info: &vk::SwapchainCreateInfoKHR,
        images: &[vk::Image],
        config: &Config,
    ) -> Result<Self, HudError> {
        let mut target = render::Target::new(dev, info, images)?;
        let view = view::View::new(config, target.extent, view::is_srgb(target.format));
        match Self::create_imgui(dev, &target, &view) {
            Ok((renderer, imgui)) => Ok(SwapchainHud {
                target,
                renderer: Some(renderer),
                imgui: Some(imgui),
                view,
                last_draw: None,
            }),
            Err(e) => {
                target.destroy(dev);
                Err(e)
            }
        }
    }

    unsafe fn create_imgui(
        dev: &HudDevice,
        target: &render::Target,
        view: &view::View,
    ) -> Result<(Renderer, ImguiContext), HudError> {
        let _lock = IMGUI_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut ctx = SuspendedContext::create().activate().map_err(|_| HudError::ImguiBusy)?;
        ctx.set_ini_filename(None);
        ctx.set_log_filename(None);
        ctx.io_mut().display_size = [target.extent.width as f32, target.extent.height as f32];
        ctx.fonts().add_font(&[imgui::FontSource::DefaultFontData {
            config: Some(imgui::FontConfig {
                size_pixels: view.font_px(),
                oversample_h: 1,
                oversample_v: 1,
                pixel_snap_h: true,
                ..imgui::FontConfig::default()
            }),
        }]);
        view.apply_style(ctx.style_mut());
        let options = RendererOptions {
            in_flight_frames: target.in_flight(),
            ..RendererOptions::default()
        };
        let renderer = Renderer::with_default_allocator(
            dev.instance,
            dev.physical_device,
            dev.device.clone(),
            dev.graphics_queue,
            target.pool,
            target.render_pass(),
            &mut ctx,
            Some(options),
        );
        // Suspend before returning either way: an active context left behind
        // would block every other swapchain's HUD.
        let ctx = ImguiContext(ctx.suspend());
        Ok((renderer?, ctx))
    }

    /// Records and submits the HUD for `image_index` on the graphics queue,
    /// waiting on `wait` (the app's present semaphores). Returns the semaphore
    /// the real present must wait on instead.
    ///
    /// # Safety
    /// Called from the present hook for an image of this swapchain.
    pub unsafe fn draw(
        &mut self,
        dev: &HudDevice,
        present_family: u32,
        image_index: u32,
        wait: &[vk::Semaphore],
        stats: &LiveStats,
    ) -> Result<vk::Semaphore, HudError> {
        let (Some(renderer), Some(_)) = (self.renderer.as_mut(), self.imgui.as_ref()) else {
            return Err(HudError::NotBuilt);
        };
        let now = Instant::now();
        let dt = self.last_draw.map_or(1.0 / 60.0, |t| (now - t).as_secs_f32()).max(1e-4);
        self.last_draw = Some(now);

        // Build the imgui frame first: its window rectangle is the render area.
        let lock = IMGUI_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut ctx = match self.imgui.take().map(|c| c.0.activate()) {
            Some(Ok(ctx)) => ctx,
            Some(Err(suspended)) => {
                self.imgui = Some(ImguiContext(suspended));
                return Err(HudError::ImguiBusy);
            }
            None => return Err(HudError::NotBuilt),
        };
        let size = [self.target.extent.width as f32, self.target.extent.height as f32];
        ctx.io_mut().display_size = size;
        ctx.io_mut().delta_time = dt;
        let area = self.view.build(ctx.new_frame(), size, stats);
        let draw_data = ctx.render();
        let recorded = match self.target.begin(dev, image_index, present_family, area) {
            Ok(cmd) => renderer.cmd_draw(cmd, draw_data).map_err(|e| {
                self.target.abandon(dev);
                HudError::from(e)
            }),
            Err(e) => Err(e),
        };
        // Suspend before anything else can fail: an active context left
        // behind would block every other swapchain's HUD.
        self.imgui = Some(ImguiContext(ctx.suspend()));
        drop(lock);
        recorded?;
        self.target.submit(dev, image_index, present_family, wait)
    }

    /// Frees everything; called before the swapchain is destroyed.
    ///
    /// # Safety
    /// The device must be idle with respect to this HUD's submissions.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        self.target.wait_idle(dev);
        self.renderer = None;
        if let Some(ctx) = self.imgui.take() {
            let _lock = IMGUI_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            drop(ctx);
        }
        self.target.destroy(dev);
    }
}
