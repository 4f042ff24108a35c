//! Control-socket protocol: request and reply lines.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    steadyhud_fuzz::check_control(data);
});
