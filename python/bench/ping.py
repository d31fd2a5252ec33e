"""Round trips from Python to Python: `ping` puts on bench/ping and waits for the echo on
bench/pong (a channel subscriber's recv()); `pong` echoes each ping from its callback.

Usage:
  ping.py pong [--listen E | --connect E] [--zenoh] [--seconds S]
  ping.py ping [--listen E | --connect E] [--zenoh] [--size N] [--count N] [--warmup N]

`ping` prints the one-way latency (half the round trip) in microseconds:
`p50_us=... p99_us=... samples=N`. Peer sessions, multicast scouting off, publishers
express (not batched).
"""

import argparse
import json
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("role", choices=("ping", "pong"))
parser.add_argument("--listen")
parser.add_argument("--connect")
parser.add_argument("--zenoh", action="store_true")
parser.add_argument("--size", type=int, default=64)
parser.add_argument("--count", type=int, default=20_000)
parser.add_argument("--warmup", type=int, default=1_000)
parser.add_argument("--seconds", type=float, default=60.0)
parser.add_argument("--timeout", type=float, default=30.0)
args = parser.parse_args()
if args.zenoh:
    import zenoh
else:
    import weft as zenoh

c = zenoh.Config()
c.insert_json5("mode", '"peer"')
c.insert_json5("scouting/multicast/enabled", "false")
if args.listen:
    c.insert_json5("listen/endpoints", json.dumps([args.listen]))
if args.connect:
    c.insert_json5("connect/endpoints", json.dumps([args.connect]))
session = zenoh.open(c)
block = zenoh.CongestionControl.BLOCK

if args.role == "pong":
    pub = session.declare_publisher("bench/pong", congestion_control=block, express=True)
    put = pub.put
    sub = session.declare_subscriber("bench/ping", lambda s: put(s.payload))
    print("ready", flush=True)
    time.sleep(args.seconds)
    sub.undeclare()
    pub.undeclare()
else:
    pub = session.declare_publisher("bench/ping", congestion_control=block, express=True)
    sub = session.declare_subscriber("bench/pong")
    payload = bytes(args.size)
    # Until the pong answers (its subscriber declared and routes known both ways).
    deadline = time.monotonic() + args.timeout
    while sub.try_recv() is None:
        if time.monotonic() > deadline:
            print("no answer from the pong", file=sys.stderr)
            sys.exit(1)
        pub.put(payload)
        time.sleep(0.05)
    time.sleep(0.2)
    while sub.try_recv() is not None:
        pass
    put, recv, clock = pub.put, sub.recv, time.perf_counter
    for _ in range(args.warmup):
        put(payload)
        recv()
    rtts = []
    for _ in range(args.count):
        t0 = clock()
        put(payload)
        recv()
        rtts.append(clock() - t0)
    rtts.sort()
    n = len(rtts)
    p50 = rtts[n // 2] / 2 * 1e6
    p99 = rtts[min(n - 1, n * 99 // 100)] / 2 * 1e6
    print(f"p50_us={p50:.1f} p99_us={p99:.1f} samples={n}", flush=True)
    sub.undeclare()
    pub.undeclare()
session.close()
