"""Types of weft.ext (zenoh.ext's serialisation)."""

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any, Literal, TypeVar

from . import (
    CongestionControl,
    Encoding,
    EntityGlobalId,
    KeyExpr,
    Priority,
    Reliability,
    Sample,
    Session,
    Subscriber,
    Timestamp,
    ZBytes,
    handlers,
)

_T = TypeVar("_T")
_IntoKeyExpr = KeyExpr | str
_IntoEncoding = Encoding | str
_IntoZBytes = ZBytes | bytes | bytearray | str
_Handler = (
    handlers.DefaultHandler
    | handlers.FifoChannel
    | handlers.RingChannel
    | handlers.Callback
    | Callable[[Any], Any]
    | tuple[Callable[[Any], Any], Any]
    | None
)

class ZDeserializeError(Exception): ...

class Int8(int):
    def __new__(cls, i: int) -> Int8: ...

class Int16(int):
    def __new__(cls, i: int) -> Int16: ...

class Int32(int):
    def __new__(cls, i: int) -> Int32: ...

class Int64(int):
    def __new__(cls, i: int) -> Int64: ...

class Int128(int):
    def __new__(cls, i: int) -> Int128: ...

class UInt8(int):
    def __new__(cls, i: int) -> UInt8: ...

class UInt16(int):
    def __new__(cls, i: int) -> UInt16: ...

class UInt32(int):
    def __new__(cls, i: int) -> UInt32: ...

class UInt64(int):
    def __new__(cls, i: int) -> UInt64: ...

class UInt128(int):
    def __new__(cls, i: int) -> UInt128: ...

class Float32(float): ...
class Float64(float): ...

def z_serialize(obj: Any) -> ZBytes: ...
def z_deserialize(tp: type[_T], zbytes: ZBytes | bytes | bytearray) -> _T: ...

# zenoh.ext's advanced publisher and subscriber.

class RepliesConfig:
    """The quality of service of an advanced publisher cache's replies."""

    congestion_control: CongestionControl
    priority: Priority
    express: bool
    def __init__(
        self,
        *,
        congestion_control: CongestionControl | None = None,
        priority: Priority | None = None,
        express: bool | None = None,
    ) -> None: ...

class CacheConfig:
    """An advanced publisher's cache: its last `max_samples` samples (1 by default)."""

    max_samples: int
    replies_config: RepliesConfig
    def __init__(
        self, max_samples: int | None = None, *, replies_config: RepliesConfig | None = None
    ) -> None: ...

class HistoryConfig:
    """What an advanced subscriber asks the publishers' caches for."""

    detect_late_publishers: bool
    max_samples: int | None
    max_age: float | None
    def __init__(
        self,
        *,
        detect_late_publishers: bool | None = None,
        max_samples: int | None = None,
        max_age: float | int | None = None,
    ) -> None: ...

class MissDetectionConfig:
    """Sequence numbers on an advanced publisher's samples, and its heartbeat."""

    heartbeat: tuple[float, bool] | None
    sporadic: bool
    def __init__(
        self,
        *,
        heartbeat: float | int | None = None,
        sporadic_heartbeat: float | int | None = None,
    ) -> None: ...

class RecoveryConfig:
    """How an advanced subscriber recovers missed samples: periodic queries (a
    `timedelta` or seconds) or heartbeats, exactly one."""

    periodic_queries: float | None
    heartbeat: bool
    def __init__(
        self,
        *,
        periodic_queries: timedelta | float | int | None = None,
        heartbeat: Literal[True] | None = None,
    ) -> None: ...

class Miss:
    """`nb` consecutive samples of the publisher `source` that were missed."""

    def __init__(self, source: EntityGlobalId, nb: int) -> None: ...
    @property
    def source(self) -> EntityGlobalId: ...
    @property
    def nb(self) -> int: ...

class AdvancedPublisher:
    """A publisher with a cache, sequence numbers, heartbeats and detection."""

    def __enter__(self) -> AdvancedPublisher: ...
    def __exit__(self, *args: object) -> None: ...
    @property
    def id(self) -> EntityGlobalId: ...
    @property
    def key_expr(self) -> KeyExpr: ...
    @property
    def encoding(self) -> Encoding: ...
    @property
    def congestion_control(self) -> CongestionControl: ...
    @property
    def priority(self) -> Priority: ...
    def put(
        self,
        payload: _IntoZBytes,
        *,
        encoding: _IntoEncoding | None = None,
        attachment: _IntoZBytes | None = None,
        timestamp: Timestamp | None = None,
    ) -> None: ...
    def delete(
        self, *, attachment: _IntoZBytes | None = None, timestamp: Timestamp | None = None
    ) -> None: ...
    def undeclare(self) -> None: ...

class SampleMissListener:
    """Told of the samples an advanced subscriber missed."""

    @property
    def handler(self) -> Any: ...
    def undeclare(self) -> None: ...
    def recv(self) -> Miss: ...
    def try_recv(self) -> Miss | None: ...
    def __iter__(self) -> Iterator[Miss]: ...

class AdvancedSubscriber:
    """A subscriber with history, ordering, miss detection and recovery."""

    def __enter__(self) -> AdvancedSubscriber: ...
    def __exit__(self, *args: object) -> None: ...
    @property
    def id(self) -> EntityGlobalId: ...
    @property
    def key_expr(self) -> KeyExpr: ...
    @property
    def handler(self) -> Any: ...
    def sample_miss_listener(self, handler: _Handler = None) -> SampleMissListener: ...
    def detect_publishers(
        self, handler: _Handler = None, *, history: bool | None = None
    ) -> Subscriber: ...
    def undeclare(self) -> None: ...
    def recv(self) -> Sample: ...
    def try_recv(self) -> Sample | None: ...
    def __iter__(self) -> Iterator[Sample]: ...

def declare_advanced_publisher(
    session: Session,
    key_expr: _IntoKeyExpr,
    *,
    encoding: _IntoEncoding | None = None,
    congestion_control: CongestionControl | None = None,
    priority: Priority | None = None,
    express: bool | None = None,
    reliability: Reliability | None = None,
    cache: CacheConfig | None = None,
    sample_miss_detection: MissDetectionConfig | None = None,
    publisher_detection: bool | None = None,
) -> AdvancedPublisher: ...
def declare_advanced_subscriber(
    session: Session,
    key_expr: _IntoKeyExpr,
    handler: _Handler = None,
    *,
    history: HistoryConfig | None = None,
    recovery: RecoveryConfig | None = None,
    subscriber_detection: bool | None = None,
) -> AdvancedSubscriber: ...
