"""Reads the latest samples of a key expression from a ring channel, at its own pace."""

import time

from common import config, parse, say, zenoh

args = parse(
    "pull from a ring channel",
    key=("demo/example/**", "the key expression"),
    size=(3, "how many samples the ring keeps"),
    interval=(1.0, "seconds between two pulls"),
    rounds=(0, "exit after this many pulls (0: never)"),
)
with zenoh.open(config(args)) as session:
    sub = session.declare_subscriber(args.key, zenoh.handlers.RingChannel(args.size))
    say("Subscribed")
    n = 0
    while args.rounds == 0 or n < args.rounds:
        time.sleep(args.interval)
        while (sample := sub.try_recv()) is not None:
            say(f"{sample.kind} {sample.key_expr} = {sample.payload.to_string()}")
        n += 1
