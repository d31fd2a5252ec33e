"""Matching: a publisher's subscribers and a querier's queryables, told by
`matching_status` and matching listeners, declared by weft sessions or by zenoh-python
through weftd."""

import queue
import time

import pytest

import weft
from conftest import TIMEOUT


def next_status(listener):
    """The next matching status of a channel listener (fails after TIMEOUT)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        status = listener.try_recv()
        if status is not None:
            return status.matching
        time.sleep(0.01)
    pytest.fail("no matching status came")


def test_a_publisher_sees_subscribers_come_and_go(client):
    a, b = client(), client()
    publisher = a.declare_publisher("pm/k")
    listener = publisher.declare_matching_listener()
    assert publisher.matching_status.matching is False
    sub = b.declare_subscriber("pm/**")
    assert next_status(listener) is True
    assert publisher.matching_status.matching is True
    sub.undeclare()
    assert next_status(listener) is False
    assert publisher.matching_status.matching is False
    listener.undeclare()
    assert listener.try_recv() is None


def test_a_querier_sees_queryables_come_and_go_in_a_callback(client):
    a, b = client(), client()
    querier = a.declare_querier("qm/k")
    told = queue.Queue()
    ended = []
    querier.declare_matching_listener(
        weft.handlers.Callback(lambda s: told.put(s.matching), lambda: ended.append(True))
    )
    assert querier.matching_status.matching is False
    queryable = b.declare_queryable("qm/**", lambda q: None)
    assert told.get(timeout=TIMEOUT) is True
    assert querier.matching_status.matching is True
    queryable.undeclare()
    assert told.get(timeout=TIMEOUT) is False
    a.close()
    assert ended == [True]


def test_matching_on_an_undeclared_publisher_or_querier_raises(client):
    a = client()
    publisher = a.declare_publisher("um/k")
    querier = a.declare_querier("um/k")
    publisher.undeclare()
    querier.undeclare()
    for entity in (publisher, querier):
        with pytest.raises(weft.ZError):
            entity.matching_status
        with pytest.raises(weft.ZError):
            entity.declare_matching_listener()


@pytest.mark.parametrize("zenoh", [True, False], ids=["zenoh", "weft"])
def test_entities_of_another_program_match(client, node, zenoh):
    a = client()
    peer = node(zenoh=zenoh)
    publisher = a.declare_publisher("xm/k")
    querier = a.declare_querier("xq/k")
    published = publisher.declare_matching_listener()
    queried = querier.declare_matching_listener()
    peer.send(op="sub", key="xm/**")
    assert next_status(published) is True
    peer.send(op="queryable", key="xq/**", reply="r")
    assert next_status(queried) is True
    peer.close()
    assert next_status(published) is False
    assert next_status(queried) is False
