#!/usr/bin/env python3
"""Checks a results.csv of bench/compare.sh: the exact header, a known system, topology,
test and unit on every row, numbers where numbers belong (min <= value <= max), and, for
each SYSTEM:TOPOLOGY given, rows of every test given. Exits 1 with the reasons otherwise.

Usage: check_results.py results.csv [--expect weft:p2p,tcp:p2p] [--tests thr,rtt_p50]
"""

from __future__ import annotations

import argparse
import csv
import math
import sys

COLUMNS = ["system", "topology", "test", "payload", "value", "unit", "min", "max", "reps"]
SYSTEMS = {"weft", "weft-pico", "zenoh", "zeromq", "redis", "mqtt", "dds", "tcp"}
TOPOLOGIES = {"p2p", "routed", "broker", "broker-qos1"}
# Round trips with every process of a system on one core (`pinned` workload).
TOPOLOGIES |= {f"{t}-pinned" for t in TOPOLOGIES}
TESTS = {"thr", "lat_p50", "lat_p99", "rtt_p50", "rtt_p99", "wire_bytes", "cpu_ns"}
# A node's failure (the `failure` workload).
TESTS |= {"fail_recovery_ms", "fail_gap_ms", "fail_others_loss", "fail_others_gap_ms"}


def check(path: str, expect: list[str], tests: list[str]) -> list[str]:
    """The problems found in the file at `path` (empty when it is sound)."""
    errors = []
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != COLUMNS:
        return [f"header {rows[0] if rows else None}, expected {','.join(COLUMNS)}"]
    seen = set()
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(COLUMNS):
            errors.append(f"line {i}: {len(r)} fields")
            continue
        d = dict(zip(COLUMNS, r))
        for k, allowed in (("system", SYSTEMS), ("topology", TOPOLOGIES), ("test", TESTS)):
            if d[k] not in allowed:
                errors.append(f"line {i}: {k} {d[k]!r}")
        try:
            payload, reps = int(d["payload"]), int(d["reps"])
            v, lo, hi = float(d["value"]), float(d["min"]), float(d["max"])
        except ValueError:
            errors.append(f"line {i}: not a number in {r}")
            continue
        if payload < 0 or reps < 1 or not all(map(math.isfinite, (v, lo, hi))):
            errors.append(f"line {i}: payload {payload}, reps {reps}, value {v}")
        if not lo <= v <= hi or v < 0:
            errors.append(f"line {i}: value {v} outside [{lo}, {hi}] or negative")
        if not d["unit"]:
            errors.append(f"line {i}: no unit")
        seen.add((d["system"], d["topology"], d["test"]))
    for e in expect:
        system, _, topology = e.partition(":")
        for t in tests:
            if (system, topology, t) not in seen:
                errors.append(f"no {t} row for {system} {topology}")
    return errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--expect", default="")
    ap.add_argument("--tests", default="thr,rtt_p50,rtt_p99")
    a = ap.parse_args()
    errors = check(a.csv, [e for e in a.expect.split(",") if e],
                   [t for t in a.tests.split(",") if t])
    for e in errors:
        print(f"{a.csv}: {e}", file=sys.stderr)
    if not errors:
        print(f"{a.csv}: sound")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
