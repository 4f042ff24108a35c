//! GPU timestamps on the CPU clock: `VK_EXT_calibrated_timestamps`,
//! enabled at `vkCreateDevice` when the device has it and read again every
//! [`CALIBRATE_EVERY_NS`] by the analysis thread.

use ash::vk;

/// The device extension that maps GPU timestamps to the CPU clock.
pub const CALIBRATION_EXTENSION: &std::ffi::CStr = c"VK_EXT_calibrated_timestamps";
/// How often the layer re-calibrates.
pub(super) const CALIBRATE_EVERY_NS: u64 = 1_000_000_000;

/// What `vkCreateDevice` does about [`CALIBRATION_EXTENSION`]: whether the
/// device will have it, and the extension list to pass instead of the
/// app's when the layer adds it (`None`: pass the app's).
///
/// # Safety
/// `info` is the app's valid create info for `physical_device`.
pub unsafe fn calibration_for(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    info: &vk::DeviceCreateInfo<'_>,
) -> (bool, Option<Vec<*const std::ffi::c_char>>) {
    // SAFETY: the app's names (caller).
    let app: Vec<*const std::ffi::c_char> =
        if info.enabled_extension_count == 0 || info.pp_enabled_extension_names.is_null() {
            Vec::new()
        } else {
            unsafe {
                std::slice::from_raw_parts(
                    info.pp_enabled_extension_names,
                    info.enabled_extension_count as usize,
                )
            }
            .to_vec()
        };
    // SAFETY: valid C strings (the app's contract).
    let enabled = app
        .iter()
        .any(|&n| unsafe { std::ffi::CStr::from_ptr(n) } == CALIBRATION_EXTENSION);
    if enabled {
        return (true, None);
    }
    // SAFETY: a live physical device.
    let supported = unsafe { instance.enumerate_device_extension_properties(physical_device) }
        .map(|props| {
            props
                .iter()
                .any(|p| p.extension_name_as_c_str() == Ok(CALIBRATION_EXTENSION))
        })
        .unwrap_or(false);
    if !supported {
        return (false, None);
    }
    let mut names = app;
    names.push(CALIBRATION_EXTENSION.as_ptr());
    (true, Some(names))
}

/// CPU ns − GPU ns now, from `vkGetCalibratedTimestampsEXT` (`f`) on
/// `device`, whose timestamps tick every `period_ns`.
///
/// # Safety
/// `device` is live and `f` its `vkGetCalibratedTimestampsEXT`.
pub(super) unsafe fn offset_now(
    f: vk::PFN_vkGetCalibratedTimestampsKHR,
    device: vk::Device,
    period_ns: f64,
) -> Option<i128> {
    let infos = [
        vk::CalibratedTimestampInfoKHR::default().time_domain(vk::TimeDomainKHR::DEVICE),
        vk::CalibratedTimestampInfoKHR::default().time_domain(vk::TimeDomainKHR::CLOCK_MONOTONIC),
    ];
    let mut ts = [0u64; 2];
    let mut deviation = 0u64;
    // SAFETY: live device (caller), two valid infos and two outputs.
    let r = unsafe { f(device, 2, infos.as_ptr(), ts.as_mut_ptr(), &mut deviation) };
    (r == vk::Result::SUCCESS).then(|| ts[1] as i128 - (ts[0] as f64 * period_ns) as i128)
}
