//! Forced CapFrameX reader, with a process/swapchain filter taken from the first line.
#![no_main]
use libfuzzer_sys::fuzz_target;
use steadyhud_formats::Format;

fuzz_target!(|data: &[u8]| {
    let (filter, log) = steadyhud_fuzz::filter_and_log(data);
    steadyhud_fuzz::check_log(log, Some(Format::CapFrameX), filter);
});
