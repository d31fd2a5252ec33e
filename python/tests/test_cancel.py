"""CancellationToken: a get given one ends when it is cancelled (channel closed, callback
drop called before cancel returns), and a later get with it is refused (ZError); the
same program gives the same answers with weft and with zenoh-python."""

import subprocess
import sys
import textwrap

import pytest

from conftest import zenoh_python

PROGRAM = """
import json, sys, threading, time
if sys.argv[1] == "zenoh":
    import zenoh
else:
    import weft as zenoh

def session():
    c = zenoh.Config()
    c.insert_json5("mode", '"client"')
    c.insert_json5("connect/endpoints", json.dumps([sys.argv[2]]))
    c.insert_json5("scouting/multicast/enabled", "false")
    return zenoh.open(c)

answering, asking = session(), session()
held, asked = [], []

def answer(query):
    # One reply, then the query is kept: the get waits for its end.
    asked.append(str(query.key_expr))
    query.reply(query.key_expr, b"first")
    held.append(query)

queryable = answering.declare_queryable("cancel/**", answer)
# The queryable reaches the router: ask until it answers.
deadline = time.monotonic() + 20
while not any(r.ok for r in asking.get("cancel/probe", timeout=0.5)):
    assert time.monotonic() < deadline
held.clear()
asked.clear()
out = {}

token = zenoh.CancellationToken()
out["fresh"] = token.is_cancelled
# No consolidation: a reply is handed over as it comes, not held for the end.
NONE = zenoh.ConsolidationMode.NONE
replies = asking.get("cancel/a", cancellation_token=token, timeout=60, consolidation=NONE)
first = replies.recv()
out["first"] = first.ok.payload.to_string()

dropped = []
got = []
callback = zenoh.handlers.Callback(
    lambda r: got.append(r.ok.payload.to_string()), lambda: dropped.append(time.monotonic())
)
asking.get("cancel/b", callback, cancellation_token=token, timeout=60, consolidation=NONE)
deadline = time.monotonic() + 20
while not got and time.monotonic() < deadline:
    time.sleep(0.01)
out["callback_got"] = got[:]

started = time.monotonic()
token.cancel()
out["dropped_before_cancel_returned"] = len(dropped) == 1
out["rest_of_channel"] = [r.ok.payload.to_string() for r in replies]
out["ended_fast"] = time.monotonic() - started < 5
out["cancelled"] = token.is_cancelled

# A get given the cancelled token is refused, and no queryable is asked.
def refused(get):
    try:
        get()
    except zenoh.ZError:
        return True
    return False

before = len(asked)
out["later_refused"] = refused(lambda: asking.get("cancel/c", cancellation_token=token))
querier = asking.declare_querier("cancel/d", timeout=60)
out["querier_refused"] = refused(lambda: querier.get(cancellation_token=token))
out["asked_after_cancel"] = len(asked) - before
print(json.dumps(out), flush=True)
held.clear()
answering.close()
asking.close()
"""

EXPECTED = {
    "fresh": False,
    "first": "first",
    "callback_got": ["first"],
    "dropped_before_cancel_returned": True,
    "rest_of_channel": [],
    "ended_fast": True,
    "cancelled": True,
    "later_refused": True,
    "querier_refused": True,
    "asked_after_cancel": 0,
}


def run(python, impl, endpoint):
    done = subprocess.run([python, "-c", textwrap.dedent(PROGRAM), impl, endpoint],
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    import json

    return json.loads(done.stdout)


@pytest.mark.parametrize("impl", ["weft", "zenoh"])
def test_a_cancelled_token_ends_its_gets_as_zenoh_python_does(weftd, impl):
    python = zenoh_python() if impl == "zenoh" else sys.executable
    assert run(python, impl, weftd) == EXPECTED
