"""What advanced publishers and subscribers put on the wire besides samples: their key
expressions under ``@adv``, sequence numbers, and the parameters of cache queries
(see docs/protocol-notes.md)."""

from __future__ import annotations

import re
import struct
from datetime import datetime, timedelta, timezone
from typing import Optional

ADV = "@adv"
#: The chunk that stands for "no metadata" at the end of an ``@adv`` key.
NO_META = "_"
#: The entity chunk of a publisher sequenced by timestamps only.
UHLC = "uhlc"

SN_MASK = 0xFFFFFFFF
_HALF = 0x7FFFFFFF


def publisher_suffix(zid: str, eid: Optional[int]) -> str:
    """``@adv/pub/<zid>/<eid or uhlc>/_``: where a publisher's cache answers, its
    heartbeats go and its liveliness token is."""
    return f"{ADV}/pub/{zid}/{UHLC if eid is None else eid}/{NO_META}"


def subscriber_suffix(zid: str, eid: int) -> str:
    """``@adv/sub/<zid>/<eid>/_``: a subscriber's liveliness token."""
    return f"{ADV}/sub/{zid}/{eid}/{NO_META}"


def parse_adv(key: str) -> Optional[tuple[str, str, str]]:
    """(entity, zid, eid) of ``<key>/@adv/<entity>/<zid>/<eid>/<meta>``, or None."""
    chunks = key.split("/")
    try:
        at = chunks.index(ADV)
    except ValueError:
        return None
    if at == 0 or len(chunks) < at + 5:
        return None
    return chunks[at + 1], chunks[at + 2], chunks[at + 3]


_ZID = re.compile(r"^[0-9a-f]{1,32}$")


def valid_zid(text: str) -> bool:
    """Whether `text` is a Zenoh id as keys write it (1 to 32 hexadecimal digits)."""
    return bool(_ZID.match(text)) and int(text, 16) != 0


def parse_eid(text: str) -> Optional[int]:
    """An entity id (decimal u32), or None."""
    if not text.isdigit():
        return None
    value = int(text)
    return value if value <= SN_MASK else None


def sn_after(a: int, b: int) -> bool:
    """Whether sequence number `a` comes after `b` (modulo 2**32)."""
    d = (a - b) & SN_MASK
    return d != 0 and d <= _HALF


def sn_add(a: int, n: int) -> int:
    """`a` + `n` modulo 2**32."""
    return (a + n) & SN_MASK


def sn_range(start: Optional[int], end: Optional[int]) -> str:
    """The ``_sn`` parameter asking for `start`..`end` (either open)."""
    return f"_sn={'' if start is None else start}..{'' if end is None else end}"


def parse_sn_range(text: Optional[str]) -> Optional[tuple[Optional[int], Optional[int]]]:
    """``_sn``'s value: (start, end), each None if open; None if every sample is asked
    for (no ``_sn``, or both ends open). ``a`` alone means ``a..a``."""
    if text is None:
        return None
    first, sep, rest = text.partition("..")

    def bound(t: str) -> Optional[int]:
        return int(t) if t.isdigit() and int(t) <= SN_MASK else None

    start = bound(first)
    end = bound(rest) if sep else start
    if start is None and end is None:
        return None
    return start, end


def in_sn_range(sn: int, bounds: tuple[Optional[int], Optional[int]]) -> bool:
    """Whether `sn` is within (start, end), inclusive, modulo 2**32."""
    start, end = bounds
    if start is not None and sn_after(start, sn):
        return False
    if end is not None and sn_after(sn, end):
        return False
    return True


def heartbeat_payload(sn: int) -> bytes:
    """A heartbeat: the last sequence number sent, as zenoh.ext serialises a u32."""
    return struct.pack("<I", sn)


def heartbeat_sn(payload: bytes) -> Optional[int]:
    """The sequence number in a heartbeat, or None."""
    if len(payload) < 4:
        return None
    return int(struct.unpack_from("<I", payload)[0])


def _number(x: float) -> str:
    """A number of seconds as Zenoh writes it (no trailing ``.0``)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def max_age_range(max_age: float) -> str:
    """The ``_time`` parameter asking for samples at most `max_age` seconds old."""
    return f"_time=[now(-{_number(max_age)}s)..]"


_UNITS = {"u": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def _duration(text: str) -> float:
    for unit in ("ms", "u", "s", "m", "h", "d", "w"):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * _UNITS[unit]
    return float(text)


def _instant(text: str, now: datetime) -> Optional[datetime]:
    if text == "":
        return None
    if text.startswith("now(") and text.endswith(")"):
        inner = text[4:-1]
        offset = 0.0 if inner == "" else _duration(inner) if inner[0] != "-" else -_duration(inner[1:])
        return now + timedelta(seconds=offset)
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def parse_time_range(text: Optional[str]) -> Optional[tuple[Optional[datetime], bool, Optional[datetime], bool]]:
    """``_time``'s value: (start, inclusive, end, inclusive), None for an open end; None
    if absent or not understood (then no sample is left out for its time)."""
    if text is None or len(text) < 4 or text[0] not in "[]" or text[-1] not in "[]":
        return None
    now = datetime.now(timezone.utc)
    body = text[1:-1]
    try:
        if ".." in body:
            first, last = body.split("..", 1)
            start, end = _instant(first, now), _instant(last, now)
        elif ";" in body:
            first, length = body.split(";", 1)
            start = _instant(first, now)
            if start is None:
                return None
            end = start + timedelta(seconds=_duration(length))
        else:
            return None
    except ValueError:
        return None
    return start, text[0] == "[", end, text[-1] == "]"


def in_time_range(
    t: datetime, bounds: tuple[Optional[datetime], bool, Optional[datetime], bool]
) -> bool:
    """Whether `t` is within the range."""
    start, start_in, end, end_in = bounds
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    if start is not None and (t < start or (t == start and not start_in)):
        return False
    if end is not None and (t > end or (t == end and not end_in)):
        return False
    return True
