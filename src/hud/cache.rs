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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use steadyhud_hudview::driver::Imgui;
use steadyhud_hudview::View;
use steadyhud_sys::lock::Recover;

/// What an entry is shared by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub format: vk::Format,
    pub encoding: Encoding,
    /// Font height in pixels (it also fixes the HUD scale).
    pub font_px: u32,
}

/// A suspended imgui context that may move between threads.
pub struct ImguiContext(pub Imgui);

// SAFETY: the context is only activated, used and suspended again under
// the panel driver's imgui lock and while its entry's mutex is held, so no
// two threads ever touch it at once; imgui contexts have no thread affinity
// beyond that.
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
    /// The imgui context whose atlas `font` holds (the panel driver's).
    pub imgui: ImguiContext,
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
            imgui,
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
    let (imgui, atlas) = Imgui::new(view)?;
    let font = FontTexture::new(dev, pipeline, atlas.width, atlas.height, &atlas.pixels)?;
    Ok((ImguiContext(imgui), font))
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
}
