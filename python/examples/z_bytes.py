"""Serialises values with zenoh.ext's format, prints their bytes, and reads them back
(no network: what a program puts in a payload)."""

from typing import TypeVar

from common import parse, say, zenoh

_T = TypeVar("_T")
parse("serialise and deserialise values")
ext = zenoh.ext


def round_trip(value: _T, kind: type[_T]) -> None:
    """Writes `value`, reads it back as `kind`, and prints both ends."""
    payload = ext.z_serialize(value)
    back = ext.z_deserialize(kind, payload)
    say(f"{value!r} -> {payload.to_bytes().hex()} -> {back!r}")
    assert back == value


round_trip(ext.UInt32(1234), ext.UInt32)
round_trip(-5, int)
round_trip(3.25, float)
round_trip("text", str)
round_trip(b"\x00\x01", bytes)
round_trip([1, 2, 3], list[int])
round_trip({"speed": 1.5, "heading": 90.0}, dict[str, float])
round_trip((ext.Int8(-1), "pose", [0.5, 0.25]), tuple[ext.Int8, str, list[float]])
