//! `formats::read_bytes` with format detection: the path `analyze FILE` takes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use steadyhud_formats::Filter;

fuzz_target!(|data: &[u8]| {
    steadyhud_fuzz::check_log(data, None, Filter::default());
});
