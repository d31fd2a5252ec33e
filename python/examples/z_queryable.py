"""Answers the queries on a key expression."""

import threading

from common import config, parse, say, zenoh

args = parse(
    "answer queries",
    key=("demo/example/queryable", "the key expression"),
    payload=("answer from Python", "the answer"),
    count=(0, "exit after this many queries (0: never)"),
)
done = threading.Event()
answered = 0


def on_query(query: zenoh.Query) -> None:
    global answered
    say(f"query {query.selector}")
    query.reply(args.key, args.payload)
    answered += 1
    if args.count and answered >= args.count:
        done.set()


with zenoh.open(config(args)) as session:
    session.declare_queryable(args.key, on_query)
    say("Declared")
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
