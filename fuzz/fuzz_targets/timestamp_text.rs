//! libFuzzer entry point of the `timestamp_text` target (the body is `riverlet_fuzz::timestamp_text`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| riverlet_fuzz::fuzz_entry(
    riverlet_fuzz::timestamp_text,
    data
));
