#!/bin/sh
# The firmware images of scripts/footprint.sh built with upstream Zenoh-Pico
# instead of weft-pico, for a side by side table: the same boards (startup,
# linker script, UART driver, clock: boards/TARGET), the same applications
# (boards/apps/z_pub.c as the minimal publisher, boards/apps/full_client.c),
# the same compiler, libc and flags (-Os -ffunction-sections -fdata-sections,
# --gc-sections, no LTO; NDEBUG and -std=gnu99 aside), single-threaded, the serial link only. Zenoh-Pico is
# built as its generic platform (ZENOH_GENERIC) with the bare-metal port of
# footprint/upstream/ (platform.c over the board contract, the configuration
# in zenoh_generic_config.h); its memory comes from the C library's malloc
# over a fixed arena whose high-water mark is measured.
#
#   ZENOH_PICO_SRC=<checkout of eclipse-zenoh/zenoh-pico> sh scripts/footprint_upstream.sh
#
# Measured on commit 0ffe44a (after tag 1.9.0). Without ZENOH_PICO_SRC it
# reports itself skipped (Zenoh-Pico's sources are not in this repository).
# Each image is booted under QEMU with its UART on a socat pseudo-terminal to
# `weftd -l serial/<pty>#baudrate=115200` (WEFT_WEFTD=<weftd>, default the
# repository's target/debug/weftd), one line each:
#   system=zenoh-pico target=NAME image=minimal_publisher|full_client flash=N ram=N stack=N heap=N
# flash = text + data; ram = data + bss (the heap's arena left out) + the
# heap's high-water mark + the stack's high-water mark (stack=NA heap=NA and
# ram = data + bss without the arena when the image was not run: socat, weftd
# or QEMU missing). Build directory: WEFT_FOOTPRINT_UPSTREAM_DIR (default
# pico/build-footprint-upstream); each image's link map is APP.map there, and
# where its flash goes by part (scripts/mapparts.py) is printed after the images.
# FOOTPRINT_UPSTREAM_CONFIG="NAME=VALUE ..." adds Zenoh-Pico configuration
# (zenoh_generic_config.h names) to both images, e.g. Z_RUNTIME_MAX_TASKS=64.
set -eu
PICO=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${ZENOH_PICO_SRC:-}" ]; then
    echo "footprint_upstream: skipped (ZENOH_PICO_SRC=<checkout of eclipse-zenoh/zenoh-pico> not given)"
    exit 0
fi
ZP=$(cd "$ZENOH_PICO_SRC" && pwd)
[ -f "$ZP/include/zenoh-pico/config.h.in" ] && [ -f "$ZP/src/link/transport/upper/serial_protocol.c" ] || {
    echo "footprint_upstream: $ZP is not a Zenoh-Pico checkout with a serial link (1.9 or later)" >&2
    exit 1
}
OUT=${WEFT_FOOTPRINT_UPSTREAM_DIR:-$PICO/build-footprint-upstream}
GLUE=$PICO/footprint/upstream
ZP_COMMIT=$(git -C "$ZP" rev-parse --short HEAD 2>/dev/null || echo unknown)

# Zenoh-Pico's library sources: those of its CMake build (CMakeLists.txt,
# `Sources` and `LinkSources`); the platform's are ours.
zp_sources() {
    (cd "$ZP" && {
        find src/api src/collections src/net src/protocol src/runtime src/session src/transport src/utils \
            src/system/common -name '*.c'
        ls src/link/config/*.c src/link/multicast/*.c src/link/unicast/*.c src/link/transport/common/*.c
        echo src/link/link.c src/link/endpoint.c src/link/transport/tcp/address.c src/link/transport/udp/address.c \
            src/link/transport/upper/serial_protocol.c src/link/transport/upper/tls_stream.c
    } | tr ' ' '\n' | sort)
}

# The feature set of each image (zenoh_generic_config.h holds the full
# client's; the minimal publisher removes what weft-pico's minimal image
# removes, scripts/footprint.sh's MINIMAL).
FULL=""
MINIMAL="Z_FEATURE_SUBSCRIPTION=0 Z_FEATURE_QUERY=0 Z_FEATURE_QUERYABLE=0 Z_FEATURE_LIVELINESS=0
Z_FEATURE_FRAGMENTATION=0 Z_FEATURE_BATCHING=0 Z_FEATURE_AUTO_RECONNECT=0"

# build TARGET NAME APP FEATURES ARGS... -> OUT/TARGET-NAME/APP.elf
build() {
    target=$1 name=$2 app=$3 features=$4
    shift 4
    case $target in
    cortex-m4)
        CC=arm-none-eabi-gcc
        ARCH="-mcpu=cortex-m4 -mthumb -mfloat-abi=soft"
        LIBC="--specs=nano.specs"
        HEAP=65536 # of the board's 4 MiB
        LDSTACK=""
        ;;
    riscv32)
        CC=riscv64-unknown-elf-gcc
        ARCH="-march=rv32imac -mabi=ilp32 -mcmodel=medlow"
        LIBC="--specs=picolibc.specs"
        # the sifive_e (HiFive1) has 16 KiB of RAM: a 3 KiB stack (boards/riscv32/link.ld
        # reserves 6) leaves room for the arena
        HEAP=12800
        LDSTACK="-Wl,--defsym=STACK_SIZE=3072"
        ;;
    esac
    command -v $CC >/dev/null 2>&1 || { echo "footprint_upstream: $CC not found (scripts/qemu.sh installs it)" >&2; exit 1; }
    dir=$OUT/$target-$name
    mkdir -p "$dir/include/zenoh-pico" "$dir/obj" "$dir/app"
    # config.h: Zenoh-Pico's template; ZENOH_GENERIC makes it include zenoh_generic_config.h
    sed '/#cmakedefine/d' "$ZP/include/zenoh-pico/config.h.in" >"$dir/include/zenoh-pico/config.h"
    defs="-DZENOH_GENERIC -DZENOH_C_STANDARD=99 -DZENOH_COMPILER_GCC -DNDEBUG"
    for kv in $features ${FOOTPRINT_UPSTREAM_CONFIG:-}; do defs="$defs -D$kv"; done
    # the flags of scripts/firmware.sh, but NDEBUG (as Zenoh-Pico's release build) and
    # gnu99: Zenoh-Pico calls strnlen, which the C libraries declare only outside strict C99
    CFLAGS="$ARCH -Os -g -ffunction-sections -fdata-sections -std=gnu99 $LIBC $defs -I$dir/include -I$ZP/include -I$GLUE"
    # other flags, another commit or other port headers than last time: everything is compiled again
    stamp="$CFLAGS $ZP_COMMIT $(cat "$GLUE"/*.h | cksum)"
    if [ "$(cat "$dir/cflags" 2>/dev/null)" != "$stamp" ]; then
        rm -f "$dir"/obj/*.o "$dir"/app/*.o
        printf '%s' "$stamp" >"$dir/cflags"
    fi
    objs=""
    for src in $(zp_sources); do
        obj=$dir/obj/$(echo "${src#src/}" | tr '/' '_' | sed 's/\.c$/.o/')
        # shellcheck disable=SC2086
        [ -f "$obj" ] || $CC $CFLAGS -w -Werror=implicit-function-declaration -c "$ZP/$src" -o "$obj"
        objs="$objs $obj"
    done
    rm -f "$dir/libzenohpico.a"
    # shellcheck disable=SC2086
    ${CC%gcc}ar rcs "$dir/libzenohpico.a" $objs
    # the application's arguments, as C strings (as scripts/firmware.sh)
    {
        printf 'const char *const app_argv[] = {"%s"' "$app"
        for a in "$@"; do printf ', "%s"' "$a"; done
        echo ', 0};'
        echo "const int app_argc = $(($# + 1));"
    } >"$dir/app/args.c"
    aobjs=""
    for src in "$PICO/boards/apps/$app.c" "$dir/app/args.c" "$GLUE/main.c" "$GLUE/platform.c" "$GLUE/heap.c" \
        "$PICO/boards/common/console.c" "$PICO/boards/common/stack.c" "$PICO/boards/$target"/*.c \
        "$PICO/boards/$target"/*.S; do
        [ -f "$src" ] || continue
        base=$(basename "$(dirname "$src")")_$(basename "$src")
        obj=$dir/app/${base%.*}.o
        # shellcheck disable=SC2086
        $CC $CFLAGS -Wall -Wextra -DHEAP_SIZE=$HEAP -c "$src" -o "$obj"
        aobjs="$aobjs $obj"
    done
    # shellcheck disable=SC2086
    $CC $ARCH $LIBC -nostartfiles -T "$PICO/boards/$target/link.ld" $LDSTACK -Wl,--gc-sections -Wl,-Map="$dir/$app.map" \
        $aobjs "$dir/libzenohpico.a" -o "$dir/$app.elf"
    # thread-local storage (picolibc's errno) must fit main.c's TLS_BLOCK_SIZE
    tls=$(${CC%gcc}readelf -lW "$dir/$app.elf" | awk '$1 == "TLS" { print $6 }')
    [ -z "$tls" ] || [ $((tls)) -le 16 ] || { echo "footprint_upstream: TLS segment of $tls bytes" >&2; exit 1; }
}

# sizes TARGET ELF -> "flash ram_static arena"
sizes() {
    prefix=arm-none-eabi
    [ "$1" = riscv32 ] && prefix=riscv64-unknown-elf
    arena=$($prefix-nm -S "$2" | awk '$4 == "heap_arena" { print $2 }')
    arena=$((0x${arena:-0}))
    $prefix-readelf -SW "$2" | python3 -c '
import sys
flash = ram = 0
for line in sys.stdin:
    parts = line.replace("[ ", "[").split()
    if len(parts) < 8 or not parts[0].strip("[]").isdigit() or parts[1] == "NULL":
        continue
    name, kind, size, flags = parts[1], parts[2], int(parts[5], 16), parts[7]
    if "A" not in flags or name == ".stack":
        continue
    if kind != "NOBITS":
        flash += size  # code, constants, and the initial values of .data
    if "W" in flags:
        ram += size  # .data and .bss
print(flash, ram - int(sys.argv[1]), sys.argv[1])' "$arena"
}

WEFTD=${WEFT_WEFTD:-${CARGO_TARGET_DIR:-$PICO/../target}/debug/weftd}
RUN_DIR=""
SOCAT_PID=""
WEFTD_PID=""
stop_line() {
    [ -z "$WEFTD_PID" ] || kill "$WEFTD_PID" 2>/dev/null || true
    [ -z "$SOCAT_PID" ] || kill "$SOCAT_PID" 2>/dev/null || true
    WEFTD_PID=""
    SOCAT_PID=""
}
trap 'stop_line; [ -z "$RUN_DIR" ] || rm -rf "$RUN_DIR"' EXIT
# a serial line to weftd (as scripts/footprint.sh): LINE is the client's end, or empty
LINE=""
start_line() {
    LINE=""
    command -v socat >/dev/null 2>&1 && [ -x "$WEFTD" ] || return 0
    RUN_DIR=$(mktemp -d /tmp/weft-footprint-up-XXXXXX)
    socat pty,raw,echo=0,link="$RUN_DIR/A" pty,raw,echo=0,link="$RUN_DIR/B" >/dev/null 2>&1 &
    SOCAT_PID=$!
    i=0
    while [ ! -e "$RUN_DIR/B" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    : >"$RUN_DIR/weftd.log"
    "$WEFTD" -l "serial/$RUN_DIR/B#baudrate=115200" --no-multicast-scouting >"$RUN_DIR/weftd.log" 2>&1 &
    WEFTD_PID=$!
    i=0
    while ! grep -q "listening on" "$RUN_DIR/weftd.log" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    # Zenoh-Pico's open sends the serial link's Init once and gives up when no
    # answer comes within its read timeout (weft-pico's sends it again for 5 s):
    # let weftd open the port first
    sleep 1
    LINE=$RUN_DIR/A
}

# image TARGET NAME APP FEATURES ARGS... -> one line
image() {
    target=$1 name=$2 app=$3
    build "$@"
    dir=$OUT/$target-$name
    stack=NA heap=NA
    qemu="qemu-system-arm -M mps2-an386"
    [ "$target" = riscv32 ] && qemu="qemu-system-riscv32 -M sifive_e"
    # a line and a weftd of its own: Zenoh-Pico's open does not wait for weftd to
    # reopen the port the previous image's QEMU hung up
    start_line
    if [ -n "$LINE" ] && command -v "${qemu%% *}" >/dev/null 2>&1; then
        # shellcheck disable=SC2086
        timeout 60 $qemu -nodefaults -display none -monitor none -kernel "$dir/$app.elf" \
            -chardev "serial,id=link,path=$LINE" -serial chardev:link \
            -semihosting-config enable=on,target=native >"$dir.log" 2>&1 || true
        grep -q '^EXIT 0' "$dir.log" || {
            cat "$dir.log" "$RUN_DIR/weftd.log" >&2
            echo "footprint_upstream: the $target $name image failed" >&2
            exit 1
        }
        stack=$(sed -n 's/^STACK \([0-9]*\) of .*/\1/p' "$dir.log")
        heap=$(sed -n 's/^HEAP \([0-9]*\) of .*/\1/p' "$dir.log")
    fi
    stop_line
    [ -z "$RUN_DIR" ] || rm -rf "$RUN_DIR"
    sizes "$target" "$dir/$app.elf" >"$dir.sizes"
    read -r flash ram arena <"$dir.sizes"
    [ "$stack" = NA ] || ram=$((ram + heap + stack))
    echo "system=zenoh-pico target=$target image=$name flash=$flash ram=$ram stack=$stack heap=$heap"
}

if command -v riscv64-unknown-elf-gcc >/dev/null 2>&1; then TARGETS="cortex-m4 riscv32"; else TARGETS=cortex-m4; fi
mkdir -p "$OUT"
echo "Zenoh-Pico $ZP_COMMIT, generic platform with the bare-metal port of footprint/upstream/, serial link"
command -v socat >/dev/null 2>&1 && [ -x "$WEFTD" ] ||
    echo "(stack=NA heap=NA: socat or weftd ($WEFTD) missing, the images were not run)"
for t in $TARGETS; do
    image "$t" minimal_publisher z_pub "$MINIMAL" -k demo/footprint -n 3 -i 100
    image "$t" full_client full_client "$FULL"
done
echo "flash by part (bytes; scripts/mapparts.py on the link maps):"
for t in $TARGETS; do
    echo "system=zenoh-pico target=$t image=minimal_publisher $(python3 "$PICO/scripts/mapparts.py" "$OUT/$t-minimal_publisher/z_pub.map")"
    echo "system=zenoh-pico target=$t image=full_client $(python3 "$PICO/scripts/mapparts.py" "$OUT/$t-full_client/full_client.map")"
done
