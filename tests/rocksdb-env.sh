# Sourced by the scripts that build with a `kv-snapshot` feature (core's reader of KV snapshots
# as RocksDB files, riverlet-server's writer of them): installs Debian's librocksdb-dev and
# libclang-dev when missing (apt, as root: the feature then links the system RocksDB 7.8
# instead of compiling RocksDB's C++, ~15 min on 2 cores) and exports ROCKSDB_LIB_DIR.
# Exits 1 when they cannot be installed (the tests are not skipped). The caller defines say().
rocksdb_env() {
  local missing=() pkg
  for pkg in librocksdb-dev libclang-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing ${missing[*]} (apt-get)"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >&2; then
      say "ERROR: could not install ${missing[*]}; the kv-snapshot feature needs them (not skipped)"
      exit 1
    fi
  fi
  ROCKSDB_LIB_DIR="$(dirname "$(dpkg -L librocksdb-dev | grep -m1 '/librocksdb\.so$')")"
  export ROCKSDB_LIB_DIR
}
