//! From a dispatchable handle to the layer's record of its device, without
//! a lock: what every device-level entry point starts with.

use crate::layer::device::Device;
use crate::layer::handles::dispatch_key;
use crate::layer::state::{layer, Layer};
use ash::vk;

/// Looks a dispatchable handle's device up and runs `f` on it; `fallback`
/// when the device is not ours. The lookup cannot panic (a scan of atomic
/// slots), so it runs unguarded: every hooked call pays for no guard it
/// does not need (see `guard`: one costs two system calls).
///
/// # Safety
/// `h` is a live dispatchable handle: the app is calling the layer on it.
#[inline]
pub(super) unsafe fn on_device<H: vk::Handle, R>(
    h: H,
    fallback: R,
    f: impl FnOnce(&'static Layer, &Device) -> R,
) -> R {
    let l = layer();
    // SAFETY: we are inside the app's call on `h`, a live handle.
    match unsafe { l.device(dispatch_key(h)) } {
        Some(dev) => f(l, dev),
        None => fallback,
    }
}
