"""scout(): what works without multicast (tests never multicast on the machine's
interfaces): with multicast scouting disabled, a scout returns its handler, finds
nothing, and ends cleanly when stopped, as zenoh-python's does. Scouting itself (Scouts
sent, Hellos told once per node) is tested in weft's library, on loopback."""

import json
import queue
import subprocess
import sys

import pytest

import weft
from conftest import zenoh_python


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


MATCHERS = """
import json, sys
if sys.argv[1] == "zenoh":
    import zenoh
else:
    import weft as zenoh
M, W = zenoh.WhatAmIMatcher, zenoh.WhatAmI
out = []
for m in (M("peer|router"), M("client"), M.empty(), M.empty().client().router(),
          M("router|client").peer()):
    out.append([str(m), repr(m), m.is_empty(), [m.matches(w) for w in (W.ROUTER, W.PEER, W.CLIENT)]])
try:
    M("bad")
except zenoh.ZError:
    out.append("refused")
print(json.dumps(out))
"""


@pytest.mark.parametrize("impl", ["weft", "zenoh"])
def test_whatami_matchers_as_zenoh_python_has_them(impl):
    python = zenoh_python() if impl == "zenoh" else sys.executable
    done = subprocess.run([python, "-c", MATCHERS, impl], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        ["router|peer", "WhatAmIMatcher(131)", False, [True, True, False]],
        ["client", "WhatAmIMatcher(132)", False, [False, False, True]],
        ["", "WhatAmIMatcher(128)", True, [False, False, False]],
        ["router|client", "WhatAmIMatcher(133)", False, [True, False, True]],
        ["router|peer|client", "WhatAmIMatcher(135)", False, [True, True, True]],
        "refused",
    ]
