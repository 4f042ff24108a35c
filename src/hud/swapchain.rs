//! One swapchain's HUD ([`SwapchainHud`]): made at swapchain creation
//! (no queue use), drawn in each present of that swapchain, freed with it.

use super::cache::{self, HudCache};
use super::device::{HudDevice, HudError};
use super::plan::Plan;
use super::upload::Step;
use super::{panel, render};
use ash::vk;
use std::sync::Arc;
use std::time::Instant;
use steadyhud_capture::live::LiveStats;
use steadyhud_config::Config;
use steadyhud_hudview as view;

/// What one draw records with: the slot's command buffer (recording), the
/// slot, the swapchain image index, the stats shown and the seconds since
/// the previous frame (imgui's delta time).
#[derive(Clone, Copy)]
struct Recording<'a> {
    cmd: vk::CommandBuffer,
    slot: usize,
    image: usize,
    stats: &'a LiveStats,
    dt: f32,
}

/// The image usage the layer should request for an app's swapchain:
/// the app's own flags plus `TRANSFER_DST` when the surface supports it
/// (`supported` = `VkSurfaceCapabilitiesKHR::supportedUsageFlags`), which
/// lets the HUD copy a cached panel instead of drawing imgui into every
/// frame. Adding a usage flag never changes what the app may do with its
/// images.
pub fn swapchain_usage(
    requested: vk::ImageUsageFlags,
    supported: vk::ImageUsageFlags,
) -> vk::ImageUsageFlags {
    requested | (supported & vk::ImageUsageFlags::TRANSFER_DST)
}

/// What [`SwapchainHud::draw`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drawn {
    /// Nothing submitted, the app's semaphores untouched: present as the
    /// app asked.
    Skipped,
    /// Submitted: the present waits on `signal` instead of the app's
    /// semaphores. `setup` = this draw did first-time work (font upload
    /// recorded, first use of an entry's pipeline, views created lazily), the layer's
    /// own setup cost rather than the game's. (Creating the command pool
    /// at a swapchain's first draw is too small to count.)
    Submitted { signal: vk::Semaphore, setup: bool },
    /// Nothing submitted, the app's semaphores untouched, as `Skipped`: the
    /// HUD's first-time work is still to do, and [`SwapchainHud::set_up`]
    /// does it right after the real present returns, so it never lands in
    /// the frame the app presents.
    SetUpAfter,
}

/// Per-swapchain HUD state; the shared objects live in the [`HudCache`].
pub struct SwapchainHud {
    entry: Arc<cache::Entry>,
    plan: Plan,
    target: render::Target,
    /// Overlay pass of the cache entry (direct drawing).
    overlay_pass: vk::RenderPass,
    /// The view and when the panel is rendered again (the panel driver,
    /// shared with the GL library).
    driver: view::driver::Panel,
    last_draw: Option<Instant>,
    last_rect: Option<vk::RectLayerKHR>,
    /// Cached panel, when the swapchain images accept transfers.
    panel: Option<panel::Panel>,
    /// The slot whose submission carries the entry's pending font upload.
    upload_slot: Option<usize>,
    /// The cached panel's first-time work (font upload, the pipeline's
    /// first use, the first render of this swapchain's panel) was
    /// submitted, after a present ([`SwapchainHud::set_up`]). Until then a
    /// draw draws nothing. Always true when drawing directly.
    set_up: bool,
}

impl SwapchainHud {
    /// Called by the layer right after the real `vkCreateSwapchainKHR`,
    /// with `plan` = [`super::plan::plan`] of `info`. Creates this
    /// swapchain's own objects and, for the first swapchain of its format,
    /// encoding and font size, the cache entry. Submits nothing and waits for
    /// nothing.
    ///
    /// # Safety
    /// `info` describes the swapchain whose `images` are given; `dev` is
    /// live and `cache` is its cache.
    pub unsafe fn new(
        dev: &HudDevice,
        cache: &HudCache,
        info: &vk::SwapchainCreateInfoKHR,
        images: &[vk::Image],
        plan: &Plan,
        config: &Config,
    ) -> Result<Self, HudError> {
        let driver =
            view::driver::Panel::new(config, [info.image_extent.width, info.image_extent.height]);
        let view = &driver.view;
        let plan = &if view.opaque() {
            *plan
        } else {
            plan.see_through(info)
        };
        let key = cache::Key {
            format: info.image_format,
            encoding: plan.encoding,
            font_px: view.font_px() as u32,
        };
        let entry = cache.entry(dev, key, view)?;
        let overlay_pass = if plan.panel {
            None
        } else {
            Some(entry.lock().overlay_pass(dev, plan.layout)?)
        };
        let target = render::Target::new(dev, info, images, plan, overlay_pass, &cache.semaphores)?;
        let panel = plan.panel.then(|| {
            panel::Panel::new(
                info.image_format,
                plan.encoding.encode(view::colors::PANEL_BG),
            )
        });
        Ok(SwapchainHud {
            entry,
            plan: *plan,
            target,
            overlay_pass: overlay_pass.unwrap_or_default(),
            driver,
            last_draw: None,
            last_rect: None,
            set_up: panel.is_none(),
            panel,
            upload_slot: None,
        })
    }

    /// Whether this swapchain uses the cached panel (copied per present)
    /// rather than drawing imgui into every image.
    pub fn uses_panel(&self) -> bool {
        self.panel.is_some()
    }

    /// The rectangle the last submitted draw wrote (for the app's
    /// `VkPresentRegionsKHR`); `None` when it wrote nothing.
    pub fn last_rect(&self) -> Option<vk::RectLayerKHR> {
        self.last_rect
    }

    /// Records and submits the HUD for `image_index` on `queue` (the queue
    /// the app presents on, of `family`, which has the graphics bit),
    /// waiting on `wait` (the app's present semaphores).
    ///
    /// # Safety
    /// Called from the app's `vkQueuePresentKHR` on `queue`, for an image of
    /// this swapchain; `cache` is the device's cache.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn draw(
        &mut self,
        dev: &HudDevice,
        cache: &HudCache,
        queue: vk::Queue,
        family: u32,
        image_index: u32,
        wait: &[vk::Semaphore],
        stats: &LiveStats,
    ) -> Result<Drawn, HudError> {
        debug_assert!(
            cache.owns(&self.entry),
            "SwapchainHud drawn with another device's cache"
        );
        let image = image_index as usize;
        if image >= self.target.image_count() {
            return Err(HudError::Unsupported("image index out of range"));
        }
        if !self.set_up {
            return Ok(Drawn::SetUpAfter);
        }
        self.submit(dev, queue, family, Some((image, wait)), stats)
    }

    /// The cached panel's first-time work, right after the real present
    /// that [`SwapchainHud::draw`] answered [`Drawn::SetUpAfter`] returned
    /// (still inside the app's `vkQueuePresentKHR`, so the queue is the
    /// layer's to use): the font upload, the pipeline's first use (a
    /// software driver compiles its shaders then) and this swapchain's first
    /// panel, submitted alone, waiting on nothing and signalling nothing
    /// (`Submitted`'s `signal` is null). The next present only copies the
    /// panel. `Skipped` when nothing was submitted (another queue's font
    /// upload is pending, or no slot is free): the next present asks again.
    ///
    /// # Safety
    /// Inside the app's `vkQueuePresentKHR` on `queue` (of `family`, with
    /// the graphics bit), after the real present returned; `dev` is the
    /// live device this HUD was made on and `cache` its cache.
    pub unsafe fn set_up(
        &mut self,
        dev: &HudDevice,
        cache: &HudCache,
        queue: vk::Queue,
        family: u32,
        stats: &LiveStats,
    ) -> Result<Drawn, HudError> {
        debug_assert!(
            cache.owns(&self.entry),
            "SwapchainHud set up with another device's cache"
        );
        if self.set_up {
            return Ok(Drawn::Skipped);
        }
        let done = self.submit(dev, queue, family, None, stats)?;
        self.set_up = matches!(done, Drawn::Submitted { .. });
        Ok(done)
    }

    /// Records and submits one slot on `queue`: into swapchain image
    /// `image` waiting on its semaphores (a draw), or, with `None`, the
    /// panel's render alone (the set-up).
    ///
    /// # Safety
    /// As [`SwapchainHud::draw`]; `image` indexes the swapchain's images.
    unsafe fn submit(
        &mut self,
        dev: &HudDevice,
        queue: vk::Queue,
        family: u32,
        into: Option<(usize, &[vk::Semaphore])>,
        stats: &LiveStats,
    ) -> Result<Drawn, HudError> {
        if !self.target.prepare_queue(dev, queue, family)? {
            return Ok(Drawn::Skipped);
        }
        self.slots_seen_done(dev);
        let Some(slot) = self.target.acquire_slot(dev)? else {
            return Ok(Drawn::Skipped);
        };
        self.slots_seen_done(dev);
        // Lazily created views (deferred memory) are first-time work.
        let mut setup = match into {
            Some((image, _)) if !self.plan.panel => {
                self.target.ensure_view(dev, image, self.overlay_pass)?
            }
            _ => false,
        };
        let now = Instant::now();
        let dt = self
            .last_draw
            .map_or(1.0 / 60.0, |t| (now - t).as_secs_f32());

        let entry = self.entry.clone();
        let mut state = entry.lock();
        let (step, ready) = state
            .upload
            .step(queue, |f| dev.device.get_fence_status(f) == Ok(true));
        if ready {
            state.font.free_staging(dev);
        }
        if step == Step::Skip {
            return Ok(Drawn::Skipped);
        }
        // From here on the draw submits or abandons the slot.
        self.target.reset_fence(dev, slot)?;
        let upload = step == Step::Record;
        if upload {
            state.upload.recorded(queue, self.target.fence(slot));
            self.upload_slot = Some(slot);
            setup = true;
        }
        setup |= !std::mem::replace(&mut state.pipeline_used, true);
        let recorded = self.record(dev, &mut state, slot, into.map(|i| i.0), stats, dt, upload);
        drop(state);
        let rect = match recorded {
            Ok(rect) => rect,
            Err(e) => {
                self.abandon(dev, slot);
                return Err(e);
            }
        };
        let stage = if self.plan.panel {
            vk::PipelineStageFlags::TRANSFER
        } else {
            vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT
        };
        let submitted = match into {
            Some((image, wait)) => self
                .target
                .submit(dev, queue, slot, Some(image), wait, stage),
            None => self.target.submit(dev, queue, slot, None, &[], stage),
        };
        match submitted {
            Ok(signal) => {
                self.last_draw = Some(now);
                let Some(signal) = signal else {
                    return Ok(Drawn::Submitted {
                        signal: vk::Semaphore::null(),
                        setup,
                    });
                };
                self.last_rect = rect.map(|r| vk::RectLayerKHR {
                    offset: r.offset,
                    extent: r.extent,
                    layer: 0,
                });
                Ok(Drawn::Submitted { signal, setup })
            }
            Err(e) => {
                self.abandon(dev, slot);
                Err(e)
            }
        }
    }

    /// Bookkeeping for slots whose submissions are known complete: a font
    /// upload they carried is done (marked under the entry lock, before
    /// their fence is reset), and retired panel images nobody reads any
    /// more are freed.
    ///
    /// # Safety
    /// `dev` is the live device this HUD was made on.
    unsafe fn slots_seen_done(&mut self, dev: &HudDevice) {
        if let Some(slot) = self.upload_slot {
            if !self.target.in_flight().nth(slot).unwrap_or(false) {
                let mut state = self.entry.lock();
                let fence = self.target.fence(slot);
                // Not in flight and signalled: the upload ran. Not in flight
                // but unsignalled: its submission never happened (a contained
                // panic between recording and submitting): upload again.
                if dev.device.get_fence_status(fence) == Ok(true) {
                    if state.upload.fence_signalled(fence) {
                        state.font.free_staging(dev);
                    }
                } else {
                    state.upload.abandoned(fence);
                }
                self.upload_slot = None;
            }
        }
        if let Some(panel) = self.panel.as_mut() {
            let target = &self.target;
            panel.slots_done(dev, |s| target.in_flight().nth(s).unwrap_or(false));
        }
    }

    /// Undoes a draw that reset slot `slot`'s fence but submitted nothing.
    ///
    /// # Safety
    /// `dev` is the live device this HUD was made on; slot `slot`'s fence
    /// was reset and nothing was submitted with it.
    unsafe fn abandon(&mut self, dev: &HudDevice, slot: usize) {
        if self.upload_slot == Some(slot) {
            self.entry.lock().upload.abandoned(self.target.fence(slot));
            self.upload_slot = None;
        }
        self.target.abandon(dev, slot);
    }

    /// Records the whole draw into slot `slot`'s command buffer; returns
    /// the rectangle of the swapchain image it writes.
    ///
    /// # Safety
    /// `dev` is the live device this HUD was made on, `state` its cache
    /// entry's state (locked); slot `slot` is not in flight and its fence is
    /// reset; `image` indexes the swapchain's images.
    #[allow(clippy::too_many_arguments)]
    unsafe fn record(
        &mut self,
        dev: &HudDevice,
        state: &mut cache::EntryState,
        slot: usize,
        image: Option<usize>,
        stats: &LiveStats,
        dt: f32,
        upload: bool,
    ) -> Result<Option<vk::Rect2D>, HudError> {
        let cmd = self.target.begin(dev, slot)?;
        if upload {
            state.font.record_upload(dev, cmd);
        }
        let Some(image) = image else {
            // The set-up: the panel's first render, nothing copied.
            self.render_panel(dev, state, cmd, slot, stats, dt)?;
            return Ok(None);
        };
        let rec = Recording {
            cmd,
            slot,
            image,
            stats,
            dt,
        };
        if self.panel.is_some() {
            self.record_panel(dev, state, rec)
        } else {
            self.record_direct(dev, state, rec).map(Some)
        }
    }

    /// The swapchain image's size in pixels.
    fn size(&self) -> [u32; 2] {
        [self.target.extent.width, self.target.extent.height]
    }

    /// Draws imgui straight into the swapchain image (render area = HUD).
    ///
    /// # Safety
    /// As [`SwapchainHud::record`], with `rec.cmd` slot `rec.slot`'s command
    /// buffer, begun.
    unsafe fn record_direct(
        &mut self,
        dev: &HudDevice,
        state: &mut cache::EntryState,
        rec: Recording<'_>,
    ) -> Result<vk::Rect2D, HudError> {
        let size = self.size();
        let (target, pass) = (&mut self.target, self.overlay_pass);
        let rect = self.driver.frame(
            &mut state.imgui.0,
            size,
            rec.dt,
            rec.stats,
            false,
            |area, draw_data| {
                let rect = target.render_area(area);
                let begin = vk::RenderPassBeginInfo::default()
                    .render_pass(pass)
                    .framebuffer(target.framebuffer(rec.image))
                    .render_area(rect);
                dev.device
                    .cmd_begin_render_pass(rec.cmd, &begin, vk::SubpassContents::INLINE);
                let r = target.mesh(rec.slot).cmd_draw(
                    dev,
                    rec.cmd,
                    &state.pipeline,
                    &state.font,
                    draw_data,
                    rect,
                );
                dev.device.cmd_end_render_pass(rec.cmd);
                r.map(|()| Some(rect))
            },
        )?;
        Ok(rect.unwrap_or_default())
    }

    /// Re-renders the panel when the stats changed, then copies it into the
    /// swapchain image.
    ///
    /// # Safety
    /// As [`SwapchainHud::record`], with `rec.cmd` slot `rec.slot`'s command
    /// buffer, begun.
    unsafe fn record_panel(
        &mut self,
        dev: &HudDevice,
        state: &mut cache::EntryState,
        rec: Recording<'_>,
    ) -> Result<Option<vk::Rect2D>, HudError> {
        self.render_panel(dev, state, rec.cmd, rec.slot, rec.stats, rec.dt)?;
        let [x, y] = self.driver.offset(self.size());
        let offset = vk::Offset2D { x, y };
        let Some(panel) = self.panel.as_mut() else {
            return Ok(None);
        };
        let Some(rect) = panel.copy_rect(offset, self.target.extent) else {
            return Ok(None);
        };
        panel.copy_to(
            dev,
            rec.cmd,
            self.target.image(rec.image),
            self.plan.layout,
            rect,
        );
        Ok(Some(rect))
    }

    /// Renders the panel into `cmd` (slot `slot`'s command buffer, begun)
    /// unless the one rendered last still shows `stats`.
    ///
    /// # Safety
    /// As [`SwapchainHud::record`].
    unsafe fn render_panel(
        &mut self,
        dev: &HudDevice,
        state: &mut cache::EntryState,
        cmd: vk::CommandBuffer,
        slot: usize,
        stats: &LiveStats,
        dt: f32,
    ) -> Result<(), HudError> {
        let size = self.size();
        let Some(panel) = self.panel.as_mut() else {
            return Ok(());
        };
        if panel.ready() && self.driver.current(size, stats) {
            return Ok(());
        }
        let (target, pass) = (&mut self.target, state.panel_pass);
        self.driver.render(
            &mut state.imgui.0,
            size,
            dt,
            stats,
            |[width, height], draw_data| {
                let content = vk::Extent2D { width, height };
                panel.reserve(dev, content, pass, target.in_flight())?;
                panel.begin_pass(dev, cmd, pass);
                let r = target.mesh(slot).cmd_draw(
                    dev,
                    cmd,
                    &state.pipeline,
                    &state.font,
                    draw_data,
                    panel.area(),
                );
                dev.device.cmd_end_render_pass(cmd);
                r?;
                panel.content = content;
                Ok::<_, HudError>(())
            },
        )?;
        Ok(())
    }

    /// Frees this swapchain's objects (not the cache's) after a bounded
    /// wait for its own submissions; called before the swapchain is
    /// destroyed. Returns false when the wait ran out (a lost or hung
    /// device) and the objects were leaked instead: the cache's objects,
    /// which they use, must then be leaked too.
    ///
    /// # Safety
    /// `dev` is live, `cache` is its cache; no other use of this HUD
    /// afterwards.
    pub unsafe fn destroy(&mut self, dev: &HudDevice, cache: &HudCache) -> bool {
        debug_assert!(
            cache.owns(&self.entry),
            "SwapchainHud destroyed with another device's cache"
        );
        let done = self.target.destroy_wait(dev);
        if let Some(slot) = self.upload_slot.take() {
            // Under the entry lock before the fence goes away: a completed
            // upload is Ready; one that never completed is done again.
            let mut state = self.entry.lock();
            let fence = self.target.fence(slot);
            if done
                && dev.device.get_fence_status(fence) == Ok(true)
                && state.upload.fence_signalled(fence)
            {
                state.font.free_staging(dev);
            } else {
                state.upload.abandoned(fence);
            }
        }
        if !done {
            // A lost or hung device: leak rather than free under the GPU.
            return false;
        }
        if let Some(mut panel) = self.panel.take() {
            panel.destroy(dev);
        }
        self.target.destroy(dev, &cache.semaphores);
        true
    }
}
