//! Every entry point of the layer, in one room. [`table`] hands them out
//! (`vkGetInstanceProcAddr` / `vkGetDeviceProcAddr`, the loader
//! negotiation); each is a thin `extern "system"` function that finds its
//! object ([`lookup`]), contains panics and delegates to the instance or
//! device record: [`instance`], [`device`] (swapchains, the present),
//! [`counted`] (the calls the statistics counters time, the submits).
//! The process-exit hook is the client record's
//! (`steadyhud_capture::client`), shared with the GL library.

pub mod counted;
pub mod device;
pub mod instance;
pub mod lookup;
pub mod passthrough;
pub mod table;
