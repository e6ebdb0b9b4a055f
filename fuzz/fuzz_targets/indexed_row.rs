//! libFuzzer entry point of the `indexed_row` target (the body is `riverlet_fuzz::indexed_row`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| riverlet_fuzz::fuzz_entry(
    riverlet_fuzz::indexed_row,
    data
));
