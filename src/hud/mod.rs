//! The HUD: imgui drawn into the swapchain image before the real present.
//!
//! Interface between the layer and the HUD (fixed by the lead; the HUD
//! branch implements it). The layer owns all Vulkan dispatch and hands the
//! HUD a [`HudDevice`] whose `device` table already registers every command
//! buffer it allocates with the loader (`vkSetDeviceLoaderData`).
//!
//! One data flow per present ([`SwapchainHud::draw`]): wait for the slot's
//! previous submission → record → submit on the graphics queue, waiting on
//! the app's present semaphores, signalling this image's semaphore → the
//! layer presents waiting on that. Two ways to record:
//! - cached panel (`panel`, when the swapchain images accept
//!   `TRANSFER_DST`, see [`swapchain_usage`]): imgui renders into a small
//!   opaque image only when the live stats changed (~10×/s); every present
//!   copies it into the corner;
//! - direct (`render`): imgui draws into the swapchain image in a
//!   LOAD_OP_LOAD render pass limited to the HUD's rectangle.
//!
//! Modules: `render` (per-swapchain Vulkan objects), `panel` (cached
//! panel), [`view`] (layout, colours, sRGB handling), [`hotkey`] (X11
//! toggle key).

use crate::config::Config;
use crate::live::LiveStats;
use ash::vk;

pub mod hotkey;
mod panel;
mod render;
pub mod view;

pub use render::color_range;

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

/// The image usage the layer should request for an app's swapchain:
/// the app's own flags plus `TRANSFER_DST` when the surface supports it
/// (`supported` = `VkSurfaceCapabilitiesKHR::supportedUsageFlags`), which
/// lets the HUD copy a cached panel instead of drawing imgui into every
/// frame. Adding a usage flag never changes what the app may do with its
/// images.
pub fn swapchain_usage(requested: vk::ImageUsageFlags, supported: vk::ImageUsageFlags) -> vk::ImageUsageFlags {
    requested | (supported & vk::ImageUsageFlags::TRANSFER_DST)
}

/// Dear ImGui keeps its current context in a process-wide global, so only
/// one swapchain may have its context active at a time: every activation
/// (setup, draw, teardown) happens under this lock. It is uncontended unless
/// two swapchains present at the same instant from different threads.
static IMGUI_LOCK: Mutex<()> = Mutex::new(());

/// Upper bound on the imgui frames [`SwapchainHud::warm_up`] runs until one
/// draws (a new auto-sized window shows from its second frame).
const WARM_UP_FRAMES: usize = 3;

/// Renders `draw_data` (laid out at the origin, `area` = its rectangle)
/// into `panel`, growing the panel first if needed. Returns false when there
/// was nothing to draw (imgui lays a new window out before showing it).
///
/// # Safety
/// `cmd` is recording outside a render pass; `target`'s submissions are the
/// only ones that may read the panel.
unsafe fn draw_into_panel(
    dev: &HudDevice,
    target: &render::Target,
    panel: &mut panel::Panel,
    cmd: vk::CommandBuffer,
    area: [f32; 4],
    draw_data: &imgui::DrawData,
    renderer: &mut Renderer,
) -> Result<bool, HudError> {
    let content = vk::Extent2D {
        width: area[2].ceil().max(0.0) as u32,
        height: area[3].ceil().max(0.0) as u32,
    };
    if content.width == 0 || content.height == 0 || draw_data.total_vtx_count == 0 {
        return Ok(false);
    }
    if panel.needs_growth(content) {
        // Earlier copies may still read the old image.
        target.wait_idle(dev);
        panel.reserve(dev, content)?;
    }
    panel.begin_pass(dev, cmd);
    let r = renderer.cmd_draw(cmd, draw_data);
    dev.device.cmd_end_render_pass(cmd);
    r?;
    panel.content = content;
    Ok(true)
}

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
    /// Cached panel, when the swapchain images accept transfers.
    panel: Option<panel::Panel>,
    /// Identity (address) of the stats the panel was last rendered from.
    panel_stats: usize,
    /// Panel renders so far (imgui settles an auto-sized window's layout
    /// over its first frames, so those are always re-rendered).
    panel_renders: u32,
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
        let srgb = view::is_srgb(target.format);
        let view = view::View::new(config, target.extent, srgb);
        let panel = if info.image_usage.contains(vk::ImageUsageFlags::TRANSFER_DST) {
            match panel::Panel::new(dev, target.format, view::panel_clear(srgb)) {
                Ok(p) => Some(p),
                Err(e) => {
                    target.destroy(dev);
                    return Err(e);
                }
            }
        } else {
            None
        };
        match Self::create_imgui(dev, &target, &view) {
            Ok((renderer, imgui)) => {
                let mut hud = SwapchainHud {
                    target,
                    renderer: Some(renderer),
                    imgui: Some(imgui),
                    view,
                    last_draw: None,
                    panel,
                    panel_stats: 0,
                    panel_renders: 0,
                };
                match hud.warm_up(dev) {
                    Ok(()) => Ok(hud),
                    Err(e) => {
                        hud.destroy(dev);
                        Err(e)
                    }
                }
            }
            Err(e) => {
                if let Some(mut p) = panel {
                    p.destroy(dev);
                }
                target.destroy(dev);
                Err(e)
            }
        }
    }

    /// Renders the HUD once off-screen and waits for it, so the first
    /// present that shows the HUD costs no more than any later one.
    ///
    /// The first draw with the imgui pipeline is expensive: a software
    /// rasteriser (lavapipe) JIT-compiles its shader variants then, and the
    /// panel image and imgui's vertex buffers are created on first use. Done
    /// in a present, that lands in the app's next frame as a stutter the
    /// layer itself caused (and then reports). Swapchain creation is where
    /// apps expect such costs. The render goes into the panel image (a
    /// scratch one in direct mode; no swapchain image is acquired here),
    /// whose render pass is compatible with the overlay pass.
    unsafe fn warm_up(&mut self, dev: &HudDevice) -> Result<(), HudError> {
        let mut scratch = match self.panel {
            Some(_) => None,
            None => Some(panel::Panel::new(dev, self.target.format, [0.0; 4])?),
        };
        let result = self.warm_up_into(dev, scratch.as_mut());
        if let Some(mut p) = scratch {
            // `warm_up_into` waited for its submissions (or failed before one).
            self.target.wait_idle(dev);
            p.destroy(dev);
        }
        result
    }

    /// Renders imgui frames into `scratch` (or the cached panel) until one
    /// draws something (imgui lays a new window out before showing it).
    unsafe fn warm_up_into(&mut self, dev: &HudDevice, mut scratch: Option<&mut panel::Panel>) -> Result<(), HudError> {
        let stats = LiveStats::default();
        for _ in 0..WARM_UP_FRAMES {
            let cmd = self.target.begin_setup(dev)?;
            let recorded = self.imgui_frame(&stats, 1.0 / 60.0, true, |this, area, draw_data, renderer| {
                let panel = match scratch.as_deref_mut() {
                    Some(p) => p,
                    None => match this.panel.as_mut() {
                        Some(p) => p,
                        None => return Ok(false),
                    },
                };
                draw_into_panel(dev, &this.target, panel, cmd, area, draw_data, renderer)
            });
            let drawn = match recorded {
                Ok(d) => d,
                Err(e) => {
                    self.target.abandon(dev);
                    return Err(e);
                }
            };
            self.target.submit_and_wait(dev)?;
            if drawn {
                break;
            }
        }
        Ok(())
    }

    /// Whether this swapchain uses the cached panel (copied per present)
    /// rather than drawing imgui into every image.
    pub fn uses_panel(&self) -> bool {
        self.panel.is_some()
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
        if self.renderer.is_none() || self.imgui.is_none() {
            return Err(HudError::NotBuilt);
        }
        let now = Instant::now();
        let dt = self.last_draw.map_or(1.0 / 60.0, |t| (now - t).as_secs_f32()).max(1e-4);
        self.last_draw = Some(now);

        let cmd = self.target.begin_cmd(dev, image_index, present_family)?;
        let recorded = if self.panel.is_some() {
            self.record_panel(dev, cmd, image_index, stats, dt)
        } else {
            self.record_direct(dev, cmd, image_index, stats, dt)
        };
        if let Err(e) = recorded {
            self.target.abandon(dev);
            return Err(e);
        }
        let stage = if self.panel.is_some() {
            vk::PipelineStageFlags::TRANSFER
        } else {
            vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT
        };
        self.target.submit(dev, image_index, present_family, wait, stage)
    }

    /// Runs one imgui frame with this swapchain's context active; `record`
    /// gets the window rectangle, the draw data and the renderer.
    unsafe fn imgui_frame<R>(
        &mut self,
        stats: &LiveStats,
        dt: f32,
        at_origin: bool,
        record: impl FnOnce(&mut Self, [f32; 4], &imgui::DrawData, &mut Renderer) -> Result<R, HudError>,
    ) -> Result<R, HudError> {
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
        let area = self.view.build(ctx.new_frame(), size, stats, at_origin);
        let draw_data = ctx.render();
        let result = match self.renderer.take() {
            Some(mut renderer) => {
                let r = record(self, area, draw_data, &mut renderer);
                self.renderer = Some(renderer);
                r
            }
            None => Err(HudError::NotBuilt),
        };
        // Suspend whatever happened: an active context left behind would
        // block every other swapchain's HUD.
        self.imgui = Some(ImguiContext(ctx.suspend()));
        drop(lock);
        result
    }

    /// Draws imgui straight into the swapchain image (render area = HUD).
    unsafe fn record_direct(
        &mut self,
        dev: &HudDevice,
        cmd: vk::CommandBuffer,
        image_index: u32,
        stats: &LiveStats,
        dt: f32,
    ) -> Result<(), HudError> {
        self.imgui_frame(stats, dt, false, |this, area, draw_data, renderer| {
            this.target.begin_pass(dev, cmd, image_index, area);
            let r = renderer.cmd_draw(cmd, draw_data);
            dev.device.cmd_end_render_pass(cmd);
            r.map_err(HudError::from)
        })
    }

    /// Re-renders the panel when the stats changed, then copies it into the
    /// swapchain image.
    unsafe fn record_panel(
        &mut self,
        dev: &HudDevice,
        cmd: vk::CommandBuffer,
        image_index: u32,
        stats: &LiveStats,
        dt: f32,
    ) -> Result<(), HudError> {
        let identity = stats as *const LiveStats as usize;
        let ready = self.panel.as_ref().is_some_and(|p| p.ready());
        if identity != self.panel_stats || !ready || self.panel_renders < 3 {
            self.imgui_frame(stats, dt, true, |this, area, draw_data, renderer| {
                let Some(panel) = this.panel.as_mut() else { return Ok(()) };
                if draw_into_panel(dev, &this.target, panel, cmd, area, draw_data, renderer)? {
                    this.panel_stats = identity;
                    this.panel_renders += 1;
                }
                Ok(())
            })?;
        }
        if let Some(panel) = self.panel.as_ref().filter(|p| p.ready()) {
            let offset = self.view.corner_offset(panel.content, self.target.extent);
            panel.copy_to(dev, cmd, self.target.image(image_index), offset, self.target.extent);
        }
        Ok(())
    }

    /// Frees everything; called before the swapchain is destroyed.
    ///
    /// # Safety
    /// The device must be idle with respect to this HUD's submissions.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        self.target.wait_idle(dev);
        self.renderer = None;
        if let Some(mut panel) = self.panel.take() {
            panel.destroy(dev);
        }
        if let Some(ctx) = self.imgui.take() {
            let _lock = IMGUI_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            drop(ctx);
        }
        self.target.destroy(dev);
    }
}
