//! libFuzzer entry point of the `log_batch` target (the body is `riverlet_fuzz::log_batch`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| riverlet_fuzz::fuzz_entry(
    riverlet_fuzz::log_batch,
    data
));
