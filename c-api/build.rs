//! Generates `include/riverlet.h` with cbindgen.
//!
//! The header is always generated into `OUT_DIR`; the unit test `header::committed_header_is_fresh`
//! compares it with the committed `include/riverlet.h`, in CI and on a developer's machine alike
//! (a build that rewrote the committed header would make that test pass on a stale commit).
//! `RIVERLET_UPDATE_HEADER=1 cargo build -p riverlet-c` refreshes the committed header.

use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RIVERLET_UPDATE_HEADER");

    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("c-api/cbindgen.toml is readable and valid");
    let bindings = cbindgen::Builder::new()
        .with_src(crate_dir.join("src").join("lib.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let generated = out_dir.join("riverlet.h");
    bindings.write_to_file(&generated);

    let update = std::env::var_os("RIVERLET_UPDATE_HEADER").is_some_and(|v| v == "1");
    if update {
        let committed = crate_dir.join("include").join("riverlet.h");
        let new = std::fs::read(&generated).expect("generated header is readable");
        if std::fs::read(&committed).ok().as_deref() != Some(new.as_slice()) {
            std::fs::create_dir_all(crate_dir.join("include")).expect("include/ can be created");
            std::fs::write(&committed, &new).expect("include/riverlet.h can be written");
        }
    }
}
