//! The PCI bus id of a physical device, from `VK_EXT_pci_bus_info`
//! (`VkPhysicalDevicePCIBusInfoPropertiesEXT`) when the device has it
//! (lavapipe and other CPU devices do not).

use ash::vk;
use steadyhud_sensors::PciBusId;

/// `physical_device`'s PCI address, if it reports one.
///
/// # Safety
/// `physical_device` is a live physical device of `instance`, which the
/// app created with Vulkan 1.1 or later (`vkGetPhysicalDeviceProperties2`
/// is core there).
pub unsafe fn pci_bus_of(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
) -> Option<PciBusId> {
    // SAFETY: a live physical device (caller).
    let props = unsafe { instance.get_physical_device_properties(physical_device) };
    if props.api_version < vk::API_VERSION_1_1 {
        return None;
    }
    // SAFETY: a live physical device (caller).
    let has = unsafe { instance.enumerate_device_extension_properties(physical_device) }
        .ok()?
        .iter()
        .any(|p| p.extension_name_as_c_str() == Ok(ash::ext::pci_bus_info::NAME));
    if !has {
        return None;
    }
    let mut bus = vk::PhysicalDevicePCIBusInfoPropertiesEXT::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut bus);
    // SAFETY: a live physical device (caller) that has the extension, so
    // the structure may be chained; the function is core in 1.1.
    unsafe { instance.get_physical_device_properties2(physical_device, &mut props2) };
    Some(PciBusId {
        domain: bus.pci_domain,
        bus: bus.pci_bus,
        device: bus.pci_device,
        function: bus.pci_function,
    })
}
