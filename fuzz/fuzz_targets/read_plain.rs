//! Forced Plain reader.
#![no_main]
use libfuzzer_sys::fuzz_target;
use steadyhud_formats::{Filter, Format};

fuzz_target!(|data: &[u8]| {
    steadyhud_fuzz::check_log(data, Some(Format::Plain), Filter::default());
});
