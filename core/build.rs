//! Compiles `proto/fluss_api.proto` into prost types with protox (a pure-Rust protobuf
//! compiler), so building Riverlet never needs a system `protoc`.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("proto");
    let proto_file = proto_dir.join("fluss_api.proto");
    println!("cargo:rerun-if-changed={}", proto_file.display());

    let descriptors = protox::compile([&proto_file], [&proto_dir])?;

    let mut config = prost_build::Config::new();
    // Record payloads can be large: keep them as `bytes::Bytes` so decoding a frame that is
    // itself `Bytes` slices instead of copying.
    config.bytes([
        ".proto.PbProduceLogReqForBucket.records",
        ".proto.PbPutKvReqForBucket.records",
        ".proto.PbFetchLogRespForBucket.records",
        ".proto.LimitScanResponse.records",
        ".proto.ScanKvResponse.records",
    ]);
    config.compile_fds(descriptors)?;
    Ok(())
}
