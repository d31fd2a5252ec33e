"""Puts one value on a key."""

from common import config, parse, say, zenoh

args = parse(
    "put a value", key=("demo/example/put", "the key"), payload=("hello from Python", "the value")
)
with zenoh.open(config(args)) as session:
    say(f"put {args.key} = {args.payload}")
    session.put(args.key, args.payload)
