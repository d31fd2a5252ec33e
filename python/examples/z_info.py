"""Prints this session's ZenohID and those of the routers and peers it is connected to."""

from common import config, parse, say, zenoh

args = parse("print the session's and its neighbours' ids")
with zenoh.open(config(args)) as session:
    info = session.info
    say(f"zid: {info.zid()}")
    say(f"routers: {sorted(str(z) for z in info.routers_zid())}")
    say(f"peers: {sorted(str(z) for z in info.peers_zid())}")
