//! Display timing by observation (config `display_timing`, `Mode::Observe`
//! of [`super::display_timing`]): the app itself uses
//! `VK_EXT_present_timing` or `VK_GOOGLE_display_timing`, and the layer
//! reads, never takes, what the app's own calls return.
//!
//! - **Ids in** ([`present_id`], [`Observed::tag`]): at each present, the
//!   app's id for each swapchain (`VkPresentId2KHR` / `VkPresentIdKHR` for
//!   present timing, `VkPresentTimesInfoGOOGLE` for GOOGLE) goes with the
//!   present's key into the swapchain's fixed ring of [`ID_RING`] entries
//!   ([`IdRing`]: no allocation; its lock is taken only inside calls the
//!   app must serialise on that swapchain, so it is never contended). A
//!   present without an id (or, for present timing, without a display
//!   stage queried) is answered "not asked" at once.
//! - **Results out** ([`past_google`], [`past_ext`]): the app's
//!   `vkGetPastPresentationTiming{GOOGLE,EXT}` goes down with the app's own
//!   arguments; on `SUCCESS`/`INCOMPLETE` the filled records are read
//!   (never written), each id is matched to its present's key and the
//!   stream gets an [`Answer`]. A record whose id the ring no longer has
//!   (wrapped, untagged, or a present the compositor path answered) is
//!   skipped.
//! - **Refresh** ([`refresh_google`], [`timing_properties_ext`]): the
//!   app's own `vkGetRefreshCycleDurationGOOGLE` /
//!   `vkGetSwapchainTimingPropertiesEXT` results, kept per swapchain and
//!   given with the next answers (0 until the app asks).
//!
//! Nothing is verified on a driver: no driver here offers either
//! extension. The structures below are the Vulkan registry's, which
//! `ash` 0.38 lacks for present timing.

use super::display_timing::Method;
use ash::vk;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use steadyhud_capture::rings::{Answer, Stream};
use steadyhud_log::display::{Shown, Source};
use steadyhud_sys::lock::Recover;

/// `VkStructureType` values (Vulkan registry; not in `ash` 0.38).
pub const STYPE_PRESENT_ID_2: i32 = 1_000_479_001;
pub const STYPE_SWAPCHAIN_TIMING_PROPERTIES: i32 = 1_000_208_001;
pub const STYPE_PRESENT_TIMINGS_INFO: i32 = 1_000_208_003;
pub const STYPE_PRESENT_TIMING_INFO: i32 = 1_000_208_004;
pub const STYPE_PAST_PRESENTATION_TIMING_INFO: i32 = 1_000_208_005;
pub const STYPE_PAST_PRESENTATION_TIMING_PROPERTIES: i32 = 1_000_208_006;
pub const STYPE_PAST_PRESENTATION_TIMING: i32 = 1_000_208_007;

/// `VkPresentStageFlagBitsEXT`.
pub const STAGE_QUEUE_OPERATIONS_END: u32 = 0x1;
pub const STAGE_REQUEST_DEQUEUED: u32 = 0x2;
pub const STAGE_IMAGE_FIRST_PIXEL_OUT: u32 = 0x4;
pub const STAGE_IMAGE_FIRST_PIXEL_VISIBLE: u32 = 0x8;
/// The stages that say when a frame reached the screen.
const DISPLAY_STAGES: u32 = STAGE_IMAGE_FIRST_PIXEL_OUT | STAGE_IMAGE_FIRST_PIXEL_VISIBLE;

/// `VkPresentId2KHR` (same layout as `VkPresentIdKHR`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PresentId2 {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub swapchain_count: u32,
    pub p_present_ids: *const u64,
}

/// `VkPresentTimingInfoEXT`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PresentTimingInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub flags: u32,
    pub target_time: u64,
    pub time_domain_id: u64,
    pub present_stage_queries: u32,
    pub target_time_domain_present_stage: u32,
}

/// `VkPresentTimingsInfoEXT`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PresentTimingsInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub swapchain_count: u32,
    pub p_timing_infos: *const PresentTimingInfo,
}

/// `VkPastPresentationTimingInfoEXT`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PastPresentationTimingInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub flags: u32,
    pub swapchain: vk::SwapchainKHR,
}

/// `VkPresentStageTimeEXT`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PresentStageTime {
    pub stage: u32,
    pub time: u64,
}

/// `VkPastPresentationTimingEXT`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PastPresentationTiming {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub present_id: u64,
    pub target_time: u64,
    pub present_stage_count: u32,
    pub p_present_stages: *mut PresentStageTime,
    pub time_domain: vk::TimeDomainKHR,
    pub time_domain_id: u64,
    pub report_complete: vk::Bool32,
}

/// `VkPastPresentationTimingPropertiesEXT`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PastPresentationTimingProperties {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub timing_properties_counter: u64,
    pub time_domains_counter: u64,
    pub presentation_timing_count: u32,
    pub p_presentation_timings: *mut PastPresentationTiming,
}

/// `VkSwapchainTimingPropertiesEXT`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SwapchainTimingProperties {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub refresh_duration: u64,
    pub refresh_interval: u64,
}

/// `PFN_vkGetPastPresentationTimingEXT`.
pub type PfnGetPastPresentationTimingExt = unsafe extern "system" fn(
    vk::Device,
    *const PastPresentationTimingInfo,
    *mut PastPresentationTimingProperties,
) -> vk::Result;

/// `PFN_vkGetSwapchainTimingPropertiesEXT`.
pub type PfnGetSwapchainTimingPropertiesExt = unsafe extern "system" fn(
    vk::Device,
    vk::SwapchainKHR,
    *mut SwapchainTimingProperties,
    *mut u64,
) -> vk::Result;

/// The next layer's query functions the observer forwards to (each `None`
/// where the next layer has none).
#[derive(Clone, Copy, Default)]
pub struct ObserveNext {
    pub past_google: Option<vk::PFN_vkGetPastPresentationTimingGOOGLE>,
    pub refresh_google: Option<vk::PFN_vkGetRefreshCycleDurationGOOGLE>,
    pub past_ext: Option<PfnGetPastPresentationTimingExt>,
    pub timing_properties_ext: Option<PfnGetSwapchainTimingPropertiesExt>,
}

impl ObserveNext {
    /// The four functions from the next layer's `get` (its gdpa bound to
    /// a live device).
    ///
    /// # Safety
    /// As [`super::loader::next_fn`]: `get` is the next layer's
    /// `vkGetDeviceProcAddr` bound to a live device.
    pub unsafe fn load(get: impl Fn(*const std::ffi::c_char) -> vk::PFN_vkVoidFunction) -> Self {
        use super::loader::next_fn;
        // SAFETY: each name is looked up on the live device (caller) and
        // cast to the type the Vulkan registry gives it.
        unsafe {
            ObserveNext {
                past_google: next_fn(&get, c"vkGetPastPresentationTimingGOOGLE"),
                refresh_google: next_fn(&get, c"vkGetRefreshCycleDurationGOOGLE"),
                past_ext: next_fn(&get, c"vkGetPastPresentationTimingEXT"),
                timing_properties_ext: next_fn(&get, c"vkGetSwapchainTimingPropertiesEXT"),
            }
        }
    }
}

/// Entries of a swapchain's id ring: a quarter of a second of presents at
/// 1000 fps, several seconds at game rates. An app that queries later than
/// that loses the oldest (their rows wait the row gate's `LATE_NS` and are
/// written unknown).
pub const ID_RING: usize = 256;

#[derive(Clone, Copy, Default)]
struct Slot {
    id: u64,
    /// The present's key ([`Stream::record_with`]'s timestamp); 0: empty.
    key: u64,
}

/// The app's present ids of one swapchain, each with its present's key,
/// newest overwriting oldest.
pub struct IdRing {
    slots: [Slot; ID_RING],
    next: usize,
}

impl Default for IdRing {
    fn default() -> Self {
        IdRing {
            slots: [Slot::default(); ID_RING],
            next: 0,
        }
    }
}

impl IdRing {
    /// Remembers that the present keyed `key` (never 0) had id `id`.
    pub fn put(&mut self, id: u64, key: u64) {
        self.slots[self.next] = Slot { id, key };
        self.next = (self.next + 1) % ID_RING;
    }

    /// Takes the key of the newest present with id `id` whose key is not
    /// after `not_after` (a display time: a frame is never shown before it
    /// was presented, so an id the app reuses maps to the right present);
    /// `None` when there is none. Each key is taken once.
    pub fn take(&mut self, id: u64, not_after: Option<u64>) -> Option<u64> {
        let newest_first = (0..ID_RING).map(|k| (self.next + ID_RING - 1 - k) % ID_RING);
        for i in newest_first {
            let s = self.slots[i];
            if s.key != 0 && s.id == id && not_after.is_none_or(|d| s.key <= d) {
                self.slots[i].key = 0;
                return Some(s.key);
            }
        }
        None
    }
}

/// What the observer keeps per swapchain.
#[derive(Default)]
pub struct Observed {
    ids: Mutex<IdRing>,
    /// The refresh period the app's own query last returned (0: unknown).
    refresh_ns: AtomicU64,
    /// Whether the "time domain not on CLOCK_MONOTONIC" line was printed.
    domain_said: AtomicBool,
}

impl Observed {
    /// A new record (allocated at swapchain creation, never on a present).
    pub fn new() -> Box<Observed> {
        Box::default()
    }

    /// The present keyed `key` carried the app's id `id`.
    pub fn tag(&self, id: u64, key: u64) {
        self.ids.lock_or_recover().put(id, key);
    }

    /// The refresh period answers carry from now on.
    pub fn set_refresh(&self, ns: u64) {
        self.refresh_ns.store(ns, Ordering::Relaxed);
    }

    fn answer(&self, stream: &Stream, id: u64, shown: Shown) {
        let not_after = match shown {
            Shown::At { displayed_ns, .. } => Some(displayed_ns),
            _ => None,
        };
        if let Some(present_t) = self.ids.lock_or_recover().take(id, not_after) {
            stream.answer(Answer { present_t, shown });
        }
    }
}

/// The app's id for swapchain `i` of a present whose chain starts at
/// `p_next`, as `method` reports results by: GOOGLE, the
/// `VkPresentTimesInfoGOOGLE` id; present timing, the `VkPresentId2KHR`
/// (else `VkPresentIdKHR`) id, non-zero, and only when the present's
/// `VkPresentTimingsInfoEXT` queries a display stage for it (a present
/// without one gets no display time). `None`: no result will name this
/// present.
///
/// # Safety
/// `p_next` is null or the valid `pNext` chain of the app's present info,
/// whose arrays have `swapchainCount` entries each.
pub unsafe fn present_id(method: Method, p_next: *const c_void, i: usize) -> Option<u64> {
    let mut google = None;
    let mut id2 = None;
    let mut id1 = None;
    let mut stages = None;
    // SAFETY: the app's valid chain (caller).
    for l in unsafe { super::chain::links(p_next) } {
        let s = l.s_type.as_raw();
        if s == vk::StructureType::PRESENT_TIMES_INFO_GOOGLE.as_raw() {
            // SAFETY: the sType names this structure.
            let t = unsafe { &*(l.ptr as *const vk::PresentTimesInfoGOOGLE<'_>) };
            // SAFETY: its array of `swapchain_count` entries (caller).
            google = unsafe { at(t.p_times, t.swapchain_count, i) }.map(|t| t.present_id as u64);
        } else if s == STYPE_PRESENT_ID_2 || s == vk::StructureType::PRESENT_ID_KHR.as_raw() {
            // SAFETY: the sType names one of two structures of this layout.
            let t = unsafe { &*(l.ptr as *const PresentId2) };
            // SAFETY: its array of `swapchain_count` ids (caller).
            let id = unsafe { at(t.p_present_ids, t.swapchain_count, i) }.filter(|&id| id != 0);
            if s == STYPE_PRESENT_ID_2 {
                id2 = id;
            } else {
                id1 = id;
            }
        } else if s == STYPE_PRESENT_TIMINGS_INFO {
            // SAFETY: the sType names this structure.
            let t = unsafe { &*(l.ptr as *const PresentTimingsInfo) };
            // SAFETY: its array of `swapchain_count` entries (caller).
            stages = unsafe { at(t.p_timing_infos, t.swapchain_count, i) }
                .map(|t| t.present_stage_queries);
        }
    }
    match method {
        Method::DisplayTimingGoogle => google,
        Method::PresentTiming => id2
            .or(id1)
            .filter(|_| stages.is_some_and(|q| q & DISPLAY_STAGES != 0)),
        Method::PresentWait2 | Method::PresentWait => None,
    }
}

/// Element `i` of the app's array `p` of `n` elements, if there.
///
/// # Safety
/// `p` is null or points to `n` initialised `T`s.
unsafe fn at<T: Copy>(p: *const T, n: u32, i: usize) -> Option<T> {
    if p.is_null() || i >= n as usize {
        return None;
    }
    // SAFETY: `i < n` elements of the caller's array.
    Some(unsafe { *p.add(i) })
}

/// The app's filled records of a query, read only.
///
/// # Safety
/// `p` is null or points to `n` initialised records.
unsafe fn filled<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: the caller's array of `n` records.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

fn answered(r: vk::Result) -> bool {
    r == vk::Result::SUCCESS || r == vk::Result::INCOMPLETE
}

/// The app's `vkGetPastPresentationTimingGOOGLE` through `next`, then its
/// filled records answered to `seen`'s stream: `actualPresentTime` is on
/// CLOCK_MONOTONIC on Linux (the spec: "a monotonically-increasing clock
/// (e.g. CLOCK_MONOTONIC …) on Android and Linux"), the session clock; a
/// record of 0 answers "unknown".
///
/// # Safety
/// The app's arguments, valid per the spec, and `next` the next layer's
/// function for them.
pub unsafe fn past_google(
    next: vk::PFN_vkGetPastPresentationTimingGOOGLE,
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    count: *mut u32,
    timings: *mut vk::PastPresentationTimingGOOGLE,
    seen: Option<(&Observed, &Stream)>,
) -> vk::Result {
    // SAFETY: the app's own call (caller).
    let r = unsafe { next(device, swapchain, count, timings) };
    let Some((obs, stream)) = seen else { return r };
    if !answered(r) || count.is_null() || timings.is_null() {
        return r;
    }
    crate::guard::contain((), || {
        // SAFETY: on success the driver filled `*count` records of the
        // app's array; only read here.
        let records = unsafe { filled(timings, *count) };
        let refresh_ns = obs.refresh_ns.load(Ordering::Relaxed);
        let source = Source::GoogleDisplayTiming;
        for t in records {
            let shown = match t.actual_present_time {
                0 => Shown::Unknown,
                displayed_ns => Shown::At {
                    source,
                    displayed_ns,
                    refresh_ns,
                },
            };
            obs.answer(stream, u64::from(t.present_id), shown);
        }
    });
    r
}

/// The app's `vkGetRefreshCycleDurationGOOGLE`; its answer becomes the
/// swapchain's refresh period.
///
/// # Safety
/// As [`past_google`].
pub unsafe fn refresh_google(
    next: vk::PFN_vkGetRefreshCycleDurationGOOGLE,
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    out: *mut vk::RefreshCycleDurationGOOGLE,
    seen: Option<&Observed>,
) -> vk::Result {
    // SAFETY: the app's own call (caller).
    let r = unsafe { next(device, swapchain, out) };
    if let (vk::Result::SUCCESS, Some(obs), false) = (r, seen, out.is_null()) {
        // SAFETY: filled by the driver on success.
        obs.set_refresh(unsafe { (*out).refresh_duration });
    }
    r
}

/// The app's `vkGetSwapchainTimingPropertiesEXT`; `refreshDuration` (0:
/// unknown or variable) becomes the swapchain's refresh period.
///
/// # Safety
/// As [`past_google`].
pub unsafe fn timing_properties_ext(
    next: PfnGetSwapchainTimingPropertiesExt,
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    out: *mut SwapchainTimingProperties,
    counter: *mut u64,
    seen: Option<&Observed>,
) -> vk::Result {
    // SAFETY: the app's own call (caller).
    let r = unsafe { next(device, swapchain, out, counter) };
    if let (vk::Result::SUCCESS, Some(obs), false) = (r, seen, out.is_null()) {
        // SAFETY: filled by the driver on success.
        obs.set_refresh(unsafe { (*out).refresh_duration });
    }
    r
}

/// What one present timing record says about its frame, on
/// CLOCK_MONOTONIC: `Some(Some(t))` shown at `t`; `Some(None)` complete
/// without a display time (the stage was not reported or its time is 0,
/// which the spec calls "not available"; how a skipped present is
/// reported is unverified, so this answers "unknown", never "dropped");
/// `None` nothing yet (a partial record: it comes back complete) or a time
/// domain that cannot be converted.
///
/// `raw_to_mono`: CLOCK_MONOTONIC minus CLOCK_MONOTONIC_RAW now, for
/// records in the raw domain.
///
/// # Safety
/// `t` is a record the driver filled: its stages array holds
/// `presentStageCount` entries.
unsafe fn ext_time(
    t: &PastPresentationTiming,
    raw_to_mono: i128,
) -> Result<Option<Option<u64>>, ()> {
    // SAFETY: the driver's filled stages (caller).
    let stages = unsafe { filled(t.p_present_stages, t.present_stage_count) };
    let stage = |bit: u32| {
        stages
            .iter()
            .find(|s| s.stage & bit != 0 && s.time != 0)
            .map(|s| s.time)
    };
    let time =
        stage(STAGE_IMAGE_FIRST_PIXEL_VISIBLE).or_else(|| stage(STAGE_IMAGE_FIRST_PIXEL_OUT));
    let complete = t.report_complete == vk::TRUE;
    let Some(time) = time else {
        return Ok(complete.then_some(None));
    };
    let mono = match t.time_domain {
        vk::TimeDomainKHR::CLOCK_MONOTONIC => time,
        vk::TimeDomainKHR::CLOCK_MONOTONIC_RAW => {
            u64::try_from(time as i128 + raw_to_mono).map_err(|_| ())?
        }
        _ => return Err(()),
    };
    Ok(Some(Some(mono)))
}

/// The app's `vkGetPastPresentationTimingEXT` through `next`, then its
/// filled records answered to the stream of the queried swapchain
/// (`find`): a record with the first-pixel-visible stage (else
/// first-pixel-out) answers "shown at"; a complete one without either
/// answers "unknown"; a partial one without either waits for its complete
/// report. Time domains: CLOCK_MONOTONIC as is, CLOCK_MONOTONIC_RAW moved
/// by the clocks' offset now; others (`PRESENT_STAGE_LOCAL`,
/// `SWAPCHAIN_LOCAL`, which need the app's calibration) are skipped, with
/// one line per swapchain.
///
/// # Safety
/// As [`past_google`].
pub unsafe fn past_ext<'a>(
    next: PfnGetPastPresentationTimingExt,
    device: vk::Device,
    info: *const PastPresentationTimingInfo,
    props: *mut PastPresentationTimingProperties,
    find: impl FnOnce(vk::SwapchainKHR) -> Option<(&'a Observed, &'a Stream)>,
) -> vk::Result {
    // SAFETY: the app's own call (caller).
    let r = unsafe { next(device, info, props) };
    if !answered(r) || info.is_null() || props.is_null() {
        return r;
    }
    crate::guard::contain((), || {
        // SAFETY: the app's valid info (caller).
        let Some((obs, stream)) = find(unsafe { (*info).swapchain }) else {
            return;
        };
        // SAFETY: the app's properties, filled by the driver on success;
        // only read here.
        let p = unsafe { &*props };
        // SAFETY: `presentationTimingCount` filled records.
        let records = unsafe { filled(p.p_presentation_timings, p.presentation_timing_count) };
        if records.is_empty() {
            return;
        }
        use steadyhud_sys::clock::{clock_ns, now_ns};
        let raw_to_mono = now_ns() as i128 - clock_ns(libc::CLOCK_MONOTONIC_RAW) as i128;
        let refresh_ns = obs.refresh_ns.load(Ordering::Relaxed);
        let source = Source::PresentTiming;
        for t in records {
            // SAFETY: a record the driver filled.
            match unsafe { ext_time(t, raw_to_mono) } {
                Ok(None) => {}
                Ok(Some(None)) => obs.answer(stream, t.present_id, Shown::Unknown),
                Ok(Some(Some(displayed_ns))) => obs.answer(
                    stream,
                    t.present_id,
                    Shown::At {
                        source,
                        displayed_ns,
                        refresh_ns,
                    },
                ),
                Err(()) => {
                    if !obs.domain_said.swap(true, Ordering::Relaxed) {
                        crate::guard::say(format_args!(
                            "steadyhud: display_timing: present timing results in time domain {:?} are not read (only CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW); those frames stay unknown",
                            t.time_domain
                        ));
                    }
                    obs.answer(stream, t.present_id, Shown::Unknown);
                }
            }
        }
    });
    r
}

#[cfg(test)]
mod tests {
    //! Against the spec's structures: no driver here offers either
    //! extension, so the drivers' query functions are fakes that fill the
    //! app's arrays as the spec says.
    use super::*;
    use ringbuf::traits::Consumer;
    use ringbuf::HeapCons;
    use std::sync::Arc;

    fn stream() -> (Arc<Stream>, HeapCons<Answer>) {
        let (s, (_, _, d)) = Stream::with_display(1, 0, None, true);
        (s, d.expect("a display ring"))
    }

    fn answers(d: &mut HeapCons<Answer>) -> Vec<Answer> {
        d.pop_iter().collect()
    }

    fn at(source: Source, present_t: u64, displayed_ns: u64, refresh_ns: u64) -> Answer {
        Answer {
            present_t,
            shown: Shown::At {
                source,
                displayed_ns,
                refresh_ns,
            },
        }
    }

    fn unknown(present_t: u64) -> Answer {
        Answer {
            present_t,
            shown: Shown::Unknown,
        }
    }

    #[test]
    fn the_id_ring_wraps_takes_each_key_once_and_never_a_later_present() {
        let mut r = IdRing::default();
        for i in 0..ID_RING as u64 + 44 {
            r.put(i, 1000 + i);
        }
        // The oldest 44 were overwritten: their results find nothing.
        assert_eq!(r.take(0, None), None);
        assert_eq!(r.take(43, None), None);
        assert_eq!(r.take(44, None), Some(1044));
        let last = ID_RING as u64 + 43;
        assert_eq!(r.take(last, Some(u64::MAX)), Some(1000 + last));
        // Each key once; an id never tagged finds nothing.
        assert_eq!(r.take(last, None), None);
        assert_eq!(r.take(1 << 40, None), None);
        // An id the app reuses: a display time maps to the newest present
        // not after it.
        let mut r = IdRing::default();
        r.put(7, 100);
        r.put(7, 200);
        assert_eq!(r.take(7, Some(150)), Some(100));
        assert_eq!(r.take(7, Some(150)), None, "200 was presented after 150");
        assert_eq!(r.take(7, Some(250)), Some(200));
    }

    /// What the fake GOOGLE driver has left to report (id, actual time).
    static GOOGLE_QUEUE: Mutex<Vec<(u32, u64)>> = Mutex::new(Vec::new());
    /// What it last wrote into the app's array.
    static GOOGLE_WROTE: Mutex<Vec<(u32, u64, u64)>> = Mutex::new(Vec::new());

    /// `vkGetPastPresentationTimingGOOGLE` as the spec has it: with a null
    /// array the count; else up to `*count` records, each returned once,
    /// `INCOMPLETE` when some are left.
    unsafe extern "system" fn fake_google(
        _: vk::Device,
        _: vk::SwapchainKHR,
        count: *mut u32,
        timings: *mut vk::PastPresentationTimingGOOGLE,
    ) -> vk::Result {
        let mut q = GOOGLE_QUEUE.lock().unwrap();
        // SAFETY: the test's valid count.
        let count = unsafe { &mut *count };
        if timings.is_null() {
            *count = q.len() as u32;
            return vk::Result::SUCCESS;
        }
        let n = (*count as usize).min(q.len());
        let mut wrote = GOOGLE_WROTE.lock().unwrap();
        wrote.clear();
        for (k, (id, actual)) in q.drain(..n).enumerate() {
            let t = vk::PastPresentationTimingGOOGLE {
                present_id: id,
                desired_present_time: 0,
                actual_present_time: actual,
                earliest_present_time: actual,
                present_margin: 0,
            };
            // SAFETY: `k < *count` elements of the test's array.
            unsafe { *timings.add(k) = t };
            wrote.push((id, actual, actual));
        }
        *count = n as u32;
        if q.is_empty() {
            vk::Result::SUCCESS
        } else {
            vk::Result::INCOMPLETE
        }
    }

    unsafe extern "system" fn fake_refresh(
        _: vk::Device,
        _: vk::SwapchainKHR,
        out: *mut vk::RefreshCycleDurationGOOGLE,
    ) -> vk::Result {
        // SAFETY: the test's valid out-pointer.
        unsafe { (*out).refresh_duration = 16_666_667 };
        vk::Result::SUCCESS
    }

    fn app_view(a: &[vk::PastPresentationTimingGOOGLE]) -> Vec<(u32, u64, u64)> {
        a.iter()
            .map(|t| (t.present_id, t.actual_present_time, t.earliest_present_time))
            .collect()
    }

    #[test]
    fn google_results_answer_their_presents_across_an_incomplete_call_and_stay_the_apps() {
        let (s, mut d) = stream();
        let obs = Observed::new();
        let dev = vk::Device::null();
        let sc = vk::SwapchainKHR::null();
        // The app's own refresh query, watched.
        let mut rc = vk::RefreshCycleDurationGOOGLE::default();
        // SAFETY: a fake driver and valid pointers.
        let r = unsafe { refresh_google(fake_refresh, dev, sc, &mut rc, Some(&obs)) };
        assert_eq!((r, rc.refresh_duration), (vk::Result::SUCCESS, 16_666_667));
        // Presents 1..=5 tagged with ids 10..=14 (keys 1000, 2000, …); id
        // 99 was never tagged (another swapchain's, or before the layer).
        for i in 0..5u64 {
            obs.tag(10 + i, 1000 * (i + 1));
        }
        *GOOGLE_QUEUE.lock().unwrap() = vec![
            (10, 1500),
            (11, 2600),
            (99, 2700),
            (12, 0),
            (13, 4900),
            (14, 5800),
        ];
        let mut app = [vk::PastPresentationTimingGOOGLE::default(); 3];
        let mut n = 3u32;
        // SAFETY: a fake driver and the test's arrays.
        let r = unsafe {
            past_google(
                fake_google,
                dev,
                sc,
                &mut n,
                app.as_mut_ptr(),
                Some((&obs, &s)),
            )
        };
        assert_eq!((r, n), (vk::Result::INCOMPLETE, 3));
        assert_eq!(
            app_view(&app),
            *GOOGLE_WROTE.lock().unwrap(),
            "read, never written"
        );
        let refresh = 16_666_667;
        let g = Source::GoogleDisplayTiming;
        assert_eq!(
            answers(&mut d),
            vec![at(g, 1000, 1500, refresh), at(g, 2000, 2600, refresh)]
        );
        // Called again: the rest.
        let mut n = 3u32;
        // SAFETY: as above.
        let r = unsafe {
            past_google(
                fake_google,
                dev,
                sc,
                &mut n,
                app.as_mut_ptr(),
                Some((&obs, &s)),
            )
        };
        assert_eq!((r, n), (vk::Result::SUCCESS, 3));
        assert_eq!(app_view(&app), *GOOGLE_WROTE.lock().unwrap());
        assert_eq!(
            answers(&mut d),
            vec![
                unknown(3000),
                at(g, 4000, 4900, refresh),
                at(g, 5000, 5800, refresh)
            ]
        );
        // The count query (null array) and a device not observed: nothing.
        let mut n = 0u32;
        // SAFETY: as above.
        let r = unsafe {
            past_google(
                fake_google,
                dev,
                sc,
                &mut n,
                std::ptr::null_mut(),
                Some((&obs, &s)),
            )
        };
        assert_eq!((r, n), (vk::Result::SUCCESS, 0));
        assert!(answers(&mut d).is_empty());
    }

    static GOOGLE_TWO: Mutex<Vec<(u32, u64)>> = Mutex::new(Vec::new());

    unsafe extern "system" fn fake_google_two(
        _: vk::Device,
        _: vk::SwapchainKHR,
        count: *mut u32,
        timings: *mut vk::PastPresentationTimingGOOGLE,
    ) -> vk::Result {
        let q = GOOGLE_TWO.lock().unwrap();
        for (k, &(id, actual)) in q.iter().enumerate() {
            // SAFETY: the test's array holds them all.
            unsafe {
                *timings.add(k) = vk::PastPresentationTimingGOOGLE {
                    present_id: id,
                    actual_present_time: actual,
                    ..Default::default()
                }
            };
        }
        // SAFETY: the test's valid count.
        unsafe { *count = q.len() as u32 };
        vk::Result::SUCCESS
    }

    #[test]
    fn two_swapchains_keep_their_own_ids() {
        let (sa, mut da) = stream();
        let (sb, mut db) = stream();
        let (a, b) = (Observed::new(), Observed::new());
        // The same ids on both swapchains (one present of both).
        a.tag(1, 100);
        b.tag(1, 100);
        a.tag(2, 200);
        b.tag(2, 201);
        *GOOGLE_TWO.lock().unwrap() = vec![(1, 150), (2, 260)];
        let mut app = [vk::PastPresentationTimingGOOGLE::default(); 4];
        let mut n = 4;
        // SAFETY: a fake driver and the test's arrays; swapchain B's query.
        let _ = unsafe {
            past_google(
                fake_google_two,
                vk::Device::null(),
                vk::SwapchainKHR::null(),
                &mut n,
                app.as_mut_ptr(),
                Some((&b, &sb)),
            )
        };
        let g = Source::GoogleDisplayTiming;
        assert!(
            answers(&mut da).is_empty(),
            "A's presents wait for A's query"
        );
        assert_eq!(
            answers(&mut db),
            vec![at(g, 100, 150, 0), at(g, 201, 260, 0)]
        );
        let mut n = 4;
        // SAFETY: as above; swapchain A's query.
        let _ = unsafe {
            past_google(
                fake_google_two,
                vk::Device::null(),
                vk::SwapchainKHR::null(),
                &mut n,
                app.as_mut_ptr(),
                Some((&a, &sa)),
            )
        };
        assert_eq!(
            answers(&mut da),
            vec![at(g, 100, 150, 0), at(g, 200, 260, 0)]
        );
    }

    /// One record of the fake present-timing driver.
    #[derive(Clone)]
    struct ExtRecord {
        id: u64,
        stages: Vec<PresentStageTime>,
        domain: vk::TimeDomainKHR,
        complete: bool,
    }

    static EXT_QUEUE: Mutex<Vec<ExtRecord>> = Mutex::new(Vec::new());
    static EXT_RAW: Mutex<Vec<ExtRecord>> = Mutex::new(Vec::new());
    /// What the fake last wrote into the app's arrays.
    static EXT_WROTE: Mutex<Vec<Wrote>> = Mutex::new(Vec::new());
    /// One record as the app sees it: id, time domain, complete, stages.
    type Wrote = (u64, u32, vk::Bool32, Vec<PresentStageTime>);

    unsafe extern "system" fn fake_ext(
        d: vk::Device,
        i: *const PastPresentationTimingInfo,
        props: *mut PastPresentationTimingProperties,
    ) -> vk::Result {
        // SAFETY: the caller's.
        unsafe { fake_ext_from(&EXT_QUEUE, d, i, props) }
    }

    unsafe extern "system" fn fake_ext_raw(
        d: vk::Device,
        i: *const PastPresentationTimingInfo,
        props: *mut PastPresentationTimingProperties,
    ) -> vk::Result {
        // SAFETY: the caller's.
        unsafe { fake_ext_from(&EXT_RAW, d, i, props) }
    }

    /// `vkGetPastPresentationTimingEXT` as the spec has it: up to
    /// `presentationTimingCount` records into the app's array, each with
    /// its stages in the app's stage array (`presentStageCount` set to
    /// what was written); complete records leave the queue, partial ones
    /// stay; `INCOMPLETE` when some are left unreturned.
    ///
    /// # Safety
    /// `props` is valid, its arrays as it says.
    unsafe fn fake_ext_from(
        queue: &Mutex<Vec<ExtRecord>>,
        _: vk::Device,
        _: *const PastPresentationTimingInfo,
        props: *mut PastPresentationTimingProperties,
    ) -> vk::Result {
        let mut q = queue.lock().unwrap();
        let mut wrote = EXT_WROTE.lock().unwrap();
        wrote.clear();
        // SAFETY: the test's valid properties.
        let p = unsafe { &mut *props };
        if p.p_presentation_timings.is_null() {
            p.presentation_timing_count = q.len() as u32;
            return vk::Result::SUCCESS;
        }
        let n = (p.presentation_timing_count as usize).min(q.len());
        for (k, rec) in q.iter().take(n).enumerate() {
            // SAFETY: `k < presentationTimingCount` records of the test's.
            let t = unsafe { &mut *p.p_presentation_timings.add(k) };
            let room = t.present_stage_count as usize;
            for (j, st) in rec.stages.iter().take(room).enumerate() {
                // SAFETY: `j < presentStageCount` stages of the test's.
                unsafe { *t.p_present_stages.add(j) = *st };
            }
            t.present_id = rec.id;
            t.present_stage_count = rec.stages.len().min(room) as u32;
            t.time_domain = rec.domain;
            t.report_complete = rec.complete.into();
            wrote.push((
                t.present_id,
                t.time_domain.as_raw() as u32,
                t.report_complete,
                rec.stages.iter().take(room).copied().collect(),
            ));
        }
        p.presentation_timing_count = n as u32;
        let left = q.len() > n;
        let mut k = 0;
        q.retain(|r| {
            k += 1;
            k > n || !r.complete
        });
        if left {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        }
    }

    unsafe extern "system" fn fake_ext_props(
        _: vk::Device,
        _: vk::SwapchainKHR,
        out: *mut SwapchainTimingProperties,
        counter: *mut u64,
    ) -> vk::Result {
        // SAFETY: the test's valid pointers.
        unsafe {
            (*out).refresh_duration = 8_333_333;
            *counter = 1;
        }
        vk::Result::SUCCESS
    }

    /// The app's result arrays: `n` records of 4 stages each.
    struct AppArrays {
        stages: Vec<[PresentStageTime; 4]>,
        records: Vec<PastPresentationTiming>,
    }

    impl AppArrays {
        fn new(n: usize) -> Box<AppArrays> {
            let mut a = Box::new(AppArrays {
                stages: vec![[PresentStageTime::default(); 4]; n],
                records: Vec::new(),
            });
            let ptrs: Vec<*mut PresentStageTime> =
                a.stages.iter_mut().map(|s| s.as_mut_ptr()).collect();
            a.records = ptrs
                .into_iter()
                .map(|p| PastPresentationTiming {
                    s_type: vk::StructureType::from_raw(STYPE_PAST_PRESENTATION_TIMING),
                    p_next: std::ptr::null_mut(),
                    present_id: 0,
                    target_time: 0,
                    present_stage_count: 4,
                    p_present_stages: p,
                    time_domain: vk::TimeDomainKHR::DEVICE,
                    time_domain_id: 0,
                    report_complete: vk::FALSE,
                })
                .collect();
            a
        }

        /// What the app sees: each record with its written stages.
        fn view(&self, n: u32) -> Vec<(PastPresentationTiming, Vec<PresentStageTime>)> {
            self.records[..n as usize]
                .iter()
                .zip(&self.stages)
                .map(|(r, s)| (*r, s[..r.present_stage_count as usize].to_vec()))
                .collect()
        }

        fn query(&mut self, obs: &Observed, s: &Stream) -> (vk::Result, u32) {
            let r = self.query_with(fake_ext, obs, s);
            // The app's arrays hold exactly what the driver wrote.
            let wrote = EXT_WROTE.lock().unwrap().clone();
            let seen: Vec<_> = self
                .view(r.1)
                .into_iter()
                .map(|(t, s)| {
                    (
                        t.present_id,
                        t.time_domain.as_raw() as u32,
                        t.report_complete,
                        s,
                    )
                })
                .collect();
            assert_eq!(seen, wrote, "read, never written");
            r
        }

        fn query_with(
            &mut self,
            f: PfnGetPastPresentationTimingExt,
            obs: &Observed,
            s: &Stream,
        ) -> (vk::Result, u32) {
            for r in self.records.iter_mut() {
                r.present_stage_count = 4;
            }
            let info = PastPresentationTimingInfo {
                s_type: vk::StructureType::from_raw(STYPE_PAST_PRESENTATION_TIMING_INFO),
                p_next: std::ptr::null(),
                flags: 0,
                swapchain: vk::SwapchainKHR::null(),
            };
            let mut props = PastPresentationTimingProperties {
                s_type: vk::StructureType::from_raw(STYPE_PAST_PRESENTATION_TIMING_PROPERTIES),
                p_next: std::ptr::null_mut(),
                timing_properties_counter: 0,
                time_domains_counter: 0,
                presentation_timing_count: self.records.len() as u32,
                p_presentation_timings: self.records.as_mut_ptr(),
            };
            // SAFETY: a fake driver and the test's arrays.
            let r =
                unsafe { past_ext(f, vk::Device::null(), &info, &mut props, |_| Some((obs, s))) };
            (r, props.presentation_timing_count)
        }
    }

    fn stage(stage: u32, time: u64) -> PresentStageTime {
        PresentStageTime { stage, time }
    }

    #[test]
    fn present_timing_results_answer_complete_reports_by_the_display_stage() {
        let (s, mut d) = stream();
        let obs = Observed::new();
        let mut props = SwapchainTimingProperties {
            s_type: vk::StructureType::from_raw(STYPE_SWAPCHAIN_TIMING_PROPERTIES),
            p_next: std::ptr::null_mut(),
            refresh_duration: 0,
            refresh_interval: 0,
        };
        let mut counter = 0;
        // SAFETY: a fake driver and valid pointers.
        let r = unsafe {
            timing_properties_ext(
                fake_ext_props,
                vk::Device::null(),
                vk::SwapchainKHR::null(),
                &mut props,
                &mut counter,
                Some(&obs),
            )
        };
        assert_eq!(
            (r, props.refresh_duration),
            (vk::Result::SUCCESS, 8_333_333)
        );
        for i in 1..=6u64 {
            obs.tag(i, i * 1_000_000);
        }
        let mono = vk::TimeDomainKHR::CLOCK_MONOTONIC;
        let rec = |id, stages: Vec<PresentStageTime>, complete| ExtRecord {
            id,
            stages,
            domain: mono,
            complete,
        };
        *EXT_QUEUE.lock().unwrap() = vec![
            // Visible wins over pixel out.
            rec(
                1,
                vec![
                    stage(STAGE_QUEUE_OPERATIONS_END, 1_100_000),
                    stage(STAGE_IMAGE_FIRST_PIXEL_OUT, 1_400_000),
                    stage(STAGE_IMAGE_FIRST_PIXEL_VISIBLE, 1_500_000),
                ],
                true,
            ),
            // Pixel out alone.
            rec(2, vec![stage(STAGE_IMAGE_FIRST_PIXEL_OUT, 2_400_000)], true),
            // Partial, nothing yet: stays in the driver's queue.
            rec(3, vec![stage(STAGE_QUEUE_OPERATIONS_END, 3_100_000)], false),
            // Complete with the stage's time 0 ("not available"): unknown,
            // never dropped.
            rec(4, vec![stage(STAGE_IMAGE_FIRST_PIXEL_VISIBLE, 0)], true),
            // A swapchain-local domain: not converted, unknown.
            ExtRecord {
                domain: vk::TimeDomainKHR::from_raw(1_000_208_001),
                ..rec(5, vec![stage(STAGE_IMAGE_FIRST_PIXEL_OUT, 77)], true)
            },
        ];
        let mut app = AppArrays::new(3);
        let (r, n) = app.query(&obs, &s);
        assert_eq!((r, n), (vk::Result::INCOMPLETE, 3));
        let seen = app.view(n);
        assert_eq!(
            seen.iter().map(|(r, _)| r.present_id).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        let p = Source::PresentTiming;
        let refresh = 8_333_333;
        assert_eq!(
            answers(&mut d),
            vec![
                at(p, 1_000_000, 1_500_000, refresh),
                at(p, 2_000_000, 2_400_000, refresh)
            ]
        );
        // Again: 3 (still partial), 4, 5; then 3 completes with its stage.
        let (r, n) = app.query(&obs, &s);
        assert_eq!((r, n), (vk::Result::SUCCESS, 3));
        let before = app.view(n);
        assert_eq!(before[2].0.time_domain.as_raw(), 1_000_208_001);
        assert_eq!(
            answers(&mut d),
            vec![unknown(4_000_000), unknown(5_000_000)]
        );
        *EXT_QUEUE.lock().unwrap() = vec![rec(
            3,
            vec![
                stage(STAGE_QUEUE_OPERATIONS_END, 3_100_000),
                stage(STAGE_IMAGE_FIRST_PIXEL_VISIBLE, 3_700_000),
            ],
            true,
        )];
        let (_, n) = app.query(&obs, &s);
        assert_eq!(answers(&mut d), vec![at(p, 3_000_000, 3_700_000, refresh)]);
        // The app's arrays hold exactly what the driver wrote.
        let v = app.view(n);
        assert_eq!(v[0].0.present_id, 3);
        assert_eq!(
            v[0].1,
            vec![
                stage(STAGE_QUEUE_OPERATIONS_END, 3_100_000),
                stage(STAGE_IMAGE_FIRST_PIXEL_VISIBLE, 3_700_000)
            ]
        );
        assert_eq!(v[0].0.report_complete, vk::TRUE);
    }

    #[test]
    fn monotonic_raw_results_move_to_the_session_clock() {
        use steadyhud_sys::clock::{clock_ns, now_ns};
        let t = PastPresentationTiming {
            s_type: vk::StructureType::from_raw(STYPE_PAST_PRESENTATION_TIMING),
            p_next: std::ptr::null_mut(),
            present_id: 1,
            target_time: 0,
            present_stage_count: 1,
            p_present_stages: &mut stage(STAGE_IMAGE_FIRST_PIXEL_OUT, 5_000),
            time_domain: vk::TimeDomainKHR::CLOCK_MONOTONIC_RAW,
            time_domain_id: 0,
            report_complete: vk::TRUE,
        };
        // SAFETY: a record with one stage.
        assert_eq!(unsafe { ext_time(&t, 1_000) }, Ok(Some(Some(6_000))));
        // Through the query, with the clocks' real offset: within 1 ms of
        // the raw time moved by it.
        let off = now_ns() as i128 - clock_ns(libc::CLOCK_MONOTONIC_RAW) as i128;
        let raw = clock_ns(libc::CLOCK_MONOTONIC_RAW);
        let (s, mut d) = stream();
        let obs = Observed::new();
        obs.tag(1, 1);
        *EXT_RAW.lock().unwrap() = vec![ExtRecord {
            id: 1,
            stages: vec![stage(STAGE_IMAGE_FIRST_PIXEL_OUT, raw)],
            domain: vk::TimeDomainKHR::CLOCK_MONOTONIC_RAW,
            complete: true,
        }];
        let mut app = AppArrays::new(1);
        let _ = app.query_with(fake_ext_raw, &obs, &s);
        let got = answers(&mut d);
        let Shown::At { displayed_ns, .. } = got[0].shown else {
            panic!("{got:?}")
        };
        assert!((displayed_ns as i128 - (raw as i128 + off)).abs() < 1_000_000);
        let local = PastPresentationTiming {
            time_domain: vk::TimeDomainKHR::DEVICE,
            ..t
        };
        // SAFETY: as above.
        assert_eq!(unsafe { ext_time(&local, 1_000) }, Err(()));
    }

    #[test]
    fn present_ids_come_from_the_apps_present_chain() {
        let times = [
            vk::PresentTimeGOOGLE {
                present_id: 41,
                desired_present_time: 0,
            },
            vk::PresentTimeGOOGLE {
                present_id: 42,
                desired_present_time: 0,
            },
        ];
        let google = vk::PresentTimesInfoGOOGLE::default().times(&times);
        let ids = [5u64, 0];
        let queries = [
            PresentTimingInfo {
                s_type: vk::StructureType::from_raw(STYPE_PRESENT_TIMING_INFO),
                p_next: std::ptr::null(),
                flags: 0,
                target_time: 0,
                time_domain_id: 0,
                present_stage_queries: STAGE_IMAGE_FIRST_PIXEL_VISIBLE,
                target_time_domain_present_stage: 0,
            },
            PresentTimingInfo {
                s_type: vk::StructureType::from_raw(STYPE_PRESENT_TIMING_INFO),
                p_next: std::ptr::null(),
                flags: 0,
                target_time: 0,
                time_domain_id: 0,
                present_stage_queries: STAGE_QUEUE_OPERATIONS_END,
                target_time_domain_present_stage: 0,
            },
        ];
        let timings = PresentTimingsInfo {
            s_type: vk::StructureType::from_raw(STYPE_PRESENT_TIMINGS_INFO),
            p_next: (&google as *const vk::PresentTimesInfoGOOGLE<'_>).cast(),
            swapchain_count: 2,
            p_timing_infos: queries.as_ptr(),
        };
        let id2 = PresentId2 {
            s_type: vk::StructureType::from_raw(STYPE_PRESENT_ID_2),
            p_next: (&timings as *const PresentTimingsInfo).cast(),
            swapchain_count: 2,
            p_present_ids: ids.as_ptr(),
        };
        let head: *const c_void = (&id2 as *const PresentId2).cast();
        let (g, e) = (Method::DisplayTimingGoogle, Method::PresentTiming);
        // SAFETY: a valid chain of locals with arrays of 2.
        unsafe {
            assert_eq!(present_id(g, head, 0), Some(41));
            assert_eq!(present_id(g, head, 1), Some(42));
            assert_eq!(present_id(g, head, 2), None, "past the arrays");
            assert_eq!(present_id(e, head, 0), Some(5));
            // Id 0 is "no id"; and no display stage was queried for it.
            assert_eq!(present_id(e, head, 1), None);
            // A present timing id without VkPresentTimingsInfoEXT: no
            // result will come.
            let bare = PresentId2 {
                p_next: std::ptr::null(),
                ..id2
            };
            assert_eq!(present_id(e, (&bare as *const PresentId2).cast(), 0), None);
            // VkPresentIdKHR serves where VkPresentId2KHR is missing.
            let id1 = vk::PresentIdKHR {
                p_next: (&timings as *const PresentTimingsInfo).cast(),
                swapchain_count: 2,
                p_present_ids: [9u64, 9].as_ptr(),
                ..Default::default()
            };
            let h1: *const c_void = (&id1 as *const vk::PresentIdKHR<'_>).cast();
            assert_eq!(present_id(e, h1, 0), Some(9));
            assert_eq!(present_id(g, std::ptr::null(), 0), None);
            assert_eq!(present_id(Method::PresentWait, head, 0), None);
        }
    }
}
