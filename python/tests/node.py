"""A Zenoh node driven by JSON lines on stdin, answering JSON lines on stdout.

Runs with weft (``import weft as zenoh``) or, with ``--zenoh``, with Eclipse Zenoh's
zenoh-python, so that tests can put either implementation at the other end. Usage:
``node.py [--zenoh] [--peer | --listen] ENDPOINT``: a client of the router at ENDPOINT, or
with ``--peer`` a peer connecting to the peer listening there, or with ``--listen`` a
peer listening there. Commands (one JSON object per line, field ``op``):
``sub`` (key), ``ring`` (key, capacity, then ``drain``), ``put`` (key, payload, encoding,
attachment), ``delete`` (key), ``queryable`` (key, reply), ``get`` (selector, payload),
``info`` (the session's id, transports and links), ``quit``; zenoh.ext's advanced
publisher and subscriber: ``adv_pub`` (key, cache, heartbeat, detection; reports its
id), ``adv_put`` (payloads, or count and size), ``adv_sub`` (key, history, late,
recovery, period, max_age; samples reported as ``adv_sample`` with their sequence number, misses
as ``miss``), ``detect`` (key: the publishers' tokens, as ``publisher``). Every command is
answered by ``{"ok": op}``; samples, queries and replies are reported as they come.
"""

import json
import sys
import threading
from datetime import timedelta

if "--zenoh" in sys.argv:
    import zenoh
else:
    import weft as zenoh

_out = threading.Lock()
publisher = None
subscriber = None


def emit(**event):
    """Writes one event line."""
    with _out:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()


def describe(sample):
    """A sample as a JSON-able dict."""
    return {
        "key": str(sample.key_expr),
        "payload": sample.payload.to_bytes().decode("utf-8", "replace"),
        "kind": "delete" if sample.kind == zenoh.SampleKind.DELETE else "put",
        "encoding": str(sample.encoding),
        "attachment": None
        if sample.attachment is None
        else sample.attachment.to_bytes().decode(),
    }


def entity(gid):
    """An entity's global id as a JSON-able dict."""
    return {"zid": str(gid.zid), "eid": gid.eid}


def advanced(session, cmd, keep):
    """The commands of zenoh.ext's advanced publisher and subscriber."""
    global publisher, subscriber
    ext = zenoh.ext
    op = cmd["op"]
    if op == "adv_pub":
        heartbeat = cmd.get("heartbeat")
        publisher = ext.declare_advanced_publisher(
            session,
            cmd["key"],
            cache=ext.CacheConfig(cmd["cache"]) if cmd.get("cache") else None,
            sample_miss_detection=ext.MissDetectionConfig(heartbeat=heartbeat),
            publisher_detection=cmd.get("detection", False),
        )
        emit(event="adv_pub", id=entity(publisher.id))
    elif op == "adv_put":
        for payload in cmd.get("payloads", []):
            publisher.put(payload)
        for i in range(cmd.get("count", 0)):
            publisher.put(f"{i:08d}".encode() + bytes(cmd["size"] - 8))
    elif op == "adv_sub":
        history = None
        if cmd.get("history") is not None:
            history = ext.HistoryConfig(
                detect_late_publishers=cmd.get("late", False),
                max_samples=cmd["history"] or None,
                max_age=cmd.get("max_age"),
            )
        recovery = None
        if cmd.get("recovery") == "heartbeat":
            recovery = ext.RecoveryConfig(heartbeat=True)
        elif cmd.get("recovery") == "periodic":
            recovery = ext.RecoveryConfig(periodic_queries=timedelta(seconds=cmd["period"]))

        def on_sample(s):
            info = s.source_info
            emit(
                event="adv_sample",
                key=str(s.key_expr),
                payload=s.payload.to_bytes()[:8].decode("utf-8", "replace"),
                sn=None if info is None else info.source_sn,
                source=None if info is None else entity(info.source_id),
            )

        subscriber = ext.declare_advanced_subscriber(
            session, cmd["key"], on_sample, history=history, recovery=recovery
        )
        keep.append(subscriber)
        keep.append(
            subscriber.sample_miss_listener(
                lambda m: emit(event="miss", source=entity(m.source), nb=m.nb)
            )
        )
    elif op == "detect":
        keep.append(
            subscriber.detect_publishers(
                lambda s: emit(
                    event="publisher",
                    key=str(s.key_expr),
                    kind="delete" if s.kind == zenoh.SampleKind.DELETE else "put",
                ),
                history=True,
            )
        )


def main():
    endpoint = [a for a in sys.argv[1:] if not a.startswith("--")][0]
    config = zenoh.Config()
    peer = "--peer" in sys.argv or "--listen" in sys.argv
    config.insert_json5("mode", '"peer"' if peer else '"client"')
    where = "listen/endpoints" if "--listen" in sys.argv else "connect/endpoints"
    config.insert_json5(where, json.dumps([endpoint]))
    config.insert_json5("scouting/multicast/enabled", "false")
    session = zenoh.open(config)
    keep = []
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "sub":
            keep.append(
                session.declare_subscriber(
                    cmd["key"], lambda s: emit(event="sample", **describe(s))
                )
            )
        elif op == "ring":
            ring = session.declare_subscriber(
                cmd["key"], zenoh.handlers.RingChannel(cmd["capacity"])
            )
            keep.append(ring)
        elif op == "drain":
            got = []
            while True:
                s = ring.try_recv()
                if s is None:
                    break
                got.append(s.payload.to_string())
            emit(event="drained", payloads=got)
        elif op == "put":
            kwargs = {}
            if cmd.get("encoding"):
                kwargs["encoding"] = cmd["encoding"]
            if cmd.get("attachment"):
                kwargs["attachment"] = cmd["attachment"].encode()
            session.put(cmd["key"], cmd["payload"], **kwargs)
        elif op == "delete":
            session.delete(cmd["key"])
        elif op == "queryable":
            answer = cmd["reply"]

            def on_query(query, answer=answer):
                emit(
                    event="query",
                    selector=str(query.selector),
                    parameters=str(query.parameters),
                    payload=None
                    if query.payload is None
                    else query.payload.to_string(),
                )
                query.reply(query.key_expr, answer)

            keep.append(session.declare_queryable(cmd["key"], on_query))
        elif op == "get":
            kwargs = {"timeout": 5.0}
            if cmd.get("payload"):
                kwargs["payload"] = cmd["payload"]
            replies = []
            for reply in session.get(cmd["selector"], **kwargs):
                if reply.ok is not None:
                    described = describe(reply.ok)
                else:
                    described = {"error": reply.err.payload.to_string()}
                described["replier"] = (
                    None if reply.replier_id is None else str(reply.replier_id.zid)
                )
                replies.append(described)
            emit(event="replies", replies=replies)
        elif op.startswith("adv_") or op == "detect":
            advanced(session, cmd, keep)
        elif op == "info":
            emit(
                event="info",
                zid=str(session.zid()),
                transports=[
                    {
                        "zid": str(t.zid),
                        "whatami": str(t.whatami),
                        "is_qos": t.is_qos,
                        "is_multicast": t.is_multicast,
                    }
                    for t in session.info.transports()
                ],
                links=[
                    {
                        "zid": str(link.zid),
                        "src": link.src,
                        "dst": link.dst,
                        "group": link.group,
                        "is_streamed": link.is_streamed,
                        "priorities": list(link.priorities or []),
                        "reliable": link.reliability == zenoh.Reliability.RELIABLE,
                    }
                    for link in session.info.links()
                ],
            )
        elif op == "quit":
            emit(ok=op)
            break
        emit(ok=op)
    session.close()


if __name__ == "__main__":
    main()
