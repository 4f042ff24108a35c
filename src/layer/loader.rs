//! The loader ↔ layer interface (`vk_layer.h`, interface version 2): the
//! negotiation struct and the `pNext` chain entries the loader puts into
//! `VkInstanceCreateInfo` / `VkDeviceCreateInfo` to hand each layer its link
//! to the next one.
//!
//! Defined here rather than taken from the `ash-layer` crate: that crate is a
//! 0.0.x single-author release whose chain walker reads a whole
//! `VkLayerInstanceCreateInfo` out of every `pNext` entry (over-reading smaller
//! structs); the few definitions we need are short and checked against the
//! 1.3.239 header.

use ash::vk;
use std::ffi::{c_char, c_void, CStr};

/// `VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT`.
pub const LAYER_NEGOTIATE_INTERFACE_STRUCT: i32 = 1;

/// The interface version this layer implements.
pub const LAYER_INTERFACE_VERSION: u32 = 2;

/// `vk_layerGetPhysicalDeviceProcAddr`.
pub type PfnGetPhysicalDeviceProcAddr =
    unsafe extern "system" fn(vk::Instance, *const c_char) -> vk::PFN_vkVoidFunction;

/// `VkNegotiateLayerInterface`.
#[repr(C)]
pub struct NegotiateLayerInterface {
    pub s_type: i32,
    pub p_next: *mut c_void,
    pub loader_layer_interface_version: u32,
    pub pfn_get_instance_proc_addr: Option<vk::PFN_vkGetInstanceProcAddr>,
    pub pfn_get_device_proc_addr: Option<vk::PFN_vkGetDeviceProcAddr>,
    pub pfn_get_physical_device_proc_addr: Option<PfnGetPhysicalDeviceProcAddr>,
}

/// `VkLayerFunction`: which member of the chain entry's union is valid.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LayerFunction(pub i32);

impl LayerFunction {
    pub const LAYER_LINK_INFO: Self = Self(0);
    pub const LOADER_DATA_CALLBACK: Self = Self(1);
}

/// `VkLayerInstanceLink`.
#[repr(C)]
pub struct LayerInstanceLink {
    pub p_next: *mut LayerInstanceLink,
    pub pfn_next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    pub pfn_next_get_physical_device_proc_addr: Option<PfnGetPhysicalDeviceProcAddr>,
}

/// `VkLayerDeviceLink`.
#[repr(C)]
pub struct LayerDeviceLink {
    pub p_next: *mut LayerDeviceLink,
    pub pfn_next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    pub pfn_next_get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
}

/// `PFN_vkSetInstanceLoaderData`.
pub type PfnSetInstanceLoaderData =
    unsafe extern "system" fn(vk::Instance, *mut c_void) -> vk::Result;
/// `PFN_vkSetDeviceLoaderData`: gives a dispatchable object the layer created
/// (queue, command buffer) the loader's dispatch table.
pub type PfnSetDeviceLoaderData = unsafe extern "system" fn(vk::Device, *mut c_void) -> vk::Result;

/// `VkLayerInstanceCreateInfo` (the union is read through the typed accessors
/// below; its largest member is two pointers).
#[repr(C)]
pub struct LayerInstanceCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub function: LayerFunction,
    pub u: [*mut c_void; 2],
}

/// `VkLayerDeviceCreateInfo`.
#[repr(C)]
pub struct LayerDeviceCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub function: LayerFunction,
    pub u: [*mut c_void; 1],
}

/// Walks a `pNext` chain for the loader entry of `s_type` and `function`,
/// reading only the common header of entries that are not ours.
///
/// # Safety
/// `p` is null or the head of a valid `pNext` chain: every entry starts
/// with `sType` and `pNext`, and the chain ends in null.
unsafe fn find_entry(
    p: *const c_void,
    s_type: vk::StructureType,
    function: LayerFunction,
) -> *mut c_void {
    // SAFETY: a valid `pNext` chain (caller).
    let entry = unsafe { super::chain::links(p) }.find(|l| {
        // SAFETY: an entry of the loader's `sType`; those all start with
        // sType, pNext, function (`vk_layer.h`).
        l.s_type == s_type
            && unsafe {
                *((l.ptr as *const u8).add(std::mem::size_of::<vk::BaseInStructure<'_>>())
                    as *const LayerFunction)
            } == function
    });
    entry.map_or(std::ptr::null_mut(), |l| l.ptr as *mut c_void)
}

/// The instance chain's link entry.
///
/// # Safety
/// `info` is the create info the loader passed to this layer's
/// `vkCreateInstance`, with its valid `pNext` chain.
pub(crate) unsafe fn instance_link_info(
    info: &vk::InstanceCreateInfo,
) -> *mut LayerInstanceCreateInfo {
    // SAFETY: `info` is the app's create info, its `pNext` a valid chain
    // (caller).
    unsafe {
        find_entry(
            info.p_next,
            vk::StructureType::LOADER_INSTANCE_CREATE_INFO,
            LayerFunction::LAYER_LINK_INFO,
        ) as *mut LayerInstanceCreateInfo
    }
}

/// The device chain's link entry.
///
/// # Safety
/// `info` is the create info the loader passed to this layer's
/// `vkCreateDevice`, with its valid `pNext` chain.
pub(crate) unsafe fn device_link_info(info: &vk::DeviceCreateInfo) -> *mut LayerDeviceCreateInfo {
    // SAFETY: `info` is the app's create info, its `pNext` a valid chain
    // (caller).
    unsafe {
        find_entry(
            info.p_next,
            vk::StructureType::LOADER_DEVICE_CREATE_INFO,
            LayerFunction::LAYER_LINK_INFO,
        ) as *mut LayerDeviceCreateInfo
    }
}

/// `vkSetDeviceLoaderData` from the device chain, if the loader gave one.
///
/// # Safety
/// `info` is the create info the loader passed to this layer's
/// `vkCreateDevice`, with its valid `pNext` chain.
pub(crate) unsafe fn device_loader_data_callback(
    info: &vk::DeviceCreateInfo,
) -> Option<PfnSetDeviceLoaderData> {
    // SAFETY: `info` is the app's create info, its `pNext` a valid chain
    // (caller).
    let e = unsafe {
        find_entry(
            info.p_next,
            vk::StructureType::LOADER_DEVICE_CREATE_INFO,
            LayerFunction::LOADER_DATA_CALLBACK,
        )
    } as *const LayerDeviceCreateInfo;
    if e.is_null() {
        return None;
    }
    // SAFETY: a non-null loader entry whose `function` says the union holds
    // `pfnSetDeviceLoaderData`.
    let f = unsafe { (*e).u[0] };
    if f.is_null() {
        None
    } else {
        // SAFETY: the loader's non-null `PFN_vkSetDeviceLoaderData`, stored
        // as a pointer-sized union member.
        Some(unsafe { std::mem::transmute::<*mut c_void, PfnSetDeviceLoaderData>(f) })
    }
}

/// Takes this layer's link out of a link entry's union slot
/// (`pLayerInfo`): the link, null where there is none, with the slot moved
/// on to the next layer's link, as the loader requires of each layer before
/// it calls down.
///
/// # Safety
/// `e` is null or the loader's link entry of a create info's valid `pNext`
/// chain (an instance entry read as a device one: the two share the header
/// and the union's first slot), `L` the link type of that entry
/// (`VkLayerInstanceLink` or `VkLayerDeviceLink`, each starting with its
/// `pNext`); called once per create call, since it moves the chain's link
/// on in place.
unsafe fn take_link<L>(e: *mut LayerDeviceCreateInfo) -> Option<&'static L> {
    if e.is_null() {
        return None;
    }
    // SAFETY: a non-null loader link entry: the union holds `pLayerInfo`.
    let link = unsafe { (*e).u[0] } as *const L;
    if !link.is_null() {
        // SAFETY: the loader's non-null link, whose first field is the next
        // layer's link (`vk_layer.h`); the loader owns the chain and has each
        // layer advance it past its own link before calling down.
        unsafe { (*e).u[0] = *(link as *const *mut c_void) };
    }
    // SAFETY: null or the loader's link, alive for the create call and
    // never written through.
    unsafe { link.as_ref() }
}

/// The next layer's link for this instance; advances the chain for the next
/// layer down, as the loader requires before calling its `vkCreateInstance`.
///
/// # Safety
/// `info` is the create info the loader passed to this layer's
/// `vkCreateInstance`, with its valid `pNext` chain; called once per such
/// call, since it moves the chain's link on in place.
pub(crate) unsafe fn take_instance_link(
    info: &vk::InstanceCreateInfo,
) -> Option<vk::PFN_vkGetInstanceProcAddr> {
    // SAFETY: `info` is the app's create info, its `pNext` a valid chain
    // (caller).
    let link = unsafe { take_link::<LayerInstanceLink>(instance_link_info(info).cast()) };
    Some(link?.pfn_next_get_instance_proc_addr)
}

/// The next layer's gipa/gdpa for this device; advances the chain.
///
/// # Safety
/// `info` is the create info the loader passed to this layer's
/// `vkCreateDevice`, with its valid `pNext` chain; called once per such
/// call, since it moves the chain's link on in place.
pub(crate) unsafe fn take_device_link(
    info: &vk::DeviceCreateInfo,
) -> Option<(vk::PFN_vkGetInstanceProcAddr, vk::PFN_vkGetDeviceProcAddr)> {
    // SAFETY: as in `take_instance_link`.
    let link = unsafe { take_link::<LayerDeviceLink>(device_link_info(info)) }?;
    Some((
        link.pfn_next_get_instance_proc_addr,
        link.pfn_next_get_device_proc_addr,
    ))
}

/// A function of the next layer, looked up by `lookup` (a bound gipa or
/// gdpa) and cast to its type `F`: the one place the layer turns a
/// `PFN_vkVoidFunction` into a typed pointer.
///
/// # Safety
/// `F` must be the function-pointer type of `name`.
pub(crate) unsafe fn next_fn<F: Copy>(
    lookup: impl FnOnce(*const c_char) -> vk::PFN_vkVoidFunction,
    name: &CStr,
) -> Option<F> {
    let f = lookup(name.as_ptr())?;
    debug_assert_eq!(
        std::mem::size_of::<F>(),
        std::mem::size_of::<unsafe extern "system" fn()>()
    );
    // SAFETY: the caller names F as the type of `name`; both are fn pointers.
    Some(unsafe { std::mem::transmute_copy::<unsafe extern "system" fn(), F>(&f) })
}

/// The extension names an app enabled (`ppEnabledExtensionNames` of its
/// instance or device create info), as bytes without the NUL.
///
/// # Safety
/// `names` is null or an array of `count` null or NUL-terminated strings
/// that outlive `'a`.
pub(crate) unsafe fn extension_names<'a>(
    names: *const *const c_char,
    count: u32,
) -> impl Iterator<Item = &'a [u8]> {
    let all: &[*const c_char] = if names.is_null() {
        &[]
    } else {
        // SAFETY: the caller's array of `count` names.
        unsafe { std::slice::from_raw_parts(names, count as usize) }
    };
    all.iter()
        .filter(|n| !n.is_null())
        // SAFETY: NUL-terminated, per the caller.
        .map(|&n| unsafe { CStr::from_ptr(n) }.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_vk_layer_h() {
        // Sizes of the C structs from vk_layer.h (sizeof with gcc -m64 and
        // -m32): pointers are 8 or 4 bytes, and the 32-bit library
        // (scripts/build-i686.sh) must match the 32-bit loader.
        let (negotiate, instance_info, device_info, link) = if cfg!(target_pointer_width = "64") {
            (48, 40, 32, 24)
        } else {
            (24, 20, 16, 12)
        };
        assert_eq!(std::mem::size_of::<NegotiateLayerInterface>(), negotiate);
        assert_eq!(
            std::mem::size_of::<LayerInstanceCreateInfo>(),
            instance_info
        );
        assert_eq!(std::mem::size_of::<LayerDeviceCreateInfo>(), device_info);
        assert_eq!(std::mem::size_of::<LayerInstanceLink>(), link);
        assert_eq!(std::mem::size_of::<LayerDeviceLink>(), link);
        // `take_link` reads an instance entry as a device one.
        assert_eq!(
            std::mem::offset_of!(LayerInstanceCreateInfo, u),
            std::mem::offset_of!(LayerDeviceCreateInfo, u)
        );
    }

    #[test]
    fn chain_walk_skips_foreign_entries_and_advances() {
        /// # Safety
        /// None beyond the signature's: it reads none of its arguments.
        unsafe extern "system" fn gipa(
            _: vk::Instance,
            _: *const c_char,
        ) -> vk::PFN_vkVoidFunction {
            None
        }
        let mut second = LayerInstanceLink {
            p_next: std::ptr::null_mut(),
            pfn_next_get_instance_proc_addr: gipa,
            pfn_next_get_physical_device_proc_addr: None,
        };
        let mut first = LayerInstanceLink {
            p_next: &mut second,
            pfn_next_get_instance_proc_addr: gipa,
            pfn_next_get_physical_device_proc_addr: None,
        };
        let mut link = LayerInstanceCreateInfo {
            s_type: vk::StructureType::LOADER_INSTANCE_CREATE_INFO,
            p_next: std::ptr::null(),
            function: LayerFunction::LAYER_LINK_INFO,
            u: [&mut first as *mut _ as *mut c_void, std::ptr::null_mut()],
        };
        let validation = vk::ValidationFeaturesEXT {
            p_next: &mut link as *mut _ as *const c_void,
            ..Default::default()
        };
        let info = vk::InstanceCreateInfo {
            p_next: &validation as *const _ as *const c_void,
            ..Default::default()
        };
        // SAFETY: a chain of live locals, built above.
        unsafe {
            assert!(take_instance_link(&info).is_some());
            assert_eq!(link.u[0], &mut second as *mut _ as *mut c_void);
        }
    }
}
