//! Which path measures a GL context, so no frame is measured twice.
//!
//! Mesa's zink runs GL on Vulkan: its swaps end in `vkQueuePresentKHR`,
//! which the Vulkan layer times and draws on when it is active. The GL
//! library then stays out of that context (no capture, no HUD), and says so
//! once; without the layer it measures the context like any other. The
//! renderer string tells zink (`zink (…)` in Mesa's `GL_RENDERER`).
//! Whether the layer is active is what the process itself says: the layer
//! calls [`steadyhud_vulkan_layer_active`] (its name is
//! [`steadyhud_config::LAYER_MARK`]) whenever an instance is made through
//! it, and zink makes its instance when its screen is made, before the
//! context's first swap. Environment variables would only guess: the
//! loader's `VK_LOADER_LAYERS_ENABLE` / `_DISABLE`, a 32-bit game without
//! the 32-bit layer, or an app listing layers itself all change whether
//! the layer loads.

use std::sync::atomic::{AtomicBool, Ordering};

/// Who measures a context's swaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// This library: capture, HUD, limiter.
    Gl,
    /// GL on Vulkan with the layer active: the layer measures the presents.
    Layer,
}

/// Set by [`steadyhud_vulkan_layer_active`].
static LAYER_ACTIVE: AtomicBool = AtomicBool::new(false);

/// The layer's mark: an instance was made through the active Vulkan layer
/// in this process. Called by the layer (it looks the name up with
/// `dlsym`); one atomic store, safe from any thread at any time.
#[no_mangle]
pub extern "C" fn steadyhud_vulkan_layer_active() {
    LAYER_ACTIVE.store(true, Ordering::Release);
}

/// Whether the layer has marked this process.
pub fn layer_marked() -> bool {
    LAYER_ACTIVE.load(Ordering::Acquire)
}

/// The path for a context whose `GL_RENDERER` is `renderer`.
pub fn path(renderer: &str, layer_active: bool) -> Path {
    let on_vulkan = renderer
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("zink");
    if on_vulkan && layer_active {
        Path::Layer
    } else {
        Path::Gl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zink_goes_to_the_layer_only_when_it_is_active() {
        let zink = "zink Vulkan 1.3(llvmpipe (LLVM 15.0.6, 256 bits) (MESA_LLVMPIPE))";
        assert_eq!(path(zink, true), Path::Layer);
        assert_eq!(
            path(zink, false),
            Path::Gl,
            "layer not active: nobody else measures it"
        );
        assert_eq!(path("llvmpipe (LLVM 15.0.6, 256 bits)", true), Path::Gl);
        assert_eq!(path("NVIDIA GeForce RTX 4090/PCIe/SSE2", true), Path::Gl);
        assert_eq!(
            path("AMD Radeon RX 7900 XTX (radeonsi, navi31, LLVM 17)", true),
            Path::Gl
        );
    }

    #[test]
    fn the_mark_is_the_declared_name() {
        assert_eq!(
            steadyhud_config::LAYER_MARK.to_str(),
            Ok(stringify!(steadyhud_vulkan_layer_active))
        );
        assert!(!layer_marked());
        steadyhud_vulkan_layer_active();
        assert!(layer_marked());
    }
}
