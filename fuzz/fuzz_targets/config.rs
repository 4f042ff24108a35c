//! Config parser: file syntax and `STEADYHUD_CONFIG` syntax.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    steadyhud_fuzz::check_config(data);
});
