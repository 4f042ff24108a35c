//! The present path, one data flow per `vkQueuePresentKHR` (as in Mesa's
//! overlay layer): timestamp → ring → HUD draw on the present queue
//! (waiting on the app's semaphores, signalling the HUD's) → real present
//! waiting on the HUD's semaphore, with the HUD's rectangle added to the
//! app's present regions; with a frame cap, the limiter's wait
//! (`steadyhud_capture::limiter`) after the real present (or, `early`, first).
//!
//! Rules kept here:
//! * the layer submits only on `queue`, inside this call (the app owns the
//!   queue for its duration); presents from a family without graphics get
//!   no HUD ([`super::queue::hud_role`]);
//! * no allocation, no I/O, no lock held across a draw: the swapchain map is
//!   read without a lock ([`super::handles`]), the HUD's own lock is taken
//!   only by this swapchain's presents, scratch buffers belong to the queue
//!   (and a hidden HUD takes neither: few cache lines, since on a game's
//!   cold cache each line the present touches is a miss);
//! * once a HUD submission has consumed the app's wait semaphores, the real
//!   present waits on the HUD's semaphore even if the layer's code panics
//!   after it (the app's binary semaphores are no longer pending, and
//!   waiting on them would hang);
//! * a present that draws nothing (HUD hidden, no fault switch) takes no
//!   guard, so no system call: its own work (counters latched, timestamps
//!   recorded, counters booked) is `#[no_panic]`, proved panic-free when
//!   the library links (optimized builds: the tests' and CI's are
//!   `--release`), so a forced thread exit meets no `catch_unwind`; a
//!   display source or the hotkeys run guarded when they have work, the
//!   HUD's draws and set-up always;
//! * the test-only fault switches exist only in `present::<true>`, which
//!   the entry table hands out only when one is set.

use super::device::Device;
use super::queue::{hud_role, HudRole, QueueInfo};
use super::regions::{self, PresentScratch};
use super::swapchain::Swapchain;
use crate::guard;
use crate::hud::{Drawn, HudError};
use ash::vk;
use no_panic::no_panic;
use steadyhud_capture::faults::Site;
use steadyhud_capture::limiter;
use steadyhud_sys::clock::now_ns;
use steadyhud_sys::lock::Recover;

/// A Vulkan array argument as a slice.
///
/// # Safety
/// `p` is null or points to `n` initialised `T`s that stay valid and
/// unchanged for `'a`.
unsafe fn slice<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: the app's array of `n` elements.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

/// What the HUD did in one present.
#[derive(Default)]
struct HudOutcome {
    /// The semaphore the real present must wait on instead of the app's,
    /// once a HUD submission consumed them.
    signal: Option<vk::Semaphore>,
    /// A draw did first-time work (font upload, first use of a pipeline).
    setup: bool,
    /// A HUD answered [`Drawn::SetUpAfter`]: its first-time work is done
    /// after the real present.
    set_up_after: bool,
}

impl Device {
    /// `vkQueuePresentKHR`.
    ///
    /// # Safety
    /// The app's arguments, on a queue of this device.
    pub unsafe fn present<const FAULTS: bool>(
        &self,
        queue: vk::Queue,
        info: *const vk::PresentInfoKHR,
    ) -> vk::Result {
        let Some(next) = self.next.ext.queue_present else {
            return vk::Result::ERROR_OUT_OF_HOST_MEMORY;
        };
        // SAFETY: `info` is the app's valid present info (caller's contract).
        let app = unsafe { &*info };
        if let Some(fps) = self.client.cap_at(false) {
            // Before the latch: the wait is part of the frame this present ends.
            // SAFETY: inside the app's present of `app` (caller).
            unsafe { self.limit_frame(app, fps) };
        }
        let t = now_ns();
        let qi = self.queue(queue);
        // A hidden HUD draws nothing (but its toast for a second): no
        // scratch, no regions to patch.
        let visible = self.client.hud.drawn(t);
        let mut scratch = qi.filter(|_| visible).map(|q| q.scratch.lock_or_recover());
        let mut out = HudOutcome::default();
        let mut patched = *app;
        let ours = if visible || FAULTS {
            // One guard for the HUD's draws and the rest of the layer's
            // work in this present (each guard costs two system calls: see
            // `guard`).
            // SAFETY: inside the app's present on `queue` (`qi` is its
            // record), with its valid present info; `app.p_next` is the
            // app's valid chain.
            guard::contain(None, || unsafe {
                self.before_present::<FAULTS>(
                    qi,
                    visible,
                    app,
                    t,
                    scratch.as_deref_mut(),
                    &mut out,
                );
                let s = scratch.as_deref_mut()?;
                match regions::find(app) {
                    // SAFETY: `r` is the app's valid `VkPresentRegionsKHR`;
                    // the copy lives in `scratch`, locked until this call
                    // returns.
                    regions::Found::First(r) => {
                        s.patch(r).map(|p| p as *const vk::PresentRegionsKHR)
                    }
                    _ => None,
                }
            })
        } else {
            // Nothing drawn: the capture alone, without a guard (no system
            // call), its own work checked panic-free.
            // SAFETY: as above.
            unsafe { self.capture(app, t, &mut out) };
            None
        };
        if let Some(p) = ours {
            patched.p_next = p.cast();
        }
        if let Some(sem) = out.signal.as_ref() {
            patched.wait_semaphore_count = 1;
            patched.p_wait_semaphores = sem;
        }
        let t_present = now_ns();
        // Called as able to unwind: a thread ended inside the driver's
        // present unwinds through this frame, and `scratch` is unlocked on
        // the way, for the queue's other presenting threads.
        type Present =
            unsafe extern "system-unwind" fn(vk::Queue, *const vk::PresentInfoKHR) -> vk::Result;
        // SAFETY: the same function; the two ABIs differ only in whether
        // an unwind may leave the callee.
        let next = unsafe { std::mem::transmute::<vk::PFN_vkQueuePresentKHR, Present>(next) };
        // SAFETY: the next layer's `vkQueuePresentKHR`, on the app's queue
        // with the app's present info; `patched` waits instead on the HUD's
        // semaphore once a HUD submission consumed the app's waits, and its
        // regions copy lives in `scratch`, locked until this call returns.
        let r = unsafe { next(queue, &patched) };
        // When the HUD's set-up follows the real present, when that ended.
        let mut t_presented = 0;
        if out.set_up_after {
            t_presented = now_ns();
            if let Some(q) = qi {
                // SAFETY: still inside the app's present on `q`'s queue,
                // after the real present; `app` is its valid present info.
                guard::contain((), || unsafe { self.set_up_huds(q, app) });
            }
        }
        let now = now_ns();
        if let Some(fps) = self.client.cap_at(true) {
            // After the latch: the wait is part of the frame this present starts.
            // SAFETY: as above, after the real present.
            unsafe { self.limit_frame(app, fps) };
        }
        self.book(&out, [t, t_present, t_presented, now]);
        r
    }

    /// The present's times into the device's counters: `[t, t_present,
    /// t_presented, now]` (the hook's entry, the real present's call, its
    /// return when the HUD's set-up followed it (0 otherwise), the end).
    #[no_panic]
    fn book(&self, out: &HudOutcome, [t, t_present, t_presented, now]: [u64; 4]) {
        let Some(dc) = self.counters.as_ref() else {
            return;
        };
        if out.setup {
            // A present that waits on a HUD draw that did first-time
            // work (a direct draw's first use of the pipeline: a
            // software driver compiles its shaders then) is the
            // layer's setup cost.
            dc.add(|b| b.layer_setup_ns, now.saturating_sub(t));
        } else if out.set_up_after {
            // The real present is the driver's; the HUD's set-up after
            // it (the upload, the first panel) is the layer's.
            dc.add(|b| b.present_ns, t_presented.saturating_sub(t_present));
            dc.add(|b| b.layer_setup_ns, now.saturating_sub(t_presented));
        } else {
            dc.add(|b| b.present_ns, now.saturating_sub(t_present));
        }
        // Lands in the next latch: the frame that starts at this present.
        dc.add(|b| b.in_present_ns, now.saturating_sub(t));
    }

    /// The capture of a present that draws nothing (no HUD shown, no fault
    /// switch): each swapchain's timestamp into its stream (with the
    /// device's counters on the first), its display answer asked for, the
    /// Wayland hotkeys' events read. No guard: the steps that are the
    /// present's own work are `#[no_panic]` ([`Device::latch`],
    /// [`Device::record_frame`]), checked when the library links; a
    /// display source and the hotkeys run under one guard, and only when
    /// they have work (a window with a display ring; the hotkeys' pump
    /// due); the Wayland listeners that run inside it take none of their
    /// own (`tests/present_syscalls.rs` counts the calls).
    ///
    /// # Safety
    /// As [`Device::before_present`].
    unsafe fn capture(&self, info: &vk::PresentInfoKHR, t: u64, out: &mut HudOutcome) {
        // SAFETY: the app's array of `swapchain_count` swapchains (caller).
        let swapchains = unsafe { slice(info.p_swapchains, info.swapchain_count) };
        let mut latched = [0u64; steadyhud_counters::MAX_COUNTERS];
        let mut values = self.latch(&mut latched);
        for (i, &sc) in swapchains.iter().enumerate() {
            // SAFETY: inside the app's present of `sc` (caller).
            let Some((s, key)) = (unsafe { self.record_frame(sc, t, values.take()) }) else {
                continue;
            };
            let ask = key.filter(|_| s.stream.has_display());
            let pump = self.client.input_due(t);
            if ask.is_none() && !pump {
                continue;
            }
            // One guard for both (each costs two system calls).
            out.setup |= guard::contain(false, || {
                if let Some(k) = ask {
                    // SAFETY: the caller's contract, `sc` being the `i`-th.
                    unsafe { self.ask_display(s, info, i, k) };
                }
                pump && self.client.input_pump(s.surface, t)
            });
        }
    }

    /// The device's counters latched at this present into `latched`: the
    /// values that ride with its first swapchain (`None` without counters).
    #[no_panic]
    fn latch<'a>(
        &self,
        latched: &'a mut [u64; steadyhud_counters::MAX_COUNTERS],
    ) -> Option<&'a [u64; steadyhud_counters::MAX_COUNTERS]> {
        let dc = self.counters.as_ref()?;
        dc.table.latch(latched);
        Some(latched)
    }

    /// The present's timestamp `t` into the stream of swapchain `sc` (with
    /// the counters `values`): the swapchain's record and the present's
    /// key (`None`: the ring was full), or `None` for a swapchain the layer
    /// does not know.
    ///
    /// # Safety
    /// Inside the app's present of `sc`.
    #[no_panic]
    unsafe fn record_frame(
        &self,
        sc: vk::SwapchainKHR,
        t: u64,
        values: Option<&[u64; steadyhud_counters::MAX_COUNTERS]>,
    ) -> Option<(&Swapchain, Option<u64>)> {
        // SAFETY: inside the app's present of `sc` (caller).
        let s = unsafe { self.swapchain(sc) }?;
        Some((s, s.stream.record_with(t, values)))
    }

    /// Displayed-frame timing for the present keyed `k` of `s`, the `i`-th
    /// swapchain of `info`: the feedback for this present's commit, asked
    /// before the present goes down (the WSI commits inside it); else the
    /// app's own display-timing query may answer it, by the app's id for
    /// this swapchain (`display_observe`); a present not asked about is
    /// known at once.
    ///
    /// # Safety
    /// Inside the app's present of `s`'s swapchain, its `i`-th; `info` is
    /// its valid present info.
    unsafe fn ask_display(&self, s: &Swapchain, info: &vk::PresentInfoKHR, i: usize, k: u64) {
        // SAFETY: the caller's contract.
        let tagged = || unsafe { self.observe_present(s, info.p_next, i, k) };
        if !self
            .client
            .present_asked(s.surface, s.x11.as_deref(), &s.stream, k)
            && !tagged()
        {
            s.stream.not_asked(k);
        }
    }

    /// The frame limiter: waits for this present's deadline under a cap of
    /// `fps` and books the wait as `limiter_wait_ms`.
    ///
    /// # Safety
    /// Inside the app's present with its valid present info `info`.
    unsafe fn limit_frame(&self, info: &vk::PresentInfoKHR, fps: u32) {
        let now = now_ns();
        // SAFETY: the app's array of `swapchain_count` swapchains (caller).
        let swapchains = unsafe { slice(info.p_swapchains, info.swapchain_count) };
        // Each window keeps its own schedule; a call presenting several
        // waits for the latest of their deadlines.
        let due = swapchains
            .iter()
            // SAFETY: inside the app's present of `sc` (caller).
            .filter_map(|&sc| unsafe { self.swapchain(sc) })
            .filter_map(|s| s.stream.cap_deadline(now, fps))
            .max();
        if let Some(d) = due {
            let waited = limiter::wait_until(d);
            if let Some(dc) = self.counters.as_ref() {
                dc.add(|b| b.limiter_wait_ns, waited);
            }
        }
    }

    /// The HUDs' first-time work that [`Device::before_present`] left for
    /// after the real present ([`Drawn::SetUpAfter`]), on the present's
    /// queue `qi`: the font upload, the pipeline's first use and the first
    /// panel, submitted alone, so it never delays the frame just presented.
    ///
    /// # Safety
    /// Inside the app's `vkQueuePresentKHR` on `qi`'s queue, after the real
    /// present returned, with its valid present info `info`.
    unsafe fn set_up_huds(&self, qi: &QueueInfo, info: &vk::PresentInfoKHR) {
        let dev = self.hud();
        // SAFETY: the app's array of `swapchain_count` swapchains (caller).
        let swapchains = unsafe { slice(info.p_swapchains, info.swapchain_count) };
        for &sc in swapchains {
            // SAFETY: inside the app's present of `sc` (caller).
            let Some(s) = (unsafe { self.swapchain(sc) }) else {
                continue;
            };
            let mut slot = s.hud.lock_or_recover();
            let Some(hud) = slot.as_mut() else { continue };
            let stats = s.stream.live.latest();
            // SAFETY: inside the app's present on `qi`'s queue, after the
            // real present (caller); `hud_cache` is the device's cache.
            let done = guard::try_run(|| unsafe {
                hud.set_up(&dev, &self.hud_cache, qi.handle, qi.family, &stats)
            })
            .unwrap_or(Err(HudError::Unsupported(
                "internal error in the HUD's set-up",
            )));
            if let Err(e) = done {
                self.hud_off(&format!("set-up failed: {e}"));
                if let Some(gone) = slot.take() {
                    s.retire_hud(gone);
                }
            }
        }
    }

    /// Capture and HUD for one present; fills `out` as it goes, so what a
    /// submission consumed is known even if a later step panics.
    ///
    /// # Safety
    /// Called inside the app's `vkQueuePresentKHR` on this device, with its
    /// `info` valid per the Vulkan spec (arrays of `swapchain_count`
    /// swapchains of this device and image indices they acquired); `qi` is
    /// the present queue's record, if the layer knows the queue; `visible`
    /// whether the HUD is shown.
    unsafe fn before_present<const FAULTS: bool>(
        &self,
        qi: Option<&QueueInfo>,
        visible: bool,
        info: &vk::PresentInfoKHR,
        t: u64,
        mut scratch: Option<&mut PresentScratch>,
        out: &mut HudOutcome,
    ) {
        // SAFETY: the app's arrays of `swapchain_count` swapchains and image
        // indices (caller).
        let swapchains = unsafe { slice(info.p_swapchains, info.swapchain_count) };
        // SAFETY: as above.
        let indices = unsafe { slice(info.p_image_indices, info.swapchain_count) };
        if let Some(s) = scratch.as_deref_mut() {
            s.begin(swapchains.len());
        }
        // The device's counters end their frame here; they ride with the
        // first swapchain of the present (on the stack: no allocation).
        let mut latched = [0u64; steadyhud_counters::MAX_COUNTERS];
        let mut values = self.latch(&mut latched);
        // The HUD draws on this queue if it is shown and the queue may.
        let draw_on = match qi.map(|q| (q, hud_role(Some(q.flags)))) {
            _ if !visible => None,
            Some((q, HudRole::Draw)) => Some(q),
            other => {
                if let HudRole::Off(why) = other.map_or(hud_role(None), |(_, r)| r) {
                    self.hud_off(why);
                }
                None
            }
        };
        let dev = self.hud();
        // SAFETY: the app's array of `wait_semaphore_count` semaphores (caller).
        let app_wait = unsafe { slice(info.p_wait_semaphores, info.wait_semaphore_count) };
        // Several swapchains in one present: the HUD draws are chained, each
        // waiting on the previous one's semaphore, the first on the app's.
        for (i, (&sc, &index)) in swapchains.iter().zip(indices).enumerate() {
            // SAFETY: inside the app's present of `sc` (caller).
            let Some((s, key)) = (unsafe { self.record_frame(sc, t, values.take()) }) else {
                continue;
            };
            if let (true, Some(k)) = (s.stream.has_display(), key) {
                // SAFETY: inside the app's present of `sc`, its `i`-th
                // swapchain; `info` is its valid present info (caller).
                unsafe { self.ask_display(s, info, i, k) };
            }
            // The Wayland hotkey's events, while the display is surely live
            // (one relaxed load for a game without Wayland surfaces).
            out.setup |= self.client.input_pump(s.surface, t);
            if FAULTS {
                self.client.faults.inject(Site::Present);
            }
            let Some(qi) = draw_on else { continue };
            let mut slot = s.hud.lock_or_recover();
            let Some(hud) = slot.as_mut() else { continue };
            let stats = s.stream.live.latest();
            let wait: &[vk::Semaphore] = match &out.signal {
                Some(x) => std::slice::from_ref(x),
                None => app_wait,
            };
            let drawn = if FAULTS && self.client.faults.device_lost_now() {
                Err(HudError::Vulkan {
                    call: "vkQueueSubmit",
                    result: vk::Result::ERROR_DEVICE_LOST,
                })
            } else {
                // A panic inside the draw leaves this HUD half-way: it is
                // then handled as a failed draw, never drawn again.
                // SAFETY: inside the app's `vkQueuePresentKHR` on `qi`'s queue
                // (caller), for image `index` of this swapchain; `hud_cache`
                // is the device's cache.
                guard::try_run(|| unsafe {
                    hud.draw(
                        &dev,
                        &self.hud_cache,
                        qi.handle,
                        qi.family,
                        index,
                        wait,
                        &stats,
                    )
                })
                .unwrap_or(Err(HudError::Unsupported(
                    "internal error in the HUD's draw",
                )))
            };
            match drawn {
                Ok(Drawn::Submitted { signal, setup }) => {
                    out.signal = Some(signal);
                    out.setup |= setup;
                    if let Some(r) = scratch.as_deref_mut().and_then(|s| s.hud_rects.get_mut(i)) {
                        *r = hud.last_rect();
                    }
                }
                Ok(Drawn::Skipped) => {}
                Ok(Drawn::SetUpAfter) => out.set_up_after = true,
                Err(e) => {
                    self.hud_off(&format!("draw failed: {e}"));
                    // A failed draw (a lost device above all) stays failed:
                    // this swapchain's HUD is drawn no more, and freed with
                    // the swapchain (a present may still wait on its
                    // semaphores).
                    if let Some(gone) = slot.take() {
                        s.retire_hud(gone);
                    }
                }
            }
            if FAULTS {
                self.client.faults.inject(Site::AfterHud);
            }
        }
    }
}
