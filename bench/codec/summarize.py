#!/usr/bin/env python3
"""Prints the codec benchmark results as a Markdown table: the median time per operation
of weft and Zenoh for each case and operation, and their ratio (Zenoh / weft).

Usage: python3 summarize.py [CRITERION_DIR...]
CRITERION_DIR defaults to $CARGO_TARGET_DIR/criterion, else target/criterion. Given the
directories of several runs (copies of that directory), each benchmark's lowest median is
shown: on a shared machine, the run least disturbed by other work.
"""

import json
import os
import sys
from pathlib import Path

CASES = [
    ("push_8B", "Frame + 1 Push/Put, 8 B"),
    ("push_64KiB", "Frame + 1 Push/Put, 64 KiB"),
    ("batch_100x8B", "Frame + 100 Push/Put, 8 B each"),
]
OPERATIONS = [
    ("encode", "encode, Vec<u8>"),
    ("encode_fixed", "encode, fixed buffer"),
    ("encode_zero_copy", "encode, payload by reference"),
    ("decode", "decode"),
]


def median_ns(roots, group: str, function: str):
    found = []
    for root in roots:
        path = root / group.replace("/", "_") / function / "new" / "estimates.json"
        if path.exists():
            found.append(json.loads(path.read_text())["median"]["point_estimate"])
    return min(found) if found else None


def fmt(ns):
    if ns is None:
        return "n/a"
    if ns >= 1000:
        return f"{ns / 1000:.2f} µs"
    return f"{ns:.1f} ns"


def main():
    if len(sys.argv) > 1:
        roots = [Path(a) for a in sys.argv[1:]]
    else:
        roots = [Path(os.environ.get("CARGO_TARGET_DIR", "target")) / "criterion"]
    print("| case | operation | weft | Zenoh 1.10.2 | Zenoh / weft |")
    print("|---|---|---:|---:|---:|")
    for case, case_name in CASES:
        for op, op_name in OPERATIONS:
            group = f"{case}/{op}"
            weft = median_ns(roots, group, "weft")
            zenoh = median_ns(roots, group, "zenoh")
            if weft is None and zenoh is None:
                continue
            ratio = f"{zenoh / weft:.2f}×" if weft and zenoh else "n/a"
            print(f"| {case_name} | {op_name} | {fmt(weft)} | {fmt(zenoh)} | {ratio} |")
    floor = median_ns(roots, "push_64KiB/encode", "copy_only")
    if floor is not None:
        print()
        print(f"Copying the 64 KiB payload alone into the `Vec<u8>`: {fmt(floor)}.")


if __name__ == "__main__":
    main()
