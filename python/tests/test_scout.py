"""scout(): what works without multicast (tests never multicast on the machine's
interfaces): with multicast scouting disabled, a scout returns its handler, finds
nothing, and ends cleanly when stopped, as zenoh-python's does. Scouting itself (Scouts
sent, Hellos told once per node) is tested in weft's library, on loopback."""

import queue

import pytest

import weft


def no_multicast():
    """A configuration with multicast scouting disabled."""
    config = weft.Config()
    config.insert_json5("scouting/multicast/enabled", "false")
    return config


def test_a_channel_scout_finds_nothing_and_ends_when_stopped():
    scout = weft.scout(what="peer|router", config=no_multicast())
    assert isinstance(scout.handler, weft.Handler)
    assert scout.try_recv() is None
    scout.stop()
    assert list(scout) == []
    with pytest.raises(weft.ZError):
        scout.recv()


def test_a_scout_is_a_context_manager():
    with weft.scout(config=no_multicast()) as scout:
        assert scout.try_recv() is None
    assert list(scout) == []


def test_a_callback_scout_runs_until_stopped():
    found = queue.Queue()
    ended = queue.Queue()
    scout = weft.scout(
        weft.handlers.Callback(found.put, lambda: ended.put(True)),
        weft.WhatAmI.ROUTER,
        no_multicast(),
    )
    assert scout.handler is None
    with pytest.raises(weft.ZError):
        scout.try_recv()
    assert ended.empty()
    scout.stop()
    assert ended.get(timeout=5) is True
    assert found.empty()


def test_invalid_roles_are_refused():
    with pytest.raises(weft.ZError):
        weft.scout(what="routers", config=no_multicast())
    with pytest.raises(TypeError):
        weft.scout(what=3, config=no_multicast())
