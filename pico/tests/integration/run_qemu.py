"""weft-pico firmware under QEMU, over a serial line to weftd.

    python run_qemu.py TARGET --qemu-sh PATH/scripts/qemu.sh [--router weftd|zenohd]

TARGET is cortex-m4 (qemu-system-arm -M mps2-an386) or riscv32
(qemu-system-riscv32 -M sifive_e). The guest's UART is one end of a socat
pseudo-terminal pair; the router (weftd: WEFT_WEFTD; zenohd: WEFT_ZENOHD_SERIAL,
a zenohd 1.10.2 built with its serial link) listens on the other end and on TCP
127.0.0.1, where Zenoh 1.10.2 clients (Python) take part:

  z_pub        3 samples reach a Zenoh subscriber on TCP
  z_get        a Zenoh queryable on TCP answers the firmware's get
  z_queryable  a Zenoh get on TCP is answered by the firmware
  z_sub        a Zenoh publisher's 5 puts and delete reach the firmware
  z_liveliness a Zenoh liveliness subscriber sees the firmware's token come and go
  reset        a board killed mid-session, the next boot opens a new session at once

Each firmware run ends with the stack's high-water mark ("STACK n") and its
status. Exits 77 (skipped) when socat, QEMU or the cross compiler is missing.
"""

import argparse
import os
import shutil
import sys

from run_interop import SKIP, Scenario, Skipped, free_port, serial_pair, serial_router

TOOLS = {
    "cortex-m4": ["qemu-system-arm", "arm-none-eabi-gcc"],
    "riscv32": ["qemu-system-riscv32", "riscv64-unknown-elf-gcc"],
}


def firmware(s, qemu_sh, target, app, serial, *args):
    env_argv = ["env", f"WEFT_FIRMWARE_DIR={s.firmware_dir}", "QEMU_TIMEOUT=60", "sh", qemu_sh, target, app, serial]
    return s.start(f"{target}:{app}", env_argv + [str(a) for a in args])


def run(s, target, qemu_sh, port, router):
    missing = [t for t in TOOLS[target] if shutil.which(t) is None]
    if missing:
        raise Skipped(f"{', '.join(missing)} not found (scripts/test.sh installs them)")
    a, b = serial_pair(s)
    serial_router(s, router, b, port, 170)
    key = f"demo/{target}"

    sub = s.zenoh("zsub", "tsub", port, f"{key}/pub", 3, 60000)
    s.ready(sub)
    pub = firmware(s, qemu_sh, target, "z_pub", a, "-k", f"{key}/pub", "-v", "from the MCU", "-n", 3, "-i", 100)
    s.finish(pub, 90, f"{target} z_pub: 3 puts over the serial line")
    s.finish(sub, 30, "Zenoh subscriber on the router's TCP listener got them")
    s.check(sub.has(f"SAMPLE {key}/pub '[2] from the MCU'"), "payloads intact, in order")
    s.check(pub.wait_line("STACK ", 1) is not None, "z_pub reported its stack high-water mark")
    # (every run fails when its stack's high-water mark reaches the stack's size)

    zq = s.zenoh("zqbl", "queryable", port, f"{key}/q/**", 60000)
    s.ready(zq)
    get = firmware(s, qemu_sh, target, "z_get", a, "-k", f"{key}/q/a?x=1", "-n", 1, "-t", 5000)
    s.finish(get, 90, f"{target} z_get: a reply then the final")
    s.check(get.has(f"REPLY {key}/q/a 'zreply:x=1'"), "the Zenoh queryable's reply came back over the serial line")

    qbl = firmware(s, qemu_sh, target, "z_queryable", a, "-k", f"{key}/pq/**", "-v", "answer from the MCU",
                   "-n", 1, "-t", 30000)
    s.ready(qbl, timeout=60)
    # the declaration may still be on its way to the router: ask again (bounded)
    for attempt in range(5):
        zg = s.zenoh(f"zget{attempt}", "get", port, f"{key}/pq/a?y=2", 1, 3000)
        zg.wait(20)
        if zg.has(f"REPLY {key}/pq/a b'answer from the MCU'"):
            break
    s.check(zg.has(f"REPLY {key}/pq/a b'answer from the MCU'"), "a Zenoh get was answered by the firmware")
    s.finish(qbl, 60, f"{target} z_queryable served the query")

    fsub = firmware(s, qemu_sh, target, "z_sub", a, "-k", f"{key}/sub/**", "-n", 6, "-t", 30000)
    s.ready(fsub, timeout=60)
    zp = s.zenoh("zpub", "pub", port, f"{key}/sub/x", 5, 8)
    s.finish(zp, 30, "Zenoh publisher on TCP")
    s.finish(fsub, 60, f"{target} z_sub: 5 puts and a delete from Zenoh over the serial line")
    s.check(fsub.count(f"SAMPLE {key}/sub/x") == 6, "6 samples")

    lsub = s.zenoh("zlsub", "lsub", port, f"{key}/token/**", 2, 60000)
    s.ready(lsub)
    tok = firmware(s, qemu_sh, target, "z_liveliness", a, "-k", f"{key}/token/mcu", "-t", 1000)
    s.finish(tok, 60, f"{target} z_liveliness: a token declared, then undeclared")
    s.finish(lsub, 30, "a Zenoh liveliness subscriber saw the token come and go")
    s.check(lsub.has(f"SAMPLE SampleKind.PUT {key}/token/mcu") and lsub.has(f"SAMPLE SampleKind.DELETE {key}/token/mcu"),
            "token put and delete")

    # a board that resets mid-session: its next I ends the old session on the router (R) and a new one opens
    held = firmware(s, qemu_sh, target, "z_liveliness", a, "-k", f"{key}/held", "-t", 60000)
    s.ready(held, timeout=60)
    held.kill()
    again = firmware(s, qemu_sh, target, "z_get", a, "-k", f"{key}/q/b", "-n", 1, "-t", 5000)
    s.finish(again, 90, f"{target} after a reset mid-session: a new session, a get answered")
    s.check(again.has(f"REPLY {key}/q/b 'zreply:'"), "the reply came")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target", choices=sorted(TOOLS))
    ap.add_argument("--qemu-sh", required=True)
    ap.add_argument("--firmware-dir", default=None)
    ap.add_argument("--router", choices=["weftd", "zenohd"], default="weftd")
    args = ap.parse_args()
    s = Scenario(argparse.Namespace(bin=None))
    s.firmware_dir = args.firmware_dir or os.path.join(os.path.dirname(os.path.abspath(args.qemu_sh)), "..",
                                                       "build-firmware", args.target)
    try:
        run(s, args.target, os.path.abspath(args.qemu_sh), free_port(), args.router)
    except Skipped as e:
        s.cleanup()
        print(f"skipped: {e}", flush=True)
        return SKIP
    except Exception as e:  # a scenario error is a failure, never a hang
        s.check(False, f"scenario raised {e!r}")
    finally:
        s.cleanup()
    print(f"{s.passed} passed, {s.failed} failed", flush=True)
    return 0 if s.failed == 0 and s.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
