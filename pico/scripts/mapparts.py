#!/usr/bin/env python3
"""Where a firmware image's flash goes, by part, from its GNU ld link map.

    python3 scripts/mapparts.py IMAGE.map

for the images of scripts/firmware.sh (weft-pico) and of
scripts/footprint_upstream.sh (Zenoh-Pico). Counts the code, constants and
initial data (.text*, .rodata*, .data*, .sdata*, .srodata*) each input object
brought, and sums them by part:

  library      weft-pico's or Zenoh-Pico's objects, the serial link's aside
  serial       the serial link (framing, check value, the link's exchange)
  port         the bare-metal port, the board driver, the startup code
  app          the application, its arguments, the console, main, the stack meter
  libc         the C library and libgcc

Prints one line: library=N serial=N port=N app=N libc=N total=N (bytes). The
total leaves out the linker's padding and the unwinding index, a few dozen
bytes below the image's flash.
"""
import re
import sys

# objects of the serial link: weft-pico's (src/transport/serial*.c) and
# Zenoh-Pico's (its upper serial protocol, serial codec, locator and link)
SERIAL = re.compile(
    r"(transport_serial\.o|transport_serial_link\.o|link_transport_upper_serial_protocol\.o"
    r"|protocol_codec_serial\.o|link_unicast_serial\.o|link_config_serial\.o)$"
)
PORT = re.compile(r"(baremetal_platform\.o|upstream_platform\.o|upstream_heap\.o|_board\.o|_startup\.o|_start\.o)$")
APP = re.compile(r"(apps_[^/]*\.o|args\.o|common_console\.o|common_main\.o|common_stack\.o|upstream_main\.o)$")
KEPT = (".text", ".rodata", ".data", ".sdata", ".srodata")


def part(obj):
    if obj.startswith("/usr/") or "libc" in obj or "libgcc" in obj or "picolibc" in obj:
        return "libc"
    if SERIAL.search(obj.rstrip(")")):
        return "serial"
    if PORT.search(obj):
        return "port"
    if APP.search(obj):
        return "app"
    return "library"


def main():
    sums = {"library": 0, "serial": 0, "port": 0, "app": 0, "libc": 0}
    started = False
    pending = None
    for line in open(sys.argv[1]):
        if line.startswith("Linker script and memory map"):
            started = True
            continue
        if not started:
            continue
        m = re.match(r"^ (\.\S+|COMMON)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+|COMMON)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)", line)
        if not m:
            pending = None
            continue
        sec = m.group(1) or pending
        pending = None
        if sec is None or not sec.startswith(KEPT) or sec.startswith(".data_load"):
            continue
        sums[part(m.group(3))] += int(m.group(2), 16)
    print(" ".join(f"{k}={v}" for k, v in sums.items()), f"total={sum(sums.values())}")


if __name__ == "__main__":
    main()
