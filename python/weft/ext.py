"""zenoh.ext's serialisation: ``z_serialize`` and ``z_deserialize``, byte for byte the
format zenoh-python 1.x and the other Zenoh bindings read and write.

The format, in short (see python/README.md):

- fixed-width numbers little-endian: ``Int8`` … ``Int128``, ``UInt8`` … ``UInt128``,
  ``Float32``, ``Float64``; a plain ``int`` is an ``Int32``, a plain ``float`` a
  ``Float64``; ``bool`` one byte, 0 or 1;
- ``str`` (UTF-8), ``bytes``, ``bytearray`` and ``ZBytes``: their length as an unsigned
  LEB128 varint, then the bytes;
- ``list``, ``set``, ``frozenset``: the item count as a varint, then each item; ``dict``:
  the count, then each key and its value; every item (key, value) of one collection has
  the same Python type;
- ``tuple``: its items one after the other, nothing before them.

Reading needs the whole type (``list[int]``, ``dict[str, tuple[int, float]]``), as in
zenoh-python; bytes left over after the value are ignored, as there.

The advanced publisher and subscriber (``declare_advanced_publisher``,
``declare_advanced_subscriber`` and their settings) come from ``weft._advanced``.
"""

from __future__ import annotations

import math
import struct
import typing
from typing import Any, Callable, ClassVar, TypeVar

from ._weft import ZBytes

__all__ = [
    "AdvancedPublisher",
    "AdvancedSubscriber",
    "CacheConfig",
    "HistoryConfig",
    "Miss",
    "MissDetectionConfig",
    "RecoveryConfig",
    "RepliesConfig",
    "SampleMissListener",
    "declare_advanced_publisher",
    "declare_advanced_subscriber",
    "Float32",
    "Float64",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "Int128",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "UInt128",
    "ZDeserializeError",
    "z_deserialize",
    "z_serialize",
]

_T = TypeVar("_T")


class ZDeserializeError(Exception):
    """The bytes do not hold a value of the type asked for."""


class _FixedInt(int):
    """An int serialised on a fixed number of bytes; out of its range it raises
    ``AssertionError`` (what zenoh-python raises)."""

    _size: ClassVar[int]
    _signed: ClassVar[bool]

    def __new__(cls, i: int) -> Any:
        bits = cls._size * 8
        low, high = (-(1 << (bits - 1)), 1 << (bits - 1)) if cls._signed else (0, 1 << bits)
        if not low <= i < high:
            raise AssertionError(f"{i} too big for {cls.__name__}")
        return int.__new__(cls, i)


class Int8(_FixedInt):
    """An int (de)serialised as 8-bit signed."""

    _size, _signed = 1, True


class Int16(_FixedInt):
    """An int (de)serialised as 16-bit signed."""

    _size, _signed = 2, True


class Int32(_FixedInt):
    """An int (de)serialised as 32-bit signed (what a plain ``int`` is)."""

    _size, _signed = 4, True


class Int64(_FixedInt):
    """An int (de)serialised as 64-bit signed."""

    _size, _signed = 8, True


class Int128(_FixedInt):
    """An int (de)serialised as 128-bit signed."""

    _size, _signed = 16, True


class UInt8(_FixedInt):
    """An int (de)serialised as 8-bit unsigned."""

    _size, _signed = 1, False


class UInt16(_FixedInt):
    """An int (de)serialised as 16-bit unsigned."""

    _size, _signed = 2, False


class UInt32(_FixedInt):
    """An int (de)serialised as 32-bit unsigned."""

    _size, _signed = 4, False


class UInt64(_FixedInt):
    """An int (de)serialised as 64-bit unsigned."""

    _size, _signed = 8, False


class UInt128(_FixedInt):
    """An int (de)serialised as 128-bit unsigned."""

    _size, _signed = 16, False


class Float32(float):
    """A float (de)serialised as 32-bit IEEE 754 (beyond its range: infinite)."""


class Float64(float):
    """A float (de)serialised as 64-bit IEEE 754 (what a plain ``float`` is)."""


# ---- writing ----------------------------------------------------------------------


def z_serialize(obj: Any) -> ZBytes:
    """``obj`` in Zenoh's serialisation format; ``TypeError`` for a type it cannot
    hold, ``ValueError`` for a collection whose items differ in type, ``OverflowError``
    for an int out of its width."""
    out = bytearray()
    _write(out, obj)
    return ZBytes(bytes(out))


def _varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _sized(out: bytearray, data: bytes | bytearray) -> None:
    _varint(out, len(data))
    out += data


def _same_type(items: list[Any]) -> None:
    if items and any(type(item) is not type(items[0]) for item in items):
        raise ValueError("all items of serialized collections must have the same type")


def _float32(x: float) -> bytes:
    try:
        return struct.pack("<f", x)
    except OverflowError:
        # As a C cast: beyond the range of a 32-bit float is infinite.
        return struct.pack("<f", math.copysign(math.inf, x))


def _write(out: bytearray, obj: Any) -> None:
    if isinstance(obj, ZBytes):
        _sized(out, obj.to_bytes())
    elif isinstance(obj, bool):
        out.append(1 if obj else 0)
    elif isinstance(obj, _FixedInt):
        out += int(obj).to_bytes(obj._size, "little", signed=obj._signed)
    elif isinstance(obj, int):
        out += obj.to_bytes(4, "little", signed=True)
    elif isinstance(obj, Float32):
        out += _float32(obj)
    elif isinstance(obj, float):
        out += struct.pack("<d", obj)
    elif isinstance(obj, str):
        _sized(out, obj.encode())
    elif isinstance(obj, (bytes, bytearray)):
        _sized(out, obj)
    elif isinstance(obj, (list, set, frozenset)):
        items = list(obj)
        _same_type(items)
        _varint(out, len(items))
        for item in items:
            _write(out, item)
    elif isinstance(obj, dict):
        _same_type(list(obj.keys()))
        _same_type(list(obj.values()))
        _varint(out, len(obj))
        for key, value in obj.items():
            _write(out, key)
            _write(out, value)
    elif isinstance(obj, tuple):
        for item in obj:
            _write(out, item)
    else:
        raise TypeError(f"type {type(obj).__name__} is not supported")


# ---- reading ----------------------------------------------------------------------


class _Reader:
    """The bytes being read and where; every read is checked."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.at:
            raise ZDeserializeError("deserialization error")
        piece = self.data[self.at : self.at + n]
        self.at += n
        return piece

    def varint(self) -> int:
        n = 0
        for shift in range(0, 70, 7):
            (byte,) = self.take(1)
            n |= (byte & 0x7F) << shift
            if byte < 0x80:
                if n >= 1 << 64:
                    break
                return n
        raise ZDeserializeError("deserialization error")

    def sized(self) -> bytes:
        return self.take(self.varint())


def z_deserialize(tp: type[_T], zbytes: ZBytes | bytes | bytearray) -> _T:
    """The value of type ``tp`` (``int``, ``UInt16``, ``str``, ``list[float]``,
    ``dict[str, tuple[int, bool]]``…) that ``zbytes`` holds; ``ZDeserializeError`` if
    it holds none, ``TypeError`` or ``ValueError`` for a type that cannot be read."""
    data = zbytes.to_bytes() if isinstance(zbytes, ZBytes) else bytes(zbytes)
    read = _reader_of(tp)
    value: _T = read(_Reader(data))
    return value


_Read = Callable[[_Reader], Any]


def _int_reader(cls: type[_FixedInt]) -> _Read:
    return lambda r: cls(int.from_bytes(r.take(cls._size), "little", signed=cls._signed))


def _bool(r: _Reader) -> bool:
    (byte,) = r.take(1)
    if byte > 1:
        raise ZDeserializeError("deserialization error")
    return byte == 1


def _str(r: _Reader) -> str:
    try:
        return r.sized().decode()
    except UnicodeDecodeError:
        raise ZDeserializeError("deserialization error") from None


_SIMPLE: dict[Any, _Read] = {
    bool: _bool,
    int: lambda r: int.from_bytes(r.take(4), "little", signed=True),
    float: lambda r: struct.unpack("<d", r.take(8))[0],
    Float64: lambda r: Float64(struct.unpack("<d", r.take(8))[0]),
    Float32: lambda r: Float32(struct.unpack("<f", r.take(4))[0]),
    str: _str,
    bytes: lambda r: r.sized(),
    bytearray: lambda r: bytearray(r.sized()),
    ZBytes: lambda r: ZBytes(r.sized()),
}
# The bytes a value of each fixed-width type takes (the others take at least one).
_FIXED_SIZE: dict[Any, int] = {int: 4, float: 8, Float64: 8, Float32: 4}
for _cls in (Int8, Int16, Int32, Int64, Int128, UInt8, UInt16, UInt32, UInt64, UInt128):
    _SIMPLE[_cls] = _int_reader(_cls)
    _FIXED_SIZE[_cls] = _cls._size


def _reader_of(tp: Any) -> _Read:
    """How to read a value of type ``tp``, worked out once for the whole value."""
    return _plan(tp)[0]


# Most items of a collection whose items take no bytes at all (empty tuples).
_MOST_EMPTY_ITEMS = 1 << 20


def _plan(tp: Any) -> tuple[_Read, int]:
    """How to read a value of type ``tp``, and the fewest bytes such a value takes (a
    collection's count is checked against the bytes left before anything is built)."""
    simple = _SIMPLE.get(tp)
    if simple is not None:
        return simple, _FIXED_SIZE.get(tp, 1)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp in (list, set, frozenset, dict, tuple):
        raise ValueError("collection types must be specialized with their generic parameter(s)")
    if origin in (list, set, frozenset) and len(args) == 1:
        item, size = _plan(args[0])
        return _collection(lambda r, n: origin(item(r) for _ in range(n)), size), 1
    if origin is dict and len(args) == 2:
        (key, key_size), (value, value_size) = _plan(args[0]), _plan(args[1])
        pairs = lambda r, n: {key(r): value(r) for _ in range(n)}  # noqa: E731
        return _collection(pairs, key_size + value_size), 1
    if origin is tuple:
        if args in ((), ((),)):  # tuple[()]: the empty tuple
            return (lambda r: ()), 0
        if len(args) == 2 and args[1] is Ellipsis:
            raise TypeError("any size tuples are not supported")
        plans = [_plan(a) for a in args]
        items = [read for read, _ in plans]
        return (lambda r: tuple(item(r) for item in items)), sum(size for _, size in plans)
    raise TypeError(f"type {tp!r} is not supported")


def _collection(build: Callable[[_Reader, int], Any], item_size: int) -> _Read:
    """Reads a count, checks it against the bytes left, then builds the collection."""

    def read(r: _Reader) -> Any:
        n = r.varint()
        most = (len(r.data) - r.at) // item_size if item_size else _MOST_EMPTY_ITEMS
        if n > most:
            raise ZDeserializeError("deserialization error")
        return build(r, n)

    return read


from ._advanced import (  # noqa: E402 (after the serialisation, which it does not use)
    AdvancedPublisher,
    AdvancedSubscriber,
    CacheConfig,
    HistoryConfig,
    Miss,
    MissDetectionConfig,
    RecoveryConfig,
    RepliesConfig,
    SampleMissListener,
    declare_advanced_publisher,
    declare_advanced_subscriber,
)
