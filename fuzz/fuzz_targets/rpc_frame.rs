//! libFuzzer entry point of the `rpc_frame` target (the body is `riverlet_fuzz::rpc_frame`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| riverlet_fuzz::fuzz_entry(
    riverlet_fuzz::rpc_frame,
    data
));
