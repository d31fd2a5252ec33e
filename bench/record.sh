#!/usr/bin/env bash
# How fast weft's recorders keep up: `weft record` (a client of weftd) and weftd's own
# recorder (`plugins.recorder`), under a `weft pub-thr --rate` load through weftd on TCP
# loopback: 1 MiB samples offered at 1,000 msg/s (1 GiB/s) and 8 B samples at 1,000,000
# msg/s, per compression. The publisher uses congestion control `block`, and weftd's
# recorder `when_full: "block"` (its default drops instead), so a recorder that falls
# behind slows the publisher down (nothing is dropped): "published" below the offered rate
# is where the recorder stops keeping up. Each row publishes for BENCH_RECORD_SECONDS, then
# waits for the recorder to write what it received, within 20 s in all.
# Prints the table and writes the "Recording" section of bench/RESULTS.md.
#
# Environment (all optional):
#   BENCH_PORT             first TCP port used on 127.0.0.1 (default 18300)
#   BENCH_RECORD_SECONDS   publishing time per row, seconds (default 8; at most 15)
#   BENCH_COMPRESSIONS     compressions measured (default "zstd lz4")
#   BENCH_RECORDERS        recorders measured (default "none cli weftd"; none: a plain
#                          subscriber, `weft sub-thr`, for what the path carries without one)
#   WEFT_BIN_DIR           take weft and weftd from this directory instead of building them
#   BENCH_NO_WRITE=1       print the table without touching bench/RESULTS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

PORT=${BENCH_PORT:-18300}
PUB_SECONDS=${BENCH_RECORD_SECONDS:-8}
COMPRESSIONS=${BENCH_COMPRESSIONS:-"zstd lz4"}
RECORDERS=${BENCH_RECORDERS:-"none cli weftd"}
ROW_LIMIT=20
KEY=test/thr
# size rate: 1 MiB at 1,000/s, 8 B at 1,000,000/s.
LOADS=("1048576 1000" "8 1000000")
((PUB_SECONDS >= 1 && PUB_SECONDS <= 15)) || { log "BENCH_RECORD_SECONDS: 1 to 15"; exit 1; }

COMMAND="bench/record.sh"
for v in BENCH_PORT BENCH_RECORD_SECONDS BENCH_COMPRESSIONS BENCH_RECORDERS WEFT_BIN_DIR; do
    if [[ -n "${!v:-}" ]]; then COMMAND="$v=\"${!v}\" $COMMAND"; fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-record.XXXXXX")
OUT_DIR=$WORK

if [[ -n "${WEFT_BIN_DIR:-}" ]]; then
    BIN=$WEFT_BIN_DIR
else
    log "== building weft (weft-cli, weftd, write_speed)"
    cargo build --release -p weft-cli -p weftd -p weft-record --example write_speed
    BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
fi
WEFT=$BIN/weft
WEFTD=$BIN/weftd

# The child a `start` process (`timeout`) runs.
child_of() { pgrep -P "$1" | head -1; }

# cpu_ticks PID: user + system clock ticks of process PID so far (0 once it is gone).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# rest_status REST_PORT: the messages weftd's recording `bench` has written ("" if unknown).
rest_status() {
    curl -s --max-time 2 \
        "http://127.0.0.1:$1/@/*/router/status/plugins/recorder/recordings/bench" 2>/dev/null |
        python3 -c '
import json, sys
try:
    replies = json.load(sys.stdin)
    value = replies[0]["value"]
    value = json.loads(value) if isinstance(value, str) else value
    print(value["messages"], value["waited"], value["errors"])
except Exception:
    pass
'
}

# wait_subscriber REST_PORT SECONDS: until weftd lists a subscriber on $KEY.
wait_subscriber() {
    local i
    for i in $(seq $(($2 * 20))); do
        if curl -s --max-time 2 "http://127.0.0.1:$1/@/*/router/subscriber/$KEY" | grep -q clients; then
            return 0
        fi
        sleep 0.05
    done
    log "no subscriber on $KEY reached weftd"
    return 1
}

# dir_bytes DIR: the size of the files in DIR.
dir_bytes() { du -sb "$1" 2>/dev/null | cut -f1; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
log "== measuring (load average $LOAD_BEFORE)"
ROWS=()
# The MCAP writer alone, without a network: samples/s per size and compression.
WRITER_ROWS=()
if [[ -x "$BIN/examples/write_speed" ]]; then
    for compression in $COMPRESSIONS; do
        for load in "8 3000000" "1048576 2000"; do
            read -r size count <<<"$load"
            line=$("$BIN/examples/write_speed" "$size" "$count" "$WORK" "$compression")
            log "  writer alone: $line"
            WRITER_ROWS+=("$line")
        done
    done
fi

for recorder in $RECORDERS; do
    for load in "${LOADS[@]}"; do
        read -r size rate <<<"$load"
        compressions=$COMPRESSIONS
        [[ $recorder == none ]] && compressions=-
        for compression in $compressions; do
            PORT=$((PORT + 2))
            rest=$((PORT + 1))
            endpoint="tcp/127.0.0.1:$PORT"
            rm -rf "$WORK/rec" && mkdir -p "$WORK/rec"
            cat >"$WORK/weftd.json5" <<CFG
{ mode: "router", listen: { endpoints: ["$endpoint"] },
  scouting: { multicast: { enabled: false } },
  plugins: { rest: { http_port: "127.0.0.1:$rest" } } }
CFG
            if [[ $recorder == weftd ]]; then
                cat >"$WORK/weftd.json5" <<CFG
{ mode: "router", listen: { endpoints: ["$endpoint"] },
  scouting: { multicast: { enabled: false } },
  plugins: { rest: { http_port: "127.0.0.1:$rest" },
    recorder: { recordings: { bench: { key_expr: "$KEY", directory: "$WORK/rec",
      rotate: { size_mb: 512 }, compression: "$compression", when_full: "block" } } } } }
CFG
            fi
            start weftd $((ROW_LIMIT + 15)) "$WEFTD" -c "$WORK/weftd.json5"
            weftd_pid=$STARTED
            wait_listen "$PORT"
            wait_listen "$rest"
            rec_pid=
            if [[ $recorder == none ]]; then
                start record $((ROW_LIMIT + 15)) "$WEFT" sub-thr -m client -e "$endpoint" \
                    --no-multicast-scouting --samples "$rate" --rounds 1000 \
                    --max-seconds "$ROW_LIMIT"
                rec_pid=$STARTED
                wait_subscriber "$rest" 10
                writer=$(child_of "$rec_pid")
            elif [[ $recorder == cli ]]; then
                start record $((ROW_LIMIT + 15)) "$WEFT" record -m client -e "$endpoint" \
                    --no-multicast-scouting -k "$KEY" -o "$WORK/rec/run.mcap" \
                    --compression "$compression"
                rec_pid=$STARTED
                wait_subscriber "$rest" 10
                writer=$(child_of "$rec_pid")
            else
                writer=$(child_of "$weftd_pid")
            fi
            ticks0=$(cpu_ticks "$writer")
            t0=$(date +%s.%N)
            start pub $((PUB_SECONDS + 10)) "$WEFT" pub-thr "$size" -m client -e "$endpoint" \
                --no-multicast-scouting --rate "$rate" --duration "$PUB_SECONDS"
            pub_pid=$STARTED
            wait "$pub_pid" 2>/dev/null || true
            sent=$(sed -n 's/^sent=\([0-9]*\) .*seconds=\([0-9.]*\).*/\1/p' "$OUT_DIR/pub.out")
            pub_secs=$(sed -n 's/^sent=\([0-9]*\) .*seconds=\([0-9.]*\).*/\2/p' "$OUT_DIR/pub.out")
            # The recorder writes what it received: wait until it has all of it (weftd's
            # counter), or its file stops growing (weft record), within the row's limit.
            deadline=$(awk -v t="$t0" -v l="$ROW_LIMIT" 'BEGIN { print t + l }')
            recorded=
            waited=-
            last=-1
            still=0
            t_done=$(date +%s.%N)
            while [[ $recorder != none ]] &&
                awk -v n="$(date +%s.%N)" -v d="$deadline" 'BEGIN { exit !(n < d) }'; do
                if [[ $recorder == weftd ]]; then
                    read -r now waited _ <<<"$(rest_status "$rest")" || true
                    now=${now:-0}
                    [[ -n "$sent" && "$now" -ge "$sent" ]] && { t_done=$(date +%s.%N); break; }
                else
                    now=$(dir_bytes "$WORK/rec")
                fi
                if [[ "$now" != "$last" ]]; then
                    last=$now
                    still=0
                    t_done=$(date +%s.%N)
                elif ((++still >= 10)); then
                    break
                fi
                sleep 0.1
            done
            ticks1=$(cpu_ticks "$writer")
            if [[ $recorder == none ]]; then
                stop "$rec_pid"
                stop "$weftd_pid"
                recorded=0
                waited=-
            elif [[ $recorder == weftd ]]; then
                read -r recorded waited _ <<<"$(rest_status "$rest")" || true
                stop "$weftd_pid"
            else
                kill -INT "$writer" 2>/dev/null || true
                for _ in $(seq 100); do kill -0 "$writer" 2>/dev/null || break; sleep 0.1; done
                stop "$rec_pid"
                stop "$weftd_pid"
                recorded=$(sed -n 's/^weft record: \([0-9]*\) samples written.*/\1/p' "$OUT_DIR/record.out")
                waited=$(sed -n 's/.*waited for the disk \([0-9]*\) times.*/\1/p' "$OUT_DIR/record.out")
            fi
            file_bytes=$(dir_bytes "$WORK/rec")
            rm -rf "$WORK/rec"
            if [[ -z "$sent" || -z "$recorded" ]]; then
                log "  $recorder $size B $compression: no result"
                sed 's/^/    pub: /' "$OUT_DIR/pub.out" | tail -3 >&2
                [[ -f "$OUT_DIR/record.out" ]] && sed 's/^/    record: /' "$OUT_DIR/record.out" | tail -3 >&2
                ROWS+=("$recorder	$size	$rate	$compression	-	-	-	-	-	-	-	-")
                continue
            fi
            row=$(awk -v r="$recorder" -v s="$size" -v rate="$rate" -v c="$compression" \
                -v sent="$sent" -v ps="$pub_secs" -v rec="$recorded" -v w="$waited" \
                -v t0="$t0" -v td="$t_done" -v fb="$file_bytes" -v ticks="$((ticks1 - ticks0))" \
                -v hz="$(getconf CLK_TCK)" 'BEGIN {
                    span = td - t0; if (span < ps) span = ps
                    pub_rate = sent / ps
                    rec_rate = rec / span
                    cpu = ticks / hz / span * 100
                    printf "%s\t%d\t%d\t%s\t%.0f\t%d\t%d\t%.0f\t%.1f\t%.0f\t%s\t%.1f",
                        r, s, rate, c, pub_rate, sent, rec, rec_rate, rec_rate * s / 1e6,
                        cpu, w, fb / 1e6
                }')
            log "  $row"
            ROWS+=("$row")
        done
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

table() {
    echo "| Recorder | Sample | Offered msg/s | Compression | Published msg/s | Published | Recorded | Recorded msg/s | Recorded MB/s | Recorder CPU % | Waits | Files MB |"
    echo "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    local r
    for r in "${ROWS[@]}"; do
        IFS=$'\t' read -r rec size rate comp prate sent recorded rrate mbs cpu waited fmb <<<"$r"
        local name=$rec
        [[ $rec == cli ]] && name="weft record"
        [[ $rec == weftd ]] && name="weftd recorder"
        if [[ $rec == none ]]; then
            name="none (\`weft sub-thr\`)"
            recorded=-
            rrate=-
            mbs=-
            fmb=-
        fi
        local label="$size B"
        ((size == 1048576)) && label="1 MiB"
        echo "| $name | $label | $rate | $comp | $prate | $sent | $recorded | $rrate | $mbs | $cpu | $waited | $fmb |"
    done
}

SECTION=$WORK/section.md
{
    echo "## Recording"
    echo
    echo "\`$COMMAND\` ($(date -u +%F), $(nproc) cores, load average before $LOAD_BEFORE, after $LOAD_AFTER)."
    echo "\`weft pub-thr --rate\` publishes (congestion control \`block\`) for ${PUB_SECONDS} s through weftd"
    echo "on TCP loopback to \`weft record\` (a client of weftd) or to weftd's own recorder;"
    echo "the row then waits for the recorder to write what it received (20 s per row in all)."
    echo "A recorder that falls behind slows the publisher: *published* below *offered* is"
    echo "where it stops keeping up. *Recorded msg/s* and *MB/s* are over the publishing time"
    echo "plus the time the recorder took to catch up; *Recorder CPU %* is the recording"
    echo "process's (weft record, or all of weftd) over the same span; *Waits* the times the"
    echo "subscriber found the recorder's queue full. Payloads are \`pub-thr\`'s constant bytes,"
    echo "which compress far better than camera frames or point clouds would."
    if awk -v l="${LOAD_BEFORE%% *}" 'BEGIN { exit !(l >= 1.0) }'; then
        echo
        echo "**Measured under load** (the load average above: other programs were running"
        echo "beside the benchmark on these cores): the figures are lower, and vary more from"
        echo "run to run, than a quiet machine's."
    fi
    echo
    table
    echo
    if ((${#WRITER_ROWS[@]})); then
        echo "The MCAP writer alone (weft-record's \`write_speed\` example: samples written"
        echo "through \`Recorder\` into a file in a loop, no network, no queue):"
        echo
        echo "| Sample | Compression | Samples/s | MB/s of payload | File MB |"
        echo "|---:|---|---:|---:|---:|"
        for r in "${WRITER_ROWS[@]}"; do
            awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                   label = (v["size"] == 1048576) ? "1 MiB" : v["size"] " B"
                   printf "| %s | %s | %.0f | %.1f | %.1f |\n", label, v["compression"],
                       v["samples_per_s"], v["mb_per_s"], v["file_mb"] }' <<<"$r"
        done
        echo
    fi
} >"$SECTION"
cat "$SECTION"
if [[ "${BENCH_NO_WRITE:-}" != 1 ]]; then
    write_section "Recording" "$SECTION"
fi
