//! Which devices and which batches are timed (config `gpu_timing`): the
//! device decision at `vkCreateDevice` and a batch's reason to be left out.

use crate::guard;
use ash::vk;
use steadyhud_config::GpuTiming;

/// Whether `physical_device` gets GPU timing under the config's `setting`:
/// [`GpuTiming::wanted`] with its device type (read only for `auto`).
/// When `auto` turns it off on a CPU device it says so, one line per device.
///
/// # Safety
/// `physical_device` is a live physical device of `instance`.
pub unsafe fn wanted(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    setting: GpuTiming,
) -> bool {
    if setting != GpuTiming::Auto {
        return setting.wanted(false);
    }
    // SAFETY: live handles (caller).
    let props = unsafe { instance.get_physical_device_properties(physical_device) };
    let cpu = props.device_type == vk::PhysicalDeviceType::CPU;
    let on = setting.wanted(cpu);
    if !on {
        let name = props
            .device_name_as_c_str()
            .unwrap_or_default()
            .to_string_lossy();
        // "llvmpipe (LLVM 15.0.7, 256 bits)" → "llvmpipe".
        let short = name.split(" (").next().unwrap_or_default();
        guard::say(format_args!(
            "steadyhud: GPU timing off on a CPU device ({short}): its timestamps would run on the game's cores; gpu_timing=1 forces it"
        ));
    }
    on
}

/// Why a batch is not timed (`None`: timed).
pub fn untimed_reason(
    command_buffers: u32,
    protected: bool,
    device_group: bool,
) -> Option<&'static str> {
    if command_buffers == 0 {
        Some("no command buffers")
    } else if protected {
        Some("protected submit")
    } else if device_group {
        Some("VkDeviceGroupSubmitInfo")
    } else {
        None
    }
}

/// What a `VkSubmitInfo`'s chain says: (protected, device group).
///
/// # Safety
/// `next` is a valid Vulkan structure chain.
pub(super) unsafe fn chain_flags(next: *const std::ffi::c_void) -> (bool, bool) {
    let (mut protected, mut group) = (false, false);
    // SAFETY: a valid chain (caller).
    for l in unsafe { crate::layer::chain::links(next) } {
        match l.s_type {
            vk::StructureType::PROTECTED_SUBMIT_INFO => {
                // SAFETY: the sType says what it is.
                let p = unsafe { &*(l.ptr as *const vk::ProtectedSubmitInfo<'_>) };
                protected |= p.protected_submit == vk::TRUE;
            }
            vk::StructureType::DEVICE_GROUP_SUBMIT_INFO => group = true,
            _ => {}
        }
    }
    (protected, group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_batches_are_timed() {
        assert_eq!(untimed_reason(3, false, false), None);
        assert_eq!(untimed_reason(0, false, false), Some("no command buffers"));
        assert_eq!(untimed_reason(1, true, false), Some("protected submit"));
        assert_eq!(
            untimed_reason(1, false, true),
            Some("VkDeviceGroupSubmitInfo")
        );
    }
}
