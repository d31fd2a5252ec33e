"""SourceInfo: a publisher names itself and a sequence number on what it publishes, and
the subscriber reads them (`Sample.source_info`); weft and zenoh-python, each way,
through weftd."""

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import CLIENT_PROGRAM_HEAD, TIMEOUT, zenoh_python

OPEN = CLIENT_PROGRAM_HEAD

SUBSCRIBER = OPEN + """
got = {}
def on_sample(s):
    info = s.source_info
    got[s.payload.to_string()] = None if info is None else [
        str(info.source_id.zid), info.source_id.eid, info.source_sn]
sub = session.declare_subscriber("si/**", on_sample)
print("READY", flush=True)
deadline = time.monotonic() + 20
while len(got) < 3 and time.monotonic() < deadline:
    time.sleep(0.01)
print(json.dumps(got), flush=True)
session.close()
"""

PUBLISHER = OPEN + """
publisher = session.declare_publisher("si/data")
me = publisher.id
print(json.dumps([str(me.zid), me.eid]), flush=True)
# Until the subscriber has them all (it stops this program), at most 20 s.
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    publisher.put("a", source_info=zenoh.SourceInfo(me, 5))
    publisher.put("b", source_info=zenoh.SourceInfo(me, 6))
    session.put("si/plain", "plain")
    time.sleep(0.05)
"""


def start(impl, code, endpoint):
    python = zenoh_python() if impl == "zenoh" else sys.executable
    return subprocess.Popen([python, "-c", textwrap.dedent(code), impl, endpoint],
                            stdout=subprocess.PIPE, text=True)


@pytest.mark.parametrize("publisher,subscriber", [("weft", "zenoh"), ("zenoh", "weft"),
                                                   ("weft", "weft")])
def test_the_subscriber_reads_the_source_the_publisher_named(weftd, publisher, subscriber):
    sub = start(subscriber, SUBSCRIBER, weftd)
    pub = None
    try:
        assert sub.stdout.readline().strip() == "READY"
        pub = start(publisher, PUBLISHER, weftd)
        zid, eid = json.loads(pub.stdout.readline())
        got = json.loads(sub.stdout.readline())
        assert sub.wait(TIMEOUT) == 0
        assert got == {"a": [zid, eid, 5], "b": [zid, eid, 6], "plain": None}
    finally:
        for p in (sub, pub):
            if p is not None:
                p.kill()
                p.wait()


QUERYABLE = OPEN + """
import queue
seen = queue.Queue()
def on_query(q):
    info = q.source_info
    q.reply("sq/x", "ok")
    seen.put(None if info is None else [str(info.source_id.zid), info.source_id.eid,
                                        info.source_sn])
queryable = session.declare_queryable("sq/**", on_query)
print("READY", flush=True)
print(json.dumps([seen.get(timeout=20), seen.get(timeout=20)]), flush=True)
session.close()
"""

QUERIER = OPEN + """
querier = session.declare_querier("sq/x")
me = querier.id
print(json.dumps([str(me.zid), me.eid]), flush=True)
deadline = time.monotonic() + 20
while not [r for r in session.get("sq/x", source_info=zenoh.SourceInfo(me, 9)) if r.ok]:
    assert time.monotonic() < deadline
    time.sleep(0.05)
assert [r for r in querier.get() if r.ok]
session.close()
"""


@pytest.mark.parametrize("querier,queryable", [("weft", "zenoh"), ("zenoh", "weft"),
                                               ("weft", "weft")])
def test_the_queryable_reads_the_source_the_querier_named(weftd, querier, queryable):
    answering = start(queryable, QUERYABLE, weftd)
    asking = None
    try:
        assert answering.stdout.readline().strip() == "READY"
        asking = start(querier, QUERIER, weftd)
        zid, eid = json.loads(asking.stdout.readline())
        assert json.loads(answering.stdout.readline()) == [[zid, eid, 9], None]
        assert asking.wait(TIMEOUT) == 0
    finally:
        for p in (answering, asking):
            if p is not None:
                p.kill()
                p.wait()
