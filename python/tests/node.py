"""A Zenoh node driven by JSON lines on stdin, answering JSON lines on stdout.

Runs with weft (``import weft as zenoh``) or, with ``--zenoh``, with Eclipse Zenoh's
zenoh-python, so that tests can put either implementation at the other end. Usage:
``node.py [--zenoh] [--peer] ENDPOINT``: a client of the router at ENDPOINT, or with
``--peer`` a peer connecting to the peer listening there. Commands (one JSON object per line, field ``op``):
``sub`` (key), ``ring`` (key, capacity, then ``drain``), ``put`` (key, payload, encoding,
attachment), ``delete`` (key), ``queryable`` (key, reply), ``get`` (selector, payload),
``info`` (the session's id, transports and links), ``quit``. Every command is answered by ``{"ok": op}``; samples, queries and replies are
reported as they come.
"""

import json
import sys
import threading

if "--zenoh" in sys.argv:
    import zenoh
else:
    import weft as zenoh

_out = threading.Lock()


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


def main():
    endpoint = [a for a in sys.argv[1:] if not a.startswith("--")][0]
    config = zenoh.Config()
    config.insert_json5("mode", '"peer"' if "--peer" in sys.argv else '"client"')
    config.insert_json5("connect/endpoints", json.dumps([endpoint]))
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
