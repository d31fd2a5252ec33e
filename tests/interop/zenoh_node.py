#!/usr/bin/env python3
"""An Eclipse Zenoh node for weft's interop tests, driven from the command line.

Opens a Zenoh session (router, peer or client) on loopback with multicast scouting off,
optionally declares a subscriber, prints `READY` once open, then one JSON line per
received sample, and exits after --count samples or --timeout seconds (status 0 if the
count was reached, 3 on timeout).
"""
import argparse
import hashlib
import json
import sys
import threading
import time

import zenoh


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--mode", choices=["router", "peer", "client"], default="router")
    p.add_argument("--listen", action="append", default=[])
    p.add_argument("--connect", action="append", default=[])
    p.add_argument("--sub", help="key expression to subscribe to")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--timeout", type=float, default=10.0)
    args = p.parse_args()

    conf = zenoh.Config()
    conf.insert_json5("mode", json.dumps(args.mode))
    conf.insert_json5("listen/endpoints", json.dumps(args.listen))
    conf.insert_json5("connect/endpoints", json.dumps(args.connect))
    conf.insert_json5("scouting/multicast/enabled", "false")
    conf.insert_json5("scouting/gossip/enabled", "false")
    session = zenoh.open(conf)

    received = []
    done = threading.Event()
    lock = threading.Lock()

    def on_sample(sample):
        payload = sample.payload.to_bytes()
        record = {
            "kind": "put" if sample.kind == zenoh.SampleKind.PUT else "delete",
            "key": str(sample.key_expr),
            "len": len(payload),
            "sha256": hashlib.sha256(payload).hexdigest(),
            "payload": payload[:256].decode("utf-8", "replace"),
            "encoding": str(sample.encoding),
            "attachment": None
            if sample.attachment is None
            else sample.attachment.to_bytes().decode("utf-8", "replace"),
        }
        with lock:
            received.append(record)
            print(json.dumps(record), flush=True)
            if len(received) >= args.count:
                done.set()

    sub = session.declare_subscriber(args.sub, on_sample) if args.sub else None
    print("READY", flush=True)
    ok = done.wait(args.timeout) if sub else (time.sleep(args.timeout) or True)
    session.close()
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
