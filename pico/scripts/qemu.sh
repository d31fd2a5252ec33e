#!/bin/sh
# Builds a weft-pico firmware example and runs it under QEMU, its UART
# attached to SERIAL: the example talks Zenoh over that serial line (e.g. to
# weftd or zenohd listening on serial/<other end>#baudrate=115200).
#
#   scripts/qemu.sh TARGET EXAMPLE SERIAL [ARGS...]
#
# TARGET   cortex-m4  qemu-system-arm -M mps2-an386 (CMSDK UART0, SysTick)
#          riscv32    qemu-system-riscv32 -M sifive_e (UART0, CLINT timer)
# EXAMPLE  z_pub, z_sub, z_get, z_queryable, z_liveliness
# SERIAL   a pseudo-terminal (e.g. one end of `socat -d -d pty,raw,echo=0,link=A
#          pty,raw,echo=0,link=B`) or a Unix socket QEMU connects to
# ARGS     baked into the image: -k KEY -v VALUE -n COUNT -i INTERVAL_MS -t TIMEOUT_MS
#          (-e LOCATOR defaults to serial/uart0#baudrate=115200)
#
# The example's output (one line per event, then "STACK n" and "EXIT n")
# comes on stdout through semihosting; QEMU exits with the example's status
# (0, or 1 for any failure). The guest has no network, only its UART.
# Missing tools are installed with apt-get when run as root.
# Environment: WEFT_FIRMWARE_DIR (build directory, default pico/build-firmware/TARGET),
# QEMU_TIMEOUT (seconds, default 120), FIRMWARE_CONFIG (see firmware.sh).
set -eu
PICO=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 cortex-m4|riscv32 EXAMPLE SERIAL [ARGS...]" >&2; exit 2; }
TARGET=$1 EXAMPLE=$2 SERIAL=$3
shift 3

case $TARGET in
cortex-m4)
    QEMU="qemu-system-arm -M mps2-an386"
    TOOLS="arm-none-eabi-gcc:gcc-arm-none-eabi qemu-system-arm:qemu-system-arm"
    LIBC_CHECK=/usr/lib/arm-none-eabi/newlib/libc_nano.a
    LIBC_PKG=libnewlib-arm-none-eabi
    ;;
riscv32)
    QEMU="qemu-system-riscv32 -M sifive_e"
    TOOLS="riscv64-unknown-elf-gcc:gcc-riscv64-unknown-elf qemu-system-riscv32:qemu-system-misc"
    LIBC_CHECK=/usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs
    LIBC_PKG=picolibc-riscv64-unknown-elf
    ;;
*) echo "unknown target $TARGET (cortex-m4, riscv32)" >&2; exit 2 ;;
esac

need=""
for t in $TOOLS; do command -v "${t%%:*}" >/dev/null 2>&1 || need="$need ${t#*:}"; done
[ -e "$LIBC_CHECK" ] || need="$need $LIBC_PKG"
if [ -n "$need" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "qemu.sh: missing:$need (apt-get install$need)" >&2
        exit 1
    fi
    echo "qemu.sh: installing$need" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

OUT=${WEFT_FIRMWARE_DIR:-$PICO/build-firmware/$TARGET}
ELF=$(sh "$PICO/scripts/firmware.sh" "$TARGET" "$EXAMPLE" "$OUT" "$@")

if [ -S "$SERIAL" ]; then
    CHARDEV="socket,id=link,path=$SERIAL"
else
    CHARDEV="serial,id=link,path=$SERIAL"
fi
# shellcheck disable=SC2086
exec timeout "${QEMU_TIMEOUT:-120}" $QEMU -nodefaults -display none -monitor none -kernel "$ELF" \
    -chardev "$CHARDEV" -serial chardev:link -semihosting-config enable=on,target=native
