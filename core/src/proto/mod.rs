//! Fluss's protobuf messages, generated at build time from `core/proto/fluss_api.proto`.
//!
//! The `.proto` file is Riverlet's own re-typing of Fluss's `FlussApi.proto` (fluss-rpc) with
//! identical message names, field numbers, types and labels, so the encodings are byte for byte
//! those of Fluss. `build.rs` compiles it with protox and prost-build (no system `protoc`).
//!
//! prost maps proto2 `required` fields to plain values (always encoded), `optional` fields to
//! `Option<T>`, and `repeated` fields to `Vec<T>`. Field names are snake_case (Fluss's
//! `startTimestamp` is `start_timestamp`, `snapshotId` is `snapshot_id`, `type` is `r#type`).
//! Record payload fields (`records` of produce/put/fetch/limit-scan/scan-kv) are
//! [`bytes::Bytes`]; everything else that is `bytes` on the wire is `Vec<u8>`.
//!
//! Which request goes with which API key and response is given by
//! [`crate::rpc::RpcRequest`].

#[allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/proto.rs"));
}

pub use generated::*;
