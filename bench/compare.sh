#!/usr/bin/env bash
# Which middleware? weft against Eclipse Zenoh 1.10.2, ZeroMQ, Redis, MQTT (mosquitto), DDS
# (Cyclone DDS) and raw TCP, on loopback, with the same workloads: throughput against payload
# (8 B ... 1 MiB), round trips (p50, p99) against payload, wire bytes per message (8 B and
# 1 KiB, counted by a TCP relay) and CPU time per message of each process. Installs what it
# needs (Debian packages pinned, cargo builds), then writes DIR/results.csv
# (system,topology,test,payload,value,unit,min,max,reps) and DIR/report.html (plots and
# tables, readable offline, with the exact settings of each system). See docs/compare.md.
#
# Usage: bench/compare.sh [--quick] [--out DIR] [--systems LIST] [--payloads LIST]
#                         [--workloads LIST] [--no-install]
#   --quick      3 payloads (8 B, 1 KiB, 64 KiB), short rounds, one round-trip run per point
#                (under 3 minutes once built); the full run has 9 payloads, 8 B to 1 MiB
#   --out DIR    where results.csv, report.html, meta.json and logs/ go (default
#                target/compare-report)
#   --systems    comma-separated among weft,weft-pico,zenoh,zeromq,redis,mqtt,dds,tcp
#                (default all)
#   --payloads   comma-separated payload sizes in bytes, in place of the mode's
#   --workloads  comma-separated among thr,rtt,pinned,wire,robotnet,failure (default all
#                but pinned, which a full run adds; CPU time comes with thr; pinned is rtt
#                with every process on one core, as topology `<topology>-pinned`; robotnet
#                is the robot-net scenario, bench/robotnet.sh's programs: weft's robotnet
#                example, bench/compare's zrobotnet for Zenoh, and bench/compare/c's
#                zmq_robotnet, redis_robotnet, mqtt_robotnet, pico_robotnet and
#                dds_robotnet)
#   --no-install use what is installed, install nothing (a system whose programs are
#                missing is left out, and the report says so)
#
# Environment (all optional):
#   COMPARE_TARGET_DIR  cargo target directory of bench/compare and zenohd (default
#                       target/compare, shared with bench/run.sh)
#   COMPARE_PROFILE     release (default) or debug: the cargo profile bench/compare's
#                       programs are built in (debug for the test suite's smoke only: its
#                       figures are not Zenoh's)
#   ZENOHD              a zenohd 1.10.2 (release) to use instead of installing one
#   WEFT_BIN, WEFTD_BIN weft and weftd binaries to use instead of building this tree's
#   ROBOTNET_BIN        the robotnet example to use (with WEFT_BIN, none is built)
#   ZROBOTNET_BIN       Zenoh's robot net to use (default bench/compare's zrobotnet)
#   BENCH_PORT          first TCP port used on 127.0.0.1 (default 17900)
#   COMPARE_SAMPLES_SCALE  scales the messages per throughput round of weft, Zenoh and raw
#                       TCP (default 1; the test suite's smoke run gives debug builds 0.05)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

log() { printf '%s\n' "$*" >&2; }
usage() {
    log "usage: bench/compare.sh [--quick] [--out DIR] [--systems LIST] [--payloads LIST] [--workloads LIST] [--no-install]"
    exit 2
}

QUICK=()
OUT=$ROOT/target/compare-report
SYSTEMS=weft,weft-pico,zenoh,zeromq,redis,mqtt,dds,tcp
PAYLOADS=()
WORKLOADS=()
INSTALL=1
COMMAND="bench/compare.sh"
COMMAND="$COMMAND $*"
while (($#)); do
    case $1 in
        --quick) QUICK=(--quick) ;;
        --out) OUT=${2:?}; shift ;;
        --systems) SYSTEMS=${2:?}; shift ;;
        --payloads) PAYLOADS=(--payloads "${2:?}"); shift ;;
        --workloads) WORKLOADS=(--workloads "${2:?}"); shift ;;
        --no-install) INSTALL=0 ;;
        *) usage ;;
    esac
    shift
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
has() { [[ ",$SYSTEMS," == *",$1,"* ]]; }

ZENOH_VERSION=1.10.2
COMPARE_TARGET_DIR=${COMPARE_TARGET_DIR:-$ROOT/target/compare}
COMPARE_PROFILE=${COMPARE_PROFILE:-release}
case $COMPARE_PROFILE in
    release | debug) ;;
    *) log "COMPARE_PROFILE must be release or debug, not '$COMPARE_PROFILE'"; exit 2 ;;
esac
ZENOHD=${ZENOHD:-$COMPARE_TARGET_DIR/zenohd-$ZENOH_VERSION/bin/zenohd}
WEFT_TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

# ---- install -----------------------------------------------------------------------------

# Debian packages, pinned to bookworm's versions (another version is taken, with a warning,
# only when the pinned one is gone from the archive).
declare -A PIN=(
    [libzmq3-dev]=4.3.4-6
    [libhiredis-dev]=0.14.1-3
    [redis-server]=5:7.0.15-1~deb12u10
    [mosquitto]=2.0.11-1.2+deb12u2
    [libmosquitto-dev]=2.0.11-1.2+deb12u2
    [cyclonedds-tools]=0.10.2-2
    [cyclonedds-dev]=0.10.2-2
    [cmake]=3.25.1-1
    [ninja-build]=1.11.1-2~deb12u1
)
apt_install() {
    local want=() p
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || want+=("$p"); done
    ((${#want[@]})) || return 0
    ((INSTALL)) || { log "not installed (and --no-install): ${want[*]}"; return 0; }
    log "== installing ${want[*]}"
    local apt=(apt-get -o DPkg::Lock::Timeout=300 install -y -qq)
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq || true
    local pinned=()
    for p in "${want[@]}"; do pinned+=("$p${PIN[$p]:+=${PIN[$p]}}"); done
    if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" "${pinned[@]}" >/dev/null; then
        log "warning: the pinned versions are not available; installing the archive's"
        DEBIAN_FRONTEND=noninteractive "${apt[@]}" "${want[@]}" >/dev/null
    fi
}
command -v gcc >/dev/null || apt_install gcc
has zeromq && apt_install libzmq3-dev
has redis && apt_install libhiredis-dev redis-server
has mqtt && apt_install mosquitto libmosquitto-dev
# iproute2: DDS's wire bytes are counted in a network namespace (`ip netns`, as root).
has dds && apt_install cyclonedds-tools cyclonedds-dev iproute2
has weft-pico && apt_install cmake ninja-build

# ---- build -------------------------------------------------------------------------------

ROBOTNET=
if has weft || has weft-pico; then
    if [[ -z "${WEFT_BIN:-}" || -z "${WEFTD_BIN:-}" ]]; then
        # One cargo invocation, so that the example and the binaries share one feature set
        # (two would rebuild the crates for each other).
        log "== building weft (weft-cli, weftd, the robotnet example; release)"
        cargo build --release -p weft-cli -p weftd -p weft --bins --example robotnet
        ROBOTNET=$WEFT_TARGET/release/examples/robotnet
    fi
fi
ROBOTNET=${ROBOTNET_BIN:-$ROBOTNET}
WEFT=${WEFT_BIN:-$WEFT_TARGET/release/weft}
WEFTD=${WEFTD_BIN:-$WEFT_TARGET/release/weftd}
PROFILE_ARGS=(--release)
[[ $COMPARE_PROFILE == debug ]] && PROFILE_ARGS=()
C=$COMPARE_TARGET_DIR/$COMPARE_PROFILE
if has zenoh; then
    log "== building bench/compare (Zenoh $ZENOH_VERSION with its TCP link, raw TCP; $COMPARE_PROFILE)"
    CARGO_TARGET_DIR=$COMPARE_TARGET_DIR cargo build "${PROFILE_ARGS[@]}" \
        --manifest-path bench/compare/Cargo.toml --no-default-features --features zenoh
    if [[ ! -x "$ZENOHD" ]] && ((INSTALL)); then
        log "== installing zenohd $ZENOH_VERSION (release) into ${ZENOHD%/bin/zenohd}"
        CARGO_TARGET_DIR=$COMPARE_TARGET_DIR cargo install zenohd --version "$ZENOH_VERSION" \
            --locked --root "${ZENOHD%/bin/zenohd}"
    fi
elif has tcp; then
    log "== building bench/compare's raw TCP programs ($COMPARE_PROFILE, without Zenoh)"
    CARGO_TARGET_DIR=$COMPARE_TARGET_DIR cargo build "${PROFILE_ARGS[@]}" --quiet \
        --manifest-path bench/compare/Cargo.toml --no-default-features
fi
CBIN=$COMPARE_TARGET_DIR/c
mkdir -p "$CBIN"
build_c() { # NAME LIBS...: bench/compare/c/NAME.c into $CBIN/NAME
    local name=$1
    shift
    if gcc -O2 -Wall -Wextra -Werror -o "$CBIN/$name" "bench/compare/c/$name.c" "$@"; then
        log "== built $CBIN/$name"
    else
        log "warning: bench/compare/c/$name.c did not build"
        rm -f "$CBIN/$name"
    fi
}
if has weft-pico; then
    log "== building weft-pico's examples (release)"
    PICO_BUILD=$COMPARE_TARGET_DIR/pico
    # A host's build: 16 KiB batches (bench/pico.sh's fastest) and a reassembly buffer for
    # 1 MiB messages (the defaults, 2 KiB and 4 KiB, are sized for microcontrollers).
    # Ten sessions of ten publishers for its robot net (one process, as the others').
    cmake -S pico -B "$PICO_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_PICO_TESTS=OFF \
        -DZ_BATCH_UNICAST_SIZE=16384 -DZ_FRAG_MAX_SIZE=1100000 -DZP_MAX_SESSIONS=10 \
        -DZP_MAX_PUBLISHERS=10 >/dev/null
    cmake --build "$PICO_BUILD" -j 1 --target z_sub_thr z_pub_thr z_ping z_pong zenohpico >/dev/null
fi
has zeromq && build_c zmq_bench -lzmq
has redis && build_c redis_bench -lhiredis
has mqtt && build_c mqtt_bench -lmosquitto
# The robot net over each (bench/compare/c/robotnet.h: the workload of weft's example).
has zeromq && build_c zmq_robotnet -lzmq -lpthread
has redis && build_c redis_robotnet -lhiredis -lpthread
has mqtt && build_c mqtt_robotnet -lmosquitto -lpthread
if has dds; then
    # The sample type of bench/compare/c/robotnet_sample.idl, compiled by Cyclone DDS's idlc.
    mkdir -p "$CBIN/dds-idl"
    if idlc -o "$CBIN/dds-idl" bench/compare/c/robotnet_sample.idl; then
        build_c dds_robotnet "-I$CBIN/dds-idl" "$CBIN/dds-idl/robotnet_sample.c" -lddsc -lpthread
    else
        log "warning: idlc did not compile bench/compare/c/robotnet_sample.idl"
        rm -f "$CBIN/dds_robotnet"
    fi
fi
has weft-pico && build_c pico_robotnet -Ipico/include "-I$PICO_BUILD/include" \
    "$PICO_BUILD/libzenohpico.a" -lpthread

# ---- run ---------------------------------------------------------------------------------

ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "-"; }
exe() { [[ -x "$1" ]] && echo "\"$1\"" || echo null; }
BINS=$OUT/bins.json
cat >"$BINS" <<EOF
{
 "weft": "$WEFT", "weftd": "$WEFTD",
 "z_sub_thr": $(has weft-pico && exe "$COMPARE_TARGET_DIR/pico/examples/z_sub_thr" || echo null),
 "pico_bin": "$COMPARE_TARGET_DIR/pico/examples",
 "robotnet": $([[ -n "$ROBOTNET" ]] && exe "$ROBOTNET" || echo null),
 "zsub_thr": $(has zenoh && exe "$C/zsub_thr" || echo null),
 "zpub_thr": $(has zenoh && exe "$C/zpub_thr" || echo null),
 "zping": $(has zenoh && exe "$C/zping" || echo null),
 "zpong": $(has zenoh && exe "$C/zpong" || echo null),
 "zrobotnet": $(has zenoh && exe "${ZROBOTNET_BIN:-$C/zrobotnet}" || echo null),
 "zenohd": $(exe "$ZENOHD"),
 "compare_bin": "$C",
 "tcp_thr": $(exe "$C/tcp_thr"), "tcp_pingpong": $(exe "$C/tcp_pingpong"),
 "c_bin": "$CBIN",
 "zmq_bench": $(exe "$CBIN/zmq_bench"),
 "redis_bench": $(exe "$CBIN/redis_bench"),
 "mqtt_bench": $(exe "$CBIN/mqtt_bench"),
 "zmq_robotnet": $(exe "$CBIN/zmq_robotnet"),
 "redis_robotnet": $(exe "$CBIN/redis_robotnet"),
 "mqtt_robotnet": $(exe "$CBIN/mqtt_robotnet"),
 "pico_robotnet": $(has weft-pico && exe "$CBIN/pico_robotnet" || echo null),
 "dds_robotnet": $(has dds && exe "$CBIN/dds_robotnet" || echo null),
 "redis-server": $(exe "$(command -v redis-server || echo /nonexistent)"),
 "mosquitto": $(exe "$(command -v mosquitto || echo /usr/sbin/mosquitto)"),
 "ddsperf": $(exe "$(command -v ddsperf || echo /nonexistent)"),
 "versions": {
  "weft": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)",
  "rustc": "$(rustc --version 2>/dev/null || echo -)",
  "zenoh": "$ZENOH_VERSION",
  "libzmq3-dev": "$(ver libzmq3-dev)", "libhiredis-dev": "$(ver libhiredis-dev)",
  "redis-server": "$(ver redis-server)", "mosquitto": "$(ver mosquitto)",
  "libmosquitto-dev": "$(ver libmosquitto-dev)", "cyclonedds-tools": "$(ver cyclonedds-tools)",
  "cyclonedds-dev": "$(ver cyclonedds-dev)",
  "cmake": "$(ver cmake)",
  "gcc": "$(gcc -dumpfullversion 2>/dev/null || echo -)"
 }
}
EOF
if has zenoh && [[ ! -x "$ZENOHD" ]]; then
    log "warning: no zenohd at $ZENOHD: Zenoh runs peer to peer only"
fi

log "== measuring (load average $(cut -d' ' -f1-3 /proc/loadavg)); logs in $OUT/logs"
# In the background, so that a TERM or INT to this script reaches the driver, which then ends
# every process it started.
python3 bench/compare/compare.py --out "$OUT" --bins "$BINS" --systems "$SYSTEMS" \
    --port "${BENCH_PORT:-17900}" --samples-scale "${COMPARE_SAMPLES_SCALE:-1}" \
    --command "$COMMAND" "${QUICK[@]}" "${PAYLOADS[@]}" "${WORKLOADS[@]}" &
DRIVER=$!
trap 'kill -TERM "$DRIVER" 2>/dev/null; wait "$DRIVER"; exit 143' TERM INT
wait "$DRIVER"
trap - TERM INT
python3 bench/compare/html_report.py --csv "$OUT/results.csv" --meta "$OUT/meta.json" \
    --out "$OUT/report.html" --markdown "$OUT/summary.md"
cat "$OUT/summary.md"
log "== $OUT/results.csv, $OUT/report.html, $OUT/summary.md"
