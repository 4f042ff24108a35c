//! Which path measures a GL context, so no frame is measured twice.
//!
//! Mesa's zink runs GL on Vulkan: its swaps end in `vkQueuePresentKHR`,
//! which the Vulkan layer times and draws on when it is on. The GL library
//! then stays out of that context (no capture, no HUD), and says so once;
//! with the layer off it measures the context like any other. The renderer
//! string tells zink (`zink (…)` in Mesa's `GL_RENDERER`); whether the
//! layer is on is read as the Vulkan loader reads it.

/// Who measures a context's swaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// This library: capture, HUD, limiter.
    Gl,
    /// GL on Vulkan with the layer on: the layer measures the presents.
    Layer,
}

/// Whether the Vulkan layer is on for this process, as the loader decides
/// for the implicit layer (`STEADYHUD=1`, not `DISABLE_STEADYHUD=1`) or as
/// `steadyhud run` asks (the layer in `VK_INSTANCE_LAYERS`).
pub fn layer_enabled(env: &dyn Fn(&str) -> Option<String>) -> bool {
    if env("DISABLE_STEADYHUD").as_deref() == Some("1") {
        return false;
    }
    env("STEADYHUD").as_deref() == Some("1")
        || env("VK_INSTANCE_LAYERS")
            .is_some_and(|l| l.split(':').any(|n| n == steadyhud_config::LAYER_NAME))
}

/// The path for a context whose `GL_RENDERER` is `renderer`.
pub fn path(renderer: &str, layer_on: bool) -> Path {
    let on_vulkan = renderer
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("zink");
    if on_vulkan && layer_on {
        Path::Layer
    } else {
        Path::Gl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_string())
    }

    #[test]
    fn zink_goes_to_the_layer_only_when_it_is_on() {
        let zink = "zink Vulkan 1.3(llvmpipe (LLVM 15.0.6, 256 bits) (MESA_LLVMPIPE))";
        assert_eq!(path(zink, true), Path::Layer);
        assert_eq!(
            path(zink, false),
            Path::Gl,
            "layer off: nobody else measures it"
        );
        assert_eq!(path("llvmpipe (LLVM 15.0.6, 256 bits)", true), Path::Gl);
        assert_eq!(path("NVIDIA GeForce RTX 4090/PCIe/SSE2", true), Path::Gl);
        assert_eq!(
            path("AMD Radeon RX 7900 XTX (radeonsi, navi31, LLVM 17)", true),
            Path::Gl
        );
    }

    #[test]
    fn layer_on_as_the_loader_reads_it() {
        assert!(layer_enabled(&env(&[("STEADYHUD", "1")])));
        assert!(!layer_enabled(&env(&[("STEADYHUD", "0")])));
        assert!(!layer_enabled(&env(&[])));
        assert!(!layer_enabled(&env(&[
            ("STEADYHUD", "1"),
            ("DISABLE_STEADYHUD", "1")
        ])));
        assert!(layer_enabled(&env(&[(
            "VK_INSTANCE_LAYERS",
            "VK_LAYER_KHRONOS_validation:VK_LAYER_STEADYHUD_overlay"
        )])));
        assert!(!layer_enabled(&env(&[(
            "VK_INSTANCE_LAYERS",
            "VK_LAYER_KHRONOS_validation"
        )])));
    }
}
