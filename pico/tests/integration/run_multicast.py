"""Two weft-pico peers over UDP multicast, with no router.

    python run_multicast.py --bin PATH/weft_interop

Creates two network namespaces joined by a veth pair (multicast never
touches the host's own interfaces), runs one peer in each, and removes the
namespaces at the end. Needs root and `ip`. Prints "N passed, N failed".
"""

import argparse
import base64
import json
import subprocess
import sys
import time

from run_interop import ACTOR, HERE, Scenario

import os

NS = ("weftpicoA", "weftpicoB")
VETH = ("wpvetha", "wpvethb")
ADDR = ("10.213.47.1/24", "10.213.47.2/24")
GROUP = "udp/224.0.0.225:17550"  # weft-pico peers only; 17553: with a Zenoh peer


def ip(*args):
    subprocess.run(["ip"] + list(args), check=True, timeout=10)


def teardown():
    for ns in NS:
        subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL, timeout=10)


def setup():
    teardown()
    for ns in NS:
        ip("netns", "add", ns)
        ip("-n", ns, "link", "set", "lo", "up")
    ip("link", "add", VETH[0], "netns", NS[0], "type", "veth", "peer", "name", VETH[1], "netns", NS[1])
    for ns, dev, addr in zip(NS, VETH, ADDR):
        ip("-n", ns, "addr", "add", addr, "dev", dev)
        ip("-n", ns, "link", "set", dev, "up")
        ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", dev)


class NsScenario(Scenario):
    def ns(self, name, side, argv):
        return self.start(name, ["ip", "netns", "exec", NS[side]] + [str(a) for a in argv])

    def peer(self, name, side, role, key, *args, st=False):
        loc = f"{GROUP}#iface={VETH[side]}"
        argv = ["ip", "netns", "exec", NS[side]] + self.wrapper + [self.bin] + (["--st"] if st else []) + [role, loc, key]
        return self.start(name, argv + [str(a) for a in args])


def scenario(s):
    sub = s.peer("subB", 1, "sub", "demo/mc/**", 6, 20000)
    s.ready(sub)
    time.sleep(0.5)
    pub = s.peer("pubA", 0, "pub", "demo/mc/a", 5, 20000)
    s.finish(pub, 30, "peer A published 5 x 20000 bytes (fragmented) to the group")
    s.finish(sub, 30, "peer B received them and the delete, no router")
    s.check(sub.count("SAMPLE PUT demo/mc/a len=20000 enc=4 att=0 ok") == 5, "payloads intact")
    qbl = s.peer("qblA", 0, "queryable", "demo/mcq/**", 8000, st=True)
    s.ready(qbl)
    time.sleep(0.5)
    get = s.peer("getB", 1, "get", "demo/mcq/x?k=v", 1, 3000)
    s.finish(get, 20, "peer B get answered by peer A's queryable (single-threaded)")
    s.check(get.has("REPLY demo/mcq/x 'reply:k=v'"), "reply content")
    s.finish(qbl, 20, "peer A queryable served the query")
    zenoh_peers(s)
    weft_peers(s)
    scouting(s)


def zenoh_peers(s):
    """A weft-pico peer and a Zenoh 1.10.2 peer on the same group (no router)."""
    group = "udp/224.0.0.225:17553"
    zsub = s.ns("zpeersub", 1, [s.py, ACTOR, "sub", f"{group}#iface={VETH[1]}", "demo/zmc/**", 6, 20000])
    s.ready(zsub)
    pub = s.start("picopeerpub", ["ip", "netns", "exec", NS[0]] + s.wrapper +
                  [s.bin, "pub", f"{group}#iface={VETH[0]}", "demo/zmc/a", "5", "20000"])
    s.finish(pub, 30, "weft-pico peer published 5 x 20000 bytes (fragmented) to the group")
    s.finish(zsub, 30, "the Zenoh peer received them and the delete")
    s.check(zsub.count("SAMPLE SampleKind.PUT demo/zmc/a len=20000") == 5 and not zsub.has("CORRUPT"), "intact")
    psub = s.start("picopeersub", ["ip", "netns", "exec", NS[0]] + s.wrapper +
                   [s.bin, "sub", f"{group}#iface={VETH[0]}", "demo/zmc2/**", "6", "20000"])
    s.ready(psub)
    # (a Zenoh 1.10.2 peer sends a message larger than its announced batch
    # size as one datagram, and drops the next ones: stay below 8192 bytes)
    zpub = s.ns("zpeerpub", 1, [s.py, ACTOR, "pub", f"{group}#iface={VETH[1]}", "demo/zmc2/b", 5, 2000])
    s.finish(zpub, 30, "Zenoh peer published 5 x 2000 bytes to the group")
    s.finish(psub, 30, "the weft-pico peer received them and the delete")
    s.check(psub.count("SAMPLE PUT demo/zmc2/b len=2000 enc=4 att=4 ok") == 5, "intact, with encoding and attachment")


def weft_peers(s):
    """A weft-pico peer and a weft peer (the `weft` tool, WEFT_CLI) on the same group."""
    cli = os.environ.get("WEFT_CLI", "")
    if not os.access(cli, os.X_OK):
        reason = f"no weft tool at {cli!r} (WEFT_CLI) for the group with a weft peer"
        if os.environ.get("WEFT_REQUIRE_INTEROP", "0") not in ("", "0"):
            s.check(False, reason)
        else:
            print(f"skipped: {reason}", flush=True)
        return
    group = "udp/224.0.0.225:17554"
    # weft-pico -> weft: five fragmented values and the delete.
    wsub = s.ns("weftpeersub", 1, [cli, "sub", "-l", f"{group}#iface={VETH[1]}", "-k", "demo/wmc/**",
                                   "--json", "--count", 6, "--no-multicast-scouting"])
    s.ready(wsub, "weft sub: subscribed to")
    pub = s.start("picopeerpub2", ["ip", "netns", "exec", NS[0]] + s.wrapper +
                  [s.bin, "pub", f"{group}#iface={VETH[0]}", "demo/wmc/a", "5", "20000"])
    s.finish(pub, 30, "weft-pico peer published 5 x 20000 bytes (fragmented) to the group")
    s.finish(wsub, 30, "the weft peer received them and the delete")
    samples = [json.loads(line) for line in wsub.lines if line.startswith("{")]
    puts = [x for x in samples if x["kind"] == "put" and x["key"] == "demo/wmc/a"]
    s.check(len(puts) == 5 and all(pattern_ok(base64.b64decode(x["payload_b64"]), 20000) for x in puts),
            "5 values of 20000 bytes, intact")
    s.check(any(x["kind"] == "delete" for x in samples), "and the delete")
    # weft -> weft-pico: a weft peer joins, puts once and leaves, until the pico peer has it
    # (the pico peer takes a member's frames once it has its Join).
    psub = s.start("picopeersub2", ["ip", "netns", "exec", NS[0]] + s.wrapper +
                   [s.bin, "sub", f"{group}#iface={VETH[0]}", "demo/wmc2/**", "1", "30000"])
    s.ready(psub)
    end = time.time() + 25
    while psub.p.poll() is None and time.time() < end:
        put = s.ns("weftpeerput", 1, [cli, "put", "-l", f"{group}#iface={VETH[1]}", "-k", "demo/wmc2/b",
                                     "-p", "abcdefghijklmnopqrstuvwxyz", "--no-multicast-scouting"])
        put.wait(20)
    s.finish(psub, 10, "the weft-pico peer received the weft peer's put")
    s.check(psub.has("SAMPLE PUT demo/wmc2/b len=26 "), "its 26 bytes, intact")
    s.check(not psub.has("CORRUPT"), "nothing corrupt")


def pattern_ok(data, size):
    """weft_interop's payload: consecutive byte values from any first one."""
    return len(data) == size and all(data[i] == (data[0] + i) & 0xFF for i in range(len(data)))


def scouting(s):
    """A client with no locator finds a Zenoh router by multicast scouting.

    Everything runs in namespace A: the router on that namespace's own
    127.0.0.1, the Scouts on its veth (looped back to the responder)."""
    iface_ip = ADDR[0].split("/")[0]
    endpoint = "tcp/127.0.0.1:17551"
    r = s.ns("router", 0, [s.py, ACTOR, "router", endpoint, "-", "60000"])
    s.check(r.wait_line("ROUTER UP", 20) is not None, "router up in namespace A")
    resp = s.ns("responder", 0, [s.py, os.path.join(HERE, "hello_responder.py"), "224.0.0.224", "17552",
                                 iface_ip, endpoint, "30"])
    s.check(resp.wait_line("RESPONDER UP", 20) is not None, "Hello responder up")
    argv = ["ip", "netns", "exec", NS[0]] + s.wrapper + [s.bin, "sub", f"scout:udp/224.0.0.224:17552#iface={VETH[0]}",
                                                       "demo/scout/**", 4, 20000]
    sub = s.start("scoutsub", [str(a) for a in argv])
    s.ready(sub)
    s.check(resp.has("SCOUT what=3 zid=yes"), "the client multicast a Scout (router|peer, with its zid)")
    time.sleep(0.5)
    pub = s.ns("zpub", 0, [s.py, ACTOR, "pub", endpoint, "demo/scout/a", "3", "10"])
    s.finish(pub, 30, "Zenoh publisher in namespace A")
    s.finish(sub, 30, "client found the router by scouting and received 3 puts + 1 delete")
    sc = s.start("zscout", ["ip", "netns", "exec", NS[0]] + s.wrapper +
                 [s.bin, "scout", f"udp/224.0.0.224:17552#iface={VETH[0]}", "1500"])
    s.finish(sc, 20, "z_scout reported the answering node")
    s.check(sc.count("HELLO router locators=1 tcp/127.0.0.1:17551") == 1, "once, with its role and locator")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    s = NsScenario(args)
    try:
        setup()
        scenario(s)
    except Exception as e:
        s.check(False, f"scenario raised {e!r}")
    finally:
        s.cleanup()
        teardown()
    print(f"{s.passed} passed, {s.failed} failed", flush=True)
    return 0 if s.failed == 0 and s.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
