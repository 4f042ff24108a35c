//! The per-device HUD cache ([`HudCache`]): everything the HUD needs per
//! (format, encoding, font size) rather than per swapchain — render passes,
//! the imgui pipeline, the imgui context and its font texture with the
//! upload state. An entry is created by the first swapchain that needs it
//! and reused by every later one, so recreating a swapchain only creates
//! that swapchain's views, framebuffers and command buffers (its present
//! semaphores come from the cache's [`PresentSemaphores`]).

use super::device::{HudDevice, HudError};
use super::encoding::Encoding;
use super::imgui_vk::{FontTexture, Pipeline};
use super::passes;
use super::semaphores::PresentSemaphores;
use super::upload::Upload;
use ash::vk;
use imgui::SuspendedContext;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use steadyhud_hudview::View;
use steadyhud_sys::lock::Recover;

/// Dear ImGui keeps its current context in a process-wide global, so only
/// one context may be active at a time: every activation (setup, frame,
/// teardown) happens under this lock, across all devices. It is uncontended
/// unless two swapchains present at the same instant from different threads.
static IMGUI_LOCK: Mutex<()> = Mutex::new(());

/// What an entry is shared by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub format: vk::Format,
    pub encoding: Encoding,
    /// Font height in pixels (it also fixes the HUD scale).
    pub font_px: u32,
}

/// A suspended imgui context that may move between threads.
struct ImguiContext(SuspendedContext);

// SAFETY: the context is only activated, used and suspended again while
// IMGUI_LOCK is held and while its entry's mutex is held, so no two threads
// ever touch it at once; imgui contexts have no thread affinity beyond that.
unsafe impl Send for ImguiContext {}

/// Identity of a [`HudCache`], so a HUD can check it is given its own.
static NEXT_CACHE_ID: AtomicU64 = AtomicU64::new(1);

/// One cache entry; lock it with [`Entry::lock`] for a frame and recording.
pub struct Entry {
    pub key: Key,
    /// The [`HudCache`] it belongs to.
    pub cache_id: u64,
    state: Mutex<EntryState>,
}

impl Entry {
    pub fn lock(&self) -> MutexGuard<'_, EntryState> {
        self.state.lock_or_recover()
    }
}

/// The shared objects of an entry.
pub struct EntryState {
    format: vk::Format,
    /// Built against `panel_pass`; valid in every overlay pass (compatible).
    pub pipeline: Pipeline,
    /// The cached panel's render pass.
    pub panel_pass: vk::RenderPass,
    /// Overlay passes by presentable layout, created on first need.
    overlay_passes: Vec<(vk::ImageLayout, vk::RenderPass)>,
    pub font: FontTexture,
    pub upload: Upload,
    /// Whether any draw has used the pipeline yet (a software rasteriser
    /// compiles its shaders at the first draw: setup cost, not the game's).
    pub pipeline_used: bool,
    imgui: Option<ImguiContext>,
}

impl EntryState {
    /// The overlay pass for swapchain images presented in `layout`.
    ///
    /// # Safety
    /// `dev` is the entry's device.
    pub unsafe fn overlay_pass(
        &mut self,
        dev: &HudDevice,
        layout: vk::ImageLayout,
    ) -> Result<vk::RenderPass, HudError> {
        if let Some(&(_, pass)) = self.overlay_passes.iter().find(|(l, _)| *l == layout) {
            return Ok(pass);
        }
        let pass = passes::overlay(dev, self.format, layout)?;
        self.overlay_passes.push((layout, pass));
        Ok(pass)
    }

    /// Runs one imgui frame with this entry's context active: `build` lays
    /// the HUD out on a display of `size` pixels, `record` gets its result,
    /// the draw data, the pipeline and the font. The context is suspended
    /// again before `record` runs (an active context left behind would
    /// block every other HUD).
    pub fn frame<A, R>(
        &mut self,
        size: [f32; 2],
        dt: f32,
        build: impl FnOnce(&imgui::Ui) -> A,
        record: impl FnOnce(A, &imgui::DrawData, &Pipeline, &FontTexture) -> Result<R, HudError>,
    ) -> Result<R, HudError> {
        // The process-wide lock covers only the imgui frame (the context is
        // current): recording reads the draw data with the context
        // suspended again, so two windows presenting at once wait for each
        // other's layout, never for each other's recording.
        let (built, draw_data) = {
            let _lock = IMGUI_LOCK.lock_or_recover();
            let mut ctx = match self.imgui.take().map(|c| c.0.activate()) {
                Some(Ok(ctx)) => ctx,
                Some(Err(suspended)) => {
                    self.imgui = Some(ImguiContext(suspended));
                    return Err(HudError::ImguiBusy);
                }
                None => return Err(HudError::NotSetUp),
            };
            ctx.io_mut().display_size = size;
            ctx.io_mut().delta_time = dt.max(1e-4);
            let built = build(ctx.new_frame());
            let draw_data: *const imgui::DrawData = ctx.render();
            self.imgui = Some(ImguiContext(ctx.suspend()));
            (built, draw_data)
        };
        // SAFETY: the draw data lives inside the (suspended) context, which
        // only its next frame changes, and that needs `&mut self`, held
        // here; reading draw lists needs no current context.
        record(built, unsafe { &*draw_data }, &self.pipeline, &self.font)
    }
}

/// The HUD's per-device cache: one per VkDevice, owned by the layer's
/// device record and destroyed with [`HudCache::destroy`] at device
/// destruction, after every swapchain's HUD.
pub struct HudCache {
    id: u64,
    entries: Mutex<Vec<Arc<Entry>>>,
    /// Present semaphores of destroyed swapchains, for the next ones.
    pub semaphores: PresentSemaphores,
}

impl Default for HudCache {
    fn default() -> Self {
        HudCache::new()
    }
}

impl HudCache {
    pub fn new() -> HudCache {
        HudCache {
            id: NEXT_CACHE_ID.fetch_add(1, Ordering::Relaxed),
            entries: Mutex::new(Vec::new()),
            semaphores: PresentSemaphores::default(),
        }
    }

    /// Whether `entry` belongs to this cache.
    pub(crate) fn owns(&self, entry: &Entry) -> bool {
        entry.cache_id == self.id
    }

    /// Number of entries (distinct format, encoding and font size so far).
    pub fn entries(&self) -> usize {
        self.entries.lock_or_recover().len()
    }

    /// The entry for `key`, created (render passes, pipeline, imgui context,
    /// font texture with its pixels staged) when this is its first use.
    /// Submits nothing.
    ///
    /// # Safety
    /// `dev` is this cache's device.
    pub(crate) unsafe fn entry(
        &self,
        dev: &HudDevice,
        key: Key,
        view: &View,
    ) -> Result<Arc<Entry>, HudError> {
        let mut entries = self.entries.lock_or_recover();
        if let Some(e) = entries.iter().find(|e| e.key == key) {
            return Ok(e.clone());
        }
        let state = create_state(dev, key, view)?;
        let entry = Arc::new(Entry {
            key,
            cache_id: self.id,
            state: Mutex::new(state),
        });
        entries.push(entry.clone());
        Ok(entry)
    }

    /// Frees every entry and the spare present semaphores.
    ///
    /// # Safety
    /// Every [`super::swapchain::SwapchainHud`] of this device has been destroyed; `dev`
    /// is this cache's device, inside `vkDestroyDevice` and idle (see
    /// [`PresentSemaphores::destroy`]).
    pub unsafe fn destroy(&self, dev: &HudDevice) {
        self.semaphores.destroy(dev);
        let entries = std::mem::take(&mut *self.entries.lock_or_recover());
        for entry in entries {
            let mut state = entry.lock();
            destroy_state(dev, &mut state);
        }
    }
}

/// # Safety
/// `dev` is live.
unsafe fn create_state(dev: &HudDevice, key: Key, view: &View) -> Result<EntryState, HudError> {
    let panel_pass = passes::panel(dev, key.format)?;
    let mut pipeline = match Pipeline::new(dev, panel_pass, key.encoding) {
        Ok(p) => p,
        Err(e) => {
            dev.device.destroy_render_pass(panel_pass, None);
            return Err(e);
        }
    };
    let made = create_imgui(dev, &pipeline, view);
    match made {
        Ok((imgui, font)) => Ok(EntryState {
            format: key.format,
            pipeline,
            panel_pass,
            overlay_passes: Vec::new(),
            font,
            upload: Upload::NotUploaded,
            pipeline_used: false,
            imgui: Some(imgui),
        }),
        Err(e) => {
            pipeline.destroy(dev);
            dev.device.destroy_render_pass(panel_pass, None);
            Err(e)
        }
    }
}

/// The imgui context (font, style) and its font texture.
///
/// # Safety
/// `dev` is live.
unsafe fn create_imgui(
    dev: &HudDevice,
    pipeline: &Pipeline,
    view: &View,
) -> Result<(ImguiContext, FontTexture), HudError> {
    let _lock = IMGUI_LOCK.lock_or_recover();
    let mut ctx = SuspendedContext::create()
        .activate()
        .map_err(|_| HudError::ImguiBusy)?;
    view.configure(&mut ctx);
    let font = {
        let atlas = ctx.fonts().build_rgba32_texture();
        FontTexture::new(dev, pipeline, atlas.width, atlas.height, atlas.data)
    };
    // Suspend before returning either way: an active context left behind
    // would block every other HUD.
    let ctx = ImguiContext(ctx.suspend());
    match font {
        Ok(font) => Ok((ctx, font)),
        Err(e) => {
            drop(ctx);
            Err(e)
        }
    }
}

/// # Safety
/// `state` was made by [`create_state`] on `dev`, which is live, and no
/// pending submission uses its objects.
unsafe fn destroy_state(dev: &HudDevice, state: &mut EntryState) {
    state.font.destroy(dev);
    state.pipeline.destroy(dev);
    for (_, pass) in state.overlay_passes.drain(..) {
        dev.device.destroy_render_pass(pass, None);
    }
    if state.panel_pass != vk::RenderPass::null() {
        dev.device.destroy_render_pass(state.panel_pass, None);
        state.panel_pass = vk::RenderPass::null();
    }
    if let Some(ctx) = state.imgui.take() {
        let _lock = IMGUI_LOCK.lock_or_recover();
        drop(ctx);
    }
}
