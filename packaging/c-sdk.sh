#!/usr/bin/env bash
# The C/C++ SDK tarball: $DIST_DIR/riverlet-c-sdk-<version>-linux-x86_64.tar.gz (version from
# packaging/version.sh), one directory riverlet-c-sdk-<version>-linux-x86_64/ with
#   include/riverlet.h, include/riverlet.hpp     the C API and its header-only C++17 API
#   lib/libriverlet.so.<version>                 the shared library, SONAME below, and the
#   lib/libriverlet.so.<soversion>, libriverlet.so   symlinks to it
#   lib/libriverlet.a                            the static library
#   lib/pkgconfig/riverlet.pc                    shared (Libs.private: what the static lib needs)
#   lib/pkgconfig/riverlet-static.pc             links libriverlet.a and those libraries
#   lib/cmake/riverlet/riverletConfig.cmake      find_package(riverlet CONFIG): riverlet::riverlet
#   lib/cmake/riverlet/riverletConfigVersion.cmake   (shared), riverlet::riverlet_static
#   README.md
# Every path inside is relative to the unpacked directory (pkg-config's ${pcfiledir}, CMake's
# CMAKE_CURRENT_LIST_DIR), so the SDK works wherever it is unpacked.
#
#   bash packaging/c-sdk.sh                      (make dist runs it; DIST_DIR, default dist/)
#   SDK_PROFILE=dev bash packaging/c-sdk.sh      the library of target/debug (c-api/tests/sdk.sh)
#   SDK_NO_BUILD=1 ...                           package what target/<profile> holds, no cargo
#   SDK_GZIP_LEVEL=1 ...                         faster, larger tarball (default 6)
#   SDK_VENDORED_OPENSSL=0|1                     the feature vendored-openssl (below; default 1,
#                                                0 for the dev and test profiles)
#
# OpenSSL: paimon's HTTP client (reqwest 0.12, native-tls) links it. Built with the feature
# `vendored-openssl` (core/Cargo.toml), OpenSSL is compiled from source into libriverlet.a and
# the shared library, so neither needs the host's libssl.so.3/libcrypto.so.3 (glibc >= 2.34
# distributions only) nor -lssl -lcrypto; the script fails if the shared library names them
# anyway. The dev profile (c-api/tests/sdk.sh) packages make test's target/debug, built without
# the feature: it needs the system OpenSSL, and the link flags below then list it. The library
# is built by the host's toolchain, so it needs a glibc at least as new as the build machine's.
#
# SONAME: libriverlet.so.<major>, or libriverlet.so.0.<minor> while the major version is 0 (any
# 0.x release may change the ABI; cargo-c's rule). Cargo cannot give only the packaged copy a
# SONAME: a link argument in c-api's build would give one to target/<profile>/libriverlet.so too,
# and every program the repository links against it by path (-L target/debug -lriverlet:
# c-api/tests/run.sh, the reliability and interop C writers) would then need a
# libriverlet.so.0.<minor> that cargo does not write. So the shared library is linked here from
# cargo's libriverlet.a, with rustc's linker (rust-lld) and link options, exporting exactly the
# symbols cargo's libriverlet.so exports (checked below), plus -soname. The libraries carry no
# debug info (strip --strip-debug; symbols are kept).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
DIST_DIR="${DIST_DIR:-$ROOT/dist}"
profile="${SDK_PROFILE:-release}"
target_dir="${CARGO_TARGET_DIR:-$ROOT/target}"
cc="${CC:-cc}"
version="$(bash "$HERE/version.sh")"
[ -n "$version" ] || { echo "c-sdk: packaging/version.sh printed no version" >&2; exit 1; }

case "$profile" in
  dev | test) profile_dir=debug vendored_default=0 ;;
  bench) profile_dir=release vendored_default=1 ;;
  *) profile_dir="$profile" vendored_default=1 ;;
esac
vendored="${SDK_VENDORED_OPENSSL:-$vendored_default}"
features=()
[ "$vendored" = 1 ] && features=(--features vendored-openssl)
libdir="$target_dir/$profile_dir"

major="${version%%.*}"
rest="${version#*.}"
minor="${rest%%.*}"
if [ "$major" = 0 ]; then soversion="0.$minor"; else soversion="$major"; fi
soname="libriverlet.so.$soversion"

# The system libraries a program linking libriverlet.a needs: those of Rust's standard library,
# as rustc reports them for this toolchain (every -sys dependency of riverlet-c builds its C code
# into the archive: zstd, SQLite, ring).
native_static_libs() {
  local tmp
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-nsl.XXXXXX")"
  : > "$tmp/empty.rs"
  rustc --crate-type staticlib --crate-name empty --print native-static-libs \
    -o "$tmp/libempty.a" "$tmp/empty.rs" 2>&1 |
    sed -n 's/^note: native-static-libs: //p'
  rm -rf "$tmp"
}

if [ "${SDK_NO_BUILD:-0}" != 1 ]; then
  echo "--- c-sdk: cargo build -p riverlet-c --profile $profile ${features[*]}"
  (cd "$ROOT" && cargo build -p riverlet-c --lib --profile "$profile" "${features[@]}")
fi
for f in libriverlet.a libriverlet.so; do
  [ -f "$libdir/$f" ] || { echo "c-sdk: missing $libdir/$f (cargo build -p riverlet-c --profile $profile)" >&2; exit 1; }
done

private_libs="$(native_static_libs)"
[ -n "$private_libs" ] || { echo "c-sdk: rustc printed no native-static-libs" >&2; exit 1; }
# The system's OpenSSL, when the archive calls it without holding it (a build without
# vendored-openssl, see the top): found from the archive's symbols, so the list follows the
# build. A vendored build's archive defines SSL_new itself. (awk reads all of nm's output: with
# pipefail, an early exit would fail the pipe.)
if nm "$libdir/libriverlet.a" 2>/dev/null |
  awk '$NF == "SSL_new" { if ($(NF-1) == "U") u = 1; else if ($(NF-1) == "T") t = 1 }
       END { exit !(u && !t) }'; then
  [ "$vendored" != 1 ] ||
    { echo "c-sdk: $libdir/libriverlet.a calls the system OpenSSL, though built with vendored-openssl" >&2; exit 1; }
  private_libs="-lssl -lcrypto $private_libs"
fi

name="riverlet-c-sdk-$version-linux-x86_64"
stage="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-c-sdk.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
sdk="$stage/$name"
mkdir -p "$sdk/include" "$sdk/lib/pkgconfig" "$sdk/lib/cmake/riverlet"

install -m 644 "$ROOT/c-api/include/riverlet.h" "$ROOT/c-api/include/riverlet.hpp" "$sdk/include/"

echo "--- c-sdk: lib/libriverlet.a (from $libdir)"
strip --strip-debug -o "$sdk/lib/libriverlet.a" "$libdir/libriverlet.a"
chmod 644 "$sdk/lib/libriverlet.a"

echo "--- c-sdk: lib/libriverlet.so.$version (SONAME $soname)"
nm -D --defined-only --format=posix "$libdir/libriverlet.so" | awk '{print $1}' | sort > "$stage/exports"
[ -s "$stage/exports" ] || { echo "c-sdk: $libdir/libriverlet.so exports nothing" >&2; exit 1; }
{
  echo "{ global:"
  sed 's/$/;/' "$stage/exports"
  echo "local: *; };"
} > "$stage/exports.map"
undefined=()
while read -r sym; do undefined+=("-Wl,--undefined=$sym"); done < "$stage/exports"
linker=()
gcc_ld="$(rustc --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld"
[ -x "$gcc_ld/ld.lld" ] && linker=(-B"$gcc_ld" -fuse-ld=lld)
read -r -a private_flags <<< "$private_libs"
"$cc" -shared -o "$sdk/lib/libriverlet.so.$version" "${linker[@]}" \
  -Wl,-soname,"$soname" -Wl,--version-script="$stage/exports.map" "${undefined[@]}" \
  -Wl,--as-needed -Wl,--gc-sections -Wl,-z,relro,-z,now -Wl,-z,noexecstack \
  "$sdk/lib/libriverlet.a" "${private_flags[@]}"
chmod 755 "$sdk/lib/libriverlet.so.$version"
nm -D --defined-only --format=posix "$sdk/lib/libriverlet.so.$version" | awk '{print $1}' | sort > "$stage/exports.sdk"
if ! cmp -s "$stage/exports" "$stage/exports.sdk"; then
  diff "$stage/exports" "$stage/exports.sdk" >&2 || true
  echo "c-sdk: the SDK's libriverlet.so does not export what cargo's does" >&2
  exit 1
fi
dynamic="$(readelf -d "$sdk/lib/libriverlet.so.$version")"
[[ "$dynamic" == *"Library soname: [$soname]"* ]] || { echo "c-sdk: no SONAME $soname" >&2; exit 1; }
needed="$(printf '%s\n' "$dynamic" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "--- c-sdk: libriverlet.so.$version needs: $needed"
if [ "$vendored" = 1 ] && [[ " $needed" =~ \ lib(ssl|crypto)\. ]]; then
  echo "c-sdk: libriverlet.so.$version needs the system OpenSSL ($needed), though built with vendored-openssl" >&2
  exit 1
fi
ln -s "libriverlet.so.$version" "$sdk/lib/$soname"
ln -s "$soname" "$sdk/lib/libriverlet.so"

cat > "$sdk/lib/pkgconfig/riverlet.pc" <<PC
# Riverlet C/C++ SDK $version: the shared library. Relocatable: paths are relative to this file.
# Static linking: riverlet-static.pc (Libs.private below is what libriverlet.a needs).
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: riverlet
Description: C and C++17 API of Riverlet, an Arrow-native client and embedded server for Apache Fluss
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lriverlet
Libs.private: $private_libs
PC

cat > "$sdk/lib/pkgconfig/riverlet-static.pc" <<PC
# Riverlet C/C++ SDK $version: the static library, with the system libraries it needs.
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: riverlet-static
Description: C and C++17 API of Riverlet (static library libriverlet.a)
Version: $version
Cflags: -I\${includedir}
Libs: \${libdir}/libriverlet.a $private_libs
PC

cmake_libs="$(for l in $private_libs; do printf '%s;' "${l#-l}"; done)"
cmake_libs="${cmake_libs%;}"
cat > "$sdk/lib/cmake/riverlet/riverletConfig.cmake" <<CMAKE
# CMake package config of the Riverlet C/C++ SDK $version.
#
#   find_package(riverlet CONFIG REQUIRED)     # CMAKE_PREFIX_PATH=<the unpacked SDK>
#   target_link_libraries(app PRIVATE riverlet::riverlet)          # libriverlet.so ($soname)
#   target_link_libraries(app PRIVATE riverlet::riverlet_static)   # libriverlet.a
#
# Both targets carry the include directory of riverlet.h and riverlet.hpp (C++17).
# Paths are relative to this file, so the SDK may be unpacked anywhere.
get_filename_component(_riverlet_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
foreach(_riverlet_file "lib/libriverlet.so.$version" "lib/libriverlet.a" "include/riverlet.h")
  if(NOT EXISTS "\${_riverlet_prefix}/\${_riverlet_file}")
    set(riverlet_FOUND FALSE)
    set(riverlet_NOT_FOUND_MESSAGE "\${_riverlet_prefix}/\${_riverlet_file} is missing")
    unset(_riverlet_prefix)
    unset(_riverlet_file)
    return()
  endif()
endforeach()
unset(_riverlet_file)

if(NOT TARGET riverlet::riverlet)
  add_library(riverlet::riverlet SHARED IMPORTED)
  set_target_properties(riverlet::riverlet PROPERTIES
    IMPORTED_LOCATION "\${_riverlet_prefix}/lib/libriverlet.so.$version"
    IMPORTED_SONAME "$soname"
    INTERFACE_INCLUDE_DIRECTORIES "\${_riverlet_prefix}/include")
endif()

if(NOT TARGET riverlet::riverlet_static)
  add_library(riverlet::riverlet_static STATIC IMPORTED)
  set_target_properties(riverlet::riverlet_static PROPERTIES
    IMPORTED_LOCATION "\${_riverlet_prefix}/lib/libriverlet.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES "C"
    INTERFACE_INCLUDE_DIRECTORIES "\${_riverlet_prefix}/include"
    INTERFACE_LINK_LIBRARIES "$cmake_libs")
endif()

unset(_riverlet_prefix)
CMAKE

cat > "$sdk/lib/cmake/riverlet/riverletConfigVersion.cmake" <<CMAKE
# Version of the Riverlet C/C++ SDK: $version. A request is compatible when it asks for the same
# major version and no newer one ($soname: while the major version is 0, the same minor version
# too), and only for 64-bit builds (the library is x86_64).
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION_RANGE)
  if(PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION_MIN
     OR (PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL "INCLUDE" AND PACKAGE_VERSION VERSION_GREATER PACKAGE_FIND_VERSION_MAX)
     OR (PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL "EXCLUDE" AND PACKAGE_VERSION VERSION_GREATER_EQUAL PACKAGE_FIND_VERSION_MAX))
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  else()
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
elseif(NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL "$major")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif("$major" STREQUAL "0" AND NOT PACKAGE_FIND_VERSION_MINOR STREQUAL "$minor")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
# A project that enabled no language has no CMAKE_SIZEOF_VOID_P: nothing to compare then.
if(NOT "\${CMAKE_SIZEOF_VOID_P}" STREQUAL "" AND NOT "\${CMAKE_SIZEOF_VOID_P}" STREQUAL "8")
  set(PACKAGE_VERSION "\${PACKAGE_VERSION} (64bit)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
CMAKE

cat > "$sdk/README.md" <<README
# Riverlet C/C++ SDK $version (Linux x86_64)

Riverlet's C API (\`include/riverlet.h\`) and its header-only C++17 API (\`include/riverlet.hpp\`),
as a shared library (\`lib/libriverlet.so\`, SONAME \`$soname\`) and a static one
(\`lib/libriverlet.a\`). Unpack it anywhere; the pkg-config and CMake files find everything
relative to themselves. Documentation of the calls: the C and C++ guide of Riverlet's docs.

## pkg-config

\`\`\`sh
export PKG_CONFIG_PATH=/path/to/$name/lib/pkgconfig
cc app.c -o app \$(pkg-config --cflags --libs riverlet)                  # shared (rpath to lib/)
c++ -std=c++17 app.cpp -o app \$(pkg-config --cflags --libs riverlet)    # C++: riverlet.hpp
cc app.c -o app \$(pkg-config --cflags --libs riverlet-static)           # static libriverlet.a
\`\`\`

\`riverlet.pc\` puts an rpath to this \`lib/\` into the program; a program installed elsewhere
finds \`$soname\` through the system's library path instead (copy \`lib/libriverlet.so*\` there,
or set \`LD_LIBRARY_PATH\`). The static library needs \`$private_libs\`
(\`riverlet.pc\`'s Libs.private; \`riverlet-static.pc\` lists them in Libs).

## CMake

\`\`\`cmake
cmake_minimum_required(VERSION 3.16)
project(app C CXX)
find_package(riverlet $major.$minor CONFIG REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE riverlet::riverlet)         # or riverlet::riverlet_static
\`\`\`

\`\`\`sh
cmake -S . -B build -DCMAKE_PREFIX_PATH=/path/to/$name && cmake --build build
\`\`\`

C++ programs including \`riverlet.hpp\` need C++17 (\`set(CMAKE_CXX_STANDARD 17)\`).
README

mkdir -p "$DIST_DIR"
out="$DIST_DIR/$name.tar.gz"
echo "--- c-sdk: $out"
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner \
  -I "gzip -${SDK_GZIP_LEVEL:-6}" -cf "$out.tmp" "$name"
mv "$out.tmp" "$out"
ls -l "$out"
