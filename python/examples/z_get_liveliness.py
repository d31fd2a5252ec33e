"""Prints the liveliness tokens alive now on a key expression."""

from common import config, parse, say, zenoh

args = parse(
    "list the liveliness tokens alive",
    key=("group1/**", "the key expression"),
    timeout=(10.0, "seconds to wait for the answers"),
)
with zenoh.open(config(args)) as session:
    say(f"alive on {args.key}:")
    for reply in session.liveliness().get(args.key, timeout=args.timeout):
        if reply.ok is not None:
            say(f"alive {reply.ok.key_expr}")
        elif reply.err is not None:
            say(f"error reply: {reply.err.payload.to_string()}")
