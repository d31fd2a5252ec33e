"""Deletes a key."""

from common import config, parse, say, zenoh

args = parse("delete a key", key=("demo/example/put", "the key"))
with zenoh.open(config(args)) as session:
    say(f"delete {args.key}")
    session.delete(args.key)
