#!/usr/bin/env python3
"""zenoh-ext's advanced publisher and subscriber (what rmw_zenoh builds ROS 2 topics on)
through a router, with Eclipse Zenoh's zenoh-python: four sessions of the router at
ENDPOINT, in --mode client (everything goes through the router) or peer (as rmw_zenoh's
sessions: each listens, and learns of the others by the router's gossip).

1. A publisher with a cache of 10 samples, miss detection (heartbeats) and publisher
   detection publishes h0..h4 before anyone subscribes.
2. An advanced subscriber asking for history, with late publisher detection and
   heartbeat recovery, must get h0..h4 from the cache.
3. A late publisher (another session, its own cache) publishes l0..l2: the subscriber
   detects it and must get all three.
4. The first publisher publishes h5..h7 live: the subscriber must have h0..h7 in order.
5. A plain subscriber sees the source info of each sample: the publisher's id and the
   sequence numbers 0, 1, 2 … (what miss detection counts on).

Prints one JSON line: {"history", "late", "live", "plain_sns", "plain_source_is_publisher",
"misses"}. Every wait is bounded (--timeout seconds each); exits 0 once done.
"""
import argparse
import json
import threading
import time

import zenoh
from zenoh import ext

parser = argparse.ArgumentParser()
parser.add_argument("endpoint")
parser.add_argument("--mode", choices=["client", "peer"], default="client")
parser.add_argument("--timeout", type=float, default=10.0)
args = parser.parse_args()


def session():
    c = zenoh.Config()
    c.insert_json5("mode", json.dumps(args.mode))
    c.insert_json5("connect/endpoints", json.dumps([args.endpoint]))
    c.insert_json5("scouting/multicast/enabled", "false")
    if args.mode == "peer":
        # As rmw_zenoh's sessions: each peer listens, and the router's gossip tells the
        # peers of each other, which then connect directly (routers do not carry data
        # from peer to peer).
        c.insert_json5("listen/endpoints", '["tcp/127.0.0.1:0"]')
        c.insert_json5("scouting/gossip/enabled", "true")
    else:
        c.insert_json5("scouting/gossip/enabled", "false")
    # The late publisher's sequencing by timestamp needs timestamps.
    c.insert_json5("timestamping/enabled", "true")
    return zenoh.open(c)


def wait_for(condition):
    deadline = time.monotonic() + args.timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def heartbeats():
    return ext.MissDetectionConfig(heartbeat=0.2, sporadic_heartbeat=None)


publishing, subscribing, late_publishing, watching = session(), session(), session(), session()
if args.mode == "peer":
    for s in (publishing, subscribing, late_publishing, watching):
        wait_for(lambda: len(list(s.info.peers_zid())) >= 3)
lock = threading.RLock()
got = []
plain = []
misses = []


def on_sample(sample):
    with lock:
        got.append(sample.payload.to_string())


def on_plain(sample):
    info = sample.source_info
    with lock:
        plain.append((sample.payload.to_string(), str(info.source_id.zid), info.source_sn))


def received(prefix):
    with lock:
        return [g for g in got if g.startswith(prefix)]


watcher = watching.declare_subscriber("ros/chatter", on_plain)
publisher = ext.declare_advanced_publisher(
    publishing,
    "ros/chatter",
    cache=ext.CacheConfig(max_samples=10),
    sample_miss_detection=heartbeats(),
    publisher_detection=True,
)
# The plain subscriber must be known to the router before the first put: put a probe
# (a plain put, not the advanced publisher's: its sequence numbers stay from 0) until the
# same session's later subscriber gets it.
subscriber_ready = threading.Event()
_probe = watching.declare_subscriber("ros/probe", lambda s: subscriber_ready.set())
deadline = time.monotonic() + args.timeout
while not subscriber_ready.is_set() and time.monotonic() < deadline:
    publishing.put("ros/probe", b"")
    subscriber_ready.wait(0.05)
for i in range(5):
    publisher.put(f"h{i}")

subscriber = ext.declare_advanced_subscriber(
    subscribing,
    "ros/**",
    on_sample,
    history=ext.HistoryConfig(detect_late_publishers=True, max_samples=10),
    recovery=ext.RecoveryConfig(periodic_queries=None, heartbeat=True),
    subscriber_detection=True,
)
subscriber.sample_miss_listener(lambda miss: misses.append(miss.nb))
wait_for(lambda: len(received("h")) >= 5)
history = received("h")

late = ext.declare_advanced_publisher(
    late_publishing,
    "ros/late",
    cache=ext.CacheConfig(max_samples=3),
    sample_miss_detection=heartbeats(),
    publisher_detection=True,
)
for i in range(3):
    late.put(f"l{i}")
wait_for(lambda: len(received("l")) >= 3)

for i in range(5, 8):
    publisher.put(f"h{i}")
wait_for(lambda: len(received("h")) >= 8)
wait_for(lambda: len(plain) >= 8)

with lock:
    result = {
        "history": history,
        "late": received("l"),
        "live": received("h"),
        "plain_sns": [sn for _, _, sn in plain],
        "plain_source_is_publisher": all(z == str(publishing.zid()) for _, z, _ in plain),
        "misses": sum(misses),
    }
print(json.dumps(result), flush=True)
for s in (publishing, subscribing, late_publishing, watching):
    s.close()
