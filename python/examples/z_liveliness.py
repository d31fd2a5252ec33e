"""Declares a liveliness token: others see the key alive until the program ends."""

import time

from common import config, parse, say, zenoh

args = parse(
    "declare a liveliness token",
    key=("group1/zenoh-py", "the token's key"),
    duration=(0.0, "undeclare the token and exit after this many seconds (0: never)"),
)
with zenoh.open(config(args)) as session:
    token = session.liveliness().declare_token(args.key)
    say(f"token {args.key}")
    try:
        if args.duration:
            time.sleep(args.duration)
        else:
            while True:
                time.sleep(60)
    except KeyboardInterrupt:
        pass
    token.undeclare()
    say("undeclared")
