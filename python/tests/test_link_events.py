"""Link events: a listener told of each link added and removed (and, with history, of
those open already), the same program run by weft and by zenoh-python."""

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import PEER_PROGRAM_HEAD, free_port, zenoh_python

PROGRAM = PEER_PROGRAM_HEAD + """

def describe(e):
    link = e.link
    return {"kind": str(e.kind), "zid": str(link.zid), "src": link.src, "dst": link.dst,
            "group": link.group, "streamed": link.is_streamed,
            "priorities": list(link.priorities) if link.priorities else None,
            "reliability": str(link.reliability)}

a = peer(listen=f"tcp/127.0.0.1:{port}")
events = queue.Queue()
listener = a.info.declare_link_events_listener(events.put)
b = peer(connect=f"tcp/127.0.0.1:{port}")
out = {"b": str(b.zid()), "opened": describe(events.get(timeout=20))}
out["links"] = [[link.src, link.dst] for link in a.info.links()]
late = a.info.declare_link_events_listener(history=True)
out["history"] = describe(late.recv())
b.close()
out["closed"] = describe(events.get(timeout=20))
listener.undeclare()
late.undeclare()
print(json.dumps(out), flush=True)
a.close()
"""


@pytest.mark.parametrize("impl", ["weft", "zenoh"])
def test_link_events_as_zenoh_python_tells_them(impl):
    python = zenoh_python() if impl == "zenoh" else sys.executable
    port = free_port()
    done = subprocess.run([python, "-c", textwrap.dedent(PROGRAM), impl, str(port)],
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    opened = out["opened"]
    assert opened["kind"] == "SampleKind.PUT", out
    assert opened["zid"] == out["b"], out
    assert opened["src"] == f"tcp/127.0.0.1:{port}", out
    assert opened["dst"].startswith("tcp/127.0.0.1:") and opened["dst"] != opened["src"], out
    assert (opened["group"], opened["streamed"], opened["priorities"], opened["reliability"]) == (
        None, True, [0, 7], "Reliability.RELIABLE"), out
    assert out["links"] == [[opened["src"], opened["dst"]]], out
    assert out["history"] == opened, out
    assert out["closed"] == {**opened, "kind": "SampleKind.DELETE"}, out
