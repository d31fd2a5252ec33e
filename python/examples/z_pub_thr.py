"""Publishes one payload as fast as the session takes it (congestion control block)."""

from common import config, parse, say, zenoh

args = parse(
    "publish as fast as possible",
    size=(8, "payload size in bytes"),
    number=(10_000_000, "stop after this many messages"),
    key=("test/thr", "the key"),
)
payload = bytes(i % 10 for i in range(args.size))
with zenoh.open(config(args)) as session:
    publisher = session.declare_publisher(
        args.key, congestion_control=zenoh.CongestionControl.BLOCK
    )
    say(f"publishing {args.size} B on {args.key}")
    for _ in range(args.number):
        publisher.put(payload)
