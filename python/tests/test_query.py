"""Queries between weft sessions through weftd: get, queryables, replies, errors and
the end of a query."""

import threading
import time

import pytest

import weft
from conftest import TIMEOUT, until


def answered(session, selector, **kwargs):
    """The replies of the first `get` on `selector` that has any (the queryable's
    declaration may take a moment to reach the router)."""
    found = []

    def attempt():
        found[:] = list(session.get(selector, timeout=2.0, **kwargs))

    return until(lambda _t: list(found), attempt)


def test_get_reaches_a_callback_queryable(client):
    a, b = client(), client()
    seen = []

    def on_query(query):
        seen.append((str(query.selector), query.parameters.get("n"), query.payload))
        query.reply(query.key_expr, f"answer to {query.parameters['n']}")

    a.declare_queryable("q/**", on_query)
    replies = answered(b, "q/one?n=1", payload="sent")
    assert [r.ok.payload.to_string() for r in replies] == ["answer to 1"]
    r = replies[0]
    assert r.err is None and r.result.key_expr == "q/one"
    assert seen[-1][0] == "q/one?n=1" and seen[-1][1] == "1"
    assert seen[-1][2].to_string() == "sent"


def test_reply_err_and_reply_del(client):
    a, b = client(), client()

    def on_query(query):
        if query.parameters.get("kind") == "err":
            query.reply_err("no such thing", encoding="text/plain")
        else:
            query.reply_del(query.key_expr)

    a.declare_queryable("qe/**", on_query)
    err = answered(b, "qe/x?kind=err")[0]
    assert err.ok is None and err.err.payload.to_string() == "no such thing"
    assert err.err.encoding == "text/plain"
    deleted = answered(b, "qe/x?kind=del")[0]
    assert deleted.ok.kind == weft.SampleKind.DELETE


def test_reply_on_a_key_outside_the_query_raises(client):
    a, b = client(), client()
    errors = []

    def on_query(query):
        try:
            query.reply("elsewhere/k", "x")
        except weft.ZError as e:
            errors.append(str(e))
        query.reply(query.key_expr, "ok")

    a.declare_queryable("qk/**", on_query)
    answered(b, "qk/a")
    assert errors and "does not intersect" in errors[0]


def test_query_is_finalised_when_its_last_reference_goes(client):
    a, b = client(), client()
    qable = a.declare_queryable("qf/**")
    replies = []
    held = []

    def responder():
        for query in qable:
            query.reply(query.key_expr, "kept")
            held.append(query)
            return

    t = threading.Thread(target=responder)
    t.start()

    def attempt():
        if not replies:
            replies.extend(b.get("qf/k", timeout=0.5))

    # Wait until the queryable got the query (held); the get above timed out meanwhile
    # or not, so ask again with a long timeout while the query is held.
    until(lambda _t: held or None, attempt)
    t.join(TIMEOUT)
    del held[:]  # the first query, now dropped
    got = []
    started = time.monotonic()
    done = threading.Event()

    def getter():
        got.extend(b.get("qf/k", timeout=30.0))
        done.set()

    threading.Thread(target=getter, daemon=True).start()
    query = qable.recv()
    query.reply(query.key_expr, "v")
    assert not done.wait(0.3), "the query is not over while it is held"
    del query
    assert done.wait(TIMEOUT), "dropping the last reference ends the query"
    assert time.monotonic() - started < 10
    assert [r.ok.payload.to_string() for r in got] == ["v"]


def test_get_with_a_callback_and_a_ring(client):
    a, b = client(), client()
    a.declare_queryable("qc/**", lambda q: q.reply(q.key_expr, "x"))
    answered(b, "qc/a")
    results = []
    over = threading.Event()
    assert b.get("qc/a", weft.handlers.Callback(results.append, over.set)) is None
    assert over.wait(TIMEOUT)
    assert [r.ok.payload.to_string() for r in results] == ["x"]
    ring = b.get("qc/a", weft.handlers.RingChannel(4))
    assert [r.ok.payload.to_string() for r in ring] == ["x"]


def test_querier_queries_with_its_options(client):
    a, b = client(), client()
    a.declare_queryable("qq/**", lambda q: q.reply(q.key_expr, str(q.parameters)))
    answered(b, "qq/k")
    with b.declare_querier("qq/k", target=weft.QueryTarget.ALL, timeout=5.0) as querier:
        assert querier.key_expr == "qq/k"
        replies = list(querier.get(parameters="a=1"))
        assert [r.ok.payload.to_string() for r in replies] == ["a=1"]
    try:
        querier.get()
    except weft.ZError as e:
        assert "undeclared" in str(e)
    else:
        raise AssertionError("get on an undeclared querier must raise")


def test_get_and_querier_take_quality_of_service_options(client):
    a, b = client(), client()
    a.declare_queryable("qos/**", lambda q: q.reply(q.key_expr, "ok"))
    qos = dict(
        congestion_control=weft.CongestionControl.BLOCK,
        priority=weft.Priority.REAL_TIME,
        express=False,
    )
    replies = answered(b, "qos/k", **qos)
    assert [r.ok.payload.to_string() for r in replies] == ["ok"]
    querier = b.declare_querier("qos/q", **qos)
    assert [r.ok.payload.to_string() for r in querier.get()] == ["ok"]
    with pytest.raises(TypeError):
        b.get("qos/k", priority=3)
    with pytest.raises(TypeError):
        b.declare_querier("qos/k", congestion_control="block")
