"""Entity ids (`Session.id`, `Subscriber.id`, `Queryable.id`, `Querier.id`,
`Publisher.id`): the same program run by weft and by zenoh-python tells the same of
them, and a reply names the queryable that sent it, weft's or zenoh-python's, each way,
through weftd."""

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import CLIENT_PROGRAM_HEAD, TIMEOUT, zenoh_python

OPEN = CLIENT_PROGRAM_HEAD

# What a program can tell of the ids of its entities.
DESCRIBE = OPEN + """
zid = session.zid()
entities = {
    "subscriber": session.declare_subscriber("ids/s"),
    "callback subscriber": session.declare_subscriber("ids/s", lambda s: None),
    "queryable": session.declare_queryable("ids/q"),
    "querier": session.declare_querier("ids/q"),
    "publisher": session.declare_publisher("ids/p"),
    "liveliness subscriber": session.liveliness().declare_subscriber("ids/l"),
}
ids = {name: e.id for name, e in entities.items()}
facts = {
    "types": sorted({type(i).__name__ for i in ids.values()} | {type(session.id).__name__}),
    "session zid": session.id.zid == zid and str(session.id.zid) == str(zid),
    "zids": all(i.zid == zid and str(i.zid) == str(zid) for i in ids.values()),
    "eids are ints": all(type(i.eid) is int for i in ids.values()),
    "distinct eids": len({i.eid for i in ids.values()} | {session.id.eid}) == len(ids) + 1,
    "stable": all(e.id.eid == ids[name].eid for name, e in entities.items()),
}
gone = {}
for name, e in entities.items():
    e.undeclare()
    try:
        e.id
        gone[name] = "kept"
    except zenoh.ZError:
        gone[name] = "ZError"
facts["after undeclare"] = gone
session.close()
facts["session id after close"] = session.id.zid == zid
print(json.dumps(facts), flush=True)
"""

QUERYABLE = OPEN + """
def on_query(query):
    query.reply(query.key_expr, "here")
queryable = session.declare_queryable("ids/answer", on_query)
me = queryable.id
print(json.dumps([str(me.zid), me.eid]), flush=True)
sys.stdin.read()
session.close()
"""

GET = OPEN + """
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    replies = [r for r in session.get("ids/answer", timeout=5.0) if r.ok is not None]
    if replies:
        who = replies[0].replier_id
        print(json.dumps(None if who is None else [str(who.zid), who.eid]), flush=True)
        break
    time.sleep(0.05)
session.close()
"""


def run(impl, code, endpoint, **kwargs):
    python = zenoh_python() if impl == "zenoh" else sys.executable
    return subprocess.Popen([python, "-c", textwrap.dedent(code), impl, endpoint],
                            stdout=subprocess.PIPE, text=True, **kwargs)


def test_weft_tells_of_ids_what_zenoh_python_does(weftd):
    told = {}
    for impl in ("weft", "zenoh"):
        p = run(impl, DESCRIBE, weftd)
        out, _ = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0
        told[impl] = json.loads(out)
    assert told["weft"] == told["zenoh"]
    assert told["weft"]["types"] == ["EntityGlobalId"]
    assert set(told["weft"]["after undeclare"].values()) == {"ZError"}


@pytest.mark.parametrize("queryable,getter", [("weft", "zenoh"), ("zenoh", "weft"),
                                              ("weft", "weft")])
def test_a_reply_names_the_queryable_that_sent_it(weftd, queryable, getter):
    answering = run(queryable, QUERYABLE, weftd, stdin=subprocess.PIPE)
    asking = None
    try:
        me = json.loads(answering.stdout.readline())
        asking = run(getter, GET, weftd)
        out, _ = asking.communicate(timeout=TIMEOUT)
        assert asking.returncode == 0
        assert json.loads(out) == me
    finally:
        answering.stdin.close()
        for p in (answering, asking):
            if p is not None:
                p.kill()
                p.wait()
