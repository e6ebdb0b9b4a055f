#!/usr/bin/env bash
# Installs the Riverlet C library: headers (riverlet.h, and riverlet.hpp for C++17), shared and
# static library, pkg-config file and CMake package config.
#   bash c-api/install.sh /usr/local   (builds with cargo --release first)
set -euo pipefail
prefix="${1:?usage: install.sh PREFIX}"
capi="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$capi/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
(cd "$root" && cargo build --release -p riverlet-c)
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/Riverlet"
install -m 644 "$capi/include/riverlet.h" "$capi/include/riverlet.hpp" "$prefix/include/"
install -m 755 "$target_dir/release/libriverlet.so" "$prefix/lib/"
install -m 644 "$target_dir/release/libriverlet.a" "$prefix/lib/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@INCLUDEDIR@|$prefix/include|" -e "s|@LIBDIR@|$prefix/lib|" \
    -e "s|@VERSION@|$version|" "$capi/riverlet.pc.in" > "$prefix/lib/pkgconfig/riverlet.pc"
install -m 644 "$capi/cmake/RiverletConfig.cmake" "$prefix/lib/cmake/Riverlet/"
echo "installed riverlet $version into $prefix"
