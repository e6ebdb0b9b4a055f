#!/usr/bin/env bash
# The C/C++ SDK as a user gets it: packaging/c-sdk.sh builds the tarball (SDK_PROFILE=dev, the
# library of target/debug) into one temporary directory, it is unpacked into another, and test
# programs are built against the UNPACKED SDK only and run (each starts an embedded server):
#   pkg-config riverlet (shared)         version.c, test_capi.c
#   pkg-config riverlet-static           test_parity.c
#   CMake find_package(riverlet CONFIG)  test_parity.cpp with riverlet::riverlet,
#                                        test_capi.cpp with riverlet::riverlet_static
# The programs and their helper headers are copied out of the repository first, compilers and
# pkg-config see no variable pointing elsewhere (PKG_CONFIG_LIBDIR = the SDK's lib/pkgconfig,
# CMAKE_PREFIX_PATH = the SDK), and each build is checked: no include path, library path, rpath
# or header dependency names the repository; riverlet.h comes from the SDK; a shared program
# loads the SDK's libriverlet.so.<soversion>, a static one needs no libriverlet at all.
# Built like c-api/tests/run.sh's: -Wall -Wextra -Werror -Wpedantic, ASan/UBSan, LeakSanitizer.
#
#   bash c-api/tests/sdk.sh        (SDK_NO_BUILD=1: package target/debug as it is, no cargo;
#                                   SDK_TARBALL=dist/riverlet-c-sdk-….tar.gz: test that tarball,
#                                   e.g. the release one `make dist` wrote, instead of building)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
capi="$(cd "$here/.." && pwd)"
root="$(cd "$capi/.." && pwd)"
cc="${CC:-gcc}"
cxx="${CXX:-g++}"
version="$(bash "$root/packaging/version.sh")"
name="riverlet-c-sdk-$version-linux-x86_64"
start=$SECONDS

work="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-sdk-test.XXXXXX")"
dist="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-sdk-dist.XXXXXX")"
trap 'rm -rf "$work" "$dist"' EXIT

if [ -n "${SDK_TARBALL:-}" ]; then
  [ -f "$SDK_TARBALL" ] || { echo "c-api sdk: no tarball $SDK_TARBALL" >&2; exit 1; }
  cp "$SDK_TARBALL" "$dist/$name.tar.gz"
else
  SDK_PROFILE=dev SDK_GZIP_LEVEL=1 DIST_DIR="$dist" bash "$root/packaging/c-sdk.sh"
fi
mkdir "$work/unpacked"
tar -xzf "$dist/$name.tar.gz" -C "$work/unpacked"
rm -rf "$dist"
sdk="$work/unpacked/$name"
echo "--- SDK built and unpacked into $sdk ($((SECONDS - start)) s)"
[ "$(ls "$work/unpacked")" = "$name" ] || { echo "the tarball does not unpack to one directory $name" >&2; exit 1; }

status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# The consumer's sources: the test programs and the headers they include besides the SDK's.
src="$work/src"
mkdir -p "$src"
cp "$here/test_capi.c" "$here/test_parity.c" "$here/test_capi.cpp" "$here/test_parity.cpp" \
   "$here/check.h" "$here/check.hpp" "$capi/examples/arrow_util.h" "$here/sdk/version.c" "$src/"

# Nothing but the SDK: no search path from the environment.
unset CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH OBJC_INCLUDE_PATH LIBRARY_PATH LD_LIBRARY_PATH \
      LD_RUN_PATH PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR CMAKE_PREFIX_PATH CMAKE_INCLUDE_PATH \
      CMAKE_LIBRARY_PATH RIVERLET_TEST_BOOTSTRAP riverlet_DIR Riverlet_DIR
export PKG_CONFIG_LIBDIR="$sdk/lib/pkgconfig"

# No text file of the SDK names the repository or the directory the tarball was made in.
if grep -rlF -e "$root" -e "/riverlet-c-sdk." "$sdk/include" "$sdk/lib/pkgconfig" \
     "$sdk/lib/cmake" "$sdk/README.md"; then
  fail "the SDK's text files above name the repository or the staging directory"
fi
[ -L "$sdk/lib/libriverlet.so" ] && [ -f "$sdk/lib/libriverlet.a" ] ||
  fail "lib/libriverlet.so (symlink) or lib/libriverlet.a missing"
soname="$(readelf -d "$sdk/lib/libriverlet.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
case "$soname" in
  libriverlet.so.[0-9]*) echo "--- SONAME $soname" ;;
  *) fail "lib/libriverlet.so has no versioned SONAME (got '$soname')" ;;
esac
[ -f "$sdk/lib/$soname" ] || fail "lib/$soname (the SONAME) is not in lib/"
lib_real="$(realpath "$sdk/lib/libriverlet.so")"

# $1: what; $2...: files. None may name the repository.
no_repo() {
  local what=$1; shift
  if grep -F -- "$root" "$@" >/dev/null 2>&1; then
    grep -hF -- "$root" "$@" | head -5 >&2
    fail "$what names the repository $root"
  fi
}
# $1: header dependency file of a compile: riverlet.h from the SDK, nothing from the repository.
check_deps() {
  no_repo "header dependencies ($1)" "$1"
  local h headers
  headers="$(tr ' \\' '\n\n' < "$1" | grep '/riverlet\.h$' | sort -u || true)"
  [ -n "$headers" ] || fail "$1: no riverlet.h among the header dependencies"
  for h in $headers; do
    [ "$(realpath "$h")" = "$(realpath "$sdk/include/riverlet.h")" ] ||
      fail "$1: riverlet.h came from '$h', not from the SDK"
  done
}
# $1: program linked with the shared library: it loads the SDK's, through its SONAME.
check_shared() {
  readelf -d "$1" > "$1.dynamic"
  grep -q "Shared library: \[$soname\]" "$1.dynamic" || fail "$(basename "$1") does not need $soname"
  no_repo "the RUNPATH of $(basename "$1")" "$1.dynamic"
  local loaded
  loaded="$(ldd "$1" | sed -n "s/^[[:space:]]*$soname => \(.*\) (0x.*/\1/p")"
  [ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$lib_real" ] ||
    fail "$(basename "$1") loads '$loaded', not the SDK's $soname"
}
# $1: program linked with the static library: no libriverlet at run time.
check_static() {
  readelf -d "$1" > "$1.dynamic"
  if grep -q 'Shared library: \[libriverlet' "$1.dynamic"; then
    fail "$(basename "$1") (static) needs a shared libriverlet"
  fi
  nm --defined-only "$1" > "$1.symbols"
  grep -q ' T riverlet_connect$' "$1.symbols" ||
    fail "$(basename "$1") does not contain riverlet_connect (from libriverlet.a)"
}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export TZ=UTC
run() { # program: runs it, its last line is "N passed, N failed"
  local t0=$SECONDS
  echo "--- run $(basename "$1")"
  "$1" > "$1.out" 2>&1 || { tail -40 "$1.out"; fail "$(basename "$1") exited non-zero"; return; }
  echo "$(tail -1 "$1.out") ($((SECONDS - t0)) s)"
}

san=(-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined)
warn=(-Wall -Wextra -Werror -Wpedantic)
bin="$work/bin"
mkdir -p "$bin"

# $1: pkg-config module; $2: compiler; $3: source; $4: output; rest: language flags.
build_pc() {
  local module=$1 compiler=$2 source=$3 out=$4; shift 4
  local flags
  read -r -a flags <<< "$(pkg-config --cflags --libs "$module")"
  printf '%s\n' "${flags[@]}" > "$out.flags"
  no_repo "pkg-config --cflags --libs $module" "$out.flags"
  echo "--- $compiler $(basename "$source") \$(pkg-config --cflags --libs $module) -> $(basename "$out")"
  local t0=$SECONDS
  "$compiler" "$@" "${warn[@]}" "${san[@]}" -MD -MF "$out.d" "$source" -o "$out" "${flags[@]}" ||
    { fail "building $(basename "$out")"; return 1; }
  echo "    built in $((SECONDS - t0)) s"
  check_deps "$out.d"
}

echo "--- pkg-config riverlet: $(pkg-config --modversion riverlet), static: $(pkg-config --static --libs riverlet)"
[ "$(pkg-config --modversion riverlet)" = "$version" ] || fail "riverlet.pc's version is not $version"

# pkg-config, shared library.
if build_pc riverlet "$cc" "$src/version.c" "$bin/version" -std=c11; then
  check_shared "$bin/version"
  got="$("$bin/version")" || true
  [ "$got" = "$version" ] || fail "the SDK's library says version '$got', packaging/version.sh $version"
fi
if build_pc riverlet "$cc" "$src/test_capi.c" "$bin/test_capi" -std=c11; then
  check_shared "$bin/test_capi"
  run "$bin/test_capi"
fi

# pkg-config, static library.
if build_pc riverlet-static "$cc" "$src/test_parity.c" "$bin/test_parity_static" -std=c11; then
  check_static "$bin/test_parity_static"
  run "$bin/test_parity_static"
fi

# CMake: find_package(riverlet CONFIG REQUIRED) with CMAKE_PREFIX_PATH = the SDK.
cmake_build="$work/cmake"
t0=$SECONDS
echo "--- cmake find_package(riverlet $version EXACT CONFIG) -> test_parity_shared, test_capi_static"
if cmake -S "$here/sdk" -B "$cmake_build" -DCMAKE_PREFIX_PATH="$sdk" \
     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
     -DCMAKE_CXX_COMPILER="$(command -v "$cxx")" -DCMAKE_BUILD_TYPE= \
     -DCMAKE_CXX_FLAGS="${warn[*]} ${san[*]}" \
     -DRIVERLET_TEST_SOURCES="$src" -DRIVERLET_SDK_VERSION="$version" \
     -DRIVERLET_SHARED_PROGRAMS=test_parity -DRIVERLET_STATIC_PROGRAMS=test_capi \
     > "$work/cmake-configure.log" 2>&1 &&
   cmake --build "$cmake_build" -j 1 > "$work/cmake-build.log" 2>&1; then
  echo "    configured and built in $((SECONDS - t0)) s"
  found="$(sed -n 's/^riverlet_DIR:[A-Z]*=//p' "$cmake_build/CMakeCache.txt")"
  [ "$(realpath "$found")" = "$(realpath "$sdk/lib/cmake/riverlet")" ] ||
    fail "find_package(riverlet) used $found, not the SDK's lib/cmake/riverlet"
  no_repo "CMake's compile commands" "$cmake_build/compile_commands.json"
  no_repo "CMake's link commands" "$cmake_build"/CMakeFiles/*.dir/link.txt
  grep -q -- "-isystem $sdk/include" "$cmake_build/compile_commands.json" ||
    fail "CMake's compile commands do not include the SDK's include/"
  check_shared "$cmake_build/test_parity_shared"
  run "$cmake_build/test_parity_shared"
  check_static "$cmake_build/test_capi_static"
  run "$cmake_build/test_capi_static"
else
  cat "$work/cmake-configure.log" "$work/cmake-build.log" 2>/dev/null | tail -60
  fail "the CMake build against find_package(riverlet CONFIG) failed"
fi

if [ $status = 0 ]; then
  echo "c-api sdk: passed ($((SECONDS - start)) s)"
else
  echo "c-api sdk: FAILED ($((SECONDS - start)) s)" >&2
fi
exit $status
