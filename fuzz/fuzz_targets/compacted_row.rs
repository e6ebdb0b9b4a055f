//! libFuzzer entry point of the `compacted_row` target (the body is `riverlet_fuzz::compacted_row`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| riverlet_fuzz::fuzz_entry(
    riverlet_fuzz::compacted_row,
    data
));
