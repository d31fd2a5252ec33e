"""Prints the samples received on a key expression (a callback subscriber)."""

import threading

from common import config, parse, say, zenoh

args = parse(
    "subscribe",
    key=("demo/example/**", "the key expression"),
    count=(0, "exit after this many samples (0: never)"),
)
done = threading.Event()
received = 0


def listener(sample: zenoh.Sample) -> None:
    global received
    say(f"{sample.kind} {sample.key_expr} = {sample.payload.to_string()}")
    received += 1
    if args.count and received >= args.count:
        done.set()


with zenoh.open(config(args)) as session:
    session.declare_subscriber(args.key, listener)
    say("Subscribed")
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
