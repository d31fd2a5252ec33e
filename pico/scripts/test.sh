#!/bin/sh
# weft-pico: builds and runs everything its tests need, on a fresh Debian
# machine as on a developer's. Exits non-zero on any failure.
#
#   1. native build (-Wall -Wextra -Werror), ctest: unit + conformance + integration, and the
#      firmware images (Cortex-M4, RV32) under QEMU over a serial line to weftd
#   2. the same suite built with -fsanitize=address,undefined (and a ThreadSanitizer subset)
#   3. valgrind (memcheck, leaks) over the unit tests and the integration runs
#   +  a feature matrix (switches off, malloc-backed pool) built and unit-tested
#   4. libFuzzer: every decoder entry point, 20 s each, seeded from the vectors
#   5. install: an application built against the installed library (CMake, pkg-config)
#   6. footprint: Cortex-M4 cross build and memory report (and the same firmware images built
#      with upstream Zenoh-Pico when ZENOH_PICO_SRC names its checkout: footprint_upstream.sh)
#
# Environment: WEFT_SPEC_DIR (the directory holding vectors/; default: <repo>/tests), WEFT_ZENOHD_SERIAL
# (a zenohd 1.10.2 built with its serial link, for the interop_*_zenohd tests), WEFT_ZENOH_PYTHON
# (a Python with eclipse-zenoh 1.10.2; default: a venv in pico/build-venv),
# WEFT_FUZZ_SECONDS (default 20), WEFT_SKIP_VALGRIND=1 to skip step 3, ZENOH_PICO_SRC (step 6).
set -eu

PICO=$(cd "$(dirname "$0")/.." && pwd)
SPEC=${WEFT_SPEC_DIR:-$PICO/../tests}
SPEC=$(cd "$SPEC" && pwd)
FUZZ_SECONDS=${WEFT_FUZZ_SECONDS:-20}
VENV=$PICO/build-venv
JOBS=2
export WEFT_SPEC_DIR="$SPEC"

step() { printf '\n=== weft-pico: %s\n' "$*"; }

# ---- dependencies (Debian packages, the zenoh Python package) ----
need=""
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v ninja >/dev/null 2>&1 || need="$need ninja-build"
command -v cc >/dev/null 2>&1 || need="$need build-essential"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v clang >/dev/null 2>&1 || need="$need clang"
command -v valgrind >/dev/null 2>&1 || need="$need valgrind"
command -v arm-none-eabi-gcc >/dev/null 2>&1 || need="$need gcc-arm-none-eabi libnewlib-arm-none-eabi"
command -v ip >/dev/null 2>&1 || need="$need iproute2"
command -v socat >/dev/null 2>&1 || need="$need socat"
python3 -c "import venv, ensurepip" >/dev/null 2>&1 || need="$need python3-venv"
# the firmware tests under QEMU (interop_qemu_*): cross compilers, their C libraries, QEMU
fw=""
command -v riscv64-unknown-elf-gcc >/dev/null 2>&1 || fw="$fw gcc-riscv64-unknown-elf"
[ -e /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ] || fw="$fw picolibc-riscv64-unknown-elf"
command -v qemu-system-arm >/dev/null 2>&1 || fw="$fw qemu-system-arm"
command -v qemu-system-riscv32 >/dev/null 2>&1 || fw="$fw qemu-system-misc"
if [ -n "$need$fw" ]; then
    step "installing:$need$fw"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    [ -z "$need" ] || apt-get install -y -qq $need >/dev/null
    # shellcheck disable=SC2086
    [ -z "$fw" ] || apt-get install -y -qq --no-install-recommends $fw >/dev/null
fi
# reuse the project's Zenoh venv when the caller provides one (WEFT_ZENOH_PYTHON)
if [ -n "${WEFT_ZENOH_PYTHON:-}" ] && "$WEFT_ZENOH_PYTHON" -c \
    "import importlib.metadata as m, sys; sys.exit(m.version('eclipse-zenoh') != '1.10.2')" >/dev/null 2>&1; then
    PY=$WEFT_ZENOH_PYTHON
else
    if ! "$VENV/bin/python" -c "import zenoh" >/dev/null 2>&1; then
        step "installing eclipse-zenoh==1.10.2 into $VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install -q eclipse-zenoh==1.10.2
    fi
    PY=$VENV/bin/python
fi

# The integration tests need a larger reassembly buffer (64 KiB payloads) and
# a multicast receive buffer for whole datagrams from Zenoh peers.
CONFIG="-DZ_FRAG_MAX_SIZE=70000 -DZ_BATCH_MULTICAST_RX_SIZE=65535 -DWEFT_PYTHON=$PY -DWEFT_SPEC_DIR=$SPEC"
# QoS through weftd too: the repository's weftd (built here if cargo is at hand).
# The multicast test's weft peer: the repository's `weft` tool, built beside it.
WEFTD=${CARGO_TARGET_DIR:-$PICO/../target}/debug/weftd
WEFT_CLI=${CARGO_TARGET_DIR:-$PICO/../target}/debug/weft
if { [ ! -x "$WEFTD" ] || [ ! -x "$WEFT_CLI" ]; } && command -v cargo >/dev/null 2>&1; then
  (cd "$PICO/.." && cargo build --quiet -p weftd -p weft-cli) || true
fi
if [ -x "$WEFTD" ]; then
  CONFIG="$CONFIG -DWEFT_WEFTD=$WEFTD"
  [ -x "$WEFT_CLI" ] && CONFIG="$CONFIG -DWEFT_CLI=$WEFT_CLI"
elif [ -n "${WEFT_REQUIRE_INTEROP:-}" ] && [ "$WEFT_REQUIRE_INTEROP" != 0 ]; then
  echo "error: no weftd at $WEFTD for the tests through weftd, but WEFT_REQUIRE_INTEROP is set" >&2
  exit 1
else
  echo "skipped: the tests through weftd (no weftd at $WEFTD)" >&2
fi

# serial links to zenohd too, when a zenohd 1.10.2 built with its serial link is named
if [ -n "${WEFT_ZENOHD_SERIAL:-}" ] && [ -x "$WEFT_ZENOHD_SERIAL" ]; then
  CONFIG="$CONFIG -DWEFT_ZENOHD_SERIAL=$WEFT_ZENOHD_SERIAL"
else
  echo "skipped: the serial tests through zenohd (WEFT_ZENOHD_SERIAL names no zenohd built with its serial link)" >&2
fi

build() { # build DIR [cmake args...]
    dir=$1
    shift
    cmake -S "$PICO" -B "$dir" -G Ninja "$@" >/dev/null
    cmake --build "$dir" -j "$JOBS"
}

# ---- 1. native ----
step "native build and tests"
# shellcheck disable=SC2086
build "$PICO/build-native" -DCMAKE_BUILD_TYPE=RelWithDebInfo $CONFIG
(cd "$PICO/build-native" && ctest -j "$JOBS" --output-on-failure)

# ---- 2. sanitizers ----
step "AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
# shellcheck disable=SC2086
build "$PICO/build-asan" -DCMAKE_BUILD_TYPE=Debug -DWEFT_PICO_SANITIZE=ON -DWEFT_PICO_QEMU_TESTS=OFF $CONFIG
(cd "$PICO/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 ctest -j "$JOBS" --output-on-failure)

# ---- ThreadSanitizer over the multi-threaded run model ----
step "ThreadSanitizer (read and lease tasks against the application thread)"
# shellcheck disable=SC2086
build "$PICO/build-tsan" -DCMAKE_BUILD_TYPE=Debug -DWEFT_PICO_EXAMPLES=OFF -DWEFT_PICO_QEMU_TESTS=OFF -DCMAKE_C_FLAGS=-fsanitize=thread \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread $CONFIG
(cd "$PICO/build-tsan" && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure \
    -R 'interop_(get_queryable|reconnect|auto_batching|congestion)')

# ---- 3. valgrind ----
if [ "${WEFT_SKIP_VALGRIND:-0}" != 1 ]; then
    step "valgrind memcheck (errors and leaks)"
    VG="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect"
    for t in vectors_test codec_test keyexpr_test transport_test serial_test api_test session_test; do
        # shellcheck disable=SC2086
        $VG "$PICO/build-native/tests/$t" "$SPEC" >/dev/null
        echo "valgrind $t: clean"
    done
    (cd "$PICO/build-native" && WEFT_WRAPPER="$VG" ctest -j "$JOBS" --output-on-failure \
        -R 'interop_(pico_pub|zenoh_pub|get_queryable|liveliness|payload_sizes|batching|qos|congestion)')
fi

# ---- feature matrix: every switch off still builds, unit tests pass ----
step "feature matrix (switches off, malloc-backed pool, single-thread)"
m=0
for cfg in "-DZ_FEATURE_MULTI_THREAD=0 -DZP_MALLOC=1 -DZP_CODEC_ALL=0" \
           "-DZ_FEATURE_SUBSCRIPTION=0 -DZ_FEATURE_QUERY=0 -DZ_FEATURE_QUERYABLE=0 -DZ_FEATURE_LIVELINESS=0" \
           "-DZ_FEATURE_PUBLICATION=0 -DZ_FEATURE_FRAGMENTATION=0 -DZ_FEATURE_BATCHING=0 -DZ_FEATURE_MULTICAST_TRANSPORT=0 -DZ_FEATURE_LINK_UDP_UNICAST=0 -DZ_FEATURE_LINK_SERIAL=0 -DZ_FEATURE_AUTO_RECONNECT=0 -DZ_FEATURE_SCOUTING=0 -DZ_FEATURE_QOS=0"; do
    m=$((m + 1))
    # shellcheck disable=SC2086
    log=$PICO/build-matrix$m.log
    build "$PICO/build-matrix$m" -DCMAKE_BUILD_TYPE=Debug -DWEFT_PICO_EXAMPLES=OFF -DWEFT_SPEC_DIR="$SPEC" $cfg >"$log" 2>&1 &&
        (cd "$PICO/build-matrix$m" && ctest --output-on-failure -E interop) >>"$log" 2>&1 ||
        { tail -40 "$log"; echo "matrix $cfg: FAILED"; exit 1; }
    echo "matrix $cfg: built, unit tests passed"
done
# the thread-less, malloc-backed build, with the lean codec of the firmware (ZP_CODEC_ALL=0:
# only the encoders and the fields the library uses), also talks to the router
# shellcheck disable=SC2086
build "$PICO/build-matrix1" -DWEFT_PYTHON="$PY" -DZ_FRAG_MAX_SIZE=70000 >"$PICO/build-matrix1.log" 2>&1 ||
    { tail -40 "$PICO/build-matrix1.log"; echo "matrix interop build: FAILED"; exit 1; }
(cd "$PICO/build-matrix1" && ctest -j "$JOBS" --output-on-failure \
    -R 'interop_(pico_pub_zenoh_sub|zenoh_pub_pico_sub|get_queryable|payload_sizes|liveliness|qos|batching|publisher_reconnect)$')

# ---- 4. fuzzing ----
step "libFuzzer, ${FUZZ_SECONDS}s per target"
CC=clang build "$PICO/build-fuzz" -DCMAKE_BUILD_TYPE=Debug -DWEFT_PICO_FUZZ=ON -DWEFT_PICO_TESTS=OFF \
    -DWEFT_PICO_EXAMPLES=OFF -DZ_FEATURE_MULTI_THREAD=0
"$PY" "$PICO/fuzz/make_seeds.py" "$SPEC" "$PICO/build-fuzz/seeds"
for t in fuzz_batch fuzz_transport fuzz_network fuzz_serial; do
    seeds=$PICO/build-fuzz/seeds/batch
    [ "$t" = fuzz_network ] && seeds=$PICO/build-fuzz/seeds/network
    corpus=$PICO/build-fuzz/corpus/$t
    mkdir -p "$corpus"
    "$PICO/build-fuzz/fuzz/$t" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 "$corpus" "$seeds" \
        >"$PICO/build-fuzz/$t.log" 2>&1 || { tail -40 "$PICO/build-fuzz/$t.log"; echo "fuzz $t: FAILED"; exit 1; }
    echo "fuzz $t: $(grep -E '^stat::number_of_executed_units' "$PICO/build-fuzz/$t.log" | awk '{print $2}') runs, no crash"
done

# ---- 5. install ----
step "install: an application built with find_package(zenohpico) and with pkg-config"
sh "$PICO/scripts/install_check.sh"

# ---- 6. footprint ----
step "footprint"
sh "$PICO/scripts/footprint.sh"
sh "$PICO/scripts/footprint_upstream.sh" # skipped unless ZENOH_PICO_SRC names a Zenoh-Pico checkout

step "all weft-pico checks passed"
