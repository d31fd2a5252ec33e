"""Peer to peer, without a router: a weft peer listening on 127.0.0.1, and a peer
(zenoh-python, or weft) connecting to it; multicast scouting off on both."""

import json
import queue

import pytest

import weft
from conftest import TIMEOUT, Node, free_port, until


@pytest.fixture(params=["zenoh", "weft"])
def pair(request):
    """A weft peer session listening on a free port, and a node.py peer connected to it."""
    endpoint = f"tcp/127.0.0.1:{free_port()}"
    config = weft.Config()
    config.insert_json5("mode", '"peer"')
    config.insert_json5("listen/endpoints", json.dumps([endpoint]))
    config.insert_json5("scouting/multicast/enabled", "false")
    session = weft.open(config)
    node = Node(endpoint, zenoh=request.param == "zenoh", peer=True)
    yield session, node
    node.close()
    session.close()


def test_peers_exchange_samples_both_ways(pair):
    session, node = pair
    got = queue.Queue()
    session.declare_subscriber("pe/**", got.put)

    def arrived(timeout):
        try:
            return got.get(timeout=timeout)
        except queue.Empty:
            return None

    until(arrived, lambda: node.send(op="put", key="pe/probe", payload="p"))
    node.send(op="sub", key="po/**")

    def echoed(timeout):
        e = node.poll(timeout)
        return e if e and e.get("event") == "sample" else None

    until(echoed, lambda: session.put("po/probe", "p"))
    session.put("po/v", "from weft")
    s = node.wait(lambda e: e.get("event") == "sample" and e["key"] == "po/v")
    assert s["payload"] == "from weft"


def test_a_peer_queries_a_weft_queryable(pair):
    session, node = pair
    session.declare_queryable("pq/**", lambda q: q.reply(q.key_expr, "peer answer"))
    found = []

    def attempt():
        node.proc.stdin.write('{"op": "get", "selector": "pq/k"}\n')
        node.proc.stdin.flush()
        found[:] = node.wait(lambda e: e.get("event") == "replies", TIMEOUT)["replies"]

    replies = until(lambda _t: list(found), attempt)
    assert [r["payload"] for r in replies] == ["peer answer"]


def test_peers_report_their_transport_and_link_to_each_other(pair):
    session, node = pair
    mine = str(session.zid())

    def node_sees_weft(_timeout):
        info = node.info()
        return info if [t["zid"] for t in info["transports"]] == [mine] else None

    info = until(node_sees_weft, lambda: None)
    assert info["transports"] == [
        {"zid": mine, "whatami": "peer", "is_qos": True, "is_multicast": False}
    ]
    (theirs,) = info["links"]
    assert (theirs["zid"], theirs["dst"], theirs["group"]) == (mine, node.endpoint, None)
    assert (theirs["is_streamed"], theirs["reliable"]) == (True, True)
    transports = until(lambda _t: session.info.transports(), lambda: None)
    assert [(str(t.zid), t.whatami, t.is_qos) for t in transports] == [
        (info["zid"], weft.WhatAmI.PEER, True)
    ]
    (link,) = session.info.links()
    assert (str(link.zid), link.src, link.dst) == (info["zid"], node.endpoint, theirs["src"])

