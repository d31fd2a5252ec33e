"""A storage in memory: keeps the latest sample of each key under a key expression and
answers the queries on it."""

import threading

from common import config, parse, say, zenoh

args = parse(
    "store and serve samples",
    key=("demo/example/**", "the key expression stored"),
    complete=(False, "declare the queryable complete"),
)
store: dict[str, zenoh.Sample] = {}
lock = threading.Lock()


def on_sample(sample: zenoh.Sample) -> None:
    with lock:
        if sample.kind == zenoh.SampleKind.DELETE:
            store.pop(str(sample.key_expr), None)
        else:
            store[str(sample.key_expr)] = sample
    say(f"{sample.kind} {sample.key_expr}")


def on_query(query: zenoh.Query) -> None:
    with lock:
        matching = [s for k, s in store.items() if query.key_expr.intersects(k)]
    for sample in matching:
        query.reply(sample.key_expr, sample.payload, encoding=sample.encoding)


with zenoh.open(config(args)) as session:
    session.declare_subscriber(args.key, on_sample)
    session.declare_queryable(args.key, on_query, complete=args.complete)
    say("Storing")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
