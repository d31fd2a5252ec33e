#!/usr/bin/env python3
"""Reads a router's admin space as a Zenoh tool does, for weft's admin-space tests.

Opens an Eclipse Zenoh client session to --connect (multicast scouting off). With
--declare PREFIX, declares what the admin space lists first: a subscriber on
PREFIX/sub/**, a queryable on PREFIX/q/**, a publisher on PREFIX/pub/a, a querier on
PREFIX/querier/** and a liveliness token PREFIX/tok/a; then it waits (at most --timeout
seconds) until a get on `@/*/router/token/PREFIX/**` finds the token, so that every
declaration has reached the router. Then it gets each --get selector and prints one JSON
line per reply: {"selector", "key", "encoding", "payload_hex"} (or {"selector", "error"}),
then `DONE`. The first line is the session's ZenohID: `ZID <zid>`.
"""
import argparse
import json
import sys
import time

import zenoh


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--connect", required=True)
    p.add_argument("--declare", help="key prefix of the declarations to make first")
    p.add_argument("--get", action="append", default=[], help="selector to get (repeatable)")
    p.add_argument("--timeout", type=float, default=10.0)
    args = p.parse_args()

    conf = zenoh.Config()
    conf.insert_json5("mode", '"client"')
    conf.insert_json5("connect/endpoints", json.dumps([args.connect]))
    conf.insert_json5("scouting/multicast/enabled", "false")
    session = zenoh.open(conf)
    print(f"ZID {session.zid()}", flush=True)
    kept = []
    if args.declare:
        prefix = args.declare
        kept.append(session.declare_subscriber(f"{prefix}/sub/**", lambda _s: None))
        kept.append(session.declare_queryable(f"{prefix}/q/**", lambda _q: None))
        kept.append(session.declare_publisher(f"{prefix}/pub/a"))
        kept.append(session.declare_querier(f"{prefix}/querier/**"))
        kept.append(session.liveliness().declare_token(f"{prefix}/tok/a"))
        deadline = time.monotonic() + args.timeout
        while True:
            found = [r for r in session.get(f"@/*/router/token/{prefix}/**", timeout=2)
                     if r.ok is not None]
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    for selector in args.get:
        for reply in session.get(selector, timeout=args.timeout):
            if reply.ok is not None:
                s = reply.ok
                record = {
                    "selector": selector,
                    "key": str(s.key_expr),
                    "encoding": str(s.encoding),
                    "payload_hex": s.payload.to_bytes().hex(),
                }
            else:
                record = {"selector": selector,
                          "error": reply.err.payload.to_bytes().decode("utf-8", "replace")}
            print(json.dumps(record), flush=True)
    print("DONE", flush=True)
    session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
