//! Errors of the test app: each says what it was doing when it failed.

use ash::vk;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("bad option: {0}")]
    Usage(String),
    #[error("X11: {0}")]
    X11(String),
    #[error("Wayland: {0}")]
    Wayland(String),
    #[error("cannot load the Vulkan loader (libvulkan.so.1): {0}")]
    Loader(String),
    #[error("{what}: {result}")]
    Vulkan {
        what: &'static str,
        result: vk::Result,
    },
    #[error("{0}")]
    Unsupported(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// Attaches "what we were doing" to a Vulkan result.
pub trait VkContext<T> {
    fn ctx(self, what: &'static str) -> Result<T, Error>;
}

impl<T> VkContext<T> for Result<T, vk::Result> {
    fn ctx(self, what: &'static str) -> Result<T, Error> {
        self.map_err(|result| Error::Vulkan { what, result })
    }
}
