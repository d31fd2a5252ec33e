"""The Zenoh side of the integration tests: one Zenoh session per run, using
only the public `zenoh` Python API (eclipse-zenoh 1.10.2).

    python zenoh_actor.py ROLE ENDPOINT KEY [ARGS...]

Roles: router, sub, tsub, count, pub, ppub, get, queryable, token, lsub, lget. Everything runs on
127.0.0.1 with multicast scouting disabled; an ENDPOINT that is a multicast
group (udp/224...#iface=X, inside the test's network namespace) makes a peer
on that group instead of a client. Each role prints one line per
event and exits 0 on success; every wait is bounded.
"""

import sys
import threading
import time

import zenoh


def config(mode, endpoints, listen):
    conf = zenoh.Config()
    conf.insert_json5("mode", f'"{mode}"')
    key = "listen/endpoints" if listen else "connect/endpoints"
    conf.insert_json5(key, "[" + ",".join(f'"{e}"' for e in endpoints) + "]")
    conf.insert_json5("scouting/multicast/enabled", "false")
    conf.insert_json5("scouting/gossip/enabled", "false")
    return conf


def out(*args):
    print(*args, flush=True)


def pattern_ok(data):
    return all(data[i] == (data[0] + i) & 0xFF for i in range(len(data)))


def main():
    role, endpoint, key = sys.argv[1], sys.argv[2], sys.argv[3]
    args = [int(a) for a in sys.argv[4:]]
    if role == "router":
        endpoints = endpoint.split(",")
        with zenoh.open(config("router", endpoints, True)):
            out("ROUTER UP")
            time.sleep(args[0] / 1000 if args else 60)
        return 0

    if endpoint.startswith("udp/22"):  # a multicast group: peer mode, Join-based transport
        session = zenoh.open(config("peer", [endpoint], True))
    else:
        session = zenoh.open(config("client", [endpoint], False))
    try:
        return run(role, session, key, args)
    finally:
        session.close()


def run(role, session, key, args):
    done = threading.Event()
    count = {"n": 0, "bad": 0}

    def on_sample(sample):
        data = sample.payload.to_bytes()
        ok = sample.kind != zenoh.SampleKind.PUT or pattern_ok(data)
        att = sample.attachment.to_bytes() if sample.attachment is not None else b""
        out(f"SAMPLE {sample.kind} {sample.key_expr} len={len(data)} enc={sample.encoding} att={att!r}"
            f" {'ok' if ok else 'CORRUPT'} prio={int(sample.priority)}")
        count["n"] += 1
        if not ok:
            count["bad"] += 1
        if count["n"] >= expect:
            done.set()

    if role in ("sub", "lsub"):
        expect, ms = args[0], args[1]
        if role == "sub":
            sub = session.declare_subscriber(key, on_sample)
        else:
            sub = session.liveliness().declare_subscriber(key, on_sample, history=True)
        out("READY")
        done.wait(ms / 1000)
        sub.undeclare()
        out(f"EVENTS {count['n']} BAD {count['bad']}")
        return 0 if count["n"] >= expect and count["bad"] == 0 else 1

    if role == "tsub":  # prints each sample's payload as text, whatever it holds
        expect, ms = args[0], args[1]

        def on_text(sample):
            out(f"SAMPLE {sample.key_expr} '{sample.payload.to_bytes().decode(errors='replace')}'")
            count["n"] += 1
            if count["n"] >= expect:
                done.set()

        sub = session.declare_subscriber(key, on_text)
        out("READY")
        done.wait(ms / 1000)
        sub.undeclare()
        out(f"EVENTS {count['n']}")
        return 0 if count["n"] >= expect else 1

    if role == "count":  # counts samples without printing each; checks their order
        expect, ms = args[0], args[1]
        order = {"next": 0, "out_of_order": 0}

        def on_counted(sample):
            data = sample.payload.to_bytes()
            if not pattern_ok(data):
                count["bad"] += 1
            if len(data) > 0 and data[0] != order["next"] & 0xFF:
                order["out_of_order"] += 1
            order["next"] += 1
            count["n"] += 1
            if count["n"] >= expect:
                done.set()

        sub = session.declare_subscriber(key, on_counted)
        out("READY")
        done.wait(ms / 1000)
        sub.undeclare()
        out(f"COUNTED {count['n']} BAD {count['bad']} OUT_OF_ORDER {order['out_of_order']}")
        return 0 if count["n"] == expect and count["bad"] == 0 and order["out_of_order"] == 0 else 1

    if role == "pub":
        n, size = args[0], args[1]
        time.sleep(0.5)
        for i in range(n):
            data = bytes((j + i) & 0xFF for j in range(size))
            session.put(key, data, encoding="text/plain", attachment=b"meta")
            time.sleep(0.05)
        session.delete(key)
        out(f"PUB DONE {n}")
        time.sleep(0.5)
        return 0

    if role == "ppub":  # one put on KEY/p at each priority p = 1..7, ROUNDS times
        rounds = args[0]
        prios = [zenoh.Priority.REAL_TIME, zenoh.Priority.INTERACTIVE_HIGH, zenoh.Priority.INTERACTIVE_LOW,
                 zenoh.Priority.DATA_HIGH, zenoh.Priority.DATA, zenoh.Priority.DATA_LOW, zenoh.Priority.BACKGROUND]
        time.sleep(0.5)
        for i in range(rounds):
            for p in prios:
                session.put(f"{key}/{int(p)}", bytes((j + i) & 0xFF for j in range(16)), priority=p,
                            congestion_control=zenoh.CongestionControl.BLOCK)
            time.sleep(0.02)
        out(f"PUB DONE {rounds}")
        time.sleep(0.5)
        return 0

    if role in ("get", "lget"):
        expect, ms = args[0], args[1]
        if role == "get":
            replies = session.get(key, payload=b"question", timeout=ms / 1000)
        else:
            replies = session.liveliness().get(key, timeout=ms / 1000)
        n = 0
        for reply in replies:
            if reply.ok is not None:
                out(f"REPLY {reply.ok.key_expr} {reply.ok.payload.to_bytes()!r}")
            else:
                out(f"REPLY_ERR {reply.err.payload.to_bytes()!r}")
            n += 1
        out(f"REPLIES {n}")
        return 0 if n == expect else 1

    if role == "queryable":
        ms = args[0]

        def on_query(query):
            out(f"QUERY {query.selector} payload={query.payload.to_bytes() if query.payload else b''!r}")
            count["n"] += 1
            if str(query.key_expr).endswith("err"):
                query.reply_err(b"oops")
            else:
                query.reply(query.key_expr, f"zreply:{query.parameters}".encode())

        qbl = session.declare_queryable(key, on_query)
        out("READY")
        time.sleep(ms / 1000)
        qbl.undeclare()
        out(f"QUERIES {count['n']}")
        return 0 if count["n"] > 0 else 1

    if role == "token":
        ms = args[0]
        tok = session.liveliness().declare_token(key)
        out("READY")
        time.sleep(ms / 1000)
        tok.undeclare()
        out("UNDECLARED")
        time.sleep(0.5)
        return 0

    out(f"unknown role {role}")
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the runner stops routers with SIGINT
        sys.exit(0)
