"""Measures round trips: puts on test/ping, waits for the echo on test/pong (z_pong),
and prints each round trip time and one-way estimate."""

import time

from common import config, parse, say, zenoh

args = parse(
    "measure round trips",
    size=(64, "payload size in bytes"),
    number=(100, "round trips measured"),
    warmup=(1.0, "seconds of round trips before measuring"),
    timeout=(10.0, "seconds to wait for an echo"),
)
payload = bytes(i % 10 for i in range(args.size))
with zenoh.open(config(args)) as session:
    echoes = session.declare_subscriber("test/pong")
    publisher = session.declare_publisher(
        "test/ping", congestion_control=zenoh.CongestionControl.BLOCK, express=True
    )

    def round_trip() -> float:
        """Seconds from a put to its echo; the next put if the echo is late (a pong
        not yet subscribed), failing after --timeout."""
        deadline = time.monotonic() + args.timeout
        while True:
            started = time.perf_counter()
            publisher.put(payload)
            while time.monotonic() < deadline:
                if echoes.try_recv() is not None:
                    return time.perf_counter() - started
                if time.perf_counter() - started > 0.1:
                    break
                time.sleep(0)
            else:
                raise SystemExit("no echo from z_pong")

    warm_until = time.monotonic() + args.warmup
    while time.monotonic() < warm_until:
        round_trip()
    times = sorted(round_trip() for _ in range(args.number))
    for t in times:
        say(f"{args.size} bytes: rtt={t * 1e6:.0f} us, lat={t * 1e6 / 2:.0f} us")
    say(f"p50 rtt={times[len(times) // 2] * 1e6:.0f} us")
