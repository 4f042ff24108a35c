//! `VK_AMD_anti_lag`'s structures, as the layer reads them from the app's
//! `vkAntiLagUpdateAMD` (Vulkan 1.3.290's headers; ash 0.38 predates the
//! extension). The app calls it with the input stage right before it reads
//! input for a frame and with the present stage right before that frame's
//! `vkQueuePresentKHR`, both with the frame's index: the input stage is
//! the game's own frame start ([`super::counters::DeviceCounters::anti_lag`]).

use ash::vk;
use std::ffi::c_void;

/// `VK_STRUCTURE_TYPE_ANTI_LAG_DATA_AMD`.
pub const ANTI_LAG_DATA: vk::StructureType = vk::StructureType::from_raw(1_000_476_001);
/// `VK_STRUCTURE_TYPE_ANTI_LAG_PRESENTATION_INFO_AMD`.
pub const ANTI_LAG_PRESENTATION_INFO: vk::StructureType =
    vk::StructureType::from_raw(1_000_476_002);

/// `VkAntiLagDataAMD`.
#[repr(C)]
pub struct AntiLagData {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    /// `VkAntiLagModeAMD`: driver control 0, on 1, off 2.
    pub mode: i32,
    pub max_fps: u32,
    /// Null when the call only sets the mode and the frame cap.
    pub presentation_info: *const AntiLagPresentationInfo,
}

/// `VkAntiLagPresentationInfoAMD`.
#[repr(C)]
pub struct AntiLagPresentationInfo {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    /// `VkAntiLagStageAMD`: input 0, present 1.
    pub stage: i32,
    pub frame_index: u64,
}

/// `PFN_vkAntiLagUpdateAMD`.
pub type PfnAntiLagUpdate = unsafe extern "system" fn(vk::Device, *const AntiLagData);

/// The stage an update reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `VK_ANTI_LAG_STAGE_INPUT_AMD`: the app is about to read input.
    Input,
    /// `VK_ANTI_LAG_STAGE_PRESENT_AMD`: the frame is about to be presented.
    Present,
}

/// The stage and frame index an update reports; `None` for an update
/// without presentation info, an unknown stage, or structures whose
/// `sType` is not theirs.
///
/// # Safety
/// `data` is null or the app's `VkAntiLagDataAMD`, valid per the spec
/// (its `pPresentationInfo` null or valid).
pub unsafe fn stage_of(data: *const AntiLagData) -> Option<(Stage, u64)> {
    // SAFETY: null or the app's valid structure (caller).
    let data = unsafe { data.as_ref() }?;
    if data.s_type != ANTI_LAG_DATA {
        return None;
    }
    // SAFETY: null or the app's valid presentation info (caller).
    let info = unsafe { data.presentation_info.as_ref() }?;
    if info.s_type != ANTI_LAG_PRESENTATION_INFO {
        return None;
    }
    let stage = match info.stage {
        0 => Stage::Input,
        1 => Stage::Present,
        _ => return None,
    };
    Some((stage, info.frame_index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_vulkan_core_h() {
        // sizeof with gcc -m64 / -m32 of vulkan_core.h 1.3.290's structs.
        let (data, info) = if cfg!(target_pointer_width = "64") {
            (32, 32)
        } else {
            (20, 20)
        };
        assert_eq!(std::mem::size_of::<AntiLagData>(), data);
        assert_eq!(std::mem::size_of::<AntiLagPresentationInfo>(), info);
    }

    #[test]
    fn reads_the_stage_and_frame_or_nothing() {
        let info = |stage| AntiLagPresentationInfo {
            s_type: ANTI_LAG_PRESENTATION_INFO,
            p_next: std::ptr::null_mut(),
            stage,
            frame_index: 42,
        };
        let data = |p: *const AntiLagPresentationInfo| AntiLagData {
            s_type: ANTI_LAG_DATA,
            p_next: std::ptr::null(),
            mode: 1,
            max_fps: 0,
            presentation_info: p,
        };
        let (input, present, odd) = (info(0), info(1), info(7));
        // SAFETY: the test's own structures, alive for each call.
        unsafe {
            assert_eq!(stage_of(&data(&input)), Some((Stage::Input, 42)));
            assert_eq!(stage_of(&data(&present)), Some((Stage::Present, 42)));
            assert_eq!(stage_of(&data(&odd)), None);
            assert_eq!(stage_of(&data(std::ptr::null())), None);
            assert_eq!(stage_of(std::ptr::null()), None);
            let mut wrong = data(&input);
            wrong.s_type = vk::StructureType::APPLICATION_INFO;
            assert_eq!(stage_of(&wrong), None);
        }
    }
}
