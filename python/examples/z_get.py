"""Queries a selector and prints the replies."""

from common import config, parse, say

zenoh, args = parse(
    "query",
    selector=("demo/example/**", "the selector"),
    payload=(None, "a value sent with the query"),
    timeout=(10.0, "seconds to wait for the replies"),
)
with zenoh.open(config(zenoh, args)) as session:
    say(f"Sending Query '{args.selector}'...")
    for reply in session.get(args.selector, payload=args.payload, timeout=args.timeout):
        if reply.ok is not None:
            say(f">> Received ('{reply.ok.key_expr}': '{reply.ok.payload.to_string()}')")
        else:
            say(f">> Received (ERROR: '{reply.err.payload.to_string()}')")
