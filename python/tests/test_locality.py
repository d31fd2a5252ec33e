"""Locality and reply keys: where puts and gets may go (`allowed_destination`), where
subscribers' samples and queryables' queries may come from (`allowed_origin`), and which
replies a get accepts (`accept_replies`), the same program run by weft and by
zenoh-python between two peers."""

import json
import subprocess
import sys

import pytest

from conftest import PEER_PROGRAM_HEAD, free_port, zenoh_python

PROGRAM = PEER_PROGRAM_HEAD + r'''
L = zenoh.Locality

a = peer(listen=f"tcp/127.0.0.1:{port}")
b = peer(connect=f"tcp/127.0.0.1:{port}")
got = {"a_any": [], "a_local": [], "a_remote": [], "b": []}
cv = threading.Condition()

def recorder(name):
    def record(sample):
        with cv:
            got[name].append(sample.payload.to_string())
            cv.notify_all()
    return record

def wait_for(name, payload):
    with cv:
        assert cv.wait_for(lambda: payload in got[name], timeout=20), (name, payload, got)

subs = [
    a.declare_subscriber("loc/**", recorder("a_any")),
    a.declare_subscriber("loc/**", recorder("a_local"), allowed_origin=L.SESSION_LOCAL),
    a.declare_subscriber("loc/**", recorder("a_remote"), allowed_origin=L.REMOTE),
    b.declare_subscriber("loc/**", recorder("b")),
]
# Each side's subscribers known to the other: probes until one arrives.
for src, dst in ((b, "a_remote"), (a, "b")):
    deadline = time.monotonic() + 20
    while True:
        src.put("loc/probe", "probe")
        with cv:
            if cv.wait_for(lambda: "probe" in got[dst], timeout=0.1):
                break
        assert time.monotonic() < deadline, "the peers never matched"
a.put("loc/x", "local", allowed_destination=L.SESSION_LOCAL)
a.put("loc/x", "remote", allowed_destination=L.REMOTE)
a.put("loc/x", "a-any")
b.put("loc/x", "b-any")
a.put("loc/x", "end-a")
b.put("loc/x", "end-b")
for name, marks in (("a_any", ["end-a", "end-b"]), ("a_local", ["end-a"]), ("a_remote", ["end-b"]), ("b", ["end-a", "end-b"])):
    for m in marks:
        wait_for(name, m)
# a's dispatch of end-b (for a_any) is the moment a_local would have had it too.
out = {"samples": {k: sorted(p for p in v if p != "probe") for k, v in got.items()}}

outcomes = queue.Queue()
def answer(query):
    try:
        query.reply("elsewhere/x", "off")
        outcomes.put(["off accepted", str(query.accepts_replies())])
    except zenoh.ZError:
        outcomes.put(["off refused", str(query.accepts_replies())])
    query.reply("q/x", "on")

def local_answer(query):
    query.reply("q/local", "local-only")

qs = [a.declare_queryable("q/**", answer),
      a.declare_queryable("q/**", local_answer, allowed_origin=L.SESSION_LOCAL)]
deadline = time.monotonic() + 20
while not [r for r in b.get("q/*", timeout=1) if r.ok]:
    assert time.monotonic() < deadline
while not outcomes.empty():
    outcomes.get()

def replies(session, **kw):
    return sorted(r.ok.payload.to_string() for r in session.get("q/*", timeout=5, **kw) if r.ok)

out["b default"] = replies(b)
out["b default outcome"] = outcomes.get(timeout=5)
out["b any"] = replies(b, accept_replies=zenoh.ReplyKeyExpr.ANY)
out["b any outcome"] = outcomes.get(timeout=5)
out["a local"] = replies(a, allowed_destination=L.SESSION_LOCAL)
out["a local outcome"] = outcomes.get(timeout=5)
out["a remote"] = replies(a, allowed_destination=L.REMOTE)
out["querier"] = str(b.declare_querier("q/x", accept_replies=zenoh.ReplyKeyExpr.ANY).accept_replies)
print(json.dumps(out), flush=True)
for s in (a, b):
    s.close()
'''

EXPECTED = {
    "samples": {
        "a_any": ["a-any", "b-any", "end-a", "end-b", "local"],
        "a_local": ["a-any", "end-a", "local"],
        "a_remote": ["b-any", "end-b"],
        "b": ["a-any", "b-any", "end-a", "end-b", "remote"],
    },
    "b default": ["on"],
    "b default outcome": ["off refused", "ReplyKeyExpr.MATCHING_QUERY"],
    "b any": ["off", "on"],
    "b any outcome": ["off accepted", "ReplyKeyExpr.ANY"],
    "a local": ["local-only", "on"],
    "a local outcome": ["off refused", "ReplyKeyExpr.MATCHING_QUERY"],
    "a remote": [],
    "querier": "ReplyKeyExpr.ANY",
}


@pytest.mark.parametrize("impl", ["weft", "zenoh"])
def test_locality_and_reply_keys_as_zenoh_python_has_them(impl):
    python = zenoh_python() if impl == "zenoh" else sys.executable
    done = subprocess.run([python, "-c", PROGRAM, impl, str(free_port())],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == EXPECTED
