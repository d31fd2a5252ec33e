"""Measures the cost of a publisher's put from Python through a router: without a
subscriber (nothing is sent), then with a callback subscriber in a second session of
the same process, for congestion control DROP and BLOCK.

Usage: put.py ENDPOINT [--zenoh] [--count N]; prints one line per case.
"""

import argparse
import json
import time

parser = argparse.ArgumentParser()
parser.add_argument("endpoint")
parser.add_argument("--zenoh", action="store_true")
parser.add_argument("--count", type=int, default=200_000)
args = parser.parse_args()
if args.zenoh:
    import zenoh
else:
    import weft as zenoh

config = zenoh.Config()
config.insert_json5("mode", '"client"')
config.insert_json5("connect/endpoints", json.dumps([args.endpoint]))
config.insert_json5("scouting/multicast/enabled", "false")
publishing, subscribing = zenoh.open(config), zenoh.open(config)
payload = bytes(64)
modes = (zenoh.CongestionControl.DROP, zenoh.CongestionControl.BLOCK)


def rate(congestion):
    publisher = publishing.declare_publisher("bench/put", congestion_control=congestion)
    start = time.perf_counter()
    for _ in range(args.count):
        publisher.put(payload)
    publisher.undeclare()
    return round(args.count / (time.perf_counter() - start))


for mode in modes:
    print(f"no subscriber, {mode}: {rate(mode)} puts/s")
seen = []
subscribing.declare_subscriber("bench/**", lambda s: seen.append(1) if not seen else None)
while not seen:
    publishing.put("bench/probe", b"")
for mode in modes:
    print(f"callback subscriber, {mode}: {rate(mode)} puts/s")
publishing.close()
subscribing.close()
