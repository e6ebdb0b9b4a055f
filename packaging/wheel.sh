#!/usr/bin/env bash
# The Python package of `make dist` (packaging/dist.sh calls it; it also runs alone):
#   bash packaging/wheel.sh
# writes into $DIST_DIR (default <repo>/dist)
#   riverlet-VERSION-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#       one wheel for CPython >= 3.9 (abi3) on any x86_64 Linux with glibc >= 2.17, built by
#       maturin with zig as C compiler and linker (`--zig --compatibility manylinux2014`), so
#       the host's newer glibc never leaks into it; `auditwheel show` must find it
#       manylinux2014 (manylinux_2_17) compatible, or the script fails;
#   riverlet-VERSION.tar.gz
#       the sdist (`maturin sdist`): `pip install` builds it where a Rust toolchain is
#       (tests/dist/wheel.sh with WHEEL_SDIST_BUILD=1 proves it does).
# VERSION is packaging/version.sh's (Cargo.toml's workspace version); the script fails if the
# wheel's or the sdist's metadata says another.
#
# The tools (maturin, ziglang, auditwheel) are pinned in packaging/requirements-dist.txt and
# installed into their own virtualenv, $DIST_VENV (default <repo>/.venv-dist).
# zig compiles with another C compiler and linker than the test build, so cargo builds in its
# own target directory, $WHEEL_TARGET_DIR (default target/wheel), and target/debug, which
# `make test` reuses, is left alone.
# WHEEL_PROFILE: the cargo profile (default release; tests/dist/wheel.sh uses dev).
# The extension is built with the feature `vendored-openssl` (core/Cargo.toml): paimon's HTTP
# client links OpenSSL (native-tls), and the system's is libssl.so.3, which needs glibc >= 2.34
# and so cannot go into a manylinux2014 wheel; OpenSSL compiled by zig for glibc 2.17 and linked
# in statically can. target/wheel is this script's alone, so the feature costs the test build
# nothing. The script fails if the wheel still carries or needs a libssl or libcrypto.
# WHEEL_SDIST=0: the wheel only; WHEEL_SDIST_ONLY=1: the sdist only.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
DIST_DIR="${DIST_DIR:-$ROOT/dist}"
PROFILE="${WHEEL_PROFILE:-release}"
VENV="${DIST_VENV:-$ROOT/.venv-dist}"
TARGET_DIR="${WHEEL_TARGET_DIR:-$ROOT/target/wheel}"
VERSION="$(bash "$HERE/version.sh")"

fail() {
  echo "packaging/wheel.sh: $*" >&2
  exit 1
}

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$HERE/requirements-dist.txt"
# maturin and auditwheel from the venv; cargo-zigbuild (inside maturin) runs `python3 -m
# ziglang` when no `zig` is on PATH, and the venv's python3 has ziglang.
export PATH="$VENV/bin:$PATH"

OUT="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-wheel.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT
shopt -s nullglob
mkdir -p "$DIST_DIR"

# The Version of a wheel (its *.dist-info/METADATA) or an sdist (its top PKG-INFO).
artifact_version() {
  python3 - "$1" <<'PY'
import email.parser, sys, tarfile, zipfile
path = sys.argv[1]
if path.endswith(".whl"):
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        text = z.read(names[0]).decode() if len(names) == 1 else ""
else:
    with tarfile.open(path) as t:
        members = [m for m in t.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")]
        text = t.extractfile(members[0]).read().decode() if len(members) == 1 else ""
print(email.parser.HeaderParser().parsestr(text).get("Version", ""))
PY
}

build_wheel() {
  echo "wheel: maturin --zig --compatibility manylinux2014, profile $PROFILE, target dir $TARGET_DIR"
  t0=$SECONDS
  CARGO_TARGET_DIR="$TARGET_DIR" maturin build -m "$ROOT/python/Cargo.toml" \
    --profile "$PROFILE" --zig --compatibility manylinux2014 --target x86_64-unknown-linux-gnu \
    --features vendored-openssl --strip --out "$OUT/wheel"
  echo "wheel: built in $((SECONDS - t0)) s"

  wheels=("$OUT"/wheel/*.whl)
  [ "${#wheels[@]}" -eq 1 ] || fail "expected one wheel from maturin, got: ${wheels[*]:-none}"
  whl="${wheels[0]}"
  name="$(basename "$whl")"

  case "$name" in
    riverlet-"$VERSION"-cp39-abi3-*manylinux_2_17_x86_64*.whl) ;;
    *) fail "wheel $name is not riverlet $VERSION, cp39-abi3, manylinux_2_17_x86_64" ;;
  esac
  meta_version="$(artifact_version "$whl")"
  [ "$meta_version" = "$VERSION" ] ||
    fail "wheel $name says version '$meta_version', packaging/version.sh says '$VERSION'"

  # auditwheel names the most widely compatible policy whose symbol versions and libraries the
  # wheel's ELF files satisfy; anything newer than manylinux_2_17 (glibc 2.17) fails.
  audit="$(auditwheel show "$whl")" || fail "auditwheel show failed on $name: $audit"
  echo "$audit"
  tag="$(printf '%s\n' "$audit" | tr '\n' ' ' | tr -s ' ' |
    sed -n 's/.*is consistent with the following platform tag: *"\([^"]*\)".*/\1/p')"
  case "$tag" in
    manylinux1_x86_64) glibc_minor=5 ;;
    manylinux2010_x86_64) glibc_minor=12 ;;
    manylinux2014_x86_64) glibc_minor=17 ;;
    manylinux_2_*_x86_64)
      glibc_minor="${tag#manylinux_2_}"
      glibc_minor="${glibc_minor%_x86_64}"
      ;;
    *) fail "auditwheel show gives no manylinux tag for $name (got '${tag:-nothing}')" ;;
  esac
  [[ "$glibc_minor" =~ ^[0-9]+$ ]] && [ "$glibc_minor" -le 17 ] ||
    fail "auditwheel: $name is $tag, not manylinux2014 (manylinux_2_17) compatible"
  echo "wheel: auditwheel: $tag (manylinux2014 compatible), $(du -h "$whl" | cut -f1)"
  # OpenSSL is linked in (vendored-openssl): neither a copied-in library (riverlet.libs/) nor a
  # NEEDED entry of the extension may name libssl or libcrypto.
  # (python3 is the venv's: pyelftools comes with auditwheel.)
  openssl="$(python3 - "$whl" <<'PY'
import io, re, sys, zipfile
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
ssl = re.compile(r"lib(ssl|crypto)\b")
found = []
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if ssl.search(name.rsplit("/", 1)[-1]):
            found.append(f"{name} is in the wheel")
        data = z.read(name)
        if not data.startswith(b"\x7fELF"):
            continue
        for section in ELFFile(io.BytesIO(data)).iter_sections():
            if isinstance(section, DynamicSection):
                found += [f"{name} needs {t.needed}" for t in section.iter_tags("DT_NEEDED")
                          if ssl.search(t.needed)]
print("; ".join(found))
PY
)"
  [ -z "$openssl" ] || fail "wheel $name links a system OpenSSL, not the vendored one: $openssl"

  cp "$whl" "$DIST_DIR/"
  echo "wheel: $DIST_DIR/$name"
}

build_sdist() {
  maturin sdist -m "$ROOT/python/Cargo.toml" --out "$OUT/sdist"
  sdists=("$OUT"/sdist/*.tar.gz)
  [ "${#sdists[@]}" -eq 1 ] || fail "expected one sdist from maturin, got: ${sdists[*]:-none}"
  sdist="${sdists[0]}"
  [ "$(basename "$sdist")" = "riverlet-$VERSION.tar.gz" ] ||
    fail "sdist $(basename "$sdist") is not riverlet-$VERSION.tar.gz"
  sdist_version="$(artifact_version "$sdist")"
  [ "$sdist_version" = "$VERSION" ] ||
    fail "sdist says version '$sdist_version', packaging/version.sh says '$VERSION'"
  # A compiled module left in the source tree by `maturin develop` must not ship as source.
  if tar -tzf "$sdist" | grep -E '\.(so|pyd|dylib)$'; then
    fail "sdist $(basename "$sdist") holds the compiled files above"
  fi
  cp "$sdist" "$DIST_DIR/"
  echo "wheel: $DIST_DIR/$(basename "$sdist")"
}

if [ "${WHEEL_SDIST_ONLY:-0}" != 1 ]; then
  build_wheel
fi
if [ "${WHEEL_SDIST:-1}" != 0 ]; then
  build_sdist
fi
