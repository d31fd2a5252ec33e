"""The settings of the advanced publisher and subscriber, and ``Miss``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Optional

from .._weft import CongestionControl, EntityGlobalId, Priority


def _seconds(name: str, value: Any) -> Optional[float]:
    """A period or an age in seconds (a number or a ``timedelta``), or None."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"argument '{name}': must be a number of seconds, not {type(value).__name__}")
    return float(value)


def _count(name: str, value: Any) -> Optional[int]:
    """A count of samples (a non-negative int), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"argument '{name}': must be an int, not {type(value).__name__}")
    if value < 0:
        raise OverflowError("can't convert negative int to unsigned")
    return value


class RepliesConfig:
    """The quality of service of the replies an advanced publisher's cache sends:
    congestion control (``BLOCK`` by default), priority (``DATA``) and express (off)."""

    __slots__ = ("congestion_control", "priority", "express")

    def __init__(
        self,
        *,
        congestion_control: Optional[CongestionControl] = None,
        priority: Optional[Priority] = None,
        express: Optional[bool] = None,
    ) -> None:
        self.congestion_control = (
            CongestionControl.BLOCK if congestion_control is None else congestion_control
        )
        self.priority = Priority.DATA if priority is None else priority
        self.express = bool(express)


class CacheConfig:
    """An advanced publisher's cache: the last ``max_samples`` samples it published (1 by
    default), kept to answer the history and recovery queries of advanced subscribers,
    with the quality of service ``replies_config``."""

    __slots__ = ("max_samples", "replies_config")

    def __init__(
        self, max_samples: Optional[int] = None, *, replies_config: Optional[RepliesConfig] = None
    ) -> None:
        count = _count("max_samples", max_samples)
        self.max_samples = 1 if count is None else count
        self.replies_config = RepliesConfig() if replies_config is None else replies_config


class HistoryConfig:
    """What an advanced subscriber asks the publishers' caches for when it starts:
    at most ``max_samples`` samples per publisher, none older than ``max_age`` seconds;
    with ``detect_late_publishers``, it also asks each publisher that appears later
    (publishers declared with ``publisher_detection``)."""

    __slots__ = ("detect_late_publishers", "max_samples", "max_age")

    def __init__(
        self,
        *,
        detect_late_publishers: Optional[bool] = None,
        max_samples: Optional[int] = None,
        max_age: Optional[float] = None,
    ) -> None:
        self.detect_late_publishers = bool(detect_late_publishers)
        self.max_samples = _count("max_samples", max_samples)
        if isinstance(max_age, timedelta):
            raise TypeError("argument 'max_age': must be real number, not datetime.timedelta")
        self.max_age = _seconds("max_age", max_age)


class MissDetectionConfig:
    """Sequence numbers on an advanced publisher's samples, so that subscribers see
    gaps; with ``heartbeat`` (a period in seconds) the publisher also sends the sequence
    number of its last sample every period, so that a lost last sample is noticed too;
    ``sporadic_heartbeat`` sends it only when it changed since the previous period
    (and with congestion control ``BLOCK``). Set one of the two at most."""

    __slots__ = ("heartbeat", "sporadic")

    def __init__(
        self,
        *,
        heartbeat: Optional[float] = None,
        sporadic_heartbeat: Optional[float] = None,
    ) -> None:
        for name, value in (("heartbeat", heartbeat), ("sporadic_heartbeat", sporadic_heartbeat)):
            if isinstance(value, timedelta):
                raise TypeError(f"argument '{name}': must be real number, not datetime.timedelta")
        period = _seconds("heartbeat", heartbeat)
        sporadic = _seconds("sporadic_heartbeat", sporadic_heartbeat)
        #: (period in seconds, sporadic) or None: the heartbeat asked for.
        self.heartbeat: Optional[tuple[float, bool]] = None
        if sporadic is not None:
            self.heartbeat = (sporadic, True)
        elif period is not None:
            self.heartbeat = (period, False)
        self.sporadic = self.heartbeat is not None and self.heartbeat[1]


class RecoveryConfig:
    """How an advanced subscriber recovers the samples it missed from the publishers'
    caches: by querying each publisher every ``periodic_queries`` (a period: a
    ``timedelta`` or seconds) for what follows the last sample it got, or, with
    ``heartbeat=True``, when a publisher's heartbeat tells of a sample it did not get.
    Exactly one of the two."""

    __slots__ = ("periodic_queries", "heartbeat")

    def __init__(
        self, *, periodic_queries: Optional[Any] = None, heartbeat: Optional[bool] = None
    ) -> None:
        period = _seconds("periodic_queries", periodic_queries)
        if (period is None) == (not heartbeat):
            raise ValueError("invalid parameters")
        self.periodic_queries = period
        self.heartbeat = bool(heartbeat)


class Miss:
    """Samples an advanced subscriber did not get and could not recover: ``nb``
    consecutive samples of the publisher ``source``."""

    __slots__ = ("_source", "_nb")

    def __init__(self, source: EntityGlobalId, nb: int) -> None:
        self._source = source
        self._nb = nb

    @property
    def source(self) -> EntityGlobalId:
        """The publisher the samples came from."""
        return self._source

    @property
    def nb(self) -> int:
        """How many consecutive samples were missed."""
        return self._nb

    def __repr__(self) -> str:
        return f"Miss {{ source: {self._source!r}, nb: {self._nb} }}"
