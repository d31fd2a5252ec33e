"""Looks for Zenoh routers and peers (multicast scouting) for a while, and prints each
one found."""

import threading

from common import config, parse, say, zenoh

args = parse(
    "scout for routers and peers",
    what=("peer|router", "what to look for"),
    timeout=(1.0, "seconds to look for"),
)
scout = zenoh.scout(what=args.what, config=config(args))
threading.Timer(args.timeout, scout.stop).start()
found = 0
for hello in scout:
    say(f"{hello.whatami} {hello.zid} {hello.locators}")
    found += 1
say(f"found {found}")
