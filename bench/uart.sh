#!/usr/bin/env bash
# Speed over a UART: a weft-pico client (pico/examples) and, when ZENOH_PICO_EXAMPLES names
# them, upstream Zenoh-Pico's POSIX examples built with its serial link, each on the same
# emulated serial line to weftd's serial listener, at 115,200 and 921,600 baud.
#
# The line is weft-testkit's `uart_line`: two pseudo-terminals whose bytes cross at most
# baud / 10 bytes per second each way (8N1), as a UART carries them, counting the bytes it
# delivers. (A pseudo-terminal alone has no rate: its baud setting is ignored.)
#
#   throughput: the publisher (`z_pub_thr -s SIZE`, key test/thr) puts for BENCH_UART_SECONDS
#     on the line; a weft client of weftd on TCP (`count_sub`) counts the samples and their
#     payload bytes, first to last. Printed: samples/s, payload bytes/s, the share of the
#     line's byte budget (baud / 10) the payload used, and the wire bytes per sample: the
#     line's bytes from the publisher (counted by the line, its session's opening and
#     declarations included, a few hundred bytes in all) over the samples received; and the
#     same over the second half of the run only (the line's bytes and the samples between
#     the same two instants, both programs dating their counts every 100 ms): the steady
#     state, without the start, where a publisher's first puts may carry its full key until
#     the router confirms a declared id, and a pseudo-terminal (unlike a UART's small
#     buffer) takes ~50 KB of them before the line has carried the confirmation's question.
#   round trip: `z_ping -s 8` on the line against a `weft pong` client of weftd on TCP
#     (weftd between them, so the line is crossed once each way): p50 and p99 of the round
#     trips each program printed, after its warm-up (weft-pico: 50 round trips; Zenoh-Pico:
#     1 s of them).
#
# weft-pico's publisher uses congestion control block and its automatic batching
# (weft-pico), or batches by hand, flushing every 100 puts (weft-pico-batch, `-b 100`), or
# puts with congestion control drop as Zenoh-Pico's does (weft-pico-drop, `-d 1`: block
# costs each put a QoS extension, 2 bytes), or both, as Zenoh-Pico's z_pub_thr does:
# congestion control drop, batched by hand and sent when a batch is full
# (weft-pico-full, `-d 1 -b 1000000000`);
# Zenoh-Pico's z_pub_thr batches by hand (zp_batch_start, flushing when a batch is full)
# with congestion control drop, as it is shipped, and runs until it is stopped. Zenoh-Pico's serial endpoints say 115200 baud at
# both rates (its POSIX serial link knows no 921600; the line's own rate is what counts).
#
# Usage: bench/uart.sh            prints a Markdown table
# Environment (all optional):
#   ZENOH_PICO_EXAMPLES  directory of Zenoh-Pico's POSIX examples (z_pub_thr, z_ping), built
#                        with its serial link; without it only weft-pico is measured
#   BENCH_UART_SECONDS   seconds each publisher runs (default 10)
#   BENCH_UART_PINGS     round trips per latency run (default 200)
#   BENCH_UART_BAUDS     line rates (default "115200 921600")
#   BENCH_UART_SIZES     payload sizes (default "8 64 1024")
#   BENCH_UART_SYSTEMS   clients (default "weft-pico weft-pico-batch weft-pico-drop", and zenoh-pico with
#                        ZENOH_PICO_EXAMPLES)
#   BENCH_NO_BUILD=1     use the binaries already built
#   BENCH_UART_KEEP=1    keep the work directory (the programs' outputs) for a look after
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
SECONDS_PER_RUN=${BENCH_UART_SECONDS:-10}
PINGS=${BENCH_UART_PINGS:-200}
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
PICO_BUILD=$ROOT/pico/build-bench
read -r -a BAUDS <<<"${BENCH_UART_BAUDS:-115200 921600}"
read -r -a SIZES <<<"${BENCH_UART_SIZES:-8 64 1024}"

if [[ "${BENCH_NO_BUILD:-0}" != 1 ]]; then
    log "== building weftd, weft, uart_line, count_sub (release) and the weft-pico examples"
    cargo build --release -q -p weftd -p weft-cli -p weft-testkit --bin weftd --bin weft \
        --bin uart_line --bin count_sub
    cmake -S pico -B "$PICO_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_PICO_TESTS=OFF >/dev/null
    cmake --build "$PICO_BUILD" -j 2 >/dev/null
fi
PX=$PICO_BUILD/examples
for b in "$BIN/weftd" "$BIN/weft" "$BIN/uart_line" "$BIN/count_sub" "$PX/z_pub_thr" "$PX/z_ping"; do
    [[ -x "$b" ]] || { log "missing $b"; exit 1; }
done
SYSTEMS=(weft-pico weft-pico-batch weft-pico-drop)
ZPX=${ZENOH_PICO_EXAMPLES:-}
if [[ -n "$ZPX" ]]; then
    for b in "$ZPX/z_pub_thr" "$ZPX/z_ping"; do
        [[ -x "$b" ]] || { log "missing $b (ZENOH_PICO_EXAMPLES)"; exit 1; }
    done
    SYSTEMS+=(zenoh-pico)
else
    log "ZENOH_PICO_EXAMPLES not set: Zenoh-Pico is not measured"
fi

# short paths without a dot: weft-pico keeps a serial device name in ZP_SERIAL_DEV_CAPACITY
# bytes, and Zenoh-Pico refuses a dot in it
[[ -n "${BENCH_UART_SYSTEMS:-}" ]] && read -r -a SYSTEMS <<<"$BENCH_UART_SYSTEMS"
WORK=$(mktemp -d /tmp/wuartXXXXXX)
OUT_DIR=$WORK
# The programs are still ended at exit (bench/lib.sh); only the directory is kept.
[[ -n "${BENCH_UART_KEEP:-}" ]] && KEEP_WORK=1
LINE_A=$WORK/a
LINE_B=$WORK/b

# wait_for NAME TEXT SECONDS: until NAME's output has a line containing TEXT.
wait_for() {
    local i
    for i in $(seq $(($3 * 20))); do
        grep -q -- "$2" "$OUT_DIR/$1.out" 2>/dev/null && return 0
        sleep 0.05
    done
    log "  $1 never printed '$2'"
    sed 's/^/    /' "$OUT_DIR/$1.out" | tail -5 >&2
    return 1
}

# line_bytes DIRECTION: what the line delivered so far that way (a_to_b or b_to_a).
line_bytes() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" "$OUT_DIR/line.out" | tail -1; }

# line_settled: waits (10 s at most) until the line's counters stop moving.
line_settled() {
    local before after i
    before=$(tail -1 "$OUT_DIR/line.out")
    for i in $(seq 20); do
        sleep 0.5
        after=$(tail -1 "$OUT_DIR/line.out")
        [[ "$after" == "$before" ]] && return 0
        before=$after
    done
}

# setup BAUD: the line at BAUD and weftd on its end A and on a TCP port (sets PORT).
setup() {
    start line 3600 "$BIN/uart_line" --baud "$1" --a "$LINE_A" --b "$LINE_B"
    LINE_PID=$STARTED
    wait_for line READY 10
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    start router 3600 "$BIN/weftd" -l "serial/$LINE_A#baudrate=$1" -l "tcp/127.0.0.1:$PORT" \
        --no-multicast-scouting
    ROUTER_PID=$STARTED
    wait_listen "$PORT"
}

teardown() {
    stop "$ROUTER_PID"
    stop "$LINE_PID"
}

# endpoint SYSTEM BAUD: the serial endpoint the client opens.
endpoint() {
    case $1 in
        weft-pico | weft-pico-batch | weft-pico-drop | weft-pico-full) echo "serial/$LINE_B#baudrate=$2" ;;
        zenoh-pico) echo "serial/$LINE_B#baudrate=115200" ;;
    esac
}

# thr_run SYSTEM BAUD SIZE: prints "SAMPLES_PER_S PAYLOAD_BYTES_PER_S LINE_SHARE_% WIRE_BYTES
# STEADY_WIRE_BYTES" or "- - - - -".
thr_run() {
    local sys=$1 baud=$2 size=$3 ep from0 from1
    ep=$(endpoint "$sys" "$baud")
    start sub $((SECONDS_PER_RUN + 60)) "$BIN/count_sub" "$PORT" test/thr 3 $((SECONDS_PER_RUN + 50))
    local sub_pid=$STARTED
    wait_for sub declared 10 || { echo "- - - - -"; return; }
    from0=$(line_bytes b_to_a)
    case $sys in
        weft-pico) start pub $((SECONDS_PER_RUN + 30)) "$PX/z_pub_thr" -e "$ep" -s "$size" -t "$SECONDS_PER_RUN" ;;
        weft-pico-batch)
            start pub $((SECONDS_PER_RUN + 30)) "$PX/z_pub_thr" -e "$ep" -s "$size" -t "$SECONDS_PER_RUN" -b 100
            ;;
        weft-pico-drop)
            start pub $((SECONDS_PER_RUN + 30)) "$PX/z_pub_thr" -e "$ep" -s "$size" -t "$SECONDS_PER_RUN" -d 1
            ;;
        weft-pico-full)
            start pub $((SECONDS_PER_RUN + 30)) "$PX/z_pub_thr" -e "$ep" -s "$size" -t "$SECONDS_PER_RUN" -d 1 \
                -b 1000000000
            ;;
        zenoh-pico) start pub "$SECONDS_PER_RUN" "$ZPX/z_pub_thr" -e "$ep" -m client -s "$size" -k test/thr ;;
    esac
    local pub_pid=$STARTED
    wait "$pub_pid" 2>/dev/null || true
    wait "$sub_pid" 2>/dev/null || true
    line_settled
    from1=$(line_bytes b_to_a)
    stop "$pub_pid"
    stop "$sub_pid"
    if ! grep -q '^samples=[1-9]' "$OUT_DIR/sub.out"; then
        log "  $sys $baud $size: nothing received"
        sed 's/^/    pub: /' "$OUT_DIR/pub.out" | tail -3 >&2
        sed 's/^/    weftd: /' "$OUT_DIR/router.out" | tail -3 >&2
        grep -v '^bytes' "$OUT_DIR/line.out" | sed 's/^/    line: /' | head -5 >&2
    fi
    python3 - "$OUT_DIR/sub.out" "$((from1 - from0))" "$baud" "$OUT_DIR/line.out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"samples=(\d+) payload_bytes=(\d+) seconds=([0-9.]+)", text)
line_bytes, baud = int(sys.argv[2]), int(sys.argv[3])


def series(lines, pattern):
    """(time in ms, count) pairs of a program's dated reports."""
    return [(int(t), int(v)) for t, v in re.findall(pattern, lines)]


def at(points, t):
    """The count at time t, linear between the two reports around it."""
    for (t0, v0), (t1, v1) in zip(points, points[1:]):
        if t0 <= t <= t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if t1 > t0 else v1
    return None


def steady():
    """Wire bytes per sample over the second half of the samples' span: the line's bytes
    over the samples counted between the same two instants (both programs date their
    counts every 100 ms), leaving out the start, whose puts may carry full keys until the
    router confirms a declared id (and the terminal's buffer holds ~50 KB of them)."""
    samples = series(text, r"at_ms=(\d+) samples=(\d+)")
    line = series(open(sys.argv[4]).read(), r"b_to_a=(\d+) at_ms=(\d+)")
    line = [(t, v) for v, t in line]
    moving = [p for p, q in zip(samples, samples[1:]) if q[1] > p[1]]
    if len(moving) < 20:
        return "-"
    start, end = moving[0][0], moving[-1][0]
    t0 = start + (end - start) / 2
    s0, s1, b0, b1 = at(samples, t0), at(samples, end), at(line, t0), at(line, end)
    if None in (s0, s1, b0, b1) or s1 - s0 < 1:
        return "-"
    return f"{(b1 - b0) / (s1 - s0):.2f}"


if not m or int(m.group(1)) < 2 or float(m.group(3)) <= 0:
    print("- - - - -")
else:
    n, payload, secs = int(m.group(1)), int(m.group(2)), float(m.group(3))
    # samples after the first, over the time from the first to the last
    rate = (n - 1) / secs
    bps = payload * (n - 1) / n / secs
    print(f"{rate:.1f} {bps:.0f} {100 * bps / (baud / 10):.1f} {line_bytes / n:.1f} {steady()}")
PY
}

# lat_run SYSTEM BAUD: prints "P50_US P99_US" of 8 B round trips, or "- -".
lat_run() {
    local sys=$1 baud=$2 ep
    ep=$(endpoint "$sys" "$baud")
    start pong 120 "$BIN/weft" pong -m client -e "tcp/127.0.0.1:$PORT" --no-multicast-scouting
    local pong_pid=$STARTED
    sleep 0.5
    case $sys in
        weft-pico) start ping 100 "$PX/z_ping" -e "$ep" -s 8 -n "$PINGS" -w 50 -t 90 ;;
        zenoh-pico) start ping 100 "$ZPX/z_ping" -e "$ep" -m client -s 8 -n "$PINGS" -w 1000 ;;
    esac
    local ping_pid=$STARTED
    wait "$ping_pid" 2>/dev/null || true
    stop "$ping_pid"
    stop "$pong_pid"
    # one round trip per line, in µs: weft-pico's "... rtt=N us ...", Zenoh-Pico's "N"
    sed -n -e 's/.* rtt=\([0-9]*\) us.*/\1/p' -e '/^[0-9][0-9]*$/p' "$OUT_DIR/ping.out" | sort -n |
        awk '{ v[NR] = $1 }
            END { if (NR) printf "%s %s\n", v[int((NR - 1) * 0.5) + 1], v[int((NR - 1) * 0.99) + 1]; else print "- -" }'
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
for baud in "${BAUDS[@]}"; do
    for sys in "${SYSTEMS[@]}"; do
        for size in "${SIZES[@]}"; do
            setup "$baud"
            read -r rate bps share wire steady < <(thr_run "$sys" "$baud" "$size")
            teardown
            log "  $baud baud, $sys, $size B: $rate samples/s, $bps payload B/s ($share % of the line), $wire wire bytes per sample ($steady in the second half)"
            ROWS+=("| $baud | $sys | $size | $rate | $bps | $share | $wire | $steady |")
        done
        # the same round trips as weft-pico
        [[ $sys == weft-pico-batch || $sys == weft-pico-drop || $sys == weft-pico-full ]] && continue
        setup "$baud"
        read -r p50 p99 < <(lat_run "$sys" "$baud")
        teardown
        log "  $baud baud, $sys, 8 B round trip: p50 $p50 µs, p99 $p99 µs"
        ROWS+=("| $baud | $sys | rtt 8 B | p50 $p50 µs | p99 $p99 µs | | | |")
    done
done

echo "Speed over an emulated UART (8N1), load average before: $LOAD_BEFORE; each publisher ${SECONDS_PER_RUN} s; $PINGS round trips"
echo
echo "| baud | client | payload B | samples/s | payload B/s | line used % | wire bytes / sample | the same, second half |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
