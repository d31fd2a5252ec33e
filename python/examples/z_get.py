"""Queries a selector and prints the replies."""

from common import config, parse, say, zenoh

args = parse(
    "query",
    selector=("demo/example/**", "the selector"),
    payload=(None, "a value sent with the query"),
    timeout=(10.0, "seconds to wait for the replies"),
)
with zenoh.open(config(args)) as session:
    say(f"query {args.selector}")
    for reply in session.get(args.selector, payload=args.payload, timeout=args.timeout):
        if reply.ok is not None:
            say(f"reply {reply.ok.key_expr} = {reply.ok.payload.to_string()}")
        elif reply.err is not None:
            say(f"error reply: {reply.err.payload.to_string()}")
