"""Publishes numbered values on a key, through a publisher."""

import time

from common import config, parse, say, zenoh

args = parse(
    "publish values",
    key=("demo/example/pub", "the key"),
    payload=("hello from Python", "the value"),
    count=(0, "stop after this many values (0: never)"),
    period=(1.0, "seconds between two values"),
)
with zenoh.open(config(args)) as session:
    publisher = session.declare_publisher(args.key)
    i = 0
    while args.count == 0 or i < args.count:
        text = f"#{i} {args.payload}"
        say(f"publish {args.key} = {text}")
        publisher.put(text)
        i += 1
        time.sleep(args.period)
