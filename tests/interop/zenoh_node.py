#!/usr/bin/env python3
"""An Eclipse Zenoh node for weft's interop tests, driven from the command line.

Opens a Zenoh session (router, peer or client) on loopback with multicast scouting off
(--multicast-scouting turns it on, for tests inside their own network namespaces),
optionally declares a subscriber, prints `READY` once open, then one JSON line per
received sample, and exits after --count samples or --timeout seconds (status 0 if the
count was reached, 3 on timeout).

With --usrpwd-user/--usrpwd-password (credentials presented) and --usrpwd-dictionary
FILE (users accepted), the session uses Zenoh's user/password authentication; when the
session cannot open (e.g. refused credentials) the node prints `OPEN_FAILED <reason>` and
exits with status 4.
TLS (`tls/` endpoints): --tls-root-ca, --tls-listen-cert/--tls-listen-key,
--tls-connect-cert/--tls-connect-key (PEM files), --tls-mtls, --tls-no-verify-name and
--tls-close-on-expiration set Zenoh's `transport/link/tls/*` keys.

With --config FILE, the session starts from that configuration file (Zenoh's
`Config.from_file`, relative paths in it from --chdir DIR if given); --mode, --listen and
--connect then change it only when given.

Gossip scouting is off unless --gossip is given. With --await-peers N, once open the
node waits (at most --timeout seconds) until it has sessions with N peers, then prints
{"zid": own id, "peers": [ids of the peers it has sessions with]} before anything else
it was asked to do. --await-routers N does the same for routers ({"zid", "routers"}).

With --scout WHAT (e.g. `router|peer`), opens no session: scouts for --timeout seconds
and prints one JSON line per node that answers ({"zid", "whatami", "locators"}), then
`DONE`.
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import time

import zenoh


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--mode", choices=["router", "peer", "client"])
    p.add_argument("--config", help="a configuration file to start from")
    p.add_argument("--chdir", help="the directory to run in (for --config's relative paths)")
    p.add_argument("--listen", action="append", default=[])
    p.add_argument("--connect", action="append", default=[])
    p.add_argument("--sub", help="key expression to subscribe to")
    p.add_argument("--put", help="key to publish on (through a declared publisher)")
    p.add_argument("--payload", default="", help="text payload to publish")
    p.add_argument("--size", type=int, help="publish SIZE bytes (i %% 251) instead of --payload")
    p.add_argument("--encoding", help="encoding of published values")
    p.add_argument("--attachment", help="attachment of published values")
    p.add_argument("--delete", action="store_true", help="also delete the key at the end")
    p.add_argument("--block", action="store_true",
                   help="publish with congestion control block (nothing dropped on the way)")
    p.add_argument("--repeat", type=int, default=1, help="how many times to publish")
    p.add_argument("--interval", type=float, default=0.1, help="seconds between publications (paced from the first)")
    p.add_argument("--queryable", help="key expression to answer queries on")
    p.add_argument("--reply", default="", help="payload of the queryable's replies")
    p.add_argument("--reply-err", action="store_true", help="answer with an error instead")
    p.add_argument("--reply-encoding", help="encoding of the queryable's replies (or errors)")
    p.add_argument("--get", help="selector to query (prints one JSON line per reply)")
    p.add_argument("--token", help="liveliness token to declare")
    p.add_argument("--liveliness-sub", help="liveliness subscriber key expression")
    p.add_argument("--history", action="store_true", help="liveliness subscriber with history")
    p.add_argument("--liveliness-get", help="list the liveliness tokens on a key expression")
    p.add_argument("--liveliness-expect", type=int, metavar="N",
                   help="repeat --liveliness-get until an answer holds N distinct keys")
    p.add_argument("--consolidation", choices=["auto", "none", "monotonic", "latest"], default="auto")
    p.add_argument("--target", choices=["best_matching", "all", "all_complete"], default="best_matching")
    p.add_argument("--multicast-scouting", action="store_true", help="enable multicast scouting")
    p.add_argument("--gossip", action="store_true", help="enable gossip scouting")
    p.add_argument("--await-peers", type=int, metavar="N",
                   help="wait for sessions with N peers, then print them")
    p.add_argument("--await-routers", type=int, metavar="N",
                   help="wait for sessions with N routers, then print them")
    p.add_argument("--scout", metavar="WHAT", help="only scout for these roles and print the Hellos")
    p.add_argument("--sleep-in-callback", type=float, default=0.0,
                   help="seconds the subscriber's callback sleeps per sample (a slow reader)")
    p.add_argument("--insert", action="append", default=[], metavar="KEY=JSON5",
                   help="a configuration value, as Zenoh's Config.insert_json5 takes it")
    p.add_argument("--usrpwd-user", help="transport/auth/usrpwd/user")
    p.add_argument("--usrpwd-password", help="transport/auth/usrpwd/password")
    p.add_argument("--usrpwd-dictionary", help="transport/auth/usrpwd/dictionary_file")
    p.add_argument("--tls-root-ca", help="transport/link/tls/root_ca_certificate")
    p.add_argument("--tls-listen-cert", help="transport/link/tls/listen_certificate")
    p.add_argument("--tls-listen-key", help="transport/link/tls/listen_private_key")
    p.add_argument("--tls-connect-cert", help="transport/link/tls/connect_certificate")
    p.add_argument("--tls-connect-key", help="transport/link/tls/connect_private_key")
    p.add_argument("--tls-mtls", action="store_true", help="transport/link/tls/enable_mtls")
    p.add_argument("--tls-no-verify-name", action="store_true",
                   help="transport/link/tls/verify_name_on_connect: false")
    p.add_argument("--tls-close-on-expiration", action="store_true",
                   help="transport/link/tls/close_link_on_expiration")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--timeout", type=float, default=10.0)
    args = p.parse_args()

    if args.chdir:
        os.chdir(args.chdir)
    if args.config:
        conf = zenoh.Config.from_file(args.config)
    else:
        conf = zenoh.Config()
        args.mode = args.mode or "router"
    if args.mode:
        conf.insert_json5("mode", json.dumps(args.mode))
    if args.listen or not args.config:
        conf.insert_json5("listen/endpoints", json.dumps(args.listen))
    if args.connect or not args.config:
        conf.insert_json5("connect/endpoints", json.dumps(args.connect))
    conf.insert_json5("scouting/multicast/enabled", json.dumps(args.multicast_scouting or bool(args.scout)))
    conf.insert_json5("scouting/gossip/enabled", json.dumps(args.gossip))
    for item in args.insert:
        key, _, value = item.partition("=")
        conf.insert_json5(key, value)
    for key, value in (
        ("user", args.usrpwd_user),
        ("password", args.usrpwd_password),
        ("dictionary_file", args.usrpwd_dictionary),
    ):
        if value is not None:
            conf.insert_json5(f"transport/auth/usrpwd/{key}", json.dumps(value))
    tls = {
        "root_ca_certificate": args.tls_root_ca,
        "listen_certificate": args.tls_listen_cert,
        "listen_private_key": args.tls_listen_key,
        "connect_certificate": args.tls_connect_cert,
        "connect_private_key": args.tls_connect_key,
    }
    for key, path in tls.items():
        if path:
            conf.insert_json5(f"transport/link/tls/{key}", json.dumps(path))
    if args.tls_mtls:
        conf.insert_json5("transport/link/tls/enable_mtls", "true")
    if args.tls_no_verify_name:
        conf.insert_json5("transport/link/tls/verify_name_on_connect", "false")
    if args.tls_close_on_expiration:
        conf.insert_json5("transport/link/tls/close_link_on_expiration", "true")
    if args.scout:
        return scout(args, conf)
    try:
        session = zenoh.open(conf)
    except Exception as e:  # zenoh.ZError: refused, unreachable
        print(f"OPEN_FAILED {e}".replace("\n", " "), flush=True)
        return 4

    received = []
    done = threading.Event()
    lock = threading.Lock()

    def on_sample(sample):
        if args.sleep_in_callback:
            time.sleep(args.sleep_in_callback)
        payload = sample.payload.to_bytes()
        record = {
            "kind": "put" if sample.kind == zenoh.SampleKind.PUT else "delete",
            "key": str(sample.key_expr),
            "len": len(payload),
            "sha256": hashlib.sha256(payload).hexdigest(),
            "payload": payload[:256].decode("utf-8", "replace"),
            "encoding": str(sample.encoding),
            "attachment": None
            if sample.attachment is None
            else sample.attachment.to_bytes().decode("utf-8", "replace"),
        }
        with lock:
            received.append(record)
            print(json.dumps(record), flush=True)
            if len(received) >= args.count:
                done.set()

    sub = session.declare_subscriber(args.sub, on_sample) if args.sub else None
    token = session.liveliness().declare_token(args.token) if args.token else None
    if args.liveliness_sub:
        session.liveliness().declare_subscriber(
            args.liveliness_sub, on_sample, history=args.history
        )
        sub = True
    queryable = None
    if args.queryable:

        def on_query(query):
            key = args.queryable if "*" not in args.queryable else str(query.key_expr)
            record = {"query": str(query.selector), "parameters": str(query.parameters)}
            if query.payload is not None:
                record["payload"] = query.payload.to_bytes().decode("utf-8", "replace")
                record["encoding"] = str(query.encoding)
            print(json.dumps(record), flush=True)
            options = {}
            if args.reply_encoding:
                options["encoding"] = zenoh.Encoding(args.reply_encoding)
            if args.reply_err:
                query.reply_err(args.reply.encode(), **options)
            else:
                query.reply(key, args.reply.encode(), **options)

        queryable = session.declare_queryable(args.queryable, on_query)
    print("READY", flush=True)
    if args.await_peers is not None:
        end = time.monotonic() + args.timeout
        peers = [str(z) for z in session.info.peers_zid()]
        while len(peers) < args.await_peers and time.monotonic() < end:
            time.sleep(0.02)
            peers = [str(z) for z in session.info.peers_zid()]
        print(json.dumps({"zid": str(session.info.zid()), "peers": peers}), flush=True)
    if args.await_routers is not None:
        end = time.monotonic() + args.timeout
        routers = [str(z) for z in session.info.routers_zid()]
        while len(routers) < args.await_routers and time.monotonic() < end:
            time.sleep(0.02)
            routers = [str(z) for z in session.info.routers_zid()]
        print(json.dumps({"zid": str(session.info.zid()), "routers": routers}), flush=True)
    if args.liveliness_get:
        # With --liveliness-expect N, asks again (within --timeout) until one answer holds
        # N distinct keys: a node that just connected to the holders may not have their
        # declarations yet. The last answer is printed whole, duplicates included.
        end = time.monotonic() + args.timeout
        while True:
            left = max(end - time.monotonic(), 0.1)
            keys = [str(r.ok.key_expr) for r in
                    session.liveliness().get(args.liveliness_get, timeout=left)
                    if r.ok is not None]
            if len(set(keys)) >= (args.liveliness_expect or 0) or time.monotonic() >= end:
                break
            time.sleep(0.05)
        for key in keys:
            print(json.dumps({"ok": True, "key": key}), flush=True)
        print("DONE", flush=True)
        session.close()
        return 0
    if args.get:
        target = {
            "best_matching": zenoh.QueryTarget.BEST_MATCHING,
            "all": zenoh.QueryTarget.ALL,
            "all_complete": zenoh.QueryTarget.ALL_COMPLETE,
        }[args.target]
        consolidation = {
            "auto": zenoh.ConsolidationMode.AUTO,
            "none": zenoh.ConsolidationMode.NONE,
            "monotonic": zenoh.ConsolidationMode.MONOTONIC,
            "latest": zenoh.ConsolidationMode.LATEST,
        }[args.consolidation]
        for reply in session.get(
            args.get, target=target, consolidation=consolidation, timeout=args.timeout
        ):
            if reply.ok is not None:
                s_ = reply.ok
                record = {"ok": True, "key": str(s_.key_expr), "payload": s_.payload.to_bytes().decode("utf-8", "replace")}
            else:
                record = {"ok": False, "error": reply.err.payload.to_bytes().decode("utf-8", "replace")}
            print(json.dumps(record), flush=True)
        print("DONE", flush=True)
        session.close()
        return 0
    if (queryable is not None or token is not None) and not sub and not args.put:
        time.sleep(args.timeout)
        session.close()
        return 0
    if args.put:
        publish(session, args)
        if not sub:
            session.close()
            return 0
    ok = done.wait(args.timeout) if sub else (time.sleep(args.timeout) or True)
    session.close()
    return 0 if ok else 3


def scout(args, conf) -> int:
    print("READY", flush=True)
    seen = set()
    scouting = zenoh.scout(what=args.scout, config=conf)
    end = time.monotonic() + args.timeout
    while time.monotonic() < end:
        hello = scouting.try_recv()
        if hello is None:
            time.sleep(0.02)
            continue
        if str(hello.zid) in seen:
            continue
        seen.add(str(hello.zid))
        record = {
            "zid": str(hello.zid),
            "whatami": str(hello.whatami).lower().rsplit(".", 1)[-1],
            "locators": [str(l) for l in hello.locators],
        }
        print(json.dumps(record), flush=True)
    scouting.stop()
    print("DONE", flush=True)
    return 0


def publish(session, args) -> None:
    payload = (
        bytes(i % 251 for i in range(args.size)) if args.size is not None else args.payload.encode()
    )
    options = {}
    if args.encoding:
        options["encoding"] = zenoh.Encoding(args.encoding)
    if args.attachment is not None:
        options["attachment"] = args.attachment.encode()
    publisher_options = {}
    if args.block:
        publisher_options["congestion_control"] = zenoh.CongestionControl.BLOCK
    publisher = session.declare_publisher(args.put, **publisher_options)
    # Paced by deadlines, not by sleeps after each put: the rate is 1/interval on
    # average however long a put takes.
    start = time.monotonic()
    for n in range(args.repeat):
        publisher.put(payload, **options)
        if n + 1 < args.repeat:
            time.sleep(max(0.0, start + (n + 1) * args.interval - time.monotonic()))
    if args.delete:
        publisher.delete()
    print("PUBLISHED", flush=True)
    time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
