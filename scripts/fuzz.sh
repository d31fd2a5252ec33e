#!/usr/bin/env bash
# Fuzzes the weft-proto decoders and the handshake with cargo fuzz (libFuzzer), seeded from the captured
# vectors. Installs what it needs (rust nightly, cargo-fuzz). Exits non-zero if any
# target crashes; the crashing inputs are left in fuzz/artifacts/<target>/.
#
# Usage: scripts/fuzz.sh [SECONDS]        SECONDS per target (default 60)
# Environment:
#   WEFT_SPEC_DIR       the directory holding vectors/ (default: the repository's tests/)
#   WEFT_FUZZ_TARGETS   targets to run (default: all of them)
#   WEFT_FUZZ_ARGS      extra libFuzzer arguments (e.g. "-fork=2")
#   CARGO_TARGET_DIR    build directory root (default target/); fuzz builds go to its
#                       fuzz/ and fuzz-seedgen/ subdirectories
set -euo pipefail

seconds=${1:-60}
case "$seconds" in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
spec=${WEFT_SPEC_DIR:-$root/tests}
targets=${WEFT_FUZZ_TARGETS:-transport_batch network_message scouting stream_framing handshake serial_framing tls_records}
build_root=${CARGO_TARGET_DIR:-$root/target}
fuzz_dir="$root/fuzz"

say() { printf '==> %s\n' "$*"; }

if [ ! -d "$spec/vectors" ]; then
  echo "error: no vectors at $spec/vectors (set WEFT_SPEC_DIR)" >&2
  exit 1
fi

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  say "installing rust nightly"
  rustup toolchain install nightly --profile minimal
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  say "installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

say "building the fuzz targets"
# weft-proto forbids unsafe code: AddressSanitizer would only slow the runs down. Debug
# assertions and overflow checks stay on (cargo fuzz's default).
export CARGO_TARGET_DIR="$build_root/fuzz"
(cd "$fuzz_dir" && cargo +nightly fuzz build --sanitizer none)

say "generating the seed corpora from $spec/vectors"
corpus="$fuzz_dir/corpus"
seeds="$corpus/_seeds.$$"
rm -rf "$seeds"
trap 'rm -rf "$seeds"' EXIT
CARGO_TARGET_DIR="$build_root/fuzz-seedgen" \
  cargo run --quiet --release --manifest-path "$fuzz_dir/seedgen/Cargo.toml" -- \
  "$spec/vectors" "$seeds"

failed=()
for t in $targets; do
  # A target without seeds of its own (tls_records builds its records from its input)
  # starts from an empty seed directory.
  mkdir -p "$corpus/$t" "$fuzz_dir/artifacts/$t" "$seeds/$t"
  say "fuzzing $t for ${seconds}s"
  log="$fuzz_dir/artifacts/$t/last-run.log"
  # The corpus directory keeps what earlier runs found; the seeds are read, not written.
  set +e
  (cd "$fuzz_dir" && cargo +nightly fuzz run --sanitizer none "$t" "$corpus/$t" "$seeds/$t" -- \
    -max_total_time="$seconds" -max_len=65600 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 ${WEFT_FUZZ_ARGS:-}) >"$log" 2>&1
  rc=$?
  set -e
  grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' "$log" || true
  if [ "$rc" -ne 0 ]; then
    echo "error: $t failed (exit $rc); log: $log" >&2
    grep -E 'panicked at|SUMMARY|Test unit written to' "$log" >&2 || tail -20 "$log" >&2
    failed+=("$t")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "error: crashes in: ${failed[*]}" >&2
  echo "reproduce with: (cd fuzz && cargo +nightly fuzz run --sanitizer none TARGET artifacts/TARGET/crash-...)" >&2
  exit 1
fi
say "no crash in: $targets"
