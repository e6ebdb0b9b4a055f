//! Present only so that the [build-dependencies] of this crate (host-side feature pins) take
//! part in cargo's feature resolution.
fn main() {}
