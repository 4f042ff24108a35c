//! The device's side of display timing by observation
//! ([`super::display_observe`]): the present path's tagging and the app's
//! own timing queries, forwarded to the next layer and watched on their
//! way back. `impl Device`, split off by job as [`super::present`] and
//! [`super::submit`] are; the ring, the chain walks and the reading of the
//! results stay in `display_observe`, which knows no device.

use super::device::Device;
use super::display_observe::{
    past_ext, past_google, present_id, refresh_google, timing_properties_ext, Observed,
    PastPresentationTimingInfo, PastPresentationTimingProperties, SwapchainTimingProperties,
};
use super::swapchain::Swapchain;
use ash::vk;
use std::ffi::c_void;
use steadyhud_capture::rings::Stream;

impl Device {
    /// Present of swapchain `i` (record `s`) keyed `key`, with the app's
    /// chain `p_next`: whether the app tagged it so a result will name it
    /// (the caller answers "not asked" otherwise). One chain walk and one
    /// uncontended lock; nothing when the device does not observe.
    ///
    /// # Safety
    /// Inside the app's present of `s`'s swapchain; `p_next` is its present
    /// info's valid chain, `i` the swapchain's place in its arrays.
    pub(super) unsafe fn observe_present(
        &self,
        s: &Swapchain,
        p_next: *const c_void,
        i: usize,
        key: u64,
    ) -> bool {
        let (Some(m), Some(obs)) = (self.observe, s.observed.as_deref()) else {
            return false;
        };
        // SAFETY: the app's present chain (caller).
        match unsafe { present_id(m, p_next, i) } {
            Some(id) => {
                obs.tag(id, key);
                true
            }
            None => false,
        }
    }

    /// The observed record and stream of `sc`.
    ///
    /// # Safety
    /// Inside one of the app's calls on `sc`.
    unsafe fn seen(&self, sc: vk::SwapchainKHR) -> Option<(&Observed, &Stream)> {
        // SAFETY: the caller's contract.
        let s = unsafe { self.swapchain(sc) }?;
        Some((s.observed.as_deref()?, &*s.stream))
    }

    /// `vkGetPastPresentationTimingGOOGLE`.
    ///
    /// # Safety
    /// The app's arguments, for this device.
    pub unsafe fn past_timing_google(
        &self,
        sc: vk::SwapchainKHR,
        count: *mut u32,
        timings: *mut vk::PastPresentationTimingGOOGLE,
    ) -> vk::Result {
        let Some(next) = self.observe_next.past_google else {
            return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
        };
        // SAFETY: inside the app's call on `sc`.
        let seen = crate::guard::contain(None, || unsafe { self.seen(sc) });
        // SAFETY: the app's arguments and the next layer's function.
        unsafe { past_google(next, self.handle, sc, count, timings, seen) }
    }

    /// `vkGetRefreshCycleDurationGOOGLE`.
    ///
    /// # Safety
    /// The app's arguments, for this device.
    pub unsafe fn refresh_cycle_google(
        &self,
        sc: vk::SwapchainKHR,
        out: *mut vk::RefreshCycleDurationGOOGLE,
    ) -> vk::Result {
        let Some(next) = self.observe_next.refresh_google else {
            return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
        };
        // SAFETY: inside the app's call on `sc`.
        let seen = crate::guard::contain(None, || unsafe { self.seen(sc) }).map(|s| s.0);
        // SAFETY: the app's arguments and the next layer's function.
        unsafe { refresh_google(next, self.handle, sc, out, seen) }
    }

    /// `vkGetPastPresentationTimingEXT`.
    ///
    /// # Safety
    /// The app's arguments, for this device.
    pub unsafe fn past_timing_ext(
        &self,
        info: *const PastPresentationTimingInfo,
        props: *mut PastPresentationTimingProperties,
    ) -> vk::Result {
        let Some(next) = self.observe_next.past_ext else {
            return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
        };
        // SAFETY: the app's arguments and the next layer's function; the
        // swapchain `find` is given is the one of the app's call.
        unsafe { past_ext(next, self.handle, info, props, |sc| self.seen(sc)) }
    }

    /// `vkGetSwapchainTimingPropertiesEXT`.
    ///
    /// # Safety
    /// The app's arguments, for this device.
    pub unsafe fn swapchain_timing_ext(
        &self,
        sc: vk::SwapchainKHR,
        out: *mut SwapchainTimingProperties,
        counter: *mut u64,
    ) -> vk::Result {
        let Some(next) = self.observe_next.timing_properties_ext else {
            return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
        };
        // SAFETY: inside the app's call on `sc`.
        let seen = crate::guard::contain(None, || unsafe { self.seen(sc) }).map(|s| s.0);
        // SAFETY: the app's arguments and the next layer's function.
        unsafe { timing_properties_ext(next, self.handle, sc, out, counter, seen) }
    }
}
