"""Measures one implementation through a router: put throughput (64-byte values from one
client session to a callback subscriber in another) and get round trips.

Usage: pubsub.py ENDPOINT [--zenoh] [--count N]; prints one JSON line.
"""

import argparse
import json
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("endpoint")
parser.add_argument("--zenoh", action="store_true")
parser.add_argument("--count", type=int, default=200_000)
parser.add_argument("--gets", type=int, default=2_000)
args = parser.parse_args()
if args.zenoh:
    import zenoh
else:
    import weft as zenoh


def session():
    c = zenoh.Config()
    c.insert_json5("mode", '"client"')
    c.insert_json5("connect/endpoints", json.dumps([args.endpoint]))
    c.insert_json5("scouting/multicast/enabled", "false")
    return zenoh.open(c)


sub_session, pub_session = session(), session()
received = 0
first = threading.Event()
last = threading.Event()


def on_sample(sample):
    global received
    received += 1
    first.set()
    if sample.payload.to_bytes()[:3] == b"end":
        last.set()


sub_session.declare_subscriber("bench/**", on_sample)
publisher = pub_session.declare_publisher(
    "bench/data", congestion_control=zenoh.CongestionControl.BLOCK
)
while not first.wait(0.05):
    publisher.put(b"warm")
payload = bytes(64)
received = 0
start = time.perf_counter()
for _ in range(args.count):
    publisher.put(payload)
publisher.put(b"end" + bytes(61))
sent = time.perf_counter() - start
last.wait(60)
elapsed = time.perf_counter() - start

sub_session.declare_queryable("rpc/echo", lambda q: q.reply(q.key_expr, b"pong"))
while not list(pub_session.get("rpc/echo", timeout=1.0)):
    pass
t0 = time.perf_counter()
for _ in range(args.gets):
    replies = list(pub_session.get("rpc/echo"))
    assert len(replies) == 1
rtt = (time.perf_counter() - t0) / args.gets

print(
    json.dumps(
        {
            "impl": "zenoh-python" if args.zenoh else "weft",
            "put_per_s": round(args.count / sent),
            "delivered_per_s": round(received / elapsed),
            "delivered": received,
            "get_rtt_us": round(rtt * 1e6, 1),
        }
    )
)
sub_session.close()
pub_session.close()
