"""Transport events: a listener told of each transport that opens and closes (and, with
history, of those open already), the same program run by weft and by zenoh-python."""

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import PEER_PROGRAM_HEAD, free_port, zenoh_python

PROGRAM = PEER_PROGRAM_HEAD + """

def next_event(q):
    e = q.get(timeout=20)
    return [str(e.kind), str(e.transport.zid), str(e.transport.whatami)]

a = peer(listen=f"tcp/127.0.0.1:{port}")
events = queue.Queue()
listener = a.info.declare_transport_events_listener(events.put)
b = peer(connect=f"tcp/127.0.0.1:{port}")
b_zid = str(b.zid())
out = {"opened": next_event(events)}
late = a.info.declare_transport_events_listener(history=True)
out["history"] = [str(late.recv().kind)]
b.close()
out["closed"] = next_event(events)
out["b"] = b_zid
listener.undeclare()
print(json.dumps(out), flush=True)
a.close()
"""


@pytest.mark.parametrize("impl", ["weft", "zenoh"])
def test_transport_events_as_zenoh_python_tells_them(impl):
    python = zenoh_python() if impl == "zenoh" else sys.executable
    done = subprocess.run([python, "-c", textwrap.dedent(PROGRAM), impl, str(free_port())],
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    b = out["b"]
    assert out["opened"] == ["SampleKind.PUT", b, "peer"], out
    assert out["history"] == ["SampleKind.PUT"], out
    assert out["closed"] == ["SampleKind.DELETE", b, "peer"], out
