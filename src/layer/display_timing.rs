//! Display timing: how the layer would learn when each present reached the
//! screen, decided once per device (config `display_timing`, off by
//! default). Design and reasons: docs/design.md, "Display timing".
//!
//! The decisions are pure functions of names and flags, unit-tested below:
//!
//! - [`decide`]: which method, in the order VK_EXT_present_timing, else
//!   VK_GOOGLE_display_timing, else VK_KHR_present_wait2, else
//!   VK_KHR_present_wait; which device extensions and feature bits the layer
//!   would add to the app's `VkDeviceCreateInfo` (only supported ones, never
//!   one the app already enabled), and whether the app uses the method
//!   itself ([`Mode::Observe`]: the layer then adds nothing and never
//!   queries, because a query hands each result out once).
//! - [`swapchain_flags`]: the `VkSwapchainCreateFlagsKHR` bits OR-ed into
//!   the app's flags.
//! - [`present_additions`]: the structures appended to a present's `pNext`
//!   chain, never one of a type the app already chained.
//!
//! [`gather`] reads what the decision needs from Vulkan at
//! `vkCreateDevice`. The device is never changed: the plan is printed in
//! one line (lavapipe offers none of the extensions: "none"); a plan in
//! [`Mode::Observe`] is carried out by [`super::display_observe`], one in
//! [`Mode::Own`] is not built yet.

use ash::vk;
use std::ffi::c_void;

pub const PRESENT_TIMING: &str = "VK_EXT_present_timing";
pub const DISPLAY_TIMING_GOOGLE: &str = "VK_GOOGLE_display_timing";
pub const PRESENT_WAIT_2: &str = "VK_KHR_present_wait2";
pub const PRESENT_ID_2: &str = "VK_KHR_present_id2";
pub const PRESENT_WAIT: &str = "VK_KHR_present_wait";
pub const PRESENT_ID: &str = "VK_KHR_present_id";
pub const CALIBRATED_KHR: &str = "VK_KHR_calibrated_timestamps";
pub const CALIBRATED_EXT: &str = "VK_EXT_calibrated_timestamps";

/// `VkSwapchainCreateFlagBitsKHR` of the methods (Vulkan registry values).
pub const SWAPCHAIN_PRESENT_ID_2: u32 = 0x40;
pub const SWAPCHAIN_PRESENT_WAIT_2: u32 = 0x80;
pub const SWAPCHAIN_PRESENT_TIMING: u32 = 0x200;

/// `VkStructureType` values of the feature structures not in `ash` 0.38
/// (Vulkan registry values).
pub const STYPE_PRESENT_TIMING_FEATURES: i32 = 1_000_208_000;
pub const STYPE_PRESENT_ID_2_FEATURES: i32 = 1_000_479_002;
pub const STYPE_PRESENT_WAIT_2_FEATURES: i32 = 1_000_480_001;

/// How display times are obtained, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `vkGetPastPresentationTimingEXT`: per-present stage times
    /// (first pixel out), in a calibrated time domain.
    PresentTiming,
    /// `vkGetPastPresentationTimingGOOGLE`: `actualPresentTime` per
    /// present id.
    DisplayTimingGoogle,
    /// `vkWaitForPresent2KHR` with timeout 0, polled: "displayed by now".
    PresentWait2,
    /// `vkWaitForPresentKHR` with timeout 0, polled.
    PresentWait,
}

impl Method {
    pub const ALL: [Method; 4] = [
        Method::PresentTiming,
        Method::DisplayTimingGoogle,
        Method::PresentWait2,
        Method::PresentWait,
    ];

    /// The extension that names the method.
    pub fn extension(self) -> &'static str {
        match self {
            Method::PresentTiming => PRESENT_TIMING,
            Method::DisplayTimingGoogle => DISPLAY_TIMING_GOOGLE,
            Method::PresentWait2 => PRESENT_WAIT_2,
            Method::PresentWait => PRESENT_WAIT,
        }
    }

    /// Whether reading a result takes it away from anyone else (the past
    /// presentation timing queries do; waits do not).
    pub fn consumes(self) -> bool {
        matches!(self, Method::PresentTiming | Method::DisplayTimingGoogle)
    }
}

/// Feature bits the methods need (`VkPhysicalDevice*FeaturesKHR/EXT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features {
    pub present_timing: bool,
    pub present_id2: bool,
    pub present_wait2: bool,
    pub present_id: bool,
    pub present_wait: bool,
}

/// What the device and instance offer.
#[derive(Clone, Debug, Default)]
pub struct Offer {
    /// Device extensions supported.
    pub extensions: Vec<String>,
    /// Feature bits supported (queried only for supported extensions).
    pub features: Features,
    /// The app enabled `VK_KHR_get_surface_capabilities2` on the instance
    /// (present timing and present id 2 need it; a layer cannot add an
    /// instance extension at device creation).
    pub surface_capabilities2: bool,
}

/// What the app's `VkDeviceCreateInfo` already has.
#[derive(Clone, Debug, Default)]
pub struct AppDevice {
    /// Device extensions the app enabled.
    pub extensions: Vec<String>,
    /// Feature structures of the methods in the app's `pNext` chain, by
    /// type, with the bits the app set in them.
    pub chained: Chained,
}

/// The method feature structures found in a `pNext` chain: `None` not
/// chained, `Some(bits)` chained with those bits set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Chained {
    pub present_timing: Option<bool>,
    pub present_id2: Option<bool>,
    pub present_wait2: Option<bool>,
    pub present_id: Option<bool>,
    pub present_wait: Option<bool>,
}

/// A feature bit the plan needs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    PresentTiming,
    PresentId2,
    PresentWait2,
    PresentId,
    PresentWait,
}

/// How a needed feature bit gets on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureStep {
    /// The app's chain has the structure with the bit set: nothing to do.
    AppHasIt,
    /// The app's chain has the structure with the bit clear: the layer
    /// copies that structure, sets the bit in the copy and links the copy
    /// where the app's was, in its own copy of the chain (the app's memory
    /// is never written; one structure of each type stays in the chain).
    SetInCopy,
    /// No such structure: the layer appends its own at the end of the
    /// chain.
    Append,
}

/// Whether the layer drives the method or only watches the app's use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The layer enables what is missing and makes its own calls.
    Own,
    /// The app enabled this consuming method itself: the layer adds
    /// nothing and only reads the results the app's own query calls
    /// return, as they pass through the layer.
    Observe,
}

/// What `vkCreateDevice` would do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePlan {
    /// `None`: no method (off, or nothing supported).
    pub method: Option<(Method, Mode)>,
    /// Extensions appended to the app's list (supported, not yet enabled).
    pub add_extensions: Vec<&'static str>,
    /// Feature bits and how each gets on.
    pub features: Vec<(Feature, FeatureStep)>,
}

impl DevicePlan {
    fn none() -> DevicePlan {
        DevicePlan {
            method: None,
            add_extensions: Vec::new(),
            features: Vec::new(),
        }
    }

    /// The one stderr line.
    pub fn line(&self) -> String {
        match self.method {
            None => "steadyhud: display_timing: none (the device offers neither VK_EXT_present_timing, VK_GOOGLE_display_timing, VK_KHR_present_wait2 nor VK_KHR_present_wait with their features); no display times".to_string(),
            Some((m, Mode::Observe)) => format!(
                "steadyhud: display_timing: {} (the app uses it itself: the layer reads the results of the app's own queries for the presents the app tags; untested on hardware)",
                m.extension()
            ),
            Some((m, Mode::Own)) => format!(
                "steadyhud: display_timing: {}{}{}; not applied yet (untested on hardware)",
                m.extension(),
                if self.add_extensions.is_empty() { String::new() } else { format!(", would add {}", self.add_extensions.join(" ")) },
                if self.features.is_empty() { String::new() } else {
                    format!(", features {}", self.features.iter().map(|(f, s)| format!("{f:?}:{s:?}")).collect::<Vec<_>>().join(" "))
                }
            ),
        }
    }
}

fn has(list: &[String], name: &str) -> bool {
    list.iter().any(|n| n == name)
}

/// The device plan. `enabled`: config `display_timing`.
pub fn decide(enabled: bool, offer: &Offer, app: &AppDevice) -> DevicePlan {
    if !enabled {
        return DevicePlan::none();
    }
    let f = &offer.features;
    let ext = |n: &str| has(&offer.extensions, n);
    // The app's own use of a consuming method comes first, whatever the
    // device offers beside it: the layer then only watches that method's
    // results (driving a better method itself is not built).
    if let Some(m) = Method::ALL
        .into_iter()
        .find(|m| m.consumes() && ext(m.extension()) && has(&app.extensions, m.extension()))
    {
        return DevicePlan {
            method: Some((m, Mode::Observe)),
            add_extensions: Vec::new(),
            features: Vec::new(),
        };
    }
    let calibrated = if ext(CALIBRATED_KHR) {
        Some(CALIBRATED_KHR)
    } else if ext(CALIBRATED_EXT) {
        Some(CALIBRATED_EXT)
    } else {
        None
    };
    for m in Method::ALL {
        // Extensions the method needs on the device, and its features.
        let (needs, features): (Vec<&'static str>, Vec<Feature>) = match m {
            Method::PresentTiming => {
                let Some(cal) = calibrated else { continue };
                if !(offer.surface_capabilities2 && f.present_timing && f.present_id2) {
                    continue;
                }
                (
                    vec![PRESENT_TIMING, PRESENT_ID_2, cal],
                    vec![Feature::PresentTiming, Feature::PresentId2],
                )
            }
            Method::DisplayTimingGoogle => (vec![DISPLAY_TIMING_GOOGLE], Vec::new()),
            Method::PresentWait2 => {
                if !(offer.surface_capabilities2 && f.present_wait2 && f.present_id2) {
                    continue;
                }
                (
                    vec![PRESENT_WAIT_2, PRESENT_ID_2],
                    vec![Feature::PresentWait2, Feature::PresentId2],
                )
            }
            Method::PresentWait => {
                if !(f.present_wait && f.present_id) {
                    continue;
                }
                (
                    vec![PRESENT_WAIT, PRESENT_ID],
                    vec![Feature::PresentWait, Feature::PresentId],
                )
            }
        };
        if !needs.iter().all(|n| ext(n)) {
            continue;
        }
        let app_has = |n: &str| {
            has(&app.extensions, n)
                // Either calibrated-timestamps extension serves.
                || ((n == CALIBRATED_KHR || n == CALIBRATED_EXT)
                    && (has(&app.extensions, CALIBRATED_KHR) || has(&app.extensions, CALIBRATED_EXT)))
        };
        let c = &app.chained;
        return DevicePlan {
            method: Some((m, Mode::Own)),
            add_extensions: needs.into_iter().filter(|n| !app_has(n)).collect(),
            features: features
                .into_iter()
                .map(|feat| {
                    let chained = match feat {
                        Feature::PresentTiming => c.present_timing,
                        Feature::PresentId2 => c.present_id2,
                        Feature::PresentWait2 => c.present_wait2,
                        Feature::PresentId => c.present_id,
                        Feature::PresentWait => c.present_wait,
                    };
                    let step = match chained {
                        Some(true) => FeatureStep::AppHasIt,
                        Some(false) => FeatureStep::SetInCopy,
                        None => FeatureStep::Append,
                    };
                    (feat, step)
                })
                .collect(),
        };
    }
    DevicePlan::none()
}

/// What a surface supports (`VkPresentTimingSurfaceCapabilitiesEXT`,
/// `VkSurfaceCapabilitiesPresentId2KHR`, `…PresentWait2KHR`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SurfaceSupport {
    pub present_timing: bool,
    pub present_id2: bool,
    pub present_wait2: bool,
}

/// Flags OR-ed into the app's `VkSwapchainCreateInfoKHR::flags` (the app's
/// own bits always stay); `None`: this swapchain gets no display times
/// (the surface lacks support), and nothing is added.
pub fn swapchain_flags(method: (Method, Mode), surface: SurfaceSupport) -> Option<u32> {
    match method {
        (_, Mode::Observe) => Some(0),
        (Method::PresentTiming, Mode::Own) => (surface.present_timing && surface.present_id2)
            .then_some(SWAPCHAIN_PRESENT_TIMING | SWAPCHAIN_PRESENT_ID_2),
        (Method::PresentWait2, Mode::Own) => (surface.present_wait2 && surface.present_id2)
            .then_some(SWAPCHAIN_PRESENT_WAIT_2 | SWAPCHAIN_PRESENT_ID_2),
        (Method::DisplayTimingGoogle | Method::PresentWait, Mode::Own) => Some(0),
    }
}

/// A structure the layer appends to a present's `pNext` chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresentStruct {
    /// `VkPresentTimingsInfoEXT` asking for the first-pixel-out stage.
    PresentTimings,
    /// `VkPresentId2KHR` with the layer's ids.
    PresentId2,
    /// `VkPresentIdKHR` with the layer's ids.
    PresentId,
    /// `VkPresentTimesInfoGOOGLE` with the layer's ids.
    PresentTimesGoogle,
}

/// Structures of those types already in the app's present chain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PresentChain {
    pub present_timings: bool,
    pub present_id2: bool,
    pub present_id: bool,
    pub present_times_google: bool,
}

/// What the layer appends to one present's chain. A type the app already
/// chained is never added twice: the app's ids are then the ones the layer
/// matches results with.
pub fn present_additions(method: (Method, Mode), app: PresentChain) -> Vec<PresentStruct> {
    let mut out = Vec::new();
    match method {
        (_, Mode::Observe) => {}
        (Method::PresentTiming, Mode::Own) => {
            if !app.present_timings {
                out.push(PresentStruct::PresentTimings);
            }
            if !app.present_id2 {
                out.push(PresentStruct::PresentId2);
            }
        }
        (Method::DisplayTimingGoogle, Mode::Own) => {
            if !app.present_times_google {
                out.push(PresentStruct::PresentTimesGoogle);
            }
        }
        (Method::PresentWait2, Mode::Own) => {
            if !app.present_id2 {
                out.push(PresentStruct::PresentId2);
            }
        }
        (Method::PresentWait, Mode::Own) => {
            if !app.present_id {
                out.push(PresentStruct::PresentId);
            }
        }
    }
    out
}

/// The method feature structures in a device create info's `pNext` chain.
///
/// # Safety
/// `next` is a valid Vulkan structure chain.
pub unsafe fn chained_features(next: *const c_void) -> Chained {
    let mut c = Chained::default();
    // SAFETY: a valid chain (caller).
    for l in unsafe { super::chain::links(next) } {
        // SAFETY: read only for the sTypes below, each of which is a
        // feature structure whose first member after sType and pNext is
        // the VkBool32 the method needs.
        let first = || unsafe { first_bool(l.ptr) };
        match l.s_type.as_raw() {
            STYPE_PRESENT_TIMING_FEATURES => c.present_timing = Some(first() == vk::TRUE),
            STYPE_PRESENT_ID_2_FEATURES => c.present_id2 = Some(first() == vk::TRUE),
            STYPE_PRESENT_WAIT_2_FEATURES => c.present_wait2 = Some(first() == vk::TRUE),
            s if s == vk::StructureType::PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR.as_raw() => {
                c.present_id = Some(first() == vk::TRUE)
            }
            s if s == vk::StructureType::PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR.as_raw() => {
                c.present_wait = Some(first() == vk::TRUE)
            }
            _ => {}
        }
    }
    c
}

/// The first `VkBool32` member of a feature structure at `p`.
///
/// # Safety
/// `p` points at a structure that starts with sType, pNext and a VkBool32.
unsafe fn first_bool(p: *const c_void) -> vk::Bool32 {
    let at = std::mem::size_of::<vk::BaseInStructure<'_>>();
    // SAFETY: the caller's structure; the member follows sType and pNext
    // (aligned: the header's size is a multiple of the pointer size).
    unsafe { *(p as *const u8).add(at).cast::<vk::Bool32>() }
}

/// What [`decide`] needs, read at `vkCreateDevice`: the device's
/// extensions and the app's. Feature bits are not queried yet (that needs
/// `vkGetPhysicalDeviceFeatures2` with structures `ash` 0.38 lacks): they
/// count as supported when the extension is, so the plan on hardware says
/// what would be tried.
///
/// # Safety
/// `physical_device` is a live physical device of `instance`; `info` the
/// app's valid create info for it.
pub unsafe fn gather(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    info: &vk::DeviceCreateInfo<'_>,
    surface_capabilities2: bool,
) -> (Offer, AppDevice) {
    // SAFETY: a live physical device (caller).
    let extensions: Vec<String> =
        unsafe { instance.enumerate_device_extension_properties(physical_device) }
            .unwrap_or_default()
            .iter()
            .filter_map(|p| p.extension_name_as_c_str().ok())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
    let e = |n: &str| has(&extensions, n);
    let features = Features {
        present_timing: e(PRESENT_TIMING),
        present_id2: e(PRESENT_ID_2),
        present_wait2: e(PRESENT_WAIT_2),
        present_id: e(PRESENT_ID),
        present_wait: e(PRESENT_WAIT),
    };
    // SAFETY: the app's names (caller).
    let app_ext: Vec<String> = unsafe {
        super::loader::extension_names(
            info.pp_enabled_extension_names,
            info.enabled_extension_count,
        )
    }
    .map(|n| String::from_utf8_lossy(n).into_owned())
    .collect();
    let offer = Offer {
        extensions,
        features,
        surface_capabilities2,
    };
    let app = AppDevice {
        extensions: app_ext,
        // SAFETY: the app's valid chain (caller).
        chained: unsafe { chained_features(info.p_next) },
    };
    (offer, app)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_features() -> Features {
        Features {
            present_timing: true,
            present_id2: true,
            present_wait2: true,
            present_id: true,
            present_wait: true,
        }
    }

    fn offer(ext: &[&str]) -> Offer {
        Offer {
            extensions: ext.iter().map(|s| s.to_string()).collect(),
            features: all_features(),
            surface_capabilities2: true,
        }
    }

    fn app(ext: &[&str]) -> AppDevice {
        AppDevice {
            extensions: ext.iter().map(|s| s.to_string()).collect(),
            chained: Chained::default(),
        }
    }

    const EVERYTHING: [&str; 8] = [
        PRESENT_TIMING,
        DISPLAY_TIMING_GOOGLE,
        PRESENT_WAIT_2,
        PRESENT_ID_2,
        PRESENT_WAIT,
        PRESENT_ID,
        CALIBRATED_KHR,
        "VK_KHR_swapchain",
    ];

    #[test]
    fn off_or_nothing_supported_is_none_and_adds_nothing() {
        let p = decide(false, &offer(&EVERYTHING), &app(&[]));
        assert_eq!(p, DevicePlan::none());
        // lavapipe: swapchain only.
        let p = decide(
            true,
            &offer(&["VK_KHR_swapchain"]),
            &app(&["VK_KHR_swapchain"]),
        );
        assert_eq!(p.method, None);
        assert!(p.add_extensions.is_empty() && p.features.is_empty());
        assert!(p.line().contains("display_timing: none"), "{}", p.line());
    }

    #[test]
    fn the_order_is_present_timing_google_wait2_wait() {
        let pick = |ext: &[&str]| decide(true, &offer(ext), &app(&[])).method.map(|(m, _)| m);
        assert_eq!(pick(&EVERYTHING), Some(Method::PresentTiming));
        assert_eq!(
            pick(&[
                DISPLAY_TIMING_GOOGLE,
                PRESENT_WAIT_2,
                PRESENT_ID_2,
                PRESENT_WAIT,
                PRESENT_ID
            ]),
            Some(Method::DisplayTimingGoogle)
        );
        assert_eq!(
            pick(&[PRESENT_WAIT_2, PRESENT_ID_2, PRESENT_WAIT, PRESENT_ID]),
            Some(Method::PresentWait2)
        );
        assert_eq!(pick(&[PRESENT_WAIT, PRESENT_ID]), Some(Method::PresentWait));
        // A method whose dependency is missing is skipped: present timing
        // needs present id 2 and calibrated timestamps (either name).
        assert_eq!(
            pick(&[PRESENT_TIMING, CALIBRATED_KHR, PRESENT_WAIT, PRESENT_ID]),
            Some(Method::PresentWait)
        );
        assert_eq!(
            pick(&[PRESENT_TIMING, PRESENT_ID_2, CALIBRATED_EXT]),
            Some(Method::PresentTiming)
        );
        assert_eq!(pick(&[PRESENT_TIMING, PRESENT_ID_2]), None);
        // Present wait alone (no present id) is not enough.
        assert_eq!(pick(&[PRESENT_WAIT]), None);
    }

    #[test]
    fn feature_bits_and_the_instance_extension_decide_too() {
        let mut o = offer(&EVERYTHING);
        o.features.present_timing = false;
        let p = decide(true, &o, &app(&[]));
        assert_eq!(p.method, Some((Method::DisplayTimingGoogle, Mode::Own)));
        // Without VK_KHR_get_surface_capabilities2 on the instance neither
        // present timing nor present wait 2 can be used.
        let mut o = offer(&[
            PRESENT_TIMING,
            PRESENT_ID_2,
            CALIBRATED_KHR,
            PRESENT_WAIT_2,
            PRESENT_WAIT,
            PRESENT_ID,
        ]);
        o.surface_capabilities2 = false;
        assert_eq!(
            decide(true, &o, &app(&[])).method,
            Some((Method::PresentWait, Mode::Own))
        );
    }

    #[test]
    fn only_supported_extensions_the_app_lacks_are_added() {
        let p = decide(
            true,
            &offer(&EVERYTHING),
            &app(&["VK_KHR_swapchain", PRESENT_ID_2]),
        );
        assert_eq!(p.add_extensions, vec![PRESENT_TIMING, CALIBRATED_KHR]);
        for e in &p.add_extensions {
            assert!(EVERYTHING.contains(e));
        }
        // The app's EXT calibrated timestamps serve: KHR is not added.
        let p = decide(true, &offer(&EVERYTHING), &app(&[CALIBRATED_EXT]));
        assert_eq!(p.add_extensions, vec![PRESENT_TIMING, PRESENT_ID_2]);
        // Only the EXT name supported: that one is added.
        let p = decide(
            true,
            &offer(&[PRESENT_TIMING, PRESENT_ID_2, CALIBRATED_EXT]),
            &app(&[]),
        );
        assert_eq!(
            p.add_extensions,
            vec![PRESENT_TIMING, PRESENT_ID_2, CALIBRATED_EXT]
        );
    }

    #[test]
    fn the_apps_feature_structures_are_merged_not_replaced() {
        let mut a = app(&[]);
        a.chained.present_id2 = Some(true);
        a.chained.present_timing = Some(false);
        let p = decide(true, &offer(&EVERYTHING), &a);
        assert_eq!(
            p.features,
            vec![
                (Feature::PresentTiming, FeatureStep::SetInCopy),
                (Feature::PresentId2, FeatureStep::AppHasIt),
            ]
        );
        let p = decide(true, &offer(&[PRESENT_WAIT, PRESENT_ID]), &app(&[]));
        assert_eq!(
            p.features,
            vec![
                (Feature::PresentWait, FeatureStep::Append),
                (Feature::PresentId, FeatureStep::Append),
            ]
        );
    }

    #[test]
    fn an_app_using_a_consuming_method_itself_is_only_observed() {
        for m in [Method::PresentTiming, Method::DisplayTimingGoogle] {
            let o = if m == Method::PresentTiming {
                offer(&EVERYTHING)
            } else {
                offer(&[DISPLAY_TIMING_GOOGLE, PRESENT_WAIT, PRESENT_ID])
            };
            let p = decide(true, &o, &app(&[m.extension()]));
            assert_eq!(p.method, Some((m, Mode::Observe)));
            assert!(p.add_extensions.is_empty() && p.features.is_empty());
            assert!(p.line().contains("uses it itself"));
            assert_eq!(
                swapchain_flags((m, Mode::Observe), SurfaceSupport::default()),
                Some(0)
            );
            assert!(present_additions((m, Mode::Observe), PresentChain::default()).is_empty());
        }
        // The app's own consuming method is watched even where the device
        // offers a better one (the layer's own mode is not built): an app
        // on GOOGLE with a driver that also has present timing.
        let p = decide(true, &offer(&EVERYTHING), &app(&[DISPLAY_TIMING_GOOGLE]));
        assert_eq!(p.method, Some((Method::DisplayTimingGoogle, Mode::Observe)));
        // An app that enabled both: present timing, the better one.
        let p = decide(
            true,
            &offer(&EVERYTHING),
            &app(&[DISPLAY_TIMING_GOOGLE, PRESENT_TIMING]),
        );
        assert_eq!(p.method, Some((Method::PresentTiming, Mode::Observe)));
        // Not offered by the device (a layer above faking it): not watched.
        let p = decide(
            true,
            &offer(&[PRESENT_WAIT, PRESENT_ID]),
            &app(&[DISPLAY_TIMING_GOOGLE]),
        );
        assert_eq!(p.method, Some((Method::PresentWait, Mode::Own)));
        // Waiting takes nothing from the app: the layer keeps its own mode
        // and adds only what is missing.
        let p = decide(
            true,
            &offer(&[PRESENT_WAIT, PRESENT_ID]),
            &app(&[PRESENT_WAIT, PRESENT_ID]),
        );
        assert_eq!(p.method, Some((Method::PresentWait, Mode::Own)));
        assert!(p.add_extensions.is_empty());
    }

    #[test]
    fn swapchain_flags_need_the_surface_and_keep_the_apps() {
        let all = SurfaceSupport {
            present_timing: true,
            present_id2: true,
            present_wait2: true,
        };
        assert_eq!(
            swapchain_flags((Method::PresentTiming, Mode::Own), all),
            Some(SWAPCHAIN_PRESENT_TIMING | SWAPCHAIN_PRESENT_ID_2)
        );
        assert_eq!(
            swapchain_flags((Method::PresentWait2, Mode::Own), all),
            Some(SWAPCHAIN_PRESENT_WAIT_2 | SWAPCHAIN_PRESENT_ID_2)
        );
        assert_eq!(
            swapchain_flags((Method::DisplayTimingGoogle, Mode::Own), all),
            Some(0)
        );
        assert_eq!(
            swapchain_flags((Method::PresentWait, Mode::Own), all),
            Some(0)
        );
        let no_timing = SurfaceSupport {
            present_timing: false,
            ..all
        };
        assert_eq!(
            swapchain_flags((Method::PresentTiming, Mode::Own), no_timing),
            None
        );
        let no_id2 = SurfaceSupport {
            present_id2: false,
            ..all
        };
        assert_eq!(
            swapchain_flags((Method::PresentWait2, Mode::Own), no_id2),
            None
        );
    }

    #[test]
    fn present_chains_get_only_what_the_app_did_not_chain() {
        let own = |m| (m, Mode::Own);
        assert_eq!(
            present_additions(own(Method::PresentTiming), PresentChain::default()),
            vec![PresentStruct::PresentTimings, PresentStruct::PresentId2]
        );
        // The app's own present ids stay; the layer matches with them.
        let with_id2 = PresentChain {
            present_id2: true,
            ..Default::default()
        };
        assert_eq!(
            present_additions(own(Method::PresentTiming), with_id2),
            vec![PresentStruct::PresentTimings]
        );
        assert!(present_additions(own(Method::PresentWait2), with_id2).is_empty());
        assert_eq!(
            present_additions(own(Method::PresentWait), PresentChain::default()),
            vec![PresentStruct::PresentId]
        );
        assert_eq!(
            present_additions(own(Method::DisplayTimingGoogle), PresentChain::default()),
            vec![PresentStruct::PresentTimesGoogle]
        );
    }

    #[test]
    fn chained_features_reads_the_apps_chain() {
        #[repr(C)]
        struct Raw {
            s_type: vk::StructureType,
            p_next: *const c_void,
            bits: [vk::Bool32; 3],
        }
        let wait = vk::PhysicalDevicePresentWaitFeaturesKHR::default().present_wait(false);
        let timing = Raw {
            s_type: vk::StructureType::from_raw(STYPE_PRESENT_TIMING_FEATURES),
            p_next: &wait as *const _ as *const c_void,
            bits: [vk::TRUE, vk::FALSE, vk::FALSE],
        };
        let id = vk::PhysicalDevicePresentIdFeaturesKHR {
            p_next: &timing as *const _ as *mut c_void,
            present_id: vk::TRUE,
            ..Default::default()
        };
        // SAFETY: a valid chain of three structures on the stack.
        let c = unsafe { chained_features(&id as *const _ as *const c_void) };
        assert_eq!(
            c,
            Chained {
                present_timing: Some(true),
                present_id: Some(true),
                present_wait: Some(false),
                ..Default::default()
            }
        );
        // SAFETY: an empty chain.
        assert_eq!(
            unsafe { chained_features(std::ptr::null()) },
            Chained::default()
        );
    }
}
