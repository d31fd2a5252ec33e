# Process helpers shared by the benchmark scripts (sourced, not run).
#
# Every background process runs under `timeout`, which leads its own process group: killing
# the group ends the program too. At exit, every process started is ended and the scratch
# directory $WORK (if the script set one) is removed, unless KEEP_WORK is set (then its
# path is printed).
#
# The script sets OUT_DIR, where `start` writes each process's output.

PIDS=()

log() { printf '%s\n' "$*" >&2; }

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
    sleep 0.3
    for p in "${PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [[ -n "${WORK:-}" && -n "${KEEP_WORK:-}" ]]; then
        log "kept: $WORK"
    elif [[ -n "${WORK:-}" ]]; then
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start NAME LIMIT_SECONDS COMMAND...: runs COMMAND in the background, output in
# $OUT_DIR/NAME.out; sets STARTED to its process id.
start() {
    local name=$1 limit=$2
    shift 2
    timeout -k 2 "$limit" "$@" >"$OUT_DIR/$name.out" 2>&1 &
    STARTED=$!
    PIDS+=("$STARTED")
}

# stop PID: ends a process started by `start` (and its group), then reaps it.
stop() {
    kill -TERM -- "-$1" 2>/dev/null || true
    local i
    for i in $(seq 50); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL -- "-$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# thr_collect SUB_PID PUB_PID LABEL: waits for a throughput subscriber started as `sub`,
# stops both, and sets THR_RATE to the median_msgs_per_s it printed ("-", with the last
# lines of both outputs on stderr, if it printed none).
thr_collect() {
    wait "$1" 2>/dev/null || true
    stop "$2"
    stop "$1"
    THR_RATE=$(sed -n 's/^median_msgs_per_s=\([0-9]*\).*/\1/p' "$OUT_DIR/sub.out" | tail -1)
    if [[ -z "$THR_RATE" ]]; then
        log "  $3: no result"
        sed 's/^/    sub: /' "$OUT_DIR/sub.out" | tail -5 >&2
        sed 's/^/    pub: /' "$OUT_DIR/pub.out" | tail -5 >&2
        THR_RATE=-
    fi
}

# wait_listen PORT [SECONDS]: until something listens on 127.0.0.1:PORT (default 10 s).
wait_listen() {
    local i
    for i in $(seq $((${2:-10} * 20))); do
        if [[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]]; then return 0; fi
        sleep 0.05
    done
    log "nothing listens on port $1"
    return 1
}

# write_section TITLE FILE: puts FILE (a section starting "## TITLE") in bench/RESULTS.md in
# place of the section of that title, or at the end if it has none.
write_section() {
    python3 - "$ROOT/bench/RESULTS.md" "$1" "$2" <<'PY'
import sys, re
path, title, section = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
text = open(path).read()
m = re.search(r"^## " + re.escape(title) + r"\n.*?(?=^## |\Z)", text, flags=re.S | re.M)
text = text[:m.start()] + section + text[m.end():] if m else text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
PY
    log "wrote the $1 section of bench/RESULTS.md"
}
