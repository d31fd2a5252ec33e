"""weft-Python and Eclipse Zenoh's zenoh-python 1.10.2 at the two ends, through weftd,
in both directions: pub/sub, delete, get/queryable, and the ring channel's behaviour."""

import queue

import pytest

import weft
from conftest import TIMEOUT, until


@pytest.fixture(params=["zenoh", "weft"])
def peer(request, node):
    """A node.py process run by zenoh-python, or by weft (the same program)."""
    return node(zenoh=request.param == "zenoh")


def test_python_program_publishes_to_weft(client, peer):
    a = client()
    got = queue.Queue()
    a.declare_subscriber("i/**", got.put)

    def attempt():
        peer.send(op="put", key="i/probe", payload="p")

    until(lambda t: _get(got, t), attempt)
    peer.send(op="put", key="i/v", payload="hello", encoding="text/plain", attachment="att")
    peer.send(op="delete", key="i/v")
    s = _next_on(got, "i/v")
    assert (s.payload.to_string(), s.encoding, s.attachment.to_string()) == (
        "hello",
        "text/plain",
        "att",
    )
    d = _next_on(got, "i/v")
    assert d.kind == weft.SampleKind.DELETE


def test_weft_publishes_to_python_program(client, peer):
    b = client()
    peer.send(op="sub", key="o/**")

    def arrived(timeout):
        e = peer.poll(timeout)
        return e if e and e.get("event") == "sample" else None

    until(arrived, lambda: b.put("o/probe", "p"))
    b.put("o/v", "hi", encoding=weft.Encoding.APPLICATION_JSON, attachment=b"a1")
    b.delete("o/v")
    s = peer.wait(lambda e: e.get("event") == "sample" and e["key"] == "o/v")
    assert (s["payload"], s["encoding"], s["attachment"], s["kind"]) == (
        "hi",
        "application/json",
        "a1",
        "put",
    )
    d = peer.wait(lambda e: e.get("event") == "sample" and e["key"] == "o/v")
    assert d["kind"] == "delete"


def test_a_put_with_wildcards_reaches_intersecting_subscribers(client, peer):
    # As zenoh-python does: the sample keeps its key expression.
    b = client()
    peer.send(op="sub", key="wc/x/one")

    def arrived(timeout):
        e = peer.poll(timeout)
        return e if e and e.get("event") == "sample" else None

    s = until(arrived, lambda: b.put("wc/*/one", "wild"))
    assert (s["key"], s["payload"]) == ("wc/*/one", "wild")
    b.delete("wc/**")
    d = peer.wait(lambda e: e.get("event") == "sample" and e["key"] == "wc/**")
    assert d["kind"] == "delete"
    with b.declare_publisher("wc/x/*") as p:
        p.put("declared")
        s = peer.wait(lambda e: e.get("event") == "sample" and e["key"] == "wc/x/*")
        assert s["payload"] == "declared"


def test_weft_queries_python_queryable(client, peer):
    b = client()
    peer.send(op="queryable", key="iq/**", reply="from the program")
    found = []

    def attempt():
        found[:] = list(b.get("iq/k?x=1", timeout=2.0, payload="ask"))

    replies = until(lambda _t: list(found), attempt)
    assert [r.ok.payload.to_string() for r in replies] == ["from the program"]
    assert replies[0].ok.key_expr == "iq/k"
    q = peer.wait(lambda e: e.get("event") == "query")
    assert (q["selector"], q["parameters"], q["payload"]) == ("iq/k?x=1", "x=1", "ask")
    assert str(replies[0].replier_id.zid) == peer.info()["zid"]


def test_python_program_queries_weft_queryable(client, peer):
    a = client()
    a.declare_queryable("oq/**", lambda q: q.reply(q.key_expr, f"weft:{q.parameters}"))
    found = []

    def attempt():
        peer.proc.stdin.write('{"op": "get", "selector": "oq/k?y=2"}\n')
        peer.proc.stdin.flush()
        e = peer.wait(lambda e: e.get("event") == "replies")
        found[:] = e["replies"]

    replies = until(lambda _t: list(found), attempt)
    assert replies == [
        {
            "key": "oq/k",
            "payload": "weft:y=2",
            "kind": "put",
            "encoding": "zenoh/bytes",
            "attachment": None,
            "replier": str(a.zid()),
        }
    ]


def test_ring_channel_overflow_matches_zenoh_python(client, peer):
    b = client()
    peer.send(op="ring", key="ir/data", capacity=3)
    peer.send(op="sub", key="ir/end")

    def arrived(timeout):
        e = peer.poll(timeout)
        return e if e and e.get("event") == "sample" else None

    until(arrived, lambda: b.put("ir/end", "probe"))
    for i in range(10):
        b.put("ir/data", str(i))
    b.put("ir/end", "end")
    peer.wait(lambda e: e.get("event") == "sample" and e["payload"] == "end")
    peer.proc.stdin.write('{"op": "drain"}\n')
    peer.proc.stdin.flush()
    drained = peer.wait(lambda e: e.get("event") == "drained")
    assert drained["payloads"] == ["7", "8", "9"]


def _get(q, timeout):
    try:
        return q.get(timeout=timeout)
    except queue.Empty:
        return None


def _next_on(q, key):
    while True:
        s = q.get(timeout=TIMEOUT)
        if str(s.key_expr) == key:
            return s


def test_weft_queries_with_quality_of_service(client, peer):
    b = client()
    peer.send(op="queryable", key="qq/**", reply="answered")
    qos = dict(
        congestion_control=weft.CongestionControl.DROP,
        priority=weft.Priority.INTERACTIVE_HIGH,
        express=True,
    )
    found = []

    def attempt():
        found[:] = list(b.get("qq/k", timeout=2.0, **qos))

    replies = until(lambda _t: list(found), attempt)
    assert [r.ok.payload.to_string() for r in replies] == ["answered"]
    querier = b.declare_querier("qq/q", timeout=2.0, **qos)
    assert [r.ok.payload.to_string() for r in querier.get()] == ["answered"]
