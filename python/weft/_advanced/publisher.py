"""The advanced publisher: a publisher with a cache of its last samples, sequence
numbers on its samples, heartbeats, and a liveliness token for detection."""

from __future__ import annotations

import collections
import logging
import threading
from typing import Any, Deque, NamedTuple, Optional

from .._weft import (
    CongestionControl,
    Encoding,
    EntityGlobalId,
    KeyExpr,
    LivelinessToken,
    Priority,
    Publisher,
    Query,
    Queryable,
    Reliability,
    SampleKind,
    Session,
    SourceInfo,
    Timestamp,
    ZError,
)
from . import keys
from .config import CacheConfig, MissDetectionConfig

_log = logging.getLogger("weft")


class _Cached(NamedTuple):
    """A sample as the cache keeps it."""

    kind: SampleKind
    payload: bytes
    encoding: Optional[Any]
    attachment: Optional[Any]
    timestamp: Timestamp
    source_info: Optional[SourceInfo]


class _Cache:
    """The last samples published, answering queries on the publisher's ``@adv`` key."""

    def __init__(self, key: str, config: CacheConfig) -> None:
        self.key = key
        self.samples: Deque[_Cached] = collections.deque(maxlen=config.max_samples)
        self.replies = config.replies_config
        self.lock = threading.Lock()

    def add(self, sample: _Cached) -> None:
        with self.lock:
            self.samples.append(sample)

    def answer(self, query: Query) -> None:
        """Replies with the samples the query's ``_sn``, ``_time`` and ``_max`` select,
        oldest first."""
        with query:
            params = query.parameters
            sns = keys.parse_sn_range(params.get("_sn"))
            times = keys.parse_time_range(params.get("_time"))
            max_text = params.get("_max")
            most = int(max_text) if max_text is not None and max_text.isdigit() else None
            with self.lock:
                cached = list(self.samples)
            chosen = []
            for s in cached:
                if sns is not None and (
                    s.source_info is None or not keys.in_sn_range(s.source_info.source_sn, sns)
                ):
                    continue
                if times is not None and not keys.in_time_range(s.timestamp.get_time(), times):
                    continue
                chosen.append(s)
            if most is not None:
                chosen = chosen[len(chosen) - most :] if most else []
            for s in chosen:
                try:
                    if s.kind == SampleKind.DELETE:
                        query.reply_del(self.key)
                    else:
                        query.reply(
                            self.key,
                            s.payload,
                            encoding=s.encoding,
                            attachment=s.attachment,
                            timestamp=s.timestamp,
                            source_info=s.source_info,
                            congestion_control=self.replies.congestion_control,
                            priority=self.replies.priority,
                            express=self.replies.express,
                        )
                except ZError as e:
                    _log.warning("advanced publisher cache: cannot reply: %s", e)


class _Heartbeat:
    """Sends the last sequence number every period (only when it changed, if
    sporadic) on the publisher's ``@adv`` key."""

    def __init__(self, publisher: Publisher, period: float, sporadic: bool, counter: "_Counter") -> None:
        self.publisher = publisher
        self.period = period
        self.sporadic = sporadic
        self.counter = counter
        self.stop = threading.Event()
        threading.Thread(target=self._run, name="weft-adv-heartbeat", daemon=True).start()

    def _run(self) -> None:
        last = 0
        while not self.stop.wait(self.period):
            sent = self.counter.sent()
            if sent == 0 or (self.sporadic and sent == last):
                continue
            try:
                self.publisher.put(keys.heartbeat_payload(keys.sn_add(sent, -1)))
            except ZError:
                return  # undeclared, or the session closed
            last = sent


class _Counter:
    """The next sequence number (a count of the samples sent)."""

    def __init__(self) -> None:
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            sn = self._next
            self._next = keys.sn_add(sn, 1)
            return sn

    def sent(self) -> int:
        with self._lock:
            return self._next


class AdvancedPublisher:
    """A publisher that keeps its last samples for late subscribers (``cache``), numbers
    them so that subscribers notice what they miss (``sample_miss_detection``), and can
    be detected by advanced subscribers (``publisher_detection``). Made by
    ``declare_advanced_publisher``; undeclared by ``undeclare``, when its session closes,
    or when dropped."""

    def __init__(
        self,
        session: Session,
        key_expr: Any,
        *,
        encoding: Any = None,
        congestion_control: Optional[CongestionControl] = None,
        priority: Optional[Priority] = None,
        express: Optional[bool] = None,
        reliability: Optional[Reliability] = None,
        cache: Optional[CacheConfig] = None,
        sample_miss_detection: Optional[MissDetectionConfig] = None,
        publisher_detection: Optional[bool] = None,
    ) -> None:
        if cache is not None and cache.max_samples == 0:
            raise ZError("max_samples must not be zero")
        self._session = session
        self._publisher = session.declare_publisher(
            key_expr,
            encoding=encoding,
            congestion_control=congestion_control,
            priority=priority,
            express=express,
            reliability=reliability,
        )
        self._queryable: Optional[Queryable] = None
        self._token: Optional[LivelinessToken] = None
        self._heartbeat: Optional[_Heartbeat] = None
        self._heartbeat_publisher: Optional[Publisher] = None
        self._closed = False
        try:
            self._setup(cache, sample_miss_detection, bool(publisher_detection))
        except BaseException:
            self.undeclare()
            raise

    def _setup(
        self,
        cache: Optional[CacheConfig],
        miss: Optional[MissDetectionConfig],
        detection: bool,
    ) -> None:
        pid = self._publisher.id
        key = str(self._publisher.key_expr)
        self._counter = _Counter() if miss is not None else None
        adv_key = f"{key}/{keys.publisher_suffix(str(pid.zid), pid.eid if miss is not None else None)}"
        self._cache = _Cache(key, cache) if cache is not None else None
        if self._cache is not None:
            self._queryable = self._session.declare_queryable(adv_key, self._cache.answer)
        if detection:
            self._token = self._session.liveliness().declare_token(adv_key)
        if miss is not None and miss.heartbeat is not None and self._counter is not None:
            period, sporadic = miss.heartbeat
            self._heartbeat_publisher = self._session.declare_publisher(
                adv_key,
                congestion_control=CongestionControl.BLOCK if sporadic else None,
            )
            self._heartbeat = _Heartbeat(self._heartbeat_publisher, period, sporadic, self._counter)

    def __enter__(self) -> "AdvancedPublisher":
        return self

    def __exit__(self, *_args: object) -> None:
        self.undeclare()

    def __del__(self) -> None:
        try:
            self.undeclare()
        except Exception:
            pass

    @property
    def id(self) -> EntityGlobalId:
        """The publisher's id (what the source info of its samples names)."""
        return self._publisher.id

    @property
    def key_expr(self) -> KeyExpr:
        """The key it publishes on."""
        return self._publisher.key_expr

    @property
    def encoding(self) -> Encoding:
        """The encoding of its samples, unless a put says otherwise."""
        return self._publisher.encoding

    @property
    def congestion_control(self) -> CongestionControl:
        """What a put does when the network is congested."""
        return self._publisher.congestion_control

    @property
    def priority(self) -> Priority:
        """The priority of its samples."""
        return self._publisher.priority

    def _stamp(self, timestamp: Optional[Timestamp]) -> tuple[Timestamp, Optional[SourceInfo]]:
        ts = timestamp if timestamp is not None else self._session.new_timestamp()
        info = None
        if self._counter is not None:
            info = SourceInfo(self._publisher.id, self._counter.take())
        return ts, info

    def put(
        self,
        payload: Any,
        *,
        encoding: Any = None,
        attachment: Any = None,
        timestamp: Optional[Timestamp] = None,
    ) -> None:
        """Publishes `payload` (numbered, timestamped and cached as configured)."""
        if self._closed:
            raise ZError("Undeclared publisher")
        ts, info = self._stamp(timestamp)
        if self._cache is not None:
            data = payload.encode() if isinstance(payload, str) else bytes(payload)
            self._cache.add(
                _Cached(SampleKind.PUT, data, encoding or self._publisher.encoding, attachment, ts, info)
            )
        self._publisher.put(
            payload, encoding=encoding, attachment=attachment, timestamp=ts, source_info=info
        )

    def delete(self, *, attachment: Any = None, timestamp: Optional[Timestamp] = None) -> None:
        """Publishes the deletion of the key (numbered, timestamped and cached as
        configured)."""
        if self._closed:
            raise ZError("Undeclared publisher")
        ts, info = self._stamp(timestamp)
        if self._cache is not None:
            self._cache.add(_Cached(SampleKind.DELETE, b"", None, attachment, ts, info))
        self._publisher.delete(attachment=attachment, timestamp=ts, source_info=info)

    def undeclare(self) -> None:
        """Undeclares the publisher, its cache, heartbeats and liveliness token."""
        if self._closed:
            raise ZError("Undeclared publisher")
        self._closed = True
        if self._heartbeat is not None:
            self._heartbeat.stop.set()
        for entity in (self._token, self._queryable, self._heartbeat_publisher, self._publisher):
            if entity is not None:
                try:
                    entity.undeclare()
                except ZError:
                    pass  # the session is closed already


def declare_advanced_publisher(
    session: Session,
    key_expr: Any,
    *,
    encoding: Any = None,
    congestion_control: Optional[CongestionControl] = None,
    priority: Optional[Priority] = None,
    express: Optional[bool] = None,
    reliability: Optional[Reliability] = None,
    cache: Optional[CacheConfig] = None,
    sample_miss_detection: Optional[MissDetectionConfig] = None,
    publisher_detection: Optional[bool] = None,
) -> AdvancedPublisher:
    """Declares an advanced publisher on `key_expr` (a concrete key)."""
    return AdvancedPublisher(
        session,
        key_expr,
        encoding=encoding,
        congestion_control=congestion_control,
        priority=priority,
        express=express,
        reliability=reliability,
        cache=cache,
        sample_miss_detection=sample_miss_detection,
        publisher_detection=publisher_detection,
    )
