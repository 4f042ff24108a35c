//! The one walker of Vulkan `pNext` chains: every place the layer looks
//! into an app's chain (the loader's link entries, present regions, a
//! submit's protected and device-group structures, the present features
//! at device creation) iterates [`links`], which reads only each entry's
//! common header (`sType`, `pNext`): a structure the layer does not know is
//! never read past its header.

use ash::vk;
use std::ffi::c_void;

/// One entry of a chain: its place (0 = first), its `sType`, and where it
/// is, to be read as the structure its `sType` names.
#[derive(Clone, Copy, Debug)]
pub struct Link {
    pub index: usize,
    pub s_type: vk::StructureType,
    pub ptr: *const c_void,
}

/// The entries of the chain that starts at `p`.
pub struct Links {
    next: *const c_void,
    index: usize,
}

/// The entries of the `pNext` chain that starts at `p`, in order.
///
/// # Safety
/// `p` is null or the head of a valid `pNext` chain (every entry starts
/// with `sType` and `pNext`, the last `pNext` is null) that stays valid and
/// unchanged while the iterator is used.
pub unsafe fn links(p: *const c_void) -> Links {
    Links { next: p, index: 0 }
}

impl Iterator for Links {
    type Item = Link;

    fn next(&mut self) -> Option<Link> {
        if self.next.is_null() {
            return None;
        }
        // SAFETY: an entry of a valid chain (`links`' contract): it starts
        // with sType and pNext, which is all that is read here.
        let base = unsafe { &*(self.next as *const vk::BaseInStructure<'_>) };
        let link = Link {
            index: self.index,
            s_type: base.s_type,
            ptr: self.next,
        };
        self.next = base.p_next.cast();
        self.index += 1;
        Some(link)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_every_entry_in_order_reading_only_headers() {
        let protected = vk::ProtectedSubmitInfo::default();
        let group = vk::DeviceGroupSubmitInfo {
            p_next: (&protected as *const vk::ProtectedSubmitInfo<'_>).cast(),
            ..Default::default()
        };
        // SAFETY: a chain of live locals.
        let got: Vec<(usize, vk::StructureType)> =
            unsafe { links((&group as *const vk::DeviceGroupSubmitInfo<'_>).cast()) }
                .map(|l| (l.index, l.s_type))
                .collect();
        assert_eq!(
            got,
            [
                (0, vk::StructureType::DEVICE_GROUP_SUBMIT_INFO),
                (1, vk::StructureType::PROTECTED_SUBMIT_INFO)
            ]
        );
        // SAFETY: an empty chain.
        assert_eq!(unsafe { links(std::ptr::null()) }.count(), 0);
    }
}
