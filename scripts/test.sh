#!/usr/bin/env bash
# Runs every test of weft: documentation links, formatting, lints, unit/golden/property
# tests, the key-expression check against the real Eclipse Zenoh, the Python binding's
# suite, short fuzz runs, and the C client's suite. Installs what it needs. Usage: scripts/test.sh
# Environment: WEFT_SPEC_DIR (the directory holding the specification's vectors/; default
# the repository's tests/), WEFT_FUZZ_SECONDS (default 60), WEFT_ZENOHD (a zenohd 1.10.2
# binary; default: built once, with its TCP and serial links, into WEFT_TOOLS_DIR, default
# ~/.cache/weft/tools), WEFT_ZENOHD_SERIAL (a zenohd 1.10.2 built with its serial link, for
# the serial interop tests; default: the one built here).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export WEFT_SPEC_DIR=${WEFT_SPEC_DIR:-$root/tests}
fuzz_seconds=${WEFT_FUZZ_SECONDS:-60}
# One build from scratch: incremental state would only take disk.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

step() { printf '\n==> %s\n' "$*"; }

if [ ! -d "$WEFT_SPEC_DIR/vectors" ]; then
  echo "error: the specification's vectors are not at $WEFT_SPEC_DIR/vectors (set WEFT_SPEC_DIR)" >&2
  exit 1
fi

step "the repository stands alone (no test or script reads outside it)"
# Paths above the repository's root: a directory beside it, an absolute build directory
# (spelled in pieces so that this check does not find itself), and any relative path of
# three or more levels up that, resolved from the file naming it, leaves the repository.
# Docs included: a command they show must work from a clone.
up='\.\.'
scanned=(--include='*.rs' --include='*.sh' --include='*.py' --include='*.c' --include='*.h'
  --include='CMakeLists.txt' --include='*.toml' --include='*.json5' --include='*.md'
  --include='run' crates pico python scripts tests bench fuzz .ci docs README.md ARCHITECTURE.md)
outside=$(grep -rnE "$up/shared|/wor""k/" "${scanned[@]}" 2>/dev/null | grep -v '^pico/build' || true)
while IFS=: read -r file line text; do
  [ -n "$file" ] || continue
  for rel in $(printf '%s\n' "$text" | grep -oE "($up/){3,}[A-Za-z0-9_./-]*"); do
    resolved=$(realpath -m "$(dirname "$file")/$rel")
    case "$resolved/" in
      "$root"/*) ;;
      *) outside+=$'\n'"$file:$line:$text" ;;
    esac
  done
done < <(grep -rnE "($up/){3}" "${scanned[@]}" 2>/dev/null | grep -v '^pico/build' || true)
if [ -n "${outside//[$'\n']/}" ]; then
  printf '%s\n' "$outside" | sed '/^$/d'
  echo "error: the lines above reach outside the repository" >&2
  exit 1
fi

step "links in the documentation (every relative link and #anchor resolves)"
if ! command -v python3 >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >/dev/null
fi
scripts/check-links.sh

step "Eclipse Zenoh 1.10.2 (the interop peer, from PyPI)"
venv="$root/target/venv-zenoh"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import zenoh' 2>/dev/null; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check eclipse-zenoh==1.10.2
fi
# The official MCAP reader (for the recordings `weft record` writes) and the Prometheus
# project's OpenMetrics parser (for weftd's /metrics).
if ! "$venv/bin/python" -c 'import mcap, prometheus_client' 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check mcap==1.6.0 \
    prometheus-client==0.21.1
fi
export WEFT_ZENOH_PYTHON="$venv/bin/python"
export WEFT_REQUIRE_INTEROP=1
# The "Securing weftd" walk-through of docs/security.md
# (crates/weft-cli/tests/secure_example.rs) makes its certificates with openssl.
if ! command -v openssl >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
fi
# weftd's status page is tested in a real headless browser (crates/weftd/tests/status_page.rs).
if ! command -v chromium >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
export WEFT_REQUIRE_BROWSER=1
# Serial links are tested over two pseudo-terminals that socat links
# (crates/weft/tests/serial.rs, crates/weftd/tests/serial.rs).
if ! command -v socat >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq socat >/dev/null
fi
export WEFT_REQUIRE_SOCAT=1

step "zenohd 1.10.2 (Eclipse Zenoh's router binary, from crates.io)"
# For the tests beside the real router (crates/weftd/tests: mesh, gossip, origin,
# admin_space; crates/weft/tests/serial.rs), which start it on tcp/127.0.0.1 or on a
# pseudo-terminal only: a debug build with the TCP and serial links alone is enough, and
# the cheapest to build; its debug assertions also check what zenohd receives more
# strictly than a release build does. Built once into WEFT_TOOLS_DIR (default
# ~/.cache/weft/tools); later runs find it there. WEFT_ZENOHD names another binary (and
# WEFT_ZENOHD_SERIAL one with the serial link, for the serial interop tests).
zenohd_version=1.10.2
is_zenohd() { "$1" --version 2>/dev/null | grep -qw "v$zenohd_version"; }
if [ -z "${WEFT_ZENOHD:-}" ]; then
  tools=${WEFT_TOOLS_DIR:-$HOME/.cache/weft/tools}/tcp-serial
  if ! is_zenohd "$tools/bin/zenohd"; then
    CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2} cargo install zenohd --version "$zenohd_version" \
      --locked --debug --no-default-features \
      --features zenoh/transport_tcp,zenoh/transport_serial --root "$tools"
  fi
  export WEFT_ZENOHD="$tools/bin/zenohd"
  export WEFT_ZENOHD_SERIAL="${WEFT_ZENOHD_SERIAL:-$WEFT_ZENOHD}"
fi
if ! is_zenohd "$WEFT_ZENOHD"; then
  echo "error: $WEFT_ZENOHD is not zenohd $zenohd_version" >&2
  exit 1
fi
echo "$WEFT_ZENOHD"

# Every test that needs something from outside the repository fails, rather than skips,
# when it is missing (crates/weft-testkit/src/prerequisite.rs).
export WEFT_REQUIRE_ZENOHD=1
# weftd's example configuration as shipped, on its own ports 7447 and 8000.
export WEFT_REQUIRE_DEFAULT_PORTS=1
# CI runs as root: the multicast scouting tests create their own network namespaces.
if [ "$(id -u)" = 0 ]; then
  export WEFT_REQUIRE_NETNS=1
else
  echo "note: not root: the network namespace tests will say they are skipped" >&2
fi

step "toolchain components"
rustup component add rustfmt clippy >/dev/null 2>&1 || true

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test"
cargo test --workspace

step "the robot-net scenario, short (ten sessions at 10 kHz, peer to peer and routed: no sample lost)"
# The debug builds cargo test made; its latency is measured in release by bench/robotnet.sh
# (bench/RESULTS.md, "Robot net"). The script fails on any lost sample.
ROBOTNET_BIN="$root/target/debug/examples/robotnet" WEFTD_BIN="$root/target/debug/weftd" \
  BENCH_PORT=18900 bench/robotnet.sh --both --runs 1 --seconds 1

step "the middleware comparison, smoke (bench/compare.sh: every system, one payload, robot nets, a node's failure)"
# The report generator and the results checker on a synthetic CSV, then a tiny real run with
# the debug builds cargo test made (bench/compare.sh builds the raw TCP programs, without
# Zenoh, in seconds); the full comparison is bench/compare.sh (docs/compare.md).
python3 -m unittest discover -s bench/compare -p 'test_*.py'
compare_out="$root/target/compare-smoke"
rm -rf "$compare_out"
WEFT_BIN="$root/target/debug/weft" WEFTD_BIN="$root/target/debug/weftd" BENCH_PORT=18950 \
  COMPARE_SAMPLES_SCALE=0.05 timeout -k 10 120 bench/compare.sh --quick --systems weft,tcp \
  --payloads 1024 --workloads thr,rtt,pinned,wire,failure --out "$compare_out"
python3 bench/compare/check_results.py "$compare_out/results.csv" \
  --expect weft:p2p,weft:routed,tcp:p2p --tests thr,rtt_p50,rtt_p99,wire_bytes,cpu_ns
# A node's failure: the restarted subscriber receives again, and the one kept running
# counted what it missed (numbered messages) and its longest wait.
python3 bench/compare/check_results.py "$compare_out/results.csv" \
  --expect weft:p2p,weft:routed,tcp:p2p \
  --tests fail_recovery_ms,fail_others_loss,fail_others_gap_ms
python3 bench/compare/check_results.py "$compare_out/results.csv" \
  --expect weft:p2p-pinned,weft:routed-pinned,tcp:p2p-pinned --tests rtt_p50,rtt_p99
grep -q '<svg class="plot"' "$compare_out/report.html"
# The other systems' clients (C, against Debian's libraries) and brokers, and Cyclone DDS's
# ddsperf, and weft-pico's example programs through weftd: each runs one payload's
# throughput, round trips and wire bytes (DDS's in a network namespace), and the C robot
# nets (weft-pico's and DDS's among them) run their scenario for a second; their CSV rows
# are checked.
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq || true
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq gcc \
  libzmq3-dev libhiredis-dev redis-server mosquitto libmosquitto-dev cyclonedds-tools \
  cyclonedds-dev cmake ninja-build iproute2 >/dev/null
compare_out="$root/target/compare-smoke-others"
rm -rf "$compare_out"
WEFT_BIN="$root/target/debug/weft" WEFTD_BIN="$root/target/debug/weftd" BENCH_PORT=19050 \
  COMPARE_SAMPLES_SCALE=0.05 timeout -k 10 420 bench/compare.sh --quick --no-install \
  --systems zeromq,redis,mqtt,dds,weft-pico --payloads 1024 --workloads thr,rtt,wire,robotnet \
  --out "$compare_out"
python3 bench/compare/check_results.py "$compare_out/results.csv" \
  --expect zeromq:p2p,redis:broker,mqtt:broker,mqtt:broker-qos1,dds:p2p,weft-pico:routed \
  --tests thr,rtt_p50,rtt_p99
python3 bench/compare/check_results.py "$compare_out/results.csv" \
  --expect zeromq:p2p,redis:broker,mqtt:broker,mqtt:broker-qos1,weft-pico:routed \
  --tests wire_bytes
# DDS's wire bytes are counted in a network namespace of its own: root only (as CI runs).
if [ "$(id -u)" = 0 ]; then
  python3 bench/compare/check_results.py "$compare_out/results.csv" --expect dds:p2p \
    --tests wire_bytes
else
  echo "note: not root: DDS's wire bytes are not measured (they need a network namespace)" >&2
fi
python3 bench/compare/check_results.py "$compare_out/results.csv" \
  --expect zeromq:p2p,redis:broker,weft-pico:routed,dds:p2p --tests lat_p50,lat_p99
# Eclipse Zenoh 1.10.2: bench/compare's programs with Zenoh's TCP link (which
# bench/compare.sh builds, in the debug profile, once into WEFT_TOOLS_DIR beside zenohd
# above), routed through the suite's zenohd: one payload's throughput, round trips and wire
# bytes, its robot net for a second, a node's failure (the time limit covers that build on a
# first run).
compare_out="$root/target/compare-smoke-zenoh"
rm -rf "$compare_out"
CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2} \
  COMPARE_TARGET_DIR="${WEFT_TOOLS_DIR:-$HOME/.cache/weft/tools}/compare-zenoh" \
  COMPARE_PROFILE=debug ZENOHD="$WEFT_ZENOHD" \
  WEFT_BIN="$root/target/debug/weft" WEFTD_BIN="$root/target/debug/weftd" BENCH_PORT=19150 \
  COMPARE_SAMPLES_SCALE=0.05 timeout -k 10 900 bench/compare.sh --quick --no-install \
  --systems zenoh --payloads 1024 --workloads thr,rtt,wire,robotnet,failure --out "$compare_out"
python3 bench/compare/check_results.py "$compare_out/results.csv" \
  --expect zenoh:p2p,zenoh:routed --tests thr,rtt_p50,rtt_p99,wire_bytes,lat_p50,lat_p99
python3 bench/compare/check_results.py "$compare_out/results.csv" \
  --expect zenoh:p2p,zenoh:routed --tests fail_recovery_ms,fail_others_loss,fail_others_gap_ms

step "weft-proto and weft-keyexpr build for a microcontroller (no_std, thumbv7em-none-eabihf)"
rustup target add thumbv7em-none-eabihf >/dev/null
cargo build --quiet -p weft-proto -p weft-keyexpr --target thumbv7em-none-eabihf

step "key expressions against Eclipse Zenoh 1.10.2"
"$WEFT_ZENOH_PYTHON" tests/interop/keyexpr_oracle.py

step "Python binding (weft-zenoh): one release build of the wheel, then its pytest suite"
# Built into its own venv (pip install ./python, maturin pinned), tested against the weftd
# that cargo test built, with zenoh-python (from target/venv-zenoh) at the other end.
pyvenv="$root/target/venv-weft-py"
if [ ! -x "$pyvenv/bin/python" ]; then
  python3 -m venv "$pyvenv"
fi
"$pyvenv/bin/pip" install --quiet --disable-pip-version-check maturin==1.9.4 pytest==8.3.5 mypy==1.13.0
PATH="$pyvenv/bin:$PATH" "$pyvenv/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation \
  --force-reinstall --no-deps ./python
WEFT_WEFTD="$root/target/debug/weftd" "$pyvenv/bin/python" -m pytest -q -rs python/tests

if [ -x scripts/fuzz.sh ]; then
  step "fuzzing (${fuzz_seconds} s per target)"
  scripts/fuzz.sh "$fuzz_seconds"
fi

if [ -x pico/scripts/test.sh ]; then
  step "weft-pico (C client)"
  pico/scripts/test.sh
fi

step "all tests passed"
