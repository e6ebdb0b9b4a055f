#!/usr/bin/env bash
# Builds the Riverlet C library with cargo, then compiles the C tests and the C example with
# gcc -Wall -Wextra -Werror -fsanitize=address,undefined, links them against the cdylib and runs
# them with LeakSanitizer on. The example's output is compared with examples/expected_output.txt.
# The C++ tests (tests/*.cpp, over include/riverlet.hpp) run the same scenarios, built with
# g++ -std=c++17 and the same sanitizers; test_parity.cpp is built again through CMake's
# find_package(Riverlet) when cmake is installed.
#
#   bash c-api/tests/run.sh            (from anywhere; CARGO_TARGET_DIR is honoured)
#   RIVERLET_C_PROFILE=release bash c-api/tests/run.sh
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
capi="$(cd "$here/.." && pwd)"
root="$(cd "$capi/.." && pwd)"
profile="${RIVERLET_C_PROFILE:-debug}"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
cc="${CC:-gcc}"

cargo_flags=(-p riverlet-c)
[ "$profile" = release ] && cargo_flags+=(--release)
echo "--- cargo build ${cargo_flags[*]}"
(cd "$root" && cargo build "${cargo_flags[@]}")

libdir="$target_dir/$profile"
[ -f "$libdir/libriverlet.so" ] || { echo "missing $libdir/libriverlet.so" >&2; exit 1; }

build="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-c-tests.XXXXXX")"
trap 'rm -rf "$build"' EXIT

cflags=(-std=c11 -g -O1 -Wall -Wextra -Werror -Wpedantic -fno-omit-frame-pointer
        -fsanitize=address,undefined -fno-sanitize-recover=undefined
        -I"$capi/include" -I"$capi/examples")
ldflags=(-L"$libdir" -lriverlet -Wl,-rpath,"$libdir" -ldl -lpthread -lm)

compile() { # out src...
  local out=$1; shift
  echo "--- $cc $* -> $(basename "$out")"
  "$cc" "${cflags[@]}" "$@" -o "$out" "${ldflags[@]}"
}

# The header must compile in a program that defines the Arrow structs itself, and in C++.
compile "$build/header_guard" "$here/header_guard.c"
if command -v g++ >/dev/null; then
  echo "--- g++ header check"
  echo '#include "riverlet.h"
int main() { return riverlet_version() == nullptr; }' > "$build/cpp.cpp"
  g++ -std=c++17 -Wall -Wextra -Werror -I"$capi/include" "$build/cpp.cpp" -o "$build/cpp" "${ldflags[@]}"
  "$build/cpp"
fi

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export TZ=UTC

status=0
"$build/header_guard" || status=1

compile "$build/test_capi" "$here/test_capi.c"
echo "--- test_capi"
"$build/test_capi" || status=1

compile "$build/test_parity" "$here/test_parity.c"
echo "--- test_parity"
"$build/test_parity" || status=1

# Routing through riverlet_table_bucket_leaders, against an embedded server here (run-interop.sh
# runs the same program against three Apache Fluss tablet servers, RIVERLET_TEST_BOOTSTRAP set).
compile "$build/test_routing" "$here/test_routing.c"
echo "--- test_routing"
env -u RIVERLET_TEST_BOOTSTRAP "$build/test_routing" || status=1

compile "$build/test_acl" "$here/test_acl.c"
echo "--- test_acl"
"$build/test_acl" || status=1

compile "$build/test_bad_input" "$here/test_bad_input.c"
echo "--- test_bad_input"
"$build/test_bad_input" || status=1

# The C++ API (include/riverlet.hpp): the same scenarios through C++ classes, with g++ -std=c++17
# and the same sanitizers.
cxx="${CXX:-g++}"
if command -v "$cxx" >/dev/null; then
  cxxflags=(-std=c++17 "${cflags[@]:1}" -I"$here")
  for t in test_capi test_parity test_bad_input test_acl; do
    echo "--- $cxx $t.cpp -> ${t}_cpp"
    "$cxx" "${cxxflags[@]}" "$here/$t.cpp" -o "$build/${t}_cpp" "${ldflags[@]}"
    echo "--- ${t}_cpp"
    "$build/${t}_cpp" || status=1
  done
  # A C++ program built the way a CMake user builds it: find_package(Riverlet) and
  # Riverlet::riverlet (the config in c-api/cmake, pointed at this build's library).
  if command -v cmake >/dev/null; then
    consumer="$build/cmake-consumer"
    mkdir -p "$consumer"
    cat > "$consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(riverlet_cpp_consumer CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(Riverlet REQUIRED)
add_executable(test_parity_cmake "$here/test_parity.cpp")
target_include_directories(test_parity_cmake PRIVATE "$here" "$capi/examples")
target_link_libraries(test_parity_cmake PRIVATE Riverlet::riverlet)
CMAKE
    echo "--- cmake find_package(Riverlet) -> test_parity_cmake"
    if cmake -S "$consumer" -B "$consumer/build" -DRiverlet_DIR="$capi/cmake" \
        -DRIVERLET_LIBRARY_DIR="$libdir" -DCMAKE_CXX_COMPILER="$(command -v "$cxx")" \
        -DCMAKE_CXX_FLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" \
        > "$consumer/configure.log" 2>&1 &&
       cmake --build "$consumer/build" > "$consumer/build.log" 2>&1; then
      echo "--- test_parity_cmake"
      "$consumer/build/test_parity_cmake" || status=1
    else
      cat "$consumer/configure.log" "$consumer/build.log" 2>/dev/null
      echo "the CMake build against find_package(Riverlet) failed" >&2
      status=1
    fi
  else
    echo "--- cmake not found: the find_package(Riverlet) build is skipped"
  fi
else
  echo "c++ compiler '$cxx' not found: the C++ API tests cannot run" >&2
  status=1
fi

if [ -f "$capi/examples/example.c" ]; then
  # The example is built the way a user builds it: through the pkg-config file.
  version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
  mkdir -p "$build/pkgconfig"
  sed -e "s|@PREFIX@|$capi|" -e "s|@INCLUDEDIR@|$capi/include|" -e "s|@LIBDIR@|$libdir|" \
      -e "s|@VERSION@|$version|" "$capi/riverlet.pc.in" > "$build/pkgconfig/riverlet.pc"
  read -r -a pc_flags <<< "$(PKG_CONFIG_PATH="$build/pkgconfig" pkg-config --cflags --libs riverlet)"
  echo "--- $cc example.c \$(pkg-config --cflags --libs riverlet) -> example"
  "$cc" "${cflags[@]}" "$capi/examples/example.c" -o "$build/example" "${pc_flags[@]}"
  echo "--- example (compared with examples/expected_output.txt)"
  if "$build/example" > "$build/example.out"; then
    if diff -u "$capi/examples/expected_output.txt" "$build/example.out"; then
      echo "example output matches"
    else
      echo "example output differs from examples/expected_output.txt" >&2
      status=1
    fi
  else
    cat "$build/example.out"
    echo "example failed" >&2
    status=1
  fi
fi
exit $status
