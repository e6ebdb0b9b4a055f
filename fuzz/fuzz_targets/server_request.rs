//! libFuzzer entry point of the `server_request` target (the body is `riverlet_fuzz::server_request`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| riverlet_fuzz::fuzz_entry(
    riverlet_fuzz::server_request,
    data
));
