"""Queries one key expression again and again through a querier, with new parameters
each time, and prints the replies."""

import time

from common import config, parse, say, zenoh

args = parse(
    "query through a querier",
    key=("demo/example/**", "the key expression queried"),
    count=(0, "stop after this many queries (0: never)"),
    period=(1.0, "seconds between two queries"),
    timeout=(10.0, "seconds each query waits for its replies"),
)
with zenoh.open(config(args)) as session:
    querier = session.declare_querier(args.key, timeout=args.timeout)
    i = 0
    while args.count == 0 or i < args.count:
        say(f"query {args.key}?n={i}")
        for reply in querier.get(parameters=f"n={i}"):
            if reply.ok is not None:
                say(f"reply {reply.ok.key_expr} = {reply.ok.payload.to_string()}")
            elif reply.err is not None:
                say(f"error reply: {reply.err.payload.to_string()}")
        i += 1
        time.sleep(args.period)
