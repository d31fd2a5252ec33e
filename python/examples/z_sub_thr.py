"""Counts the samples received on a key and prints the rate, once per round of
--number samples, for --samples rounds."""

import threading
import time

from common import config, parse, say, zenoh

args = parse(
    "measure the rate received",
    number=(100_000, "samples per round"),
    samples=(10, "rounds before exiting"),
    key=("test/thr", "the key"),
)
done = threading.Event()
count = 0
rounds = 0
start = 0.0


def listener(_sample: zenoh.Sample) -> None:
    global count, rounds, start
    if rounds == args.samples:
        return
    if count == 0:
        start = time.perf_counter()
    count += 1
    if count == args.number:
        say(f"{args.number / (time.perf_counter() - start):.0f} msg/s")
        count = 0
        rounds += 1
        if rounds == args.samples:
            done.set()


with zenoh.open(config(args)) as session:
    session.declare_subscriber(args.key, listener)
    say("Subscribed")
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
