"""Prints the liveliness tokens that appear and disappear on a key expression."""

import threading

from common import config, parse, say, zenoh

args = parse(
    "watch liveliness tokens",
    key=("group1/**", "the key expression"),
    history=(False, "also tell the tokens alive before the subscription"),
    count=(0, "exit after this many changes (0: never)"),
)
done = threading.Event()
changes = 0


def listener(sample: zenoh.Sample) -> None:
    global changes
    if sample.kind == zenoh.SampleKind.PUT:
        say(f"alive {sample.key_expr}")
    else:
        say(f"dropped {sample.key_expr}")
    changes += 1
    if args.count and changes >= args.count:
        done.set()


with zenoh.open(config(args)) as session:
    session.liveliness().declare_subscriber(args.key, listener, history=args.history)
    say("Subscribed")
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
