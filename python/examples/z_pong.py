"""Sends back on test/pong every sample received on test/ping (for z_ping)."""

import threading

from common import config, parse, say, zenoh

args = parse("echo pings", count=(0, "exit after this many echoes (0: never)"))
done = threading.Event()
echoed = 0

with zenoh.open(config(args)) as session:
    publisher = session.declare_publisher(
        "test/pong", congestion_control=zenoh.CongestionControl.BLOCK, express=True
    )

    def echo(sample: zenoh.Sample) -> None:
        global echoed
        publisher.put(sample.payload)
        echoed += 1
        if args.count and echoed >= args.count:
            done.set()

    session.declare_subscriber("test/ping", echo)
    say("Ready")
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
