//! libFuzzer entry point of the `filter_parse` target (the body is `riverlet_fuzz::filter_parse`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| riverlet_fuzz::fuzz_entry(
    riverlet_fuzz::filter_parse,
    data
));
