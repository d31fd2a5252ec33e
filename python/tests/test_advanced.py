"""zenoh.ext's advanced publisher and subscriber: weft's facing zenoh-python's (each
publishing to the other) and weft's facing its own, through weftd (clients) and peer to
peer. History from the publisher's cache, live samples in order with their sequence
numbers, late publishers, publisher detection, samples really lost (the subscriber's
process is stopped while a publisher floods it) reported as misses, or recovered from
the cache."""

import json
import signal
import subprocess
import sys
import time

import pytest

from conftest import TIMEOUT, Node, free_port, until, wait_for_port, zenoh_python

# (publisher, subscriber): which implementation runs each side.
SIDES = [("weft", "zenoh"), ("zenoh", "weft"), ("weft", "weft")]


@pytest.fixture
def pair(request, weftd):
    """start(pub_impl, sub_impl, topology) -> (publishing node, subscribing node), their
    sessions connected (a probe sample went from one to the other): both clients of
    weftd, or peers (the publisher's listening, the subscriber's connecting to it). The
    subscribing node has a plain subscriber to ``adv/**`` too (see ``put_and_settle``)."""
    nodes = []

    def start(pub_impl, sub_impl, topology):
        if topology == "client":
            pub = Node(weftd, pub_impl == "zenoh")
            nodes.append(pub)
            sub = Node(weftd, sub_impl == "zenoh")
            nodes.append(sub)
        else:
            port = free_port()
            endpoint = f"tcp/127.0.0.1:{port}"
            pub = Node(endpoint, pub_impl == "zenoh", listen=True)
            nodes.append(pub)
            wait_for_port(port, pub.proc)
            sub = Node(endpoint, sub_impl == "zenoh", peer=True)
            nodes.append(sub)
        sub.send(op="sub", key="adv/**")

        def probed(timeout):
            e = sub.poll(timeout)
            return e if e and e.get("event") == "sample" else None

        until(probed, lambda: pub.send(op="put", key="adv/probe", payload="p"))
        return pub, sub

    yield start
    for n in nodes:
        if n.proc.poll() is None:
            n.proc.send_signal(signal.SIGCONT)
        n.close()


def take(node, count):
    """The next `count` adv_sample events of `node`."""
    return [node.wait(lambda e: e.get("event") == "adv_sample") for _ in range(count)]


def quiet(node, seconds=0.5):
    """Whether the node's advanced subscriber delivers nothing more (no sample, no miss)
    for `seconds`."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        e = node.poll(left)
        if e is not None and e.get("event") in ("adv_sample", "miss"):
            return False
    return True


def put_and_settle(pub, sub, payloads):
    """Publishes `payloads` with the advanced publisher, and waits until the subscribing
    node's plain subscriber got them all: they are past the router then, so that an
    advanced subscriber declared afterwards can only get them from the cache."""
    pub.send(op="adv_put", payloads=payloads)
    for p in payloads:
        sub.wait(lambda e: e.get("event") == "sample" and e["payload"] == p)


def command(node, **cmd):
    """Sends a command without waiting for its acknowledgement (``Node.send`` drops the
    events before it: a subscriber's first samples may come before)."""
    node.proc.stdin.write(json.dumps(cmd) + "\n")
    node.proc.stdin.flush()


def declare_publisher(pub, key, **options):
    """Declares the node's advanced publisher; returns its id."""
    command(pub, op="adv_pub", key=key, **options)
    return pub.wait(lambda e: e.get("event") == "adv_pub")["id"]


@pytest.mark.parametrize("topology", ["client", "peer"])
@pytest.mark.parametrize("pub_impl,sub_impl", SIDES)
def test_history_from_the_cache_then_live_samples_in_order(pair, pub_impl, sub_impl, topology):
    pub, sub = pair(pub_impl, sub_impl, topology)
    # (No late publisher detection here: a subscriber that detects a publisher present
    # already queries it twice at once, and zenoh-python's may then deliver the replies
    # of the second query first and drop the first ones as duplicates.)
    pid = declare_publisher(pub, "adv/h/x", cache=10, heartbeat=0.2, detection=True)
    put_and_settle(pub, sub, [f"h{i}" for i in range(5)])
    # A subscriber declared afterwards gets the history from the publisher's cache.
    command(sub, op="adv_sub", key="adv/h/**", history=10, recovery="heartbeat")
    got = take(sub, 5)
    assert [e["payload"] for e in got] == [f"h{i}" for i in range(5)]
    assert [e["sn"] for e in got] == list(range(5))
    assert all(e["source"] == pid and e["key"] == "adv/h/x" for e in got)
    pub.send(op="adv_put", payloads=[f"h{i}" for i in range(5, 8)])
    got = take(sub, 3)
    assert [(e["payload"], e["sn"]) for e in got] == [(f"h{i}", i) for i in range(5, 8)]
    # Nothing was missed, and no sample came twice.
    assert quiet(sub)


@pytest.mark.parametrize("pub_impl", ["weft", "zenoh"])
def test_history_with_late_publisher_detection_of_a_present_publisher(pair, pub_impl):
    # Two queries at once (all publishers, and the one detected): weft's subscriber
    # delivers the publisher's samples once each, in order, whichever replies come first.
    pub, sub = pair(pub_impl, "weft", "client")
    declare_publisher(pub, "adv/p/x", cache=10, heartbeat=0.2, detection=True)
    put_and_settle(pub, sub, [f"p{i}" for i in range(5)])
    command(sub, op="adv_sub", key="adv/p/**", history=10, late=True, recovery="heartbeat")
    got = take(sub, 5)
    assert [(e["payload"], e["sn"]) for e in got] == [(f"p{i}", i) for i in range(5)]
    assert quiet(sub)


@pytest.mark.parametrize("pub_impl,sub_impl", SIDES)
def test_history_is_limited_to_max_samples(pair, pub_impl, sub_impl):
    pub, sub = pair(pub_impl, sub_impl, "client")
    declare_publisher(pub, "adv/m/x", cache=10, heartbeat=None)
    put_and_settle(pub, sub, [f"m{i}" for i in range(6)])
    command(sub, op="adv_sub", key="adv/m/x", history=2)
    got = take(sub, 2)
    assert [(e["payload"], e["sn"]) for e in got] == [("m4", 4), ("m5", 5)]
    pub.send(op="adv_put", payloads=["m6"])
    assert [(e["payload"], e["sn"]) for e in take(sub, 1)] == [("m6", 6)]


@pytest.mark.parametrize("pub_impl,sub_impl", SIDES)
def test_a_late_publisher_is_detected_and_its_samples_delivered(pair, pub_impl, sub_impl):
    pub, sub = pair(pub_impl, sub_impl, "client")
    command(sub, op="adv_sub", key="adv/l/**", history=10, late=True, recovery="heartbeat")
    command(sub, op="detect")
    pid = declare_publisher(pub, "adv/l/x", cache=3, heartbeat=0.2, detection=True)
    token = sub.wait(lambda e: e.get("event") == "publisher")
    assert token["kind"] == "put"
    assert token["key"] == f"adv/l/x/@adv/pub/{pid['zid']}/{pid['eid']}/_"
    pub.send(op="adv_put", payloads=["l0", "l1", "l2"])
    got = take(sub, 3)
    assert [(e["payload"], e["sn"]) for e in got] == [("l0", 0), ("l1", 1), ("l2", 2)]
    assert quiet(sub)


# How many samples (of SIZE bytes) a publisher sends while its subscriber's process is
# stopped: far more than the buffers on the way hold, so that some are dropped. On keys
# outside `adv/**`, which the subscribing node's plain subscriber would report whole.
FLOOD, SIZE = 400, 64 * 1024


def flood_while_stopped(pub, sub):
    """Stops the subscriber's process, publishes FLOOD samples (congestion control
    DROP: what does not fit is lost), and resumes it."""
    sub.proc.send_signal(signal.SIGSTOP)
    try:
        pub.send(op="adv_put", count=FLOOD, size=SIZE)
    finally:
        sub.proc.send_signal(signal.SIGCONT)


def until_last(pub, sub, timeout=2 * TIMEOUT):
    """The subscriber's samples and misses after a flood, up to a sample ``last``: put
    whenever the subscriber is idle (one put right after the flood could meet a queue
    still full, and be dropped too). Returns (sequence numbers, miss events)."""
    received, misses = [], []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        e = sub.poll(0.5)
        if e is None:
            pub.send(op="adv_put", payloads=["last"])
        elif e.get("event") == "miss":
            misses.append(e)
        elif e.get("event") == "adv_sample":
            received.append(e["sn"])
            if e["payload"] == "last":
                return received, misses
    pytest.fail("the last sample never came")


@pytest.mark.parametrize("topology", ["client", "peer"])
@pytest.mark.parametrize("pub_impl,sub_impl", SIDES)
def test_lost_samples_are_reported_as_misses(pair, pub_impl, sub_impl, topology):
    pub, sub = pair(pub_impl, sub_impl, topology)
    pid = declare_publisher(pub, "flood/miss/x", heartbeat=None)
    command(sub, op="adv_sub", key="flood/miss/x")

    def first(timeout):
        e = sub.poll(timeout)
        return e if e and e.get("event") == "adv_sample" else None

    # Samples put before the subscriber is known to the publisher's side are not lost:
    # they were never sent. Put until one arrives; its number starts the count.
    start = until(first, lambda: pub.send(op="adv_put", payloads=["first"]), every=0.2)["sn"]
    flood_while_stopped(pub, sub)
    after, misses = until_last(pub, sub)
    received = [start] + after
    assert received == sorted(set(received)), "in order, each once"
    lost = received[-1] - received[0] + 1 - len(received)
    assert lost > 0, "the flood lost nothing: FLOOD is too small for this machine"
    # zenoh-python calls the miss listener on a thread of its own: its last reports may
    # come after the sample that follows the gap.
    while sum(m["nb"] for m in misses) < lost:
        misses.append(sub.wait(lambda e: e.get("event") == "miss"))
    gaps = [b - a - 1 for a, b in zip(received, received[1:]) if b - a > 1]
    assert sorted(m["nb"] for m in misses) == sorted(gaps)
    assert all(m["source"] == pid for m in misses)


@pytest.mark.parametrize("recovery", ["heartbeat", "periodic"])
@pytest.mark.parametrize("pub_impl,sub_impl", SIDES)
def test_lost_samples_are_recovered_from_the_cache(pair, pub_impl, sub_impl, recovery):
    pub, sub = pair(pub_impl, sub_impl, "client")
    declare_publisher(pub, "flood/rec/x", cache=FLOOD + 50, heartbeat=0.2)
    command(sub, op="adv_sub", key="flood/rec/x", history=FLOOD + 50, recovery=recovery, period=0.3)

    def first(timeout):
        e = sub.poll(timeout)
        return e if e and e.get("event") == "adv_sample" else None

    start = until(first, lambda: pub.send(op="adv_put", payloads=["first"]), every=0.2)["sn"]
    flood_while_stopped(pub, sub)
    after, misses = until_last(pub, sub)
    assert not misses, "a miss despite the cache"
    received = [start] + after
    assert received == list(range(start, start + len(received)))


# zenoh-python's publisher stamps samples only when its session's timestamping is on
# (node.py leaves it off), and its cache filters by age only samples with a timestamp.
@pytest.mark.parametrize("pub_impl,sub_impl", [("weft", "zenoh"), ("weft", "weft")])
def test_history_is_limited_to_max_age(pair, pub_impl, sub_impl):
    pub, sub = pair(pub_impl, sub_impl, "client")
    declare_publisher(pub, "adv/age/x", cache=10, heartbeat=None)
    put_and_settle(pub, sub, ["old"])
    aged = time.monotonic() + 1.0
    while time.monotonic() < aged:  # the sample must be older than max_age
        time.sleep(aged - time.monotonic())
    put_and_settle(pub, sub, ["new"])
    command(sub, op="adv_sub", key="adv/age/x", history=0, max_age=0.8)
    assert [(e["payload"], e["sn"]) for e in take(sub, 1)] == [("new", 1)]
    assert quiet(sub)


CONFIGS = """
import json, sys
from datetime import timedelta
if sys.argv[1] == "zenoh":
    from zenoh import ext
else:
    from weft import ext
def outcome(f):
    try:
        f()
        return "ok"
    except Exception as e:
        return type(e).__name__
cases = [
    lambda: ext.RecoveryConfig(),
    lambda: ext.RecoveryConfig(heartbeat=True),
    lambda: ext.RecoveryConfig(periodic_queries=timedelta(seconds=1)),
    lambda: ext.RecoveryConfig(periodic_queries=timedelta(seconds=1), heartbeat=True),
    lambda: ext.MissDetectionConfig(),
    lambda: ext.MissDetectionConfig(heartbeat=0.5),
    lambda: ext.MissDetectionConfig(heartbeat="x"),
    lambda: ext.HistoryConfig(max_samples=-1),
    lambda: ext.HistoryConfig(max_age=timedelta(seconds=1)),
    lambda: ext.HistoryConfig(detect_late_publishers=True, max_samples=3, max_age=1.5),
    lambda: ext.CacheConfig(),
    lambda: ext.CacheConfig(-1),
    lambda: ext.CacheConfig(5, replies_config=ext.RepliesConfig(express=True)),
]
print(json.dumps([outcome(c) for c in cases]))
"""


def test_settings_are_checked_as_zenoh_python_checks_them():
    def run(python, impl):
        done = subprocess.run([python, "-c", CONFIGS, impl], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert run(sys.executable, "weft") == run(zenoh_python(), "zenoh")


def test_channel_handlers_context_managers_and_undeclaring(client):
    import weft
    from weft import ext

    a, b = client(), client()
    with ext.declare_advanced_publisher(
        a, "adv/ch/x", cache=ext.CacheConfig(3), sample_miss_detection=ext.MissDetectionConfig()
    ) as pub:
        assert str(pub.id.zid) == str(a.zid()) and str(pub.key_expr) == "adv/ch/x"
        for i in range(3):
            pub.put(f"c{i}")
        with ext.declare_advanced_subscriber(
            b, "adv/ch/x", weft.handlers.FifoChannel(8), history=ext.HistoryConfig()
        ) as sub:
            assert str(sub.key_expr) == "adv/ch/x"
            assert str(sub.id.zid) == str(b.zid()) and sub.id != pub.id
            misses = sub.sample_miss_listener()
            assert misses.try_recv() is None
            got = [sub.recv().payload.to_string() for _ in range(3)]
            assert got == ["c0", "c1", "c2"]
            live = until(lambda t: sub.try_recv(), lambda: pub.put("live"))
            assert live.payload.to_string() == "live"
            misses.undeclare()
        with pytest.raises(weft.ZError):
            sub.recv()
        with pytest.raises(weft.ZError):
            sub.undeclare()
    with pytest.raises(weft.ZError):
        pub.put("after")


def test_a_dropped_callback_subscriber_runs_on_with_its_detection_token(client):
    import queue

    from weft import ext

    a, b = client(), client()
    got = queue.Queue()
    ext.declare_advanced_subscriber(b, "adv/drop/x", got.put, subscriber_detection=True)

    def token(timeout):
        replies = list(a.liveliness().get("adv/drop/x/@adv/sub/**", timeout=timeout))
        return [str(r.ok.key_expr) for r in replies if r.ok is not None]

    keys = until(token, lambda: None)
    assert keys[0].startswith(f"adv/drop/x/@adv/sub/{b.zid()}/") and keys[0].endswith("/_")
    pub = ext.declare_advanced_publisher(
        a, "adv/drop/x", sample_miss_detection=ext.MissDetectionConfig()
    )

    def arrived(timeout):
        try:
            return got.get(timeout=timeout)
        except queue.Empty:
            return None

    sample = until(arrived, lambda: pub.put("v"))
    assert sample.payload.to_string() == "v" and sample.source_info.source_id == pub.id


def test_subscriber_detection_on_a_key_expression_with_wildcards(client):
    from weft import ext

    a, b = client(), client()
    with ext.declare_advanced_subscriber(a, "adv/wild/**", subscriber_detection=True):
        # Its token is on `adv/wild/**/@adv/sub/...`, seen where that intersects.
        found = until(
            lambda t: [str(r.ok.key_expr) for r in b.liveliness().get("adv/wild/x/@adv/sub/**") if r.ok],
            lambda: None,
        )
        assert len(found) == 1 and found[0].startswith("adv/wild/**/@adv/sub/"), found
