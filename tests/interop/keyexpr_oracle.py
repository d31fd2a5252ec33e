#!/usr/bin/env python3
"""Checks weft's key-expression case table against Eclipse Zenoh.

Reads crates/weft-keyexpr/tests/cases.txt (the table the Rust tests run) and
checks every expected result with the `zenoh` Python package (eclipse-zenoh
1.10.2): validity with `zenoh.KeyExpr(...)`, canonical forms with
`KeyExpr.autocanonize(...)`, and the relations with `.intersects()` and
`.includes()`. Prints each disagreement and exits with status 1 if there is any.

    python3 tests/interop/keyexpr_oracle.py              # check the table
    python3 tests/interop/keyexpr_oracle.py --generate 200 --seed 7
        # print random cases, answered by Zenoh, in the table's format

Install the reference first: pip install eclipse-zenoh==1.10.2
"""

import argparse
import os
import random
import sys
from pathlib import Path

# Zenoh's auto-canoniser panics on some inputs (see `canon-divergent`); keep the
# panic report to one line.
os.environ["RUST_BACKTRACE"] = "0"

try:
    import zenoh
except ImportError:  # pragma: no cover - depends on the environment
    sys.exit("keyexpr_oracle: the `zenoh` package is missing (pip install eclipse-zenoh==1.10.2)")

CASES = Path(__file__).resolve().parents[2] / "crates" / "weft-keyexpr" / "tests" / "cases.txt"


def unescape(field):
    """Undoes the table's escapes: \\s, \\t, \\e, \\\\."""
    if field == "\\e":
        return ""
    out, chars = [], iter(field)
    for c in chars:
        if c != "\\":
            out.append(c)
            continue
        nxt = next(chars, None)
        table = {"s": " ", "t": "\t", "\\": "\\"}
        if nxt not in table:
            raise ValueError(f"bad escape \\{nxt} in {field!r}")
        out.append(table[nxt])
    return "".join(out)


def escape(s):
    """The inverse of `unescape`, for generated cases."""
    if s == "":
        return "\\e"
    return s.replace("\\", "\\\\").replace(" ", "\\s").replace("\t", "\\t")


def is_valid(s):
    try:
        return str(zenoh.KeyExpr(s)) == s
    except zenoh.ZError:
        return False


def autocanonize(s):
    """Zenoh's canonical form of `s`, or None if it rejects it. Panics propagate."""
    try:
        return str(zenoh.KeyExpr.autocanonize(s))
    except zenoh.ZError:
        return None


def yes_no(field):
    if field not in ("yes", "no"):
        raise ValueError(f"expected yes or no, found {field!r}")
    return field == "yes"


def check(kind, fields):
    """Returns None if Zenoh agrees with the case, else a description."""
    if kind == "valid" and len(fields) == 1:
        return None if is_valid(fields[0]) else "Zenoh rejects it"
    if kind == "invalid" and len(fields) in (1, 2):
        return "Zenoh accepts it" if is_valid(fields[0]) else None
    if kind == "canon" and len(fields) == 2:
        source, expected = fields
        try:
            got = autocanonize(source)
        except BaseException as e:  # a Rust panic surfaces as PanicException
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return f"Zenoh panics: {e}"
        if expected == "!":
            return None if got is None else f"Zenoh canonicalises it to {got!r}"
        return None if got == expected else f"Zenoh gives {got!r}"
    if kind == "canon-divergent" and len(fields) == 2:
        source, expected = fields
        if not is_valid(expected):
            return f"Zenoh rejects weft's form {expected!r}"
        try:
            got = autocanonize(source)
        except BaseException as e:
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return None
        if got == expected:
            return "Zenoh now agrees with weft: make this a `canon` case"
        return None
    if kind == "intersects" and len(fields) == 3:
        a, b, expected = fields
        want = yes_no(expected)
        ka, kb = zenoh.KeyExpr(a), zenoh.KeyExpr(b)
        ab, ba = ka.intersects(kb), kb.intersects(ka)
        if ab != want or ba != want:
            return f"Zenoh: a.intersects(b) = {ab}, b.intersects(a) = {ba}"
        return None
    if kind == "includes" and len(fields) == 3:
        a, b, expected = fields
        got = zenoh.KeyExpr(a).includes(zenoh.KeyExpr(b))
        return None if got == yes_no(expected) else f"Zenoh: {got}"
    return f"malformed case ({len(fields)} fields)"


def run_table(path):
    total, failures, counts = 0, [], {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        kind, *raw = line.split()
        total += 1
        counts[kind] = counts.get(kind, 0) + 1
        try:
            why = check(kind, [unescape(f) for f in raw])
        except (ValueError, zenoh.ZError) as e:
            why = f"cannot check: {e}"
        if why is not None:
            failures.append(f"line {number}: {line}\n    {why}")
    for failure in failures:
        print(failure)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"keyexpr oracle: {total} cases ({summary}) against zenoh {zenoh_version()}")
    print(f"{total - len(failures)} passed, {len(failures)} failed")
    return 1 if failures or total == 0 else 0


def zenoh_version():
    try:
        from importlib.metadata import version

        return version("eclipse-zenoh")
    except Exception:  # pragma: no cover - metadata missing
        return "(unknown version)"


# Chunks for random expressions: a small alphabet so that relations often hold,
# plus wildcards, sub-chunk patterns, verbatim and non-ASCII chunks. None holds
# a `$*$*` run, on which Zenoh's auto-canoniser is unreliable.
POOL = ["a", "b", "a", "b", "ab", "é", "*", "*", "**", "**", "$*", "a$*", "$*a", "b$*",
        "a$*b", "$*b$*", "@a", "@b", "@a$*"]


def random_ke(rng):
    while True:
        n = rng.choice((1, 2, 2, 3, 3, 4, 5))
        s = "/".join(rng.choice(POOL) for _ in range(n))
        canon = autocanonize(s)
        if canon is not None:
            return canon


def random_string(rng):
    """A string made of chunk-like pieces: often valid, often only after
    canonicalisation, sometimes broken by an empty chunk or a stray character."""
    pieces = ["a", "b", "a", "b", "é", " ", "@", "$*", "$*", "*", "*", "**", "**", "**"]
    broken = ["$", "#", "?", ""]

    def piece():
        return rng.choice(broken) if rng.random() < 0.04 else rng.choice(pieces)

    chunks = ("".join(piece() for _ in range(rng.choice((1, 1, 1, 2, 3))))
              for _ in range(rng.randint(1, 5)))
    return "/".join(chunks)


def balanced_pairs(rng, n, relation):
    """`n` random pairs, half of them related, half not (as far as tries allow)."""
    want = {True: n - n // 2, False: n // 2}
    pairs = []
    for _ in range(200 * n):
        if not any(want.values()):
            break
        a, b = random_ke(rng), random_ke(rng)
        got = relation(zenoh.KeyExpr(a), zenoh.KeyExpr(b))
        if want[got]:
            want[got] -= 1
            pairs.append((a, b, got))
    return pairs


def generate(n, seed):
    rng = random.Random(seed)
    print(f"## Generated by tests/interop/keyexpr_oracle.py --generate {n} --seed {seed},")
    print("## answered by Eclipse Zenoh " + zenoh_version())
    seen = set()
    for _ in range(n):
        s = random_string(rng)
        if "$*$*" in s or s in seen:  # runs of $* are covered by hand-written cases
            continue
        seen.add(s)
        print(f"{'valid' if is_valid(s) else 'invalid'} {escape(s)}")
        canon = autocanonize(s)
        print(f"canon {escape(s)} {escape(canon) if canon is not None else '!'}")
    for name, relation in (("intersects", zenoh.KeyExpr.intersects), ("includes", zenoh.KeyExpr.includes)):
        for a, b, got in balanced_pairs(rng, n, relation):
            print(f"{name} {escape(a)} {escape(b)} {'yes' if got else 'no'}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, default=CASES, help="case table to check")
    parser.add_argument("--generate", type=int, metavar="N", help="print N random cases of each family")
    parser.add_argument("--seed", type=int, default=1, help="seed for --generate")
    args = parser.parse_args()
    if args.generate is not None:
        return generate(args.generate, args.seed)
    return run_table(args.cases)


if __name__ == "__main__":
    sys.exit(main())
