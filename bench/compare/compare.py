#!/usr/bin/env python3
"""Runs every middleware of bench/compare.sh on loopback with the same workloads and writes
results.csv (and meta.json, the settings and conditions, for html_report.py).

Workloads, in this order: throughput against payload (a publisher as fast as it can, the
subscriber's rate in rounds), round trips against payload (one message in flight), wire
bytes per round trip (counted by a TCP relay on the sending side), CPU time per message
of each process (publisher, subscriber and router or broker, from the kernel's per-thread
run time over the measured rounds of the throughput runs), the robot-net scenario (weft
and Zenoh: the programs of bench/robotnet.sh, and bench/compare/c's), and a node's failure
(one of two subscribers killed and restarted while their publisher sends numbered messages:
how long until it receives again, and what the other missed meanwhile).

Every process runs in its own process group, under a deadline, and is killed on exit. Only
127.0.0.1 is used. The standard library only: this runs before anything is installed.
"""

from __future__ import annotations

import argparse
import atexit
import csv
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

CSV_COLUMNS = ["system", "topology", "test", "payload", "value", "unit", "min", "max", "reps"]
SYSTEMS = ["weft", "weft-pico", "zenoh", "zeromq", "redis", "mqtt", "dds", "tcp"]
# What a run measures unless told (a full run also pins every process to one core for
# round trips: `pinned`).
DEFAULT_WORKLOADS = "thr,rtt,wire,robotnet,failure"
TESTS = ["thr", "lat_p50", "lat_p99", "rtt_p50", "rtt_p99", "wire_bytes", "cpu_ns",
         # a node's failure: the restarted subscriber's time to its first message and its
         # gap from the kill; what the subscriber kept running missed and its longest wait
         "fail_recovery_ms", "fail_gap_ms", "fail_others_loss", "fail_others_gap_ms"]
FULL_PAYLOADS = [8, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576]
QUICK_PAYLOADS = [8, 1024, 65536]
WIRE_PAYLOADS = [8, 1024]
# The robot-net program of each system that has one, by its name in bins.json (the same
# options and output: bench/robotnet.sh runs either).
ROBOTNET_PROGRAMS = {"weft": "robotnet", "zenoh": "zrobotnet", "zeromq": "zmq_robotnet",
                    "redis": "redis_robotnet", "mqtt": "mqtt_robotnet",
                    "weft-pico": "pico_robotnet", "dds": "dds_robotnet"}
# The robot-net programs of bench/compare/c (one workload, robotnet.h): HOST:PORT last
# (DDS: HOST:DOMAIN, the domain id in place of a port).
C_ROBOTNETS = {"zeromq", "redis", "mqtt", "weft-pico", "dds"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---- processes ---------------------------------------------------------------------------

LIVE: list["Proc"] = []


class Proc:
    """A program in its own process group, its output read line by line (with the arrival
    time of each line) by a thread, killed when `stop` is called or the driver leaves."""

    def __init__(self, name: str, cmd: list[str], out_dir: Path, limit: float,
                 env: dict | None = None, on_line: Callable[[float, str], None] | None = None):
        self.name = name
        self.cmd = cmd
        self.lines: list[tuple[float, str]] = []
        self.on_line = on_line
        self.log = open(out_dir / f"{name}.out", "w")
        self.log.write("$ " + " ".join(cmd) + "\n")
        self.log.flush()
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL,
                                  env=env, text=True, errors="replace",
                                  preexec_fn=die_with_parent)
        self.deadline = time.monotonic() + limit
        LIVE.append(self)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            t = time.monotonic()
            line = line.rstrip("\n")
            self.lines.append((t, line))
            self.log.write(line + "\n")
            self.log.flush()
            if self.on_line:
                self.on_line(t, line)

    def wait(self, limit: float | None = None) -> bool:
        """Waits for the program to leave (at most `limit` seconds and its own deadline);
        returns whether it did."""
        end = self.deadline if limit is None else min(self.deadline, time.monotonic() + limit)
        while time.monotonic() < end:
            if self.p.poll() is not None:
                self.reader.join(timeout=2)
                return True
            time.sleep(0.02)
        return False

    def wait_line(self, pattern: str, limit: float) -> bool:
        """Waits until a line matching `pattern` was printed (or the program left)."""
        rx = re.compile(pattern)
        end = time.monotonic() + limit
        while time.monotonic() < end:
            if any(rx.search(line) for _, line in self.lines):
                return True
            if self.p.poll() is not None:
                return False
            time.sleep(0.01)
        return False

    def stop(self) -> None:
        """Ends the process group: TERM, then KILL after a second."""
        if self.p.poll() is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.p.wait(timeout=1)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.reader.join(timeout=2)
        self.log.close()
        if self in LIVE:
            LIVE.remove(self)

    def output(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def cpu_ns(self) -> dict[str, int] | None:
        """CPU time of each live thread of the process, in ns, by thread id."""
        return cpu_ns(self.p.pid)


def cpu_ns(pid: int) -> dict[str, int] | None:
    """Run time of each thread of `pid` in ns (/proc/PID/task/*/schedstat), by thread id;
    None once the process is gone."""
    threads = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                threads[task] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return threads


def cpu_delta(a: dict[str, int], b: dict[str, int]) -> int:
    """CPU time spent between two readings of `cpu_ns`: the growth of the threads seen in
    both, plus the whole of the threads that started in between (a thread that ended in
    between loses what it spent since the first reading)."""
    return sum(v - a.get(t, 0) for t, v in b.items())


def die_with_parent() -> None:
    """In the child, before exec: a process group of its own (so that stopping it stops
    what it started), and SIGKILL when the driver dies, however it dies. Not a session of
    its own: the kernel's autogroup scheduling would then share the cores between sessions
    rather than threads, and a router in one session and its ten clients in another ran
    the robot net 10 to 40 times slower at p99 than in one session (as bench/robotnet.sh
    runs them)."""
    os.setpgid(0, 0)
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def watchdog() -> None:
    """Kills every process past its deadline (each is started with one)."""
    while True:
        now = time.monotonic()
        for p in list(LIVE):
            if now > p.deadline and p.p.poll() is None:
                try:
                    os.killpg(p.p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.5)


def stop_all() -> None:
    for p in list(LIVE):
        p.stop()


def listening(port: int) -> bool:
    """Whether something listens on TCP port `port` (read from /proc/net/tcp, so that no
    probe connection disturbs the program)."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            continue
    return False


def wait_listen(port: int, limit: float = 10) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if listening(port):
            return True
        time.sleep(0.02)
    return False


class Ports:
    """Fresh TCP ports on 127.0.0.1, from a base, skipping any already in use."""

    def __init__(self, base: int):
        self.next = base

    def take(self) -> int:
        while True:
            p = self.next
            self.next += 1
            if not listening(p):
                return p


# ---- the relay that counts bytes ---------------------------------------------------------

class Relay:
    """A TCP relay on 127.0.0.1:`port` to 127.0.0.1:`target`: every connection accepted is
    forwarded to a new connection to the target; `up` counts the bytes from the accepted
    side (the client that connected to the relay) to the target, `down` the other way."""

    def __init__(self, port: int, target: int):
        self.target = target
        self.up = 0
        self.down = 0
        self.lock = threading.Lock()
        self.srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", port))
        self.srv.listen(16)
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                a, _ = self.srv.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                a.close()
                continue
            b.settimeout(None)
            for s in (a, b):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._pump, args=(a, b, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(b, a, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, up: bool) -> None:
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                dst.sendall(data)
                with self.lock:
                    if up:
                        self.up += len(data)
                    else:
                        self.down += len(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.closed = True
        self.srv.close()


# ---- the systems -------------------------------------------------------------------------

@dataclass
class Variant:
    """One middleware in one topology: how to start its router or broker, its throughput
    publisher and subscriber, and its round-trip ends."""
    system: str
    topology: str
    settings: str
    client: str
    # router/broker command for a port, or None (peer to peer)
    broker: Callable[[int], list[str]] | None = None
    # sub(listen_port, router_port, size, samples, rounds, round_s, max_s) -> command
    sub: Callable[..., list[str]] | None = None
    # pub(listen_port, router_port, size, duration) -> command
    pub: Callable[..., list[str]] | None = None
    pong: Callable[..., list[str]] | None = None
    ping: Callable[..., list[str]] | None = None
    # counts its messages per round itself (weft, Zenoh, TCP): samples must fit its speed
    count_rounds: bool = False
    # the subscriber prints "subscribed" once it can receive
    says_ready: bool = False
    # the subscriber/pong listens on its port (peer to peer over TCP)
    listens: bool = True
    tcp: bool = True
    env: dict = field(default_factory=dict)
    # the largest payload its programs take (0: no limit)
    max_payload: int = 0
    # its throughput programs number their messages with `--seq` (a node's failure: what
    # the surviving subscriber missed)
    seq: bool = True
    # arguments that make its publisher also reach a second listening subscriber on a port
    # (peer to peer; a node's failure)
    also: Callable[[int], list[str]] | None = None


def make_variants(b: dict) -> list[Variant]:
    """Every variant whose programs are in `b` (paths by name, and the scratch directory)."""
    weft, weftd = b["weft"], b["weftd"]
    c = b["compare_bin"]
    cdir = b["c_bin"]
    nomc = ["--no-multicast-scouting"]

    def weft_like(sub_bin, pub_bin, ping_bin, pong_bin, routed):
        def ends(lp, rp, listen):
            if routed:
                return ["-m", "client", "-e", f"tcp/127.0.0.1:{rp}"]
            return ["-l", f"tcp/127.0.0.1:{lp}"] if listen else ["-e", f"tcp/127.0.0.1:{lp}"]
        return dict(
            sub=lambda lp, rp, size, n, r, rs, ms: sub_bin + ends(lp, rp, True) + nomc + [
                "--samples", str(n), "--rounds", str(r), "--max-seconds", str(ms)],
            pub=lambda lp, rp, size, d: pub_bin + [str(size)] + ends(lp, rp, False) + nomc + [
                "--duration", str(d)],
            pong=lambda lp, rp: pong_bin + ends(lp, rp, True) + nomc,
            ping=lambda lp, rp, size, n: ping_bin + [str(size)] + ends(lp, rp, False) + nomc + [
                "--samples", str(n)],
        )

    v: list[Variant] = []
    weft_settings = ("weft's own tools (`weft sub-thr`, `pub-thr`, `ping`, `pong`), release "
                     "build, default configuration: reliable, congestion control Block for "
                     "pub-thr, batching on; multicast scouting off; `{}`")
    for routed in (False, True):
        v.append(Variant(
            "weft", "routed" if routed else "p2p",
            weft_settings.format("both ends clients of weftd" if routed
                                 else "the subscriber (or pong) listens, the other connects"),
            "weft CLI (Rust)",
            broker=(lambda p: [weftd, "-l", f"tcp/127.0.0.1:{p}"] + nomc) if routed else None,
            count_rounds=True, listens=not routed,
            also=None if routed else (lambda p: ["-e", f"tcp/127.0.0.1:{p}"]),
            **weft_like([weft, "sub-thr"], [weft, "pub-thr"], [weft, "ping"], [weft, "pong"],
                        routed)))
    if b.get("z_sub_thr"):
        x = b["pico_bin"]
        r = lambda rp: ["-e", f"tcp/127.0.0.1:{rp}"]  # noqa: E731
        v.append(Variant(
            "weft-pico", "routed",
            "weft-pico, the C99 client (pico/examples z_sub_thr, z_pub_thr, z_ping, z_pong), "
            "release build for a host: automatic batching, 16 KiB batches and a 1.1 MB "
            "reassembly buffer (-DZ_BATCH_UNICAST_SIZE=16384 -DZ_FRAG_MAX_SIZE=1100000; the "
            "defaults, 2 KiB and 4 KiB, are sized for microcontrollers and drop larger "
            "messages); a client only, so both ends are clients of weftd (release); its example "
            "programs take payloads up to 64 KiB",
            "pico/examples (C, weft-pico)",
            broker=lambda p: [weftd, "-l", f"tcp/127.0.0.1:{p}"] + nomc,
            sub=lambda lp, rp, size, n, rounds, rs, ms: [f"{x}/z_sub_thr"] + r(rp) + [
                "-c", str(n), "-n", str(rounds), "-t", str(ms)],
            pub=lambda lp, rp, size, d: [f"{x}/z_pub_thr"] + r(rp) + ["-s", str(size), "-t",
                                                                     str(d)],
            pong=lambda lp, rp: [f"{x}/z_pong"] + r(rp) + ["-n", "300"],
            ping=lambda lp, rp, size, n: [f"{x}/z_ping"] + r(rp) + [
                "-s", str(size), "-n", str(n), "-w", "100", "-t", "60"],
            count_rounds=True, listens=False, max_payload=65536, seq=False))
    if b.get("zsub_thr"):
        zset = ("Eclipse Zenoh 1.10.2 (Rust crate, TCP link only), programs of bench/compare "
                "mirroring weft's: default configuration (reliable, Block congestion control "
                "for the publisher, batching on), multicast scouting off; `{}`")
        for routed in (False, True) if b.get("zenohd") else (False,):
            v.append(Variant(
                "zenoh", "routed" if routed else "p2p",
                zset.format("both ends clients of zenohd 1.10.2 (release)" if routed
                            else "the subscriber (or pong) listens, the other connects"),
                "bench/compare zsub_thr, zpub_thr, zping, zpong (Rust, zenoh 1.10.2)",
                broker=(lambda p: [b["zenohd"], "-l", f"tcp/127.0.0.1:{p}"] + nomc)
                if routed else None,
                count_rounds=True, listens=not routed,
                also=None if routed else (lambda p: ["-e", f"tcp/127.0.0.1:{p}"]),
                **weft_like([b["zsub_thr"]], [b["zpub_thr"]], [b["zping"]],
                            [b["zpong"], "--max-seconds", "300"], routed)))
    if b.get("zmq_bench"):
        z = b["zmq_bench"]
        v.append(Variant(
            "zeromq", "p2p",
            "libzmq 4.3.4 (Debian), C client: PUB/SUB for throughput (the SUB socket binds, "
            "the PUB connects; default high-water marks of 1000 messages, beyond which PUB "
            "drops: what the subscriber receives is reported), REQ/REP for round trips",
            "bench/compare/c/zmq_bench.c (C, libzmq)",
            sub=lambda lp, rp, size, n, r, rs, ms: [z, "sub", f"127.0.0.1:{lp}", "--samples",
                                                    str(n), "--rounds", str(r),
                                                    "--round-seconds", str(rs),
                                                    "--max-seconds", str(ms)],
            pub=lambda lp, rp, size, d: [z, "pub", str(size), f"127.0.0.1:{lp}", "--duration",
                                         str(d)],
            pong=lambda lp, rp: [z, "pong", f"127.0.0.1:{lp}", "--max-seconds", "300"],
            ping=lambda lp, rp, size, n: [z, "ping", str(size), f"127.0.0.1:{lp}", "--samples",
                                          str(n)],
            also=lambda p: ["--also", f"127.0.0.1:{p}"]))

    def brokered(prog, qos=None):
        q = [] if qos is None else ["--qos", str(qos)]
        return dict(
            sub=lambda lp, rp, size, n, r, rs, ms: [prog, "sub", f"127.0.0.1:{rp}", "--samples",
                                                    str(n), "--rounds", str(r),
                                                    "--round-seconds", str(rs),
                                                    "--max-seconds", str(ms)] + q,
            pub=lambda lp, rp, size, d: [prog, "pub", str(size), f"127.0.0.1:{rp}",
                                         "--duration", str(d)] + q,
            pong=lambda lp, rp: [prog, "pong", f"127.0.0.1:{rp}", "--max-seconds", "300"] + q,
            ping=lambda lp, rp, size, n: [prog, "ping", str(size), f"127.0.0.1:{rp}",
                                          "--samples", str(n)] + q)

    if b.get("redis_bench") and b.get("redis-server"):
        redis_conf = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                      "--protected-mode", "no", "--client-output-buffer-limit",
                      "pubsub 1gb 1gb 0", "--loglevel", "warning"]
        v.append(Variant(
            "redis", "broker",
            "redis-server 7.0.15 (Debian), persistence off (`--save '' --appendonly no`), "
            "pub/sub output buffer limit raised to 1 GiB (the default, 32 MiB, disconnects a "
            "subscriber that falls behind); C client on hiredis 0.14: SUBSCRIBE, PUBLISH "
            "pipelined 256 deep; round trips PUBLISH on `ping`, answered on `pong`",
            "bench/compare/c/redis_bench.c (C, hiredis)",
            broker=lambda p: [b["redis-server"], "--port", str(p)] + redis_conf,
            says_ready=True, listens=False, **brokered(b["redis_bench"])))
    if b.get("mqtt_bench") and b.get("mosquitto"):
        for qos in (0, 1):
            v.append(Variant(
                "mqtt", "broker" if qos == 0 else "broker-qos1",
                f"mosquitto 2.0.11 (Debian), QoS {qos}, MQTT 3.1.1, persistence off, "
                "set_tcp_nodelay true, max_inflight_messages 1000, max_queued_messages 100000; "
                "C client on libmosquitto 2.0.11 (TCP_NODELAY, network loop in the calling "
                "thread, at most 1000 messages unsent or unacknowledged by the publisher)",
                "bench/compare/c/mqtt_bench.c (C, libmosquitto)",
                broker=lambda p: [b["mosquitto"], "-c", mosquitto_conf(b["work"], p)],
                says_ready=True, listens=False, **brokered(b["mqtt_bench"], qos)))
    if b.get("ddsperf"):
        d = b["ddsperf"]
        dom = str(b["dds_domain"])
        v.append(Variant(
            "dds", "p2p",
            "Eclipse Cyclone DDS 0.10.2 `ddsperf` (Debian's cyclonedds-tools): topic KS "
            "(sequence number, key, octet sequence; sizes include its 12-byte fixed part, so "
            "8 B runs as 12 B), reliable, default history; UDP on the loopback interface "
            "only, multicast off, the peer 127.0.0.1 (CYCLONEDDS_URI in meta.json); "
            "latency from ddsperf's own ping/pong (half the round trip, per second windows, "
            "median over windows); socket receive buffers of up to 4 MB. Robot net: "
            "bench/compare/c/dds_robotnet.c on Cyclone DDS's C API (cyclonedds-dev), a "
            "DomainParticipant per node, the controller's in a second process (Cyclone DDS "
            "hands samples between participants of one process in memory), a topic per "
            "stream of the type of robotnet_sample.idl (idlc), every writer and reader "
            "reliable, KEEP_ALL, latency budget 0, events at the highest transport "
            "priority, samples taken in a data-available listener",
            "ddsperf (C, Cyclone DDS); dds_robotnet (C, Cyclone DDS)",
            sub=lambda lp, rp, size, n, r, rs, ms: [d, "-i", dom, "-D", str(r + 3), "sub"],
            pub=lambda lp, rp, size, dur: [d, "-i", dom, "-D", str(dur), "pub", "size",
                                           str(max(12, size))],
            pong=lambda lp, rp: [d, "-i", dom, "-D", "300", "pong"],
            ping=lambda lp, rp, size, n: [d, "-i", dom, "-D", str(n), "ping", "size",
                                          str(max(12, size))],
            listens=False, tcp=False, seq=False,
            env={"CYCLONEDDS_URI": "file://" + b["cyclonedds_xml"]}))
    if b.get("tcp_thr"):
        v.append(Variant(
            "tcp", "p2p",
            "raw TCP, Rust standard library: 4-byte length prefix, 256 KiB buffered writer "
            "and reader for throughput; TCP_NODELAY, one message in flight for round trips",
            "bench/compare tcp_thr, tcp_pingpong (Rust, std)",
            sub=lambda lp, rp, size, n, r, rs, ms: [b["tcp_thr"], "recv", "-l",
                                                    f"127.0.0.1:{lp}", "--samples", str(n),
                                                    "--rounds", str(r), "--max-seconds",
                                                    str(ms)],
            pub=lambda lp, rp, size, d: [b["tcp_thr"], "send", str(size), "-e",
                                         f"127.0.0.1:{lp}", "--duration", str(d)],
            pong=lambda lp, rp: [b["tcp_pingpong"], "pong", "-l", f"127.0.0.1:{lp}"],
            ping=lambda lp, rp, size, n: [b["tcp_pingpong"], "ping", str(size), "-e",
                                          f"127.0.0.1:{lp}", "--samples", str(n)],
            count_rounds=True, also=lambda p: ["-e", f"127.0.0.1:{p}"]))
    return v


def mosquitto_conf(work: str, port: int) -> str:
    path = Path(work) / f"mosquitto-{port}.conf"
    path.write_text(f"""listener {port} 127.0.0.1
allow_anonymous true
persistence false
set_tcp_nodelay true
max_inflight_messages 1000
max_queued_messages 100000
log_dest stderr
log_type error
log_type warning
""")
    return str(path)


CYCLONE_XML = """<CycloneDDS><Domain id="any"><General><Interfaces>
<NetworkInterface name="lo"/></Interfaces><AllowMulticast>false</AllowMulticast></General>
<Internal><SocketReceiveBufferSize max="4MB"/></Internal>
<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>20</MaxAutoParticipantIndex>
<Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>
"""


# ---- measuring ---------------------------------------------------------------------------

RX_ROUND = re.compile(r"^round (\d+): ([0-9.]+) msgs/s")
RX_MEDIAN = re.compile(r"^median_msgs_per_s=([0-9.]+)", re.M)
RX_LAT = re.compile(r"p50_us=([0-9.]+) p99_us=([0-9.]+)")
RX_DDS_SUB = re.compile(r"size (\d+) total (\d+) lost (\d+) delta (\d+) lost (\d+) rate ([0-9.]+) kS/s")
RX_SEQ = re.compile(r"^seq_received=(\d+) seq_lost=(\d+) seq_max_gap_us=(\d+)")
RX_DDS_PING = re.compile(r" 50% ([0-9.]+)us 90% [0-9.]+us 99% ([0-9.]+)us max [0-9.]+us cnt (\d+)")


class Results:
    """results.csv, written row by row (a run cut short keeps what it measured)."""

    def __init__(self, path: Path):
        self.f = open(path, "w", newline="")
        self.w = csv.writer(self.f)
        self.w.writerow(CSV_COLUMNS)
        self.f.flush()
        self.rows = 0

    def add(self, v: Variant, test: str, payload: int, value: float, unit: str,
            lo: float | None = None, hi: float | None = None, reps: int = 1) -> None:
        assert test in TESTS and v.system in SYSTEMS, (test, v.system)
        fmt = (lambda x: f"{x:.6g}")
        self.w.writerow([v.system, v.topology, test, payload, fmt(value), unit,
                         fmt(value if lo is None else lo), fmt(value if hi is None else hi), reps])
        self.f.flush()
        self.rows += 1


@dataclass
class Plan:
    payloads: list[int]
    wire_payloads: list[int]
    rounds: int
    round_s: float
    rtt_samples: int
    rtt_runs: int
    wire_samples: tuple[int, int]
    workloads: list[str]
    robotnet_s: int = 4
    recovery_window_s: int = 15


def samples_for(v: Variant, size: int, round_s: float) -> int:
    """Messages per round for the programs that count them: about `round_s` seconds at a
    rate guessed generously (raw TCP moves small messages ten times faster)."""
    rate = min(1.5e6, 1.5e9 / size)
    if v.system == "tcp":
        rate = min(1.5e7, 3e9 / size)
    elif v.system == "weft-pico":
        rate = min(5e5, 5e8 / size)
    return max(20, int(rate * round_s))


class Runner:
    def __init__(self, args, plan: Plan, variants: list[Variant], out: Path, res: Results):
        self.args = args
        self.plan = plan
        self.variants = variants
        self.out = out
        self.logs = out / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.res = res
        self.ports = Ports(args.port)
        self.commands: dict[str, list[str]] = {}
        self.steps_total = 0
        self.steps_done = 0
        self.t0 = time.monotonic()
        self.failures: list[str] = []
        self.seq = 0
        self.bins: dict = {}
        self.robotnet_runs: list[dict] = []
        self.failover_runs: list[dict] = []

    def env(self, v: Variant) -> dict:
        e = dict(os.environ)
        e.update(v.env)
        return e

    def note_cmd(self, v: Variant, what: str, cmd: list[str]) -> None:
        key = f"{v.system} {v.topology}"
        line = f"{what}: " + " ".join(cmd)
        cmds = self.commands.setdefault(key, [])
        prefix = what + ":"
        if not any(c.startswith(prefix) for c in cmds):
            cmds.append(line)

    def progress(self, label: str, result: str) -> None:
        self.steps_done += 1
        el = time.monotonic() - self.t0
        eta = el / self.steps_done * (self.steps_total - self.steps_done)
        log(f"[{self.steps_done}/{self.steps_total} {el:4.0f}s, ~{eta:.0f}s left] {label}: {result}")

    def name(self, v: Variant, what: str) -> str:
        """A log's name: every process of the run keeps its own."""
        self.seq += 1
        return f"{self.seq:04d}-{v.system}-{v.topology}-{what}"

    # -- broker --

    def start_broker(self, v: Variant) -> tuple[Proc | None, int]:
        if v.broker is None:
            return None, 0
        port = self.ports.take()
        cmd = v.broker(port)
        self.note_cmd(v, "router/broker", cmd)
        p = Proc(self.name(v, "broker"), cmd, self.logs, 7200, self.env(v))
        if not wait_listen(port, 15):
            log(f"  {v.system} {v.topology}: the broker does not listen on {port}")
            p.stop()
            return None, -1
        time.sleep(0.3)
        return p, port

    # -- throughput and CPU --

    def thr(self, v: Variant, broker: Proc | None, rport: int, size: int) -> None:
        plan = self.plan
        lport = self.ports.take()
        n = samples_for(v, size, plan.round_s * self.args.samples_scale) \
            if v.count_rounds else 10 ** 9
        max_s = 6 + plan.rounds * plan.round_s * 6
        sub_cmd = v.sub(lport, rport, size, n, plan.rounds, plan.round_s, round(max_s))
        self.note_cmd(v, "subscriber", sub_cmd)
        marks: list[tuple[float, float, dict]] = []  # (time, rate, cpu per side)
        procs: dict[str, Proc] = {}

        def on_line(t: float, line: str) -> None:
            rate = None
            m = RX_ROUND.match(line)
            if m:
                rate = float(m.group(2))
            m2 = RX_DDS_SUB.search(line)
            if m2:
                rate = float(m2.group(6)) * 1000
            if rate is None:
                return
            cpu = {side: p.cpu_ns() for side, p in procs.items()}
            if broker:
                cpu["broker"] = broker.cpu_ns()
            marks.append((t, rate, cpu))

        sub = Proc(self.name(v, f"sub-{size}"), sub_cmd, self.logs, max_s + 10, self.env(v),
                   on_line)
        procs["sub"] = sub
        if v.listens and v.tcp:
            wait_listen(lport, 10)
        elif v.says_ready:
            sub.wait_line("^subscribed", 10)
        else:
            time.sleep(0.5 if v.tcp else 0.3)
        duration = int(max_s + 5) if v.tcp else plan.rounds + 2
        pub_cmd = v.pub(lport, rport, size, duration)
        self.note_cmd(v, "publisher", pub_cmd)
        pub = Proc(self.name(v, f"pub-{size}"), pub_cmd, self.logs, duration + 10, self.env(v))
        procs["pub"] = pub
        sub.wait()
        pub.stop()
        sub.stop()
        label = f"{v.system} {v.topology} thr {size} B"
        rates = [r for _, r, _ in marks]
        if v.system == "dds":
            # ddsperf prints once a second: the first window holds discovery, the last the
            # publisher's end.
            marks = marks[1:plan.rounds + 1]
            rates = [r for _, r, _ in marks]
            median = statistics.median(rates) if rates else None
        else:
            m = RX_MEDIAN.search(sub.output()) if sub.output() else None
            median = float(m.group(1)) if m else None
        if median is None or not rates:
            self.fail(label, sub, pub)
            return
        self.res.add(v, "thr", size, median, "msg/s", min(rates), max(rates), len(rates))
        gbps = median * size * 8 / 1e9
        self.progress(label, f"{median:,.0f} msg/s ({gbps:.3g} Gb/s)")
        # CPU per message over the rounds after the first: run time of each process between
        # two round lines over the messages of those rounds.
        for side in ["pub", "sub", "broker"]:
            per_round = []
            tot_cpu = 0
            tot_msgs = 0.0
            for (t0, _, c0), (t1, r1, c1) in zip(marks, marks[1:]):
                a, b = c0.get(side), c1.get(side)
                msgs = r1 * (t1 - t0)
                if a is None or b is None or msgs <= 0:
                    continue
                spent = cpu_delta(a, b)
                per_round.append(spent / msgs)
                tot_cpu += spent
                tot_msgs += msgs
            if per_round and tot_msgs > 0:
                side_name = {"broker": "router" if v.topology == "routed" else "broker"}.get(
                    side, side)
                self.res.add(v, "cpu_ns", size, tot_cpu / tot_msgs, f"ns/msg {side_name}",
                             min(per_round), max(per_round), len(per_round))

    def fail(self, label: str, *procs: Proc) -> None:
        self.failures.append(label)
        self.progress(label, "no result")
        for p in procs:
            tail = p.output().splitlines()[-3:]
            for line in tail:
                log(f"    {p.name}: {line}")

    # -- round trips --

    def rtt_once(self, v: Variant, rport: int, size: int, samples: int,
                 relay_to: bool = False
                 ) -> tuple[tuple[float, float] | None, Relay | None, int]:
        """One ping-pong run with fresh processes; returns ((p50, p99) one-way µs, relay,
        the round trips made: `samples`, or for DDS the sum of ddsperf's windows)."""
        lport = self.ports.take()
        pong_cmd = v.pong(lport, rport)
        self.note_cmd(v, "pong", pong_cmd)
        pong = Proc(self.name(v, f"pong-{size}"), pong_cmd, self.logs, 600, self.env(v))
        try:
            if v.listens and v.tcp:
                if not wait_listen(lport, 10):
                    return None, None, 0
            elif v.says_ready:
                pong.wait_line("^subscribed", 10)
            else:
                time.sleep(0.5 if v.tcp else 0.3)
            relay = None
            target_l, target_r = lport, rport
            if relay_to:
                rp = self.ports.take()
                relay = Relay(rp, lport if v.listens else rport)
                if v.listens:
                    target_l = rp
                else:
                    target_r = rp
            if v.system == "dds":
                secs = max(3, min(30, 1 + samples // 5000))
                ping_cmd = v.ping(target_l, target_r, size, secs)
            else:
                ping_cmd = v.ping(target_l, target_r, size, samples)
            self.note_cmd(v, "ping", ping_cmd)
            ping = Proc(self.name(v, f"ping-{size}"), ping_cmd, self.logs, 120, self.env(v))
            ping.wait()
            ping.stop()
            if relay:
                time.sleep(0.05)
                relay.close()
            if v.system == "dds":
                wins = [(float(m.group(1)), float(m.group(2)), int(m.group(3))) for m in
                        (RX_DDS_PING.search(line) for _, line in ping.lines) if m]
                made = sum(w[2] for w in wins)
                wins = wins[1:] or wins
                if not wins:
                    return None, relay, 0
                return (statistics.median(w[0] for w in wins),
                        statistics.median(w[1] for w in wins)), relay, made
            m = RX_LAT.search(ping.output())
            if not m:
                for line in ping.output().splitlines()[-3:]:
                    log(f"    ping: {line}")
                return None, relay, 0
            return (float(m.group(1)), float(m.group(2))), relay, samples
        finally:
            pong.stop()

    def pinned(self, v: Variant, broker: Proc | None, rport: int) -> None:
        """Round trips with every process of `v` on one core (CPU 0): its ping, its pong
        and its router or broker, as `v.topology`-pinned rows beside the unpinned ones."""
        label = f"{v.system} {v.topology} pinned"
        if not shutil.which("taskset"):
            for size in self.rtt_sizes(v):
                self.failures.append(f"{label} rtt {size} B (no taskset)")
                self.progress(f"{label} rtt {size} B", "not run (no taskset)")
            return
        on_one = dataclasses.replace(
            v, topology=f"{v.topology}-pinned",
            ping=lambda *a: ["taskset", "-c", "0"] + v.ping(*a),
            pong=lambda *a: ["taskset", "-c", "0"] + v.pong(*a))
        if broker:
            subprocess.run(["taskset", "-a", "-c", "-p", "0", str(broker.p.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        try:
            for size in self.rtt_sizes(v):
                self.rtt(on_one, rport, size)
        finally:
            if broker:
                every = f"0-{(os.cpu_count() or 1) - 1}"
                subprocess.run(["taskset", "-a", "-c", "-p", every, str(broker.p.pid)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=False)

    def rtt_sizes(self, v: Variant) -> list[int]:
        """The payloads `v`'s programs take."""
        return [p for p in self.plan.payloads if not v.max_payload or p <= v.max_payload]

    def rtt(self, v: Variant, rport: int, size: int) -> None:
        runs = []
        # Fewer round trips above 16 KiB (at least 500): a 1 MiB one takes a millisecond.
        samples = self.plan.rtt_samples
        if size > 16384:
            samples = max(min(500, samples), samples * 16384 // size)
        for _ in range(self.plan.rtt_runs):
            r, _, _ = self.rtt_once(v, rport, size, samples)
            if r:
                runs.append(r)
        label = f"{v.system} {v.topology} rtt {size} B"
        if not runs:
            self.failures.append(label)
            self.progress(label, "no result")
            return
        p50s = [2 * r[0] for r in runs]
        p99s = [2 * r[1] for r in runs]
        self.res.add(v, "rtt_p50", size, statistics.median(p50s), "us", min(p50s), max(p50s),
                     len(runs))
        self.res.add(v, "rtt_p99", size, statistics.median(p99s), "us", min(p99s), max(p99s),
                     len(runs))
        self.progress(label, f"p50 {statistics.median(p50s):.1f} us, p99 "
                             f"{statistics.median(p99s):.1f} us")

    def wire(self, v: Variant, rport: int, size: int) -> None:
        label = f"{v.system} {v.topology} wire {size} B"
        if not v.tcp:
            self.wire_udp(v, rport, size)
            return
        counts = []
        for n in self.plan.wire_samples:
            r, relay, _ = self.rtt_once(v, rport, size, n, relay_to=True)
            if not r or relay is None:
                self.failures.append(label)
                self.progress(label, "no result")
                return
            counts.append((n, relay.up, relay.down))
        (n1, u1, d1), (n2, u2, d2) = counts
        up = (u2 - u1) / (n2 - n1)
        down = (d2 - d1) / (n2 - n1)
        self.res.add(v, "wire_bytes", size, up, "B/msg")
        self.progress(label, f"{up:.1f} B per message sent, {down:.1f} B per reply")

    def wire_udp(self, v: Variant, rport: int, size: int) -> None:
        """Wire bytes of a system on UDP (DDS), which no TCP relay can count: its ping and
        pong in a network namespace of their own, whose loopback interface then carries
        nothing else; the UDP payload that interface carried (its byte counter less 42
        bytes of Ethernet, IPv4 and UDP headers per packet) over the messages both ways,
        protocol traffic (discovery, heartbeats, acknowledgements) included. Two runs of
        different lengths, as for TCP, so that what does not grow with the messages
        (discovery, the start and the end) cancels out."""
        label = f"{v.system} {v.topology} wire {size} B"
        if os.geteuid() != 0 or not shutil.which("ip"):
            self.progress(label, "not measured (UDP: counting it needs a network namespace, "
                                 "root and ip(8))")
            return
        ns = f"weft-compare-{os.getpid()}"
        inside = ["ip", "netns", "exec", ns]
        boxed = dataclasses.replace(v, ping=lambda *a: inside + v.ping(*a),
                                    pong=lambda *a: inside + v.pong(*a))

        def lo_counters() -> tuple[int, int]:
            out = subprocess.run(inside + ["cat", "/sys/class/net/lo/statistics/tx_bytes",
                                           "/sys/class/net/lo/statistics/tx_packets"],
                                 capture_output=True, text=True, check=True).stdout.split()
            return int(out[0]), int(out[1])

        counts = []
        try:
            subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
            subprocess.run(inside + ["ip", "link", "set", "lo", "up"], check=True,
                           capture_output=True)
            # ddsperf runs for a time (rtt_once: a second per 5000 samples, at least 3 s):
            # runs of 3 and 6 seconds.
            for secs in (3, 6):
                b0, p0 = lo_counters()
                r, _, made = self.rtt_once(boxed, rport, size, 5000 * (secs - 1))
                b1, p1 = lo_counters()
                if not r or made <= 0:
                    break
                counts.append((made, (b1 - b0) - 42 * (p1 - p0)))
        except (subprocess.CalledProcessError, OSError) as e:
            self.progress(label, f"not measured (network namespace: {e})")
            return
        finally:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        if len(counts) < 2 or counts[1][0] <= counts[0][0]:
            self.failures.append(label)
            self.progress(label, "no result")
            return
        (n1, u1), (n2, u2) = counts
        per = (u2 - u1) / (2 * (n2 - n1))
        self.res.add(v, "wire_bytes", size, per, "B/msg")
        self.progress(label, f"{per:.1f} B of UDP payload per message, each way")

    # -- a node's failure --

    def failover(self, v: Variant, rport: int, size: int = 64) -> None:
        """A node's failure: two subscribers of one publisher that numbers its messages; one
        (A) is killed (SIGKILL) and started again (B) mid-run, the other (S) runs on. For B,
        how long until it receives again (its rounds are short, about 20 ms, so its first
        message is dated to within a round) and the gap from the kill; for S, what it saw
        meanwhile: the numbers it missed and its longest wait between two messages (from
        its `seq_*` lines; DDS: ddsperf's own count of lost samples, and no wait, since
        ddsperf prints once a second; weft-pico's example programs do not number their
        messages)."""
        label = f"{v.system} {v.topology} failure"
        down_s = 0.5
        lport = self.ports.take()
        sport = self.ports.take()
        round_s = 0.02
        n = samples_for(v, size, round_s * self.args.samples_scale) if v.count_rounds \
            else 10 ** 9
        rounds = 500
        seq = ["--seq"] if v.seq else []
        # The subscriber kept running: rounds of about 0.3 s, as many as last the run.
        s_round = 0.3
        s_n = samples_for(v, size, s_round * self.args.samples_scale) if v.count_rounds \
            else 10 ** 9

        def start_sub(tag: str) -> Proc:
            cmd = v.sub(lport, rport, size, n, rounds, round_s, 60)
            self.note_cmd(v, "failure: subscriber", cmd)
            return Proc(self.name(v, f"failover-{tag}"), cmd, self.logs, 70, self.env(v))

        def first_message(p: Proc, after: float) -> float | None:
            """The time of the first message after `after`: the first round line, less the
            round's length."""
            for t, line in p.lines:
                m = RX_ROUND.match(line)
                r = float(m.group(2)) if m else None
                m2 = RX_DDS_SUB.search(line)
                if m2:
                    r = float(m2.group(6)) * 1000
                if r and t > after:
                    length = min(n / r, round_s) if not v.count_rounds else n / r
                    if v.system == "dds":
                        length = 1.0
                    return max(after, t - length)
            return None

        def ready(p: Proc, port: int) -> None:
            if v.listens and v.tcp:
                wait_listen(port, 10)
            elif v.says_ready:
                p.wait_line("^subscribed", 10)
            else:
                time.sleep(0.5 if v.tcp else 0.3)

        def survivor_counts(p: Proc) -> list[tuple[float, int | None, float | None]]:
            """S's lines as (time, numbers missed so far, longest wait since its previous
            line in ms): its `seq_*` lines, or ddsperf's (missed only)."""
            out = []
            for t, line in p.lines:
                m = RX_SEQ.match(line)
                if m:
                    out.append((t, int(m.group(2)), int(m.group(3)) / 1000))
                m2 = RX_DDS_SUB.search(line)
                if m2:
                    out.append((t, int(m2.group(3)), None))
            return out

        s_cmd = v.sub(sport, rport, size, s_n, 60 if v.system != "dds" else 30, s_round, 60) \
            + seq
        self.note_cmd(v, "failure: subscriber kept running", s_cmd)
        surv = Proc(self.name(v, "failover-kept"), s_cmd, self.logs, 70, self.env(v))
        ready(surv, sport)
        a = start_sub("a")
        ready(a, lport)
        pub_cmd = v.pub(lport, rport, size, 60) + seq
        if v.listens and v.tcp and v.also:
            pub_cmd += v.also(sport)
        self.note_cmd(v, "failure: publisher", pub_cmd)
        pub = Proc(self.name(v, "failover-pub"), pub_cmd, self.logs, 70, self.env(v))
        result = {"system": v.system, "topology": v.topology, "payload": size,
                  "down_s": down_s, "window_s": self.plan.recovery_window_s,
                  "subscribers": 2}
        b = None
        try:
            end = time.monotonic() + 15
            started = False
            while time.monotonic() < end:
                if first_message(a, 0) is not None and len(a.lines) >= 4 and \
                        (survivor_counts(surv) or not (v.seq or v.system == "dds")) and \
                        first_message(surv, 0) is not None:
                    started = True
                    break
                if a.p.poll() is not None or surv.p.poll() is not None:
                    break
                time.sleep(0.05)
            if not started:
                self.fail(label, a, surv, pub)
                return
            time.sleep(1.0 if v.system == "dds" else 0.3)
            t_kill = time.monotonic()
            os.killpg(a.p.pid, signal.SIGKILL)
            a.stop()
            time.sleep(down_s)
            t_restart = time.monotonic()
            b = start_sub("b")
            end = t_restart + self.plan.recovery_window_s
            t_back = None
            while time.monotonic() < end:
                t_back = first_message(b, t_restart)
                if t_back is not None or b.p.poll() is not None:
                    break
                time.sleep(0.01)
            b.stop()
            if t_back is None:
                result.update(recovered=False, recovery_s=None, gap_s=None)
                self.failures.append(f"{label}: the restarted subscriber (nothing within "
                                     f"{self.plan.recovery_window_s} s)")
                said = (f"the restarted subscriber received nothing within "
                        f"{self.plan.recovery_window_s} s")
            else:
                result.update(recovered=True, recovery_s=round(t_back - t_restart, 4),
                              gap_s=round(t_back - t_kill, 4))
                self.res.add(v, "fail_recovery_ms", size, 1000 * (t_back - t_restart), "ms")
                self.res.add(v, "fail_gap_ms", size, 1000 * (t_back - t_kill), "ms")
                said = (f"receiving again {1000 * (t_back - t_restart):.0f} ms after the "
                        f"restart (gap {1000 * (t_back - t_kill):.0f} ms, "
                        f"{1000 * down_s:.0f} ms of it down)")
            # S: what it saw from the kill until a line after the restarted one was back
            # (or the window's end) and 0.3 s more.
            t_until = (t_back if t_back is not None else time.monotonic()) + 0.3
            limit = time.monotonic() + 5 + (2 if v.system == "dds" else 0)
            while time.monotonic() < limit and surv.p.poll() is None and \
                    not any(t > t_until for t, _, _ in survivor_counts(surv)):
                time.sleep(0.02)
            counts = survivor_counts(surv)
            t_seen = time.monotonic()
            before = [c for c in counts if c[0] <= t_kill]
            during = [c for c in counts if c[0] > t_kill]
            if v.system == "dds" and before:
                # ddsperf prints a line a second while it receives: the longest time
                # between two of its lines from the last before the kill (or from the last
                # to now), less its second, bounds its longest wait from below.
                times = [before[-1][0]] + [c[0] for c in during] + [t_seen]
                bound = max(b - a for a, b in zip(times, times[1:])) - 1.0
                during = [(t, lost, None) for t, lost, _ in during]
                if during:
                    during[-1] = (during[-1][0], during[-1][1], max(0.0, 1000 * bound))
            if not (v.seq or v.system == "dds"):
                result.update(others=None, others_note="its programs do not number their "
                                                       "messages")
                said += "; the subscriber kept running: not counted (messages not numbered)"
            elif not during:
                result.update(others={"received_again": False})
                self.failures.append(f"{label}: the subscriber kept running (no line after "
                                     "the kill)")
                said += "; the subscriber kept running printed nothing after the kill"
            else:
                lost = during[-1][1] - (before[-1][1] if before else 0)
                gaps = [g for _, _, g in during if g is not None]
                gap_ms = max(gaps) if gaps else None
                # For scale: what it missed before the kill, and over how long.
                first = counts[0][0]
                result["others"] = {"lost": lost, "max_gap_ms": gap_ms,
                                    "until_s": round(during[-1][0] - t_kill, 3),
                                    "lost_before": before[-1][1] if before else 0,
                                    "before_s": round(before[-1][0] - first, 3) if before
                                    else 0}
                if v.system == "dds":
                    result["others"]["gap_is_lower_bound"] = True
                self.res.add(v, "fail_others_loss", size, lost, "msgs")
                if gap_ms is not None:
                    self.res.add(v, "fail_others_gap_ms", size, gap_ms, "ms")
                said += (f"; the subscriber kept running missed {lost}, its longest wait "
                         + ("not measured" if gap_ms is None else
                            f"at least {gap_ms:.0f} ms (ddsperf prints once a second)"
                            if v.system == "dds" else f"{gap_ms:.1f} ms"))
            self.progress(label, said)
            self.failover_runs.append(result)
        finally:
            pub.stop()
            surv.stop()
            if b is not None:
                b.stop()

    # -- the robot net --

    def robotnet_bin(self, v: Variant) -> str | None:
        """The robot-net program of the variant's system (weft's robotnet example, Zenoh's
        zrobotnet), if it has one and it was built."""
        return self.bins.get(ROBOTNET_PROGRAMS.get(v.system, ""))

    def robotnet(self, v: Variant, rport: int) -> None:
        """The robot-net scenario (bench/robotnet.sh's program, weft's or Zenoh's): ten
        sessions, nine sensors at 10 kHz, commands at 10 kHz, 100 Hz express events; one-way
        latency per stream kind into lat_p50/lat_p99 rows (the unit names the stream), max
        and loss into meta.json."""
        label = f"{v.system} {v.topology} robot net"
        program = self.robotnet_bin(v)
        if not program:
            return
        fresh = None
        if v.broker is not None:
            # A router or broker of its own, fresh, as bench/robotnet.sh starts one.
            fresh, rport = self.start_broker(v)
            if rport < 0:
                self.fail(label)
                return
        seconds = ["--seconds", str(self.plan.robotnet_s)]
        if v.system in C_ROBOTNETS:
            if v.system == "dds":
                # Its ports follow from the domain id (UDP, CYCLONEDDS_URI).
                rport = self.bins["dds_domain"]
            elif v.broker is None:
                # Peer to peer (ZeroMQ): each node binds the next port of ten.
                ports = [self.ports.take() for _ in range(10)]
                while ports != list(range(ports[0], ports[0] + 10)):
                    ports = [self.ports.take() for _ in range(10)]
                rport = ports[0]
            qos = ["--qos", "1"] if v.topology.endswith("qos1") else []
            cmd = [program] + seconds + qos + [f"127.0.0.1:{rport}"]
        else:
            if v.topology == "routed":
                where = ["--routed", f"tcp/127.0.0.1:{rport}"]
            else:
                where = ["--p2p", str(self.ports.take())]
                self.ports.take()
            cmd = [program] + where + seconds
        self.note_cmd(v, "robot net", cmd)
        p = Proc(self.name(v, "robotnet"), cmd, self.logs, self.plan.robotnet_s + 60,
                 self.env(v))
        p.wait()
        p.stop()
        if fresh:
            fresh.stop()
        line = next((l for _, l in p.lines if l.startswith('{"robotnet"')), None)
        if not line:
            self.fail(label, p)
            return
        r = json.loads(line)
        summary = {"system": v.system, "topology": v.topology, "seconds": self.plan.robotnet_s,
                   "sent_late": r.get("sent_late"), "ticks": r.get("ticks"), "streams": {}}
        for kind in ("state", "command", "event"):
            k = r[kind]
            # A stream that received nothing has no percentiles (null): no row, its loss
            # is in meta.json and the report.
            if k.get("p50_us") is not None:
                self.res.add(v, "lat_p50", 64, k["p50_us"], f"us {kind}")
                self.res.add(v, "lat_p99", 64, k["p99_us"], f"us {kind}")
            summary["streams"][kind] = {f: k.get(f) for f in
                                        ("p50_us", "p99_us", "p999_us", "max_us", "sent",
                                         "received")}
        self.robotnet_runs.append(summary)
        st = summary["streams"]
        lost = sum(x["sent"] - x["received"] for x in st.values())
        def us(x) -> str:
            return "-" if x is None else f"{x:.0f}"

        self.progress(label, ", ".join(f"{k} p50 {us(x['p50_us'])} p99 {us(x['p99_us'])} max "
                                       f"{us(x['max_us'])} us" for k, x in st.items())
                      + f"; {lost} lost")

    # -- everything --

    def run(self) -> None:
        plan = self.plan
        per_variant = 0
        if "thr" in plan.workloads:
            per_variant += len(plan.payloads)
        if "rtt" in plan.workloads:
            per_variant += len(plan.payloads)
        if "pinned" in plan.workloads:
            per_variant += len(plan.payloads)
        if "wire" in plan.workloads:
            per_variant += len(plan.wire_payloads)
        self.steps_total = per_variant * len(self.variants)
        if "failure" in plan.workloads:
            self.steps_total += len(self.variants)
        if "robotnet" in plan.workloads:
            self.steps_total += sum(1 for v in self.variants if self.robotnet_bin(v))
        for v in self.variants:
            log(f"== {v.system} {v.topology}")
            broker, rport = self.start_broker(v)
            if rport < 0:
                self.steps_done += per_variant
                self.failures.append(f"{v.system} {v.topology}: broker")
                continue
            try:
                too_large = [p for p in plan.payloads if v.max_payload and p > v.max_payload]
                fits = [p for p in plan.payloads if p not in too_large]
                for size in too_large:
                    for w in ("thr", "rtt"):
                        if w in plan.workloads:
                            label = f"{v.system} {v.topology} {w} {size} B"
                            self.failures.append(label + " (its programs take at most "
                                                 f"{v.max_payload} B)")
                            self.progress(label, f"not run (its programs take at most "
                                                 f"{v.max_payload} B)")
                if "thr" in plan.workloads:
                    for size in fits:
                        self.thr(v, broker, rport, size)
                if "rtt" in plan.workloads:
                    for size in fits:
                        self.rtt(v, rport, size)
                if "pinned" in plan.workloads:
                    self.pinned(v, broker, rport)
                if "wire" in plan.workloads:
                    for size in plan.wire_payloads:
                        self.wire(v, rport, size)
                if "robotnet" in plan.workloads:
                    self.robotnet(v, rport)
                if "failure" in plan.workloads:
                    self.failover(v, rport)
            finally:
                if broker:
                    broker.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--payloads", default="")
    ap.add_argument("--workloads", default=None,
                    help="default thr,rtt,wire,robotnet,failure, and pinned in a full run")
    ap.add_argument("--port", type=int, default=17900)
    ap.add_argument("--samples-scale", type=float, default=1.0,
                    help="scales the messages per round of the programs that count them "
                         "(below 1 for debug builds)")
    ap.add_argument("--bins", required=True, help="JSON file: paths of the programs")
    ap.add_argument("--command", default="bench/compare.sh")
    args = ap.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bins = json.loads(Path(args.bins).read_text())
    work = out / "work"
    work.mkdir(exist_ok=True)
    bins["work"] = str(work)
    xml = work / "cyclonedds.xml"
    xml.write_text(CYCLONE_XML)
    bins["cyclonedds_xml"] = str(xml)
    bins["dds_domain"] = 1 + (args.port // 7) % 200

    wanted = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in SYSTEMS]
    if unknown:
        log(f"unknown systems: {', '.join(unknown)} (known: {', '.join(SYSTEMS)})")
        return 2
    if args.payloads:
        payloads = [int(x) for x in args.payloads.split(",")]
    else:
        payloads = QUICK_PAYLOADS if args.quick else FULL_PAYLOADS
    plan = Plan(
        payloads=payloads,
        wire_payloads=[p for p in WIRE_PAYLOADS if not args.payloads or p in payloads]
        or payloads[:1],
        rounds=3 if args.quick else 5,
        round_s=0.25 if args.quick else 0.6,
        rtt_samples=1000 if args.quick else 10000,
        rtt_runs=1 if args.quick else 3,
        wire_samples=(200, 700) if args.quick else (1000, 6000),
        workloads=[w.strip() for w in (args.workloads or DEFAULT_WORKLOADS + (
            "" if args.quick else ",pinned")).split(",")],
        robotnet_s=2 if args.quick else 4,
        recovery_window_s=5 if args.quick else 15,
    )
    variants = [v for v in make_variants(bins) if v.system in wanted]
    missing = [s for s in wanted if not any(v.system == s for v in variants)]
    for s in missing:
        log(f"{s}: not run (its programs are missing)")

    def on_signal(sig, _frame):
        stop_all()
        sys.exit(128 + sig)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    atexit.register(stop_all)
    threading.Thread(target=watchdog, daemon=True).start()

    res = Results(out / "results.csv")
    load_before = open("/proc/loadavg").read().split()[:3]
    t0 = time.time()
    runner = Runner(args, plan, variants, out, res)
    runner.bins = bins
    runner.run()
    elapsed = time.time() - t0
    load_after = open("/proc/loadavg").read().split()[:3]
    meta = {
        "command": args.command,
        "mode": "quick" if args.quick else "full",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t0)),
        "elapsed_s": round(elapsed),
        "load_before": " ".join(load_before),
        "load_after": " ".join(load_after),
        "cores": os.cpu_count(),
        "cpu": cpu_model(),
        "kernel": os.uname().release,
        "plan": plan.__dict__,
        "systems": [{"system": v.system, "topology": v.topology, "settings": v.settings,
                     "client": v.client,
                     "commands": runner.commands.get(f"{v.system} {v.topology}", [])}
                    for v in variants],
        "not_run": missing,
        "failures": runner.failures,
        "robotnet": runner.robotnet_runs,
        "failure": runner.failover_runs,
        "versions": bins.get("versions", {}),
        "cyclonedds_xml": CYCLONE_XML.replace("\n", ""),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    log(f"== {res.rows} rows in {out / 'results.csv'} ({elapsed:.0f} s; "
        f"{len(runner.failures)} points without a result)")
    return 0


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


if __name__ == "__main__":
    sys.exit(main())
