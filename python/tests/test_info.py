"""Session.info's transports and links, and who answered a query (Reply.replier_id), for
a weft client of weftd; across the wire, the transports and links a weft peer and its
peer (zenoh-python, or weft) report of each other are in test_peer.py."""

import weft
from conftest import TIMEOUT, until


def test_a_client_has_one_transport_and_one_link_to_its_router(client, weftd):
    a = client()
    (transport,) = a.info.transports()
    assert [str(transport.zid)] == [str(z) for z in a.info.routers_zid()]
    assert transport.whatami == weft.WhatAmI.ROUTER
    assert str(transport.whatami) == "router"
    assert (transport.is_qos, transport.is_multicast) == (True, False)
    (link,) = a.info.links()
    assert str(link.zid) == str(transport.zid)
    assert link.dst == weftd
    assert link.src.startswith("tcp/127.0.0.1:") and link.src != weftd
    assert (link.group, link.is_streamed, link.priorities) == (None, True, (0, 7))
    assert link.reliability == weft.Reliability.RELIABLE
    assert link.mtu > 0
    assert link.interfaces == [] and link.auth_identifier is None


def test_info_after_close_raises(client):
    a = client()
    a.close()
    for call in (a.info.transports, a.info.links):
        try:
            call()
        except weft.ZError:
            continue
        raise AssertionError(f"{call.__name__} after close did not raise")


def test_a_reply_names_the_session_that_answered(client):
    a, b = client(), client()
    a.declare_queryable("ri/**", lambda q: q.reply(q.key_expr, "here"))
    found = []

    def attempt():
        found[:] = list(b.get("ri/k", timeout=2.0))

    (reply,) = until(lambda _t: list(found), attempt, timeout=TIMEOUT)
    assert reply.replier_id.zid == a.zid()
    assert reply.replier_id.zid != b.zid()
    assert isinstance(reply.replier_id.eid, int)
