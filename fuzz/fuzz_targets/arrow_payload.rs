//! libFuzzer entry point of the `arrow_payload` target (the body is `riverlet_fuzz::arrow_payload`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| riverlet_fuzz::fuzz_entry(
    riverlet_fuzz::arrow_payload,
    data
));
