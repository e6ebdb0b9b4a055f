//! The committed header must be what cbindgen generates from the current sources.

#[test]
fn committed_header_is_fresh() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/riverlet.h"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/riverlet.h");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "c-api/include/riverlet.h is stale: regenerate it with \
         `RIVERLET_UPDATE_HEADER=1 cargo build -p riverlet-c` and commit it"
    );
}
