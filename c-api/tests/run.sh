#!/usr/bin/env bash
# Builds the Riverlet C library with cargo, then compiles the C tests and the C example with
# gcc -Wall -Wextra -Werror -fsanitize=address,undefined, links them against the cdylib and runs
# them with LeakSanitizer on. The example's output is compared with examples/expected_output.txt.
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

compile "$build/test_bad_input" "$here/test_bad_input.c"
echo "--- test_bad_input"
"$build/test_bad_input" || status=1

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
