"""Throughput from Python to Python: one process publishes, another counts in a callback.

Usage:
  thr.py sub --size N [--listen E | --connect E] [--client] [--zenoh [--no-shm]] [--windows K]
  thr.py pub --size N [--listen E | --connect E] [--client] [--zenoh [--no-shm]] [--seconds S]

`sub` counts what its callback receives on bench/thr and, from the first sample on, prints
the rate over each window of --window seconds (K of them) and the subscriber process's CPU
time per message in it, then the medians and the count of samples received, as
`median_msgs_per_s=R median_cpu_ns_per_msg=C received=N`; it gives up after --timeout
seconds without a sample. `pub` puts
payloads of --size bytes on bench/thr (congestion control block) for --seconds, then exits.
Peer sessions by default (multicast scouting off); --client opens client sessions.
THR_KEY in the environment replaces the key (test/thr meets weft's pub-thr and sub-thr).
--no-shm turns Zenoh's shared memory off (with --zenoh: zenoh-python moves large values
between processes of one host through shared memory by default).
"""

import argparse
import json
import os
import statistics
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("role", choices=("sub", "pub"))
parser.add_argument("--size", type=int, default=8)
parser.add_argument("--listen")
parser.add_argument("--connect")
parser.add_argument("--client", action="store_true")
parser.add_argument("--zenoh", action="store_true")
parser.add_argument("--no-shm", action="store_true")
parser.add_argument("--window", type=float, default=1.0)
parser.add_argument("--windows", type=int, default=5)
parser.add_argument("--seconds", type=float, default=10.0)
parser.add_argument("--timeout", type=float, default=30.0)
args = parser.parse_args()
if args.zenoh:
    import zenoh
else:
    import weft as zenoh


def open_session():
    c = zenoh.Config()
    c.insert_json5("mode", '"client"' if args.client else '"peer"')
    c.insert_json5("scouting/multicast/enabled", "false")
    if args.no_shm:
        c.insert_json5("transport/shared_memory/enabled", "false")
    if args.listen:
        c.insert_json5("listen/endpoints", json.dumps([args.listen]))
    if args.connect:
        c.insert_json5("connect/endpoints", json.dumps([args.connect]))
    return zenoh.open(c)


session = open_session()
KEY = os.environ.get("THR_KEY", "bench/thr")

if args.role == "sub":
    count = 0

    def on_sample(_sample):
        global count
        count += 1

    sub = session.declare_subscriber(KEY, on_sample)
    print("ready", flush=True)
    deadline = time.monotonic() + args.timeout
    while count == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if count == 0:
        print("no sample received", file=sys.stderr)
        sys.exit(1)
    rates, costs = [], []
    before, t0, c0 = count, time.perf_counter(), time.process_time()
    for _ in range(args.windows):
        time.sleep(args.window)
        now, t1, c1 = count, time.perf_counter(), time.process_time()
        rates.append((now - before) / (t1 - t0))
        costs.append((c1 - c0) * 1e9 / max(now - before, 1))
        print(f"rate_msgs_per_s={rates[-1]:.0f} cpu_ns_per_msg={costs[-1]:.0f}", flush=True)
        before, t0, c0 = now, t1, c1
    print(
        f"median_msgs_per_s={statistics.median(rates):.0f}"
        f" median_cpu_ns_per_msg={statistics.median(costs):.0f} received={count}",
        flush=True,
    )
    sub.undeclare()
else:
    pub = session.declare_publisher(KEY, congestion_control=zenoh.CongestionControl.BLOCK)
    payload = bytes(args.size)
    put = pub.put
    end = time.monotonic() + args.seconds
    sent = 0
    while True:
        for _ in range(1000):
            put(payload)
        sent += 1000
        if time.monotonic() >= end:
            break
    print(f"sent={sent}", flush=True)
    pub.undeclare()
session.close()
