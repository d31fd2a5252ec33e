"""Integration scenarios: weft-pico against a real Zenoh 1.10.2 router.

    python run_interop.py SCENARIO --bin PATH/weft_interop

Every process runs on 127.0.0.1, on a port the system gives the scenario as
free (for TCP and UDP alike), with bounded waits; every process started is killed at the end. Prints
"N passed, N failed" for its checks and exits non-zero on any failure.
"""

import argparse
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests
ACTOR = os.path.join(HERE, "zenoh_actor.py")


class Proc:
    """A child process whose output lines are collected by a thread."""

    def __init__(self, name, argv):
        self.name = name
        self.lines = []
        self.cond = threading.Condition()
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            line = line.rstrip("\n")
            print(f"  [{self.name}] {line}", flush=True)
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()

    def wait_line(self, prefix, timeout):
        end = time.time() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if line.startswith(prefix):
                        return line
                left = end - time.time()
                if left <= 0 or self.p.poll() is not None and not self._pending():
                    return None
                self.cond.wait(min(left, 0.2))

    def _pending(self):
        return False

    def count(self, prefix):
        with self.cond:
            return sum(1 for line in self.lines if line.startswith(prefix))

    def has(self, text):
        with self.cond:
            return any(text in line for line in self.lines)

    def wait(self, timeout):
        """Waits for the process to exit and for every line it printed to be read (a
        check right after the exit must see its last lines); the exit status, or None."""
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        self.reader.join(timeout)
        return rc

    def kill(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGINT)
                self.p.wait(timeout=3)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.p.wait(timeout=3)


class Scenario:
    def __init__(self, args):
        self.bin = args.bin
        # e.g. WEFT_WRAPPER="valgrind --error-exitcode=99 --leak-check=full"
        self.wrapper = os.environ.get("WEFT_WRAPPER", "").split()
        self.py = sys.executable
        self.procs = []
        self.passed = 0
        self.failed = 0

    def check(self, cond, what):
        print(f"{'ok  ' if cond else 'FAIL'} {what}", flush=True)
        if cond:
            self.passed += 1
        else:
            self.failed += 1

    def router(self, port, udp=True):
        eps = f"tcp/127.0.0.1:{port}" + (f",udp/127.0.0.1:{port}" if udp else "")
        r = self.start("router", [self.py, ACTOR, "router", eps, "-", "600000"])
        if r.wait_line("ROUTER UP", 20) is None:
            raise RuntimeError("router did not start")
        time.sleep(0.3)
        return r

    def weftd_router(self, port):
        """weftd (WEFT_WEFTD) listening on TCP 127.0.0.1:`port`, once it answers."""
        weftd = os.environ.get("WEFT_WEFTD", "")
        if not os.access(weftd, os.X_OK):
            raise RuntimeError("WEFT_WEFTD does not name a weftd binary")
        r = self.start("weftd", ["timeout", "120", weftd, "-l", f"tcp/127.0.0.1:{port}",
                                 "--no-multicast-scouting"])
        wait_port(port)
        return r

    def zenoh(self, name, role, port, key, *args):
        return self.start(name, [self.py, ACTOR, role, f"tcp/127.0.0.1:{port}", key] + [str(a) for a in args])

    def pico(self, name, role, locator, key, *args, st=False):
        argv = self.wrapper + [self.bin] + (["--st"] if st else []) + [role, locator, key] + [str(a) for a in args]
        return self.start(name, argv)

    def start(self, name, argv):
        p = Proc(name, argv)
        self.procs.append(p)
        return p

    def ready(self, p, what="READY", timeout=20):
        ok = p.wait_line(what, timeout) is not None
        self.check(ok, f"{p.name} ready")
        return ok

    def finish(self, p, timeout, what):
        rc = p.wait(timeout)
        self.check(rc == 0, f"{what} (exit {rc})")
        return rc == 0

    def cleanup(self):
        for p in reversed(self.procs):
            p.kill()


class StallProxy:
    """A TCP relay between a client and the router whose client-to-router
    direction can be stalled: it then stops reading the client's socket (a
    small receive buffer), as a congested link would. It also counts the
    batches the client sent (the stream's 2-byte length prefixes)."""

    def __init__(self, router_port):
        self.router_port = router_port
        self.stalled = False
        self.done = False
        self.batches = 0
        self._pending = bytearray()
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        # A port the system chooses: a fixed one could be taken by another test's socket.
        self.ls.bind(("127.0.0.1", 0))
        self.port = self.ls.getsockname()[1]
        self.ls.listen(1)
        self.ls.settimeout(0.2)
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        end = time.time() + 120
        client = None
        while client is None and not self.done and time.time() < end:
            try:
                client, _ = self.ls.accept()
            except socket.timeout:
                continue
        if client is None:
            return
        router = socket.create_connection(("127.0.0.1", self.router_port))
        try:
            while not self.done and time.time() < end:
                watch = [router] + ([] if self.stalled else [client])
                ready, _, _ = select.select(watch, [], [], 0.05)
                for src in ready:
                    data = src.recv(65536)
                    if not data:
                        print(f"  [proxy] {'client' if src is client else 'router'} closed", flush=True)
                        self.done = True
                        break
                    if src is client:
                        self._count_batches(data)
                    (router if src is client else client).sendall(data)
        except OSError as e:
            print(f"  [proxy] {e!r}", flush=True)
        client.close()
        router.close()

    def _count_batches(self, data):
        self._pending += data
        while len(self._pending) >= 2:
            size = self._pending[0] | (self._pending[1] << 8)
            if len(self._pending) < 2 + size:
                break
            del self._pending[:2 + size]
            self.batches += 1

    def close(self):
        self.done = True
        self.ls.close()


# ---- scenarios ----

def pico_pub_zenoh_sub(s, port, st=False):
    s.router(port)
    sub = s.zenoh("zsub", "sub", port, "demo/pico/**", 6, 20000)
    s.ready(sub)
    pub = s.pico("ppub", "pub", f"tcp/127.0.0.1:{port}", "demo/pico/a", 5, 100, st=st)
    s.finish(pub, 30, "pico publisher")
    s.finish(sub, 30, "zenoh subscriber got 5 puts + 1 delete")
    s.check(sub.count("SAMPLE SampleKind.PUT demo/pico/a len=100") == 5, "5 puts of 100 bytes, intact")
    s.check(sub.has("text/plain"), "encoding text/plain carried")
    s.check(sub.count("SAMPLE SampleKind.DELETE demo/pico/a") == 1, "delete carried")
    # 300 ms after its declaration the publisher names its key by the id it declared
    # (the router confirmed it): the samples above went so, and arrived under the key.
    s.check(pub.has("PUB KEY BY ID"), "the publisher's puts name its key by its declared id")


def zenoh_pub_pico_sub(s, port, st=False):
    s.router(port)
    sub = s.pico("psub", "sub", f"tcp/127.0.0.1:{port}", "demo/**", 6, 20000, st=st)
    s.ready(sub)
    pub = s.zenoh("zpub", "pub", port, "demo/x/y", 5, 8)
    s.finish(pub, 30, "zenoh publisher")
    s.finish(sub, 30, "pico subscriber on demo/** got 5 puts + 1 delete")
    s.check(sub.count("SAMPLE PUT demo/x/y len=8 enc=4 att=4 ok") == 5, "wildcard match, encoding and attachment")
    s.check(sub.count("SAMPLE DELETE demo/x/y") == 1, "delete received")


def payload_sizes(s, port):
    s.router(port)
    for size in (1, 1000, 20000, 65536):
        sub = s.pico(f"psub{size}", "sub", f"tcp/127.0.0.1:{port}", "demo/size/**", 2, 20000)
        s.ready(sub)
        pub = s.zenoh(f"zpub{size}", "pub", port, f"demo/size/{size}", 1, size)
        s.finish(sub, 30, f"pico received a {size}-byte payload from Zenoh")
        s.check(sub.has(f"len={size} enc=4 att=4 ok"), f"{size}-byte payload intact")
        pub.wait(10)
        zsub = s.zenoh(f"zsub{size}", "sub", port, "demo/psize/**", 2, 20000)
        s.ready(zsub)
        ppub = s.pico(f"ppub{size}", "pub", f"tcp/127.0.0.1:{port}", f"demo/psize/{size}", 1, size)
        s.finish(zsub, 30, f"Zenoh received a {size}-byte payload from pico")
        s.check(zsub.has(f"len={size} enc=text/plain") and not zsub.has("CORRUPT"), f"{size}-byte payload intact")
        ppub.wait(10)
    zsub = s.zenoh("zsubput", "sub", port, "demo/psize/put", 1, 20000)
    s.ready(zsub)
    put = s.pico("pput", "put", f"tcp/127.0.0.1:{port}", "demo/psize/put", 65536)
    s.finish(put, 20, "pico z_put of 64 KiB (best effort, express, real-time priority, attachment, json)")
    s.finish(zsub, 20, "Zenoh received it")
    s.check(zsub.has("len=65536 enc=application/json att=b'meta' ok"), "payload, encoding and attachment intact")


def get_queryable(s, port):
    s.router(port)
    zq = s.zenoh("zqbl", "queryable", port, "demo/q/**", 15000)
    s.ready(zq)
    g = s.pico("pget", "get", f"tcp/127.0.0.1:{port}", "demo/q/a?x=1", 1, 5000)
    s.finish(g, 20, "pico get -> Zenoh queryable: 1 reply then final")
    s.check(g.has("REPLY demo/q/a 'zreply:x=1'"), "reply carries key and parameters")
    s.check(zq.has("payload=b'question'"), "query payload delivered")
    g2 = s.pico("pget_err", "get", f"tcp/127.0.0.1:{port}", "demo/q/err", 1, 5000)
    s.finish(g2, 20, "pico get -> error reply")
    s.check(g2.has("REPLY_ERR 'oops'"), "error reply payload")
    qr = s.pico("pquerier", "querier", f"tcp/127.0.0.1:{port}", "demo/q/b", 1, 5000)
    s.finish(qr, 20, "pico querier: two gets, one reply each")
    s.check(qr.has("REPLY demo/q/b 'zreply:r=0'") and qr.has("REPLY demo/q/b 'zreply:r=1'"), "querier replies")
    g3 = s.pico("pget_none", "get", f"tcp/127.0.0.1:{port}", "demo/nothing", 0, 5000)
    s.finish(g3, 20, "pico get with no queryable ends with final only")
    pq = s.pico("pqbl", "queryable", f"tcp/127.0.0.1:{port}", "demo/pq/**", 8000)
    s.ready(pq)
    time.sleep(0.5)
    zg = s.zenoh("zget", "get", port, "demo/pq/a?y=2", 1, 5000)
    s.finish(zg, 20, "Zenoh get -> pico queryable: 1 reply")
    s.check(zg.has("REPLY demo/pq/a b'reply:y=2'"), "pico reply content")
    zg2 = s.zenoh("zget_err", "get", port, "demo/pq/err", 1, 5000)
    s.finish(zg2, 20, "Zenoh get -> pico reply_err")
    s.check(zg2.has("REPLY_ERR b'oops'"), "pico error reply content")
    s.finish(pq, 20, "pico queryable served queries")
    aq = s.pico("paqbl", "aqueryable", f"tcp/127.0.0.1:{port}", "demo/aq/**", 6000)
    s.ready(aq)
    time.sleep(0.5)
    t0 = time.time()
    zg3 = s.zenoh("zget_async", "get", port, "demo/aq/x", 1, 8000)
    s.finish(zg3, 20, "Zenoh get -> pico queryable replying after its callback (z_query_clone)")
    s.check(zg3.has("REPLY demo/aq/x b'later'"), "late reply")
    s.check(time.time() - t0 < 6, "the final came with the last copy's drop, not at the 8 s timeout")
    s.finish(aq, 20, "pico kept and answered the query")


def liveliness(s, port):
    s.router(port)
    # pico token seen by a Zenoh liveliness subscriber (PUT then DELETE)
    zl = s.zenoh("zlsub", "lsub", port, "demo/tok/**", 2, 15000)
    s.ready(zl)
    pt = s.pico("ptok", "token", f"tcp/127.0.0.1:{port}", "demo/tok/pico", 2500)
    s.ready(pt)
    time.sleep(0.5)
    zg = s.zenoh("zlget", "lget", port, "demo/tok/**", 1, 3000)
    s.finish(zg, 20, "Zenoh liveliness get sees the pico token")
    s.finish(pt, 20, "pico token declared then undeclared")
    s.finish(zl, 20, "Zenoh liveliness subscriber: PUT + DELETE of the pico token")
    s.check(zl.has("SampleKind.PUT demo/tok/pico") and zl.has("SampleKind.DELETE demo/tok/pico"), "both events")
    # Zenoh token seen by a pico liveliness subscriber and a pico liveliness get
    pl = s.pico("plsub", "lsub", f"tcp/127.0.0.1:{port}", "demo/ztok/**", 2, 15000)
    s.ready(pl)
    time.sleep(0.3)
    zt = s.zenoh("ztok", "token", port, "demo/ztok/zenoh", 3000)
    s.ready(zt)
    time.sleep(0.5)
    pg = s.pico("plget", "lget", f"tcp/127.0.0.1:{port}", "demo/ztok/**", 1, 3000)
    s.finish(pg, 20, "pico liveliness get sees the Zenoh token")
    s.check(pg.has("REPLY demo/ztok/zenoh"), "token key in the reply")
    s.finish(pl, 20, "pico liveliness subscriber: PUT + DELETE of the Zenoh token")
    s.check(pl.has("SAMPLE PUT demo/ztok/zenoh") and pl.has("SAMPLE DELETE demo/ztok/zenoh"), "both events")
    # history: a late liveliness subscriber sees the token already alive
    zt2 = s.zenoh("ztok2", "token", port, "demo/htok/zenoh", 3000)
    s.ready(zt2)
    time.sleep(0.3)
    ph = s.pico("plsubh", "lsubh", f"tcp/127.0.0.1:{port}", "demo/htok/**", 1, 5000)
    s.finish(ph, 20, "pico liveliness subscriber with history sees the existing token")


def reconnect(s, port, st=False):
    r = s.router(port)
    sub = s.pico("psub", "reconnect", f"tcp/127.0.0.1:{port}", "demo/rc/**", 4, 40000, st=st)
    s.ready(sub)
    qbl = s.pico("pqbl", "queryable", f"tcp/127.0.0.1:{port}", "demo/rcq/**", 25000)
    s.ready(qbl)
    tok = s.pico("ptok", "token", f"tcp/127.0.0.1:{port}", "demo/rct/pico", 25000)
    s.ready(tok)
    p1 = s.zenoh("zpub1", "pub", port, "demo/rc/a", 1, 16)
    s.finish(p1, 20, "first publication")
    s.check(sub.wait_line("SAMPLE DELETE demo/rc/a", 10) is not None, "received before the restart")
    r.kill()
    time.sleep(1.5)
    s.router(port)
    time.sleep(4)  # reconnection period + re-declaration
    p2 = s.zenoh("zpub2", "pub", port, "demo/rc/b", 1, 16)
    s.finish(p2, 20, "publication after the router restart")
    s.finish(sub, 30, "pico subscriber re-declared itself and received after the restart")
    s.check(sub.has("SAMPLE PUT demo/rc/b"), "sample after restart")
    g = s.zenoh("zget", "get", port, "demo/rcq/x", 1, 5000)
    s.finish(g, 20, "pico queryable re-declared: answers a get after the restart")
    lg = s.zenoh("zlget", "lget", port, "demo/rct/**", 1, 5000)
    s.finish(lg, 20, "pico liveliness token re-declared: seen after the restart")


def publisher_reconnect(s, port, router="zenoh"):
    """A publisher whose puts name its key by a declared id keeps reaching subscribers
    across a router restart: it declares the id again on the new link and names the key
    in full until the new router confirmed it (a put by an id the router never saw
    would be lost)."""
    r = s.router(port) if router == "zenoh" else s.weftd_router(port)
    pub = s.pico("ppubrc", "pubrc", f"tcp/127.0.0.1:{port}", "demo/prc/a", 30000)
    s.check(pub.wait_line("PUB KEY BY ID 1", 15) is not None, "the key is named by id on the first link")
    z1 = s.zenoh("zsub1", "tsub", port, "demo/prc/**", 3, 10000)
    s.finish(z1, 20, "a subscriber receives the publisher's samples by id")
    r.kill()
    r = s.router(port) if router == "zenoh" else s.weftd_router(port)
    z2 = s.zenoh("zsub2", "tsub", port, "demo/prc/**", 3, 15000)
    s.finish(z2, 25, "a subscriber on the restarted router receives the publisher's samples")
    s.check(pub.wait_line("PUB KEY BY ID 2", 15) is not None, "the key is named by id again on the new link")
    z3 = s.zenoh("zsub3", "tsub", port, "demo/prc/**", 3, 10000)
    s.finish(z3, 20, "and its samples by the new id arrive")
    pub.kill()


def batching(s, port):
    s.router(port)
    sub = s.zenoh("zsub", "sub", port, "demo/batch/**", 20, 20000)
    s.ready(sub)
    b = s.pico("pbatch", "batch", f"tcp/127.0.0.1:{port}", "demo/batch/x", 20)
    s.finish(b, 20, "pico batch of 20 puts")
    s.finish(sub, 20, "Zenoh received the 20 batched puts")


def udp_unicast(s, port):
    s.router(port)
    sub = s.zenoh("zsub", "sub", port, "demo/udp/**", 6, 20000)
    s.ready(sub)
    pub = s.pico("ppub", "pub", f"udp/127.0.0.1:{port}", "demo/udp/a", 5, 3000)
    s.finish(pub, 30, "pico publisher over UDP (fragmented 3000-byte payloads)")
    s.finish(sub, 30, "Zenoh got the UDP publications")
    psub = s.pico("psub", "sub", f"udp/127.0.0.1:{port}", "demo/udp2/**", 6, 20000)
    s.ready(psub)
    zpub = s.zenoh("zpub", "pub", port, "demo/udp2/b", 5, 100)
    s.finish(zpub, 30, "zenoh publisher")
    s.finish(psub, 30, "pico subscriber over UDP")


def qos_both_ways(s, port, loc):
    """Samples at every priority, pico -> Zenoh and Zenoh -> pico, with QoS negotiated."""
    zsub = s.zenoh("zsub", "sub", port, "demo/prio/**", 28, 20000)
    s.ready(zsub)
    p = s.pico("pprio", "prio", loc, "demo/prio", 4)
    s.check(p.wait_line("OPEN qos=1", 20) is not None, "QoS negotiated with the router")
    s.finish(p, 30, "pico published 4 rounds at priorities 1..7 (half of them batched)")
    s.finish(zsub, 30, "Zenoh subscriber got the 28 samples")
    for prio in range(1, 8):
        lines = [l for l in zsub.lines if l.startswith(f"SAMPLE SampleKind.PUT demo/prio/{prio} len=16")]
        s.check(len(lines) == 4 and all(l.endswith(f"ok prio={prio}") for l in lines),
                f"priority {prio}: 4 samples, intact, priority {prio} at the Zenoh subscriber")
    psub = s.pico("psub", "sub", loc, "demo/zprio/**", 28, 20000)
    s.ready(psub)
    s.check(psub.has("OPEN qos=1"), "QoS negotiated (subscriber)")
    zp = s.zenoh("zppub", "ppub", port, "demo/zprio", 4)
    s.finish(zp, 30, "Zenoh published 4 rounds at priorities 1..7")
    s.finish(psub, 30, "pico subscriber got the 28 samples")
    for prio in range(1, 8):
        lines = [l for l in psub.lines if l.startswith(f"SAMPLE PUT demo/zprio/{prio} len=16")]
        s.check(len(lines) == 4 and all(l.endswith(f"ok prio={prio}") for l in lines),
                f"priority {prio}: 4 samples from Zenoh, received at priority {prio}")


def qos(s, port):
    s.router(port)
    qos_both_ways(s, port, f"tcp/127.0.0.1:{port}")


def wait_port(port, seconds=20):
    """Waits until something listens on 127.0.0.1:port, then a little more."""
    end = time.time() + seconds
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    time.sleep(0.3)


def qos_weftd(s, port):
    weftd = os.environ.get("WEFT_WEFTD", "")
    if not os.access(weftd, os.X_OK):
        raise RuntimeError("WEFT_WEFTD does not name a weftd binary")
    s.start("weftd", ["timeout", "120", weftd, "-l", f"tcp/127.0.0.1:{port}", "--no-multicast-scouting"])
    wait_port(port)
    qos_both_ways(s, port, f"tcp/127.0.0.1:{port}")


def congestion(s, port):
    s.router(port)
    zsub = s.zenoh("zsub", "sub", port, "demo/drop/block", 1, 30000)
    s.ready(zsub)
    proxy = StallProxy(port)
    try:
        p = s.pico("pdrop", "drop", f"tcp/127.0.0.1:{proxy.port}", "demo/drop", 10000)
        s.ready(p)
        proxy.stalled = True
        line = p.wait_line("DROPPED", 20)
        s.check(line is not None, f"DROP puts while the link is stalled: {line}")
        time.sleep(1.0)
        s.check(p.wait_line("BLOCK PUTS", 0.1) is None, "BLOCK puts wait while the link is stalled")
        proxy.stalled = False
        line = p.wait_line("BLOCK PUTS", 20)
        s.check(line is not None and " res=0 " in line and int(line.split("longest_ms=")[1]) >= 900,
                f"the waiting BLOCK put completed once the link moved: {line}")
        s.finish(p, 20, "pico: >= 20 drops, no DROP put slower than 100 ms, BLOCK puts sent")
        s.finish(zsub, 20, "the Zenoh subscriber got the BLOCK puts: the stream stayed whole")
    finally:
        proxy.close()


def auto_batching(s, port, count=2000):
    """Puts made in a burst share batches (the lease task writes while the
    application puts); express puts go one per batch. Both arrive whole and in order."""
    s.router(port)
    batches = {}
    for express in (0, 1):
        zsub = s.zenoh(f"zcount{express}", "count", port, "demo/burst/**", count, 30000)
        s.ready(zsub)
        proxy = StallProxy(port)
        try:
            p = s.pico(f"pburst{express}", "burst", f"tcp/127.0.0.1:{proxy.port}", "demo/burst/x",
                       count, express)
            s.finish(p, 60, f"pico burst of {count} puts, express={express}")
            s.finish(zsub, 40, f"Zenoh got the {count} puts intact and in order (express={express})")
            batches[express] = proxy.batches
        finally:
            proxy.close()
    print(f"  batches sent: {batches[0]} automatic, {batches[1]} express, for {count} puts each", flush=True)
    s.check(batches[1] >= count, f"express: every put in a batch of its own ({batches[1]} batches)")
    s.check(batches[0] <= count // 2, f"automatic batching: puts shared batches ({batches[0]} batches)")


def sustained_weftd(s, port, count=3000000):
    """A long tight put loop through weftd, which reads as fast as the client
    writes: the application thread and the writer task hand batches to each
    other tens of thousands of times, and neither may end up waiting for the
    other forever."""
    weftd = os.environ.get("WEFT_WEFTD", "")
    if not os.access(weftd, os.X_OK):
        raise RuntimeError("WEFT_WEFTD does not name a weftd binary")
    s.start("weftd", ["timeout", "120", weftd, "-l", f"tcp/127.0.0.1:{port}", "--no-multicast-scouting"])
    wait_port(port)
    p = s.pico("psustained", "burst", f"tcp/127.0.0.1:{port}", "demo/sustained/x", count, 0)
    s.finish(p, 60, f"pico: a loop of {count} puts with automatic batching completes")


class Skipped(Exception):
    """The scenario cannot run here (a tool is missing): reported as skipped, not passed."""


def serial_pair(s):
    """Two linked pseudo-terminals made by socat: (A, B) paths, A for the client."""
    if shutil.which("socat") is None:
        raise Skipped("socat not found (apt-get install socat)")
    d = tempfile.mkdtemp(prefix="weft-serial-")
    a, b = os.path.join(d, "A"), os.path.join(d, "B")
    s.start("socat", ["timeout", "300", "socat", "-d", "-d", f"pty,raw,echo=0,link={a}", f"pty,raw,echo=0,link={b}"])
    end = time.time() + 10
    while not (os.path.exists(a) and os.path.exists(b)):
        if time.time() > end:
            raise RuntimeError("socat made no pseudo-terminals")
        time.sleep(0.05)
    return a, b


def serial_router(s, router, device, port, seconds):
    """Starts `router` ("weftd": WEFT_WEFTD, or "zenohd": WEFT_ZENOHD_SERIAL, a zenohd
    1.10.2 built with its serial link) listening on the serial `device` and on TCP
    127.0.0.1:`port`; returns once the TCP listener answers."""
    var = {"weftd": "WEFT_WEFTD", "zenohd": "WEFT_ZENOHD_SERIAL"}[router]
    binary = os.environ.get(var, "")
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"{var} does not name a {router} binary")
    s.start(router, ["timeout", str(seconds), binary, "-l", f"serial/{device}#baudrate=115200",
                     "-l", f"tcp/127.0.0.1:{port}", "--no-multicast-scouting"])
    wait_port(port)


def serial_scenario(s, port, router):
    """weft-pico over a serial line (socat pty pair) to a router's serial listener;
    a Zenoh client on the router's TCP listener receives its samples, sends it
    some, answers its get and queries its queryable."""
    a, b = serial_pair(s)
    serial_router(s, router, b, port, 120)
    loc = f"serial/{a}#baudrate=115200"
    sub = s.zenoh("zsub", "sub", port, "demo/serial/**", 6, 30000)
    s.ready(sub)
    pub = s.pico("ppub", "pub", loc, "demo/serial/a", 5, 100)
    s.finish(pub, 30, "pico publisher over the serial line")
    s.finish(sub, 30, "zenoh subscriber on TCP got 5 puts + 1 delete")
    s.check(sub.count("SAMPLE SampleKind.PUT demo/serial/a len=100") == 5, "5 puts of 100 bytes, intact")
    # larger than a serial frame (1,500 bytes): fragmented both ways
    bsub = s.zenoh("zsub_big", "sub", port, "demo/serial/big", 2, 30000)
    s.ready(bsub)
    bpub = s.pico("ppub_big", "pub", loc, "demo/serial/big", 1, 20000)
    s.finish(bpub, 30, "pico publisher: 20000 bytes over the serial line")
    s.finish(bsub, 30, "zenoh subscriber got it whole")
    s.check(bsub.count("SAMPLE SampleKind.PUT demo/serial/big len=20000") == 1, "20000 bytes, intact")
    psub = s.pico("psub_big", "sub", loc, "demo/serial/**", 2, 20000)
    s.ready(psub)
    zpub = s.zenoh("zpub_big", "pub", port, "demo/serial/z", 1, 20000)
    s.finish(zpub, 30, "zenoh publisher: 20000 bytes")
    s.finish(psub, 30, "pico subscriber over the serial line got it and the delete")
    s.check(psub.has("SAMPLE PUT demo/serial/z len=20000") and psub.has(" ok "), "20000 bytes, intact")
    zq = s.zenoh("zqbl", "queryable", port, "demo/q/**", 20000)
    s.ready(zq)
    g = s.pico("pget", "get", loc, "demo/q/a?x=1", 1, 5000)
    s.finish(g, 30, "pico get over the serial line -> Zenoh queryable: 1 reply then final")
    s.check(g.has("REPLY demo/q/a 'zreply:x=1'"), "reply carries key and parameters")
    pq = s.pico("pqbl", "queryable", loc, "demo/pq/**", 8000)
    s.ready(pq)
    # the queryable's declaration may still be on its way to weftd: ask again (bounded)
    for attempt in range(5):
        zg = s.zenoh(f"zget{attempt}", "get", port, "demo/pq/a?y=2", 1, 3000)
        zg.wait(20)
        if zg.has("REPLY demo/pq/a b'reply:y=2'"):
            break
    s.check(zg.has("REPLY demo/pq/a b'reply:y=2'"), "Zenoh get -> pico queryable over the serial line: its reply")
    s.finish(pq, 20, "pico queryable served the query")


def free_port():
    """A port free for both TCP and UDP on 127.0.0.1 now (the routers listen on both)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
            t.bind(("127.0.0.1", 0))
            port = t.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                try:
                    u.bind(("127.0.0.1", port))
                except OSError:
                    continue
        return port
    raise RuntimeError("no port free for both TCP and UDP")


SCENARIOS = {
    "pico_pub_zenoh_sub": pico_pub_zenoh_sub,
    "zenoh_pub_pico_sub": zenoh_pub_pico_sub,
    "single_thread": lambda s, port: (
        zenoh_pub_pico_sub(s, port, st=True),
        pico_pub_zenoh_sub(s, free_port(), st=True),
    ),
    "payload_sizes": payload_sizes,
    "get_queryable": get_queryable,
    "liveliness": liveliness,
    "reconnect": reconnect,
    "batching": batching,
    "publisher_reconnect": publisher_reconnect,
    "publisher_reconnect_weftd": lambda s, port: publisher_reconnect(s, port, "weftd"),
    "auto_batching": auto_batching,
    "udp_unicast": udp_unicast,
    "qos": qos,
    "qos_weftd": qos_weftd,
    "sustained_weftd": sustained_weftd,
    "congestion": congestion,
    "serial_weftd": lambda s, port: serial_scenario(s, port, "weftd"),
    "serial_zenohd": lambda s, port: serial_scenario(s, port, "zenohd"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    s = Scenario(args)
    try:
        SCENARIOS[args.scenario](s, free_port())
    except Skipped as e:
        s.cleanup()
        print(f"skipped: {e}", flush=True)
        return SKIP
    except Exception as e:  # a scenario error is a failure, never a hang
        s.check(False, f"scenario raised {e!r}")
    finally:
        s.cleanup()
    print(f"{s.passed} passed, {s.failed} failed", flush=True)
    return 0 if s.failed == 0 and s.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
