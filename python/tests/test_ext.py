"""weft.ext's serialisation against zenoh-python's zenoh.ext: the same bytes for the
same values, each reading what the other wrote, and the same errors."""

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import zenoh_python

# (value, type): Python source evaluated with `from <module>.ext import *` and ZBytes.
CASES = [
    ("0", "int"), ("-1", "int"), ("2**31 - 1", "int"), ("-2**31", "int"),
    ("Int8(-2)", "Int8"), ("Int16(-300)", "Int16"), ("Int32(7)", "Int32"),
    ("Int64(-2**63)", "Int64"), ("Int128(-1)", "Int128"), ("UInt8(255)", "UInt8"),
    ("UInt16(65535)", "UInt16"), ("UInt32(2**32 - 1)", "UInt32"), ("UInt64(2**64 - 1)", "UInt64"),
    ("UInt128(2**128 - 1)", "UInt128"),
    ("1.5", "float"), ("-0.0", "float"), ("Float64(1e300)", "Float64"), ("Float32(1.5)", "Float32"),
    ("Float32(1e300)", "Float32"), ("Float32(-1e300)", "Float32"),
    ("True", "bool"), ("False", "bool"),
    ("''", "str"), ("'hé'", "str"), ("'x' * 200", "str"), ("'a\\x00b'", "str"),
    ("b''", "bytes"), ("b'ab'", "bytes"), ("bytearray(b'ab')", "bytearray"),
    ("bytes(range(256)) * 70", "bytes"), ("ZBytes(b'xy')", "ZBytes"),
    ("[]", "list[int]"), ("[1, 2]", "list[int]"), ("[True] * 130", "list[bool]"),
    ("[Int8(1), Int8(2)]", "list[Int8]"), ("[[1], [2, 3], []]", "list[list[int]]"),
    ("[[], ['a']]", "list[list[str]]"), ("[(1, 'a'), (2, 'b')]", "list[tuple[int, str]]"),
    ("{'a': 1, 'b': 2}", "dict[str, int]"), ("{}", "dict[str, int]"),
    ("{1: [1.0, 2.0]}", "dict[int, list[float]]"), ("{True: Float32(0.5)}", "dict[bool, Float32]"),
    ("{3, 1, 2}", "set[int]"), ("frozenset(['a'])", "frozenset[str]"),
    ("(1, 'a')", "tuple[int, str]"), ("(1, (2, 'a'))", "tuple[int, tuple[int, str]]"),
    ("()", "tuple[()]"), ("(UInt16(2), [b'x'], {'k': (True, 1.0)})",
                          "tuple[UInt16, list[bytes], dict[str, tuple[bool, float]]]"),
]

# Values that cannot be written: the exception's type.
BAD_VALUES = ["None", "[1, True]", "[Int8(1), 2]", "[b'a', bytearray(b'b')]",
              "{'a': 1, 'b': 'x'}", "2**31", "-2**31 - 1", "object()", "[None]"]

# Bytes that do not hold the type: the exception's type.
BAD_BYTES = [("", "int"), ("0100", "int"), ("02", "bool"), ("02ff", "str"), ("0561", "str"),
             ("8001", "str"), ("0201000000", "list[int]"), ("01000000", "tuple[int, int]"),
             ("ffffffffffffffffff01", "list[int]"), ("0000c0", "Float32"), ("", "bytes"),
             ("00", "list"), ("", "tuple[int, ...]")]

# Bytes left after the value are ignored, as zenoh-python does.
TRAILING = [("0100000000", "int"), ("0161ff", "str"), ("0101000000ff", "list[int]")]

PROBE = """
import json, sys
if sys.argv[1] == "zenoh":
    from zenoh import ZBytes
    from zenoh.ext import *
else:
    from weft import ZBytes
    from weft.ext import *
cases = json.loads(sys.stdin.read())
def outcome(f):
    try:
        v = f()
        return ["ok", v.to_bytes().hex() if isinstance(v, ZBytes) else repr(v), type(v).__name__]
    except Exception as e:
        return ["error", type(e).__name__]
out = {
    "written": [outcome(lambda: z_serialize(eval(v))) for v, _ in cases["good"]],
    "read": [outcome(lambda: z_deserialize(eval(t), ZBytes(bytes.fromhex(h))))
             for t, h in cases["to_read"]],
    "bad_values": [outcome(lambda: z_serialize(eval(v))) for v in cases["bad_values"]],
}
print(json.dumps(out))
"""


def probe(python, impl, cases):
    done = subprocess.run([python, "-c", textwrap.dedent(PROBE), impl],
                          input=json.dumps(cases), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_weft_and_zenoh_python_write_and_read_the_same_bytes():
    zenoh = zenoh_python()
    first = {"good": CASES, "to_read": [], "bad_values": BAD_VALUES}
    theirs = probe(zenoh, "zenoh", first)
    ours = probe(sys.executable, "weft", first)
    for (value, _), a, b in zip(CASES, ours["written"], theirs["written"]):
        assert a == b, f"{value}: weft {a}, zenoh-python {b}"
    for value, a, b in zip(BAD_VALUES, ours["bad_values"], theirs["bad_values"]):
        assert a[0] == "error" and a == b, f"{value}: weft {a}, zenoh-python {b}"
    # Each reads what the other wrote, and the bad bytes alike.
    to_read = [(t, w[1]) for (_, t), w in zip(CASES, theirs["written"])]
    to_read += [(t, h) for h, t in BAD_BYTES + TRAILING]
    second = {"good": [], "to_read": to_read, "bad_values": []}
    theirs = probe(zenoh, "zenoh", second)["read"]
    ours = probe(sys.executable, "weft", second)["read"]
    for (t, h), a, b in zip(to_read, ours, theirs):
        # A ZBytes's repr differs between the two; its bytes are compared instead.
        if t == "ZBytes":
            assert a[0] == b[0] == "ok"
            continue
        assert a == b, f"{t} from {h}: weft {a}, zenoh-python {b}"
    for (t, h), a in zip(to_read, ours):
        if (h, t) in BAD_BYTES:
            assert a[0] == "error", f"{t} from {h}: {a}"
        else:
            assert a[0] == "ok", f"{t} from {h}: {a}"


def test_a_hostile_count_is_refused_before_anything_is_built():
    from weft.ext import ZDeserializeError, z_deserialize

    with pytest.raises(ZDeserializeError):
        z_deserialize(list[int], bytes.fromhex("ffffffffffffff7f"))
    with pytest.raises(ZDeserializeError):
        z_deserialize(list[tuple[()]], bytes.fromhex("ffffffffffffff7f"))
    assert z_deserialize(list[tuple[()]], b"\x03") == [(), (), ()]
