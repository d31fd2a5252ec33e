"""Publication and subscription between weft sessions through weftd."""

import logging
import queue
import threading
import time

import weft
from conftest import TIMEOUT, until


def probe(publish, received):
    """Publishes with `publish()` until `received` (a queue.Queue) gets a sample: the
    subscription has reached the router."""
    return until(lambda t: _get(received, t), publish)


def _get(q, timeout):
    try:
        return q.get(timeout=timeout)
    except queue.Empty:
        return None


def test_put_reaches_a_subscriber_with_every_field(client):
    a, b = client(), client()
    got = queue.Queue()
    a.declare_subscriber("t/**", got.put)
    probe(lambda: b.put("t/probe", "p"), got)
    b.put(
        "t/value",
        b"\x00\x01",
        encoding=weft.Encoding.APPLICATION_JSON,
        attachment="att",
        priority=weft.Priority.REAL_TIME,
        congestion_control=weft.CongestionControl.BLOCK,
        express=True,
    )
    s = _next_on(got, "t/value")
    assert s.payload.to_bytes() == b"\x00\x01"
    assert s.kind == weft.SampleKind.PUT
    assert s.encoding == "application/json"
    assert s.attachment.to_string() == "att"
    assert s.priority == weft.Priority.REAL_TIME
    assert s.congestion_control == weft.CongestionControl.BLOCK
    assert s.express is True
    assert s.key_expr == "t/value" and isinstance(s.key_expr, weft.KeyExpr)


def _next_on(q, key):
    while True:
        s = q.get(timeout=TIMEOUT)
        if str(s.key_expr) == key:
            return s


def test_delete_reaches_a_channel_subscriber(client):
    a, b = client(), client()
    sub = a.declare_subscriber("d/**")
    seen = queue.Queue()
    a.declare_subscriber("d/**", seen.put)
    probe(lambda: b.put("d/probe", "p"), seen)
    b.delete("d/x")
    for s in sub:
        if str(s.key_expr) == "d/x":
            assert s.kind == weft.SampleKind.DELETE
            assert s.payload.to_bytes() == b""
            break
    sub.undeclare()


def test_publisher_puts_and_deletes(client):
    a, b = client(), client()
    got = queue.Queue()
    a.declare_subscriber("p/**", got.put)
    pub = b.declare_publisher("p/key", encoding="text/plain")
    assert pub.key_expr == "p/key" and pub.encoding == "text/plain"
    probe(lambda: pub.put("probe"), got)
    pub.put("v1", attachment=b"x")
    pub.delete()
    while (s := got.get(timeout=TIMEOUT)).payload.to_string() == "probe":
        pass
    assert s.payload.to_string() == "v1" and s.encoding == "text/plain"
    assert s.attachment.to_bytes() == b"x"
    assert got.get(timeout=TIMEOUT).kind == weft.SampleKind.DELETE
    pub.undeclare()
    try:
        pub.put("after")
    except weft.ZError as e:
        assert "undeclared" in str(e)
    else:
        raise AssertionError("put on an undeclared publisher must raise")


def test_an_exception_in_a_callback_is_logged_and_delivery_goes_on(client, caplog):
    a, b = client(), client()
    got = queue.Queue()

    def flaky(sample):
        if sample.payload.to_string() == "raise":
            raise RuntimeError("raised on purpose")
        got.put(sample)

    a.declare_subscriber("e/**", flaky)
    probe(lambda: b.put("e/probe", "p"), got)
    with caplog.at_level(logging.ERROR, logger="weft"):
        b.put("e/x", "raise")
        b.put("e/x", "after")
        while got.get(timeout=TIMEOUT).payload.to_string() != "after":
            pass
    errors = [r for r in caplog.records if r.name == "weft"]
    assert errors and "raised on purpose" in errors[0].getMessage()
    assert errors[0].exc_info is not None


def test_ring_channel_keeps_the_newest(client):
    a, b = client(), client()
    ring = a.declare_subscriber("r/data", weft.handlers.RingChannel(3))
    marks = queue.Queue()
    a.declare_subscriber("r/**", lambda s: marks.put(s.payload.to_string()))
    probe(lambda: b.put("r/probe", "p"), marks)
    # Samples from the router are delivered in order on one thread: once "end" (on
    # another key) reached the second subscriber, the ring has seen every value.
    for i in range(10):
        b.put("r/data", str(i))
    b.put("r/end", "end")
    while marks.get(timeout=TIMEOUT) != "end":
        pass
    kept = []
    while (s := ring.try_recv()) is not None:
        kept.append(s.payload.to_string())
    assert kept[-3:] == ["7", "8", "9"] and len(kept) == 3


def test_fifo_channel_keeps_everything_in_order(client):
    a, b = client(), client()
    fifo = a.declare_subscriber("f/data", weft.handlers.FifoChannel(100))
    marks = queue.Queue()
    a.declare_subscriber("f/**", lambda s: marks.put(s.payload.to_string()))
    probe(lambda: b.put("f/probe", "p"), marks)
    for i in range(50):
        b.put("f/data", str(i))
    assert [fifo.recv().payload.to_string() for _ in range(50)] == [str(i) for i in range(50)]


def test_callback_drop_and_handler_pair(client):
    a = client()
    dropped = threading.Event()
    sub = a.declare_subscriber(
        "c/**", weft.handlers.Callback(lambda s: None, dropped.set)
    )
    assert sub.handler is None
    marker = object()
    pair = a.declare_subscriber("c/**", (lambda s: None, marker))
    assert pair.handler is marker
    sub.undeclare()
    assert dropped.is_set()
    dropped2 = threading.Event()
    a.declare_subscriber("c/**", weft.handlers.Callback(lambda s: None, dropped2.set))
    a.close()
    assert dropped2.is_set(), "closing the session ends its callbacks"


def test_closed_session_raises_zerror(client):
    a = client()
    sub = a.declare_subscriber("z/**")
    with a:
        pass
    assert a.is_closed()
    for call in (
        lambda: a.put("z/a", "x"),
        lambda: a.declare_subscriber("z/**"),
        lambda: a.get("z/**"),
    ):
        try:
            call()
        except weft.ZError as e:
            assert "closed" in str(e)
        else:
            raise AssertionError("an operation on a closed session must raise")
    assert list(sub) == []


def test_timestamps_travel_with_the_value(client):
    a, b = client(), client()
    got = queue.Queue()
    a.declare_subscriber("ts/**", got.put)
    probe(lambda: b.put("ts/probe", "p"), got)
    stamp = b.new_timestamp()
    b.put("ts/v", "x", timestamp=stamp)
    s = _next_on(got, "ts/v")
    assert s.timestamp == stamp and str(s.timestamp) == str(stamp)
    assert str(s.timestamp.get_id()) == str(b.zid())
    when = s.timestamp.get_time()
    assert when.tzinfo is not None and abs(when.timestamp() - time.time()) < 60
    assert stamp.to_string_rfc3339_lossy().endswith("/" + str(b.zid()))
    assert b.new_timestamp() > stamp


def test_a_declared_key_expression_publishes_as_its_text(client):
    a, b = client(), client()
    got = queue.Queue()
    a.declare_subscriber("dk/**", got.put)
    key = b.declare_keyexpr("dk/declared")
    assert isinstance(key, weft.KeyExpr) and key == "dk/declared"
    probe(lambda: b.put(key, "p"), got)
    b.undeclare(key)
    try:
        b.declare_keyexpr("dk//bad")
    except weft.ZError:
        pass
    else:
        raise AssertionError("an invalid key expression must raise")
