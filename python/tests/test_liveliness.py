"""Liveliness tokens, their subscribers and queries, and Session.info, through weftd;
tokens watched by zenoh-python too."""

import queue

import weft
from conftest import TIMEOUT, until


def test_token_seen_by_subscriber_and_get(client):
    a, b = client(), client()
    events = queue.Queue()
    # With history: the token may reach the router before the subscription does (they
    # come from two sessions); it is reported either way.
    b.liveliness().declare_subscriber("lv/**", events.put, history=True)
    token = a.liveliness().declare_token("lv/robot1")
    s = events.get(timeout=TIMEOUT)
    assert (str(s.key_expr), s.kind) == ("lv/robot1", weft.SampleKind.PUT)
    alive = [str(r.ok.key_expr) for r in b.liveliness().get("lv/**", timeout=5.0)]
    assert alive == ["lv/robot1"]
    token.undeclare()
    while (s := events.get(timeout=TIMEOUT)).kind == weft.SampleKind.PUT:
        assert str(s.key_expr) == "lv/robot1"
    assert (str(s.key_expr), s.kind) == ("lv/robot1", weft.SampleKind.DELETE)


def test_history_reports_the_tokens_alive(client):
    a, b = client(), client()
    with a.liveliness().declare_token("lh/one"):
        found = []

        def attempt():
            found[:] = [str(r.ok.key_expr) for r in b.liveliness().get("lh/**", timeout=2.0)]

        until(lambda _t: list(found), attempt)
        sub = b.liveliness().declare_subscriber("lh/**", history=True)
        s = sub.recv()
        assert (str(s.key_expr), s.kind) == ("lh/one", weft.SampleKind.PUT)


def test_session_info_names_the_router(client):
    a = client()
    assert str(a.info.zid()) == str(a.zid())
    assert len(a.info.routers_zid()) == 1
    assert a.info.peers_zid() == []


def test_zenoh_python_sees_a_weft_token(client, weftd):
    import subprocess
    import textwrap

    from conftest import zenoh_python

    code = """
        import json, sys, zenoh
        c = zenoh.Config()
        c.insert_json5("mode", '"client"')
        c.insert_json5("connect/endpoints", json.dumps([sys.argv[1]]))
        c.insert_json5("scouting/multicast/enabled", "false")
        with zenoh.open(c) as s:
            sub = s.liveliness().declare_subscriber("lz/**", history=True)
            print("ready", flush=True)
            sample = sub.recv()
            print(sample.key_expr, sample.kind, flush=True)
    """
    a = client()
    token = a.liveliness().declare_token("lz/weft")
    proc = subprocess.run(
        [zenoh_python(), "-c", textwrap.dedent(code), weftd],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["ready", "lz/weft SampleKind.PUT"]
    token.undeclare()
