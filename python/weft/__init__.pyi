"""Types of weft's Python API (the zenoh-python 1.x names)."""

from collections.abc import Callable
from datetime import datetime
from os import PathLike
from typing import Any, Generic, TypeVar, final

from typing_extensions import Buffer

from . import ext as ext
from . import handlers as handlers
from .handlers import Handler as Handler

_T = TypeVar("_T")
_Self = TypeVar("_Self")
_IntoKeyExpr = KeyExpr | str
_IntoEncoding = Encoding | str
# Any object with the buffer protocol (`bytes`, `bytearray`, `memoryview`, `ZBytes`, …).
_IntoZBytes = Buffer | str
_Handler = (
    handlers.DefaultHandler
    | handlers.FifoChannel
    | handlers.RingChannel
    | handlers.Callback
    | Callable[[Any], Any]
    | tuple[Callable[[Any], Any], Any]
    | None
)

class ZError(Exception):
    """Raised when a weft operation fails."""

@final
class CancellationToken:
    def __new__(cls) -> CancellationToken: ...
    def cancel(self) -> None: ...
    @property
    def is_cancelled(self) -> bool: ...

@final
class Config:
    def __new__(cls) -> Config: ...
    @staticmethod
    def from_file(path: str | PathLike[str]) -> Config: ...
    @staticmethod
    def from_env() -> Config: ...
    @staticmethod
    def from_json5(json: str) -> Config: ...
    def insert_json5(self, key: str, value: str) -> None: ...
    def get_json(self, key: str) -> str: ...

@final
class Priority:
    REAL_TIME: Priority
    INTERACTIVE_HIGH: Priority
    INTERACTIVE_LOW: Priority
    DATA_HIGH: Priority
    DATA: Priority
    DATA_LOW: Priority
    BACKGROUND: Priority
    DEFAULT: Priority
    MIN: Priority
    MAX: Priority
    def __int__(self) -> int: ...

@final
class CongestionControl:
    DROP: CongestionControl
    BLOCK: CongestionControl
    BLOCK_FIRST: CongestionControl
    DEFAULT: CongestionControl
    def __int__(self) -> int: ...

@final
class Reliability:
    BEST_EFFORT: Reliability
    RELIABLE: Reliability
    DEFAULT: Reliability
    def __int__(self) -> int: ...

@final
class SampleKind:
    PUT: SampleKind
    DELETE: SampleKind
    def __int__(self) -> int: ...

@final
class QueryTarget:
    BEST_MATCHING: QueryTarget
    ALL: QueryTarget
    ALL_COMPLETE: QueryTarget
    DEFAULT: QueryTarget
    def __int__(self) -> int: ...

@final
class ConsolidationMode:
    AUTO: ConsolidationMode
    NONE: ConsolidationMode
    MONOTONIC: ConsolidationMode
    LATEST: ConsolidationMode
    DEFAULT: ConsolidationMode
    def __int__(self) -> int: ...

@final
class Locality:
    SESSION_LOCAL: Locality
    REMOTE: Locality
    ANY: Locality
    DEFAULT: Locality
    def __int__(self) -> int: ...

@final
class ReplyKeyExpr:
    ANY: ReplyKeyExpr
    MATCHING_QUERY: ReplyKeyExpr
    DEFAULT: ReplyKeyExpr
    def __int__(self) -> int: ...

@final
class ZBytes:
    def __new__(cls, bytes: _IntoZBytes | None = None) -> ZBytes: ...
    # The buffer protocol (`memoryview(z)`, read-only, in place), on every Python version;
    # the method itself is there from Python 3.12.
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def to_bytes(self) -> bytes: ...
    def to_string(self) -> str: ...
    def __bytes__(self) -> bytes: ...
    def __len__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Encoding:
    def __new__(cls, encoding: str | None = None) -> Encoding: ...
    def with_schema(self, schema: str) -> Encoding: ...
    def __hash__(self) -> int: ...
    ZENOH_BYTES: Encoding
    ZENOH_STRING: Encoding
    ZENOH_SERIALIZED: Encoding
    APPLICATION_OCTET_STREAM: Encoding
    TEXT_PLAIN: Encoding
    APPLICATION_JSON: Encoding
    TEXT_JSON: Encoding
    APPLICATION_CDR: Encoding
    APPLICATION_CBOR: Encoding
    APPLICATION_YAML: Encoding
    TEXT_YAML: Encoding
    TEXT_JSON5: Encoding
    APPLICATION_PYTHON_SERIALIZED_OBJECT: Encoding
    APPLICATION_PROTOBUF: Encoding
    APPLICATION_JAVA_SERIALIZED_OBJECT: Encoding
    APPLICATION_OPENMETRICS_TEXT: Encoding
    IMAGE_PNG: Encoding
    IMAGE_JPEG: Encoding
    IMAGE_GIF: Encoding
    IMAGE_BMP: Encoding
    IMAGE_WEBP: Encoding
    APPLICATION_XML: Encoding
    APPLICATION_X_WWW_FORM_URLENCODED: Encoding
    TEXT_HTML: Encoding
    TEXT_XML: Encoding
    TEXT_CSS: Encoding
    TEXT_JAVASCRIPT: Encoding
    TEXT_MARKDOWN: Encoding
    TEXT_CSV: Encoding
    APPLICATION_SQL: Encoding
    APPLICATION_COAP_PAYLOAD: Encoding
    APPLICATION_JSON_PATCH_JSON: Encoding
    APPLICATION_JSON_SEQ: Encoding
    APPLICATION_JSONPATH: Encoding
    APPLICATION_JWT: Encoding
    APPLICATION_MP4: Encoding
    APPLICATION_SOAP_XML: Encoding
    APPLICATION_YANG: Encoding
    AUDIO_AAC: Encoding
    AUDIO_FLAC: Encoding
    AUDIO_MP4: Encoding
    AUDIO_OGG: Encoding
    AUDIO_VORBIS: Encoding
    VIDEO_H261: Encoding
    VIDEO_H263: Encoding
    VIDEO_H264: Encoding
    VIDEO_H265: Encoding
    VIDEO_H266: Encoding
    VIDEO_MP4: Encoding
    VIDEO_OGG: Encoding
    VIDEO_RAW: Encoding
    VIDEO_VP8: Encoding
    VIDEO_VP9: Encoding

@final
class KeyExpr:
    def __new__(cls, key_expr: str) -> KeyExpr: ...
    @staticmethod
    def autocanonize(key_expr: str) -> KeyExpr: ...
    def intersects(self, other: _IntoKeyExpr) -> bool: ...
    def includes(self, other: _IntoKeyExpr) -> bool: ...
    def join(self, other: str) -> KeyExpr: ...
    def concat(self, other: str) -> KeyExpr: ...
    def __hash__(self) -> int: ...

@final
class ZenohId:
    def __hash__(self) -> int: ...

@final
class EntityGlobalId:
    @property
    def zid(self) -> ZenohId: ...
    @property
    def eid(self) -> int: ...
    def __hash__(self) -> int: ...

@final
class SourceInfo:
    def __new__(cls, source_id: EntityGlobalId, source_sn: int) -> SourceInfo: ...
    @property
    def source_id(self) -> EntityGlobalId: ...
    @property
    def source_sn(self) -> int: ...
    def __hash__(self) -> int: ...

@final
class Timestamp:
    def get_time(self) -> datetime: ...
    def get_id(self) -> ZenohId: ...
    def to_string_rfc3339_lossy(self) -> str: ...
    def __lt__(self, other: Timestamp) -> bool: ...
    def __le__(self, other: Timestamp) -> bool: ...
    def __gt__(self, other: Timestamp) -> bool: ...
    def __ge__(self, other: Timestamp) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Sample:
    @property
    def key_expr(self) -> KeyExpr: ...
    @property
    def payload(self) -> ZBytes: ...
    @property
    def kind(self) -> SampleKind: ...
    @property
    def encoding(self) -> Encoding: ...
    @property
    def timestamp(self) -> Timestamp | None: ...
    @property
    def attachment(self) -> ZBytes | None: ...
    @property
    def priority(self) -> Priority: ...
    @property
    def congestion_control(self) -> CongestionControl: ...
    @property
    def express(self) -> bool: ...
    @property
    def source_info(self) -> SourceInfo | None: ...

@final
class Parameters:
    def __new__(cls, text: str = "") -> Parameters: ...
    def is_empty(self) -> bool: ...
    def get(self, key: str, default: str | None = None) -> str | None: ...
    def values(self, key: str) -> list[str]: ...
    def __contains__(self, key: str) -> bool: ...
    def __getitem__(self, key: str) -> str | None: ...
    def __bool__(self) -> bool: ...

@final
class Selector:
    def __new__(cls, text: str) -> Selector: ...
    @property
    def key_expr(self) -> KeyExpr: ...
    @property
    def parameters(self) -> Parameters: ...

@final
class Query:
    def __enter__(self) -> Query: ...
    def __exit__(self, *args: object) -> None: ...
    @property
    def key_expr(self) -> KeyExpr: ...
    @property
    def selector(self) -> Selector: ...
    @property
    def parameters(self) -> Parameters: ...
    @property
    def payload(self) -> ZBytes | None: ...
    @property
    def encoding(self) -> Encoding | None: ...
    @property
    def attachment(self) -> ZBytes | None: ...
    @property
    def source_info(self) -> SourceInfo | None: ...
    def accepts_replies(self) -> ReplyKeyExpr: ...
    def reply(
        self,
        key_expr: _IntoKeyExpr,
        payload: _IntoZBytes,
        *,
        encoding: _IntoEncoding | None = None,
        congestion_control: CongestionControl | None = None,
        priority: Priority | None = None,
        express: bool | None = None,
        attachment: _IntoZBytes | None = None,
        timestamp: Timestamp | None = None,
        source_info: SourceInfo | None = None,
    ) -> None: ...
    def reply_err(self, payload: _IntoZBytes, *, encoding: _IntoEncoding | None = None) -> None: ...
    def reply_del(self, key_expr: _IntoKeyExpr, **options: Any) -> None: ...
    def drop(self) -> None: ...

@final
class ReplyError:
    @property
    def payload(self) -> ZBytes: ...
    @property
    def encoding(self) -> Encoding: ...

@final
class Reply:
    @property
    def ok(self) -> Sample | None: ...
    @property
    def err(self) -> ReplyError | None: ...
    @property
    def result(self) -> Sample | ReplyError: ...
    @property
    def replier_id(self) -> EntityGlobalId | None: ...

class _Handled(Generic[_T]):
    """What every entity read through a handler has (not in the module itself)."""

    def __enter__(self: _Self) -> _Self: ...
    def __exit__(self, *args: object) -> None: ...
    @property
    def handler(self) -> Any: ...
    def recv(self) -> _T: ...
    def try_recv(self) -> _T | None: ...
    def __iter__(self) -> Handler: ...

class _Declared(_Handled[_T]):
    """A declared entity read through a handler (not in the module itself)."""

    def undeclare(self) -> None: ...

@final
class Subscriber(_Declared[Sample]):
    @property
    def id(self) -> EntityGlobalId: ...
    @property
    def key_expr(self) -> KeyExpr: ...

@final
class Queryable(_Declared[Query]):
    @property
    def id(self) -> EntityGlobalId: ...
    @property
    def key_expr(self) -> KeyExpr: ...

@final
class MatchingStatus:
    @property
    def matching(self) -> bool: ...

@final
class MatchingListener(_Declared[MatchingStatus]): ...

class _Matched:
    """What publishers and queriers have (not in the module itself)."""

    def __enter__(self: _Self) -> _Self: ...
    def __exit__(self, *args: object) -> None: ...
    @property
    def key_expr(self) -> KeyExpr: ...
    @property
    def matching_status(self) -> MatchingStatus: ...
    def declare_matching_listener(self, handler: _Handler = None) -> MatchingListener: ...
    def undeclare(self) -> None: ...

@final
class Publisher(_Matched):
    @property
    def id(self) -> EntityGlobalId: ...
    @property
    def encoding(self) -> Encoding: ...
    @property
    def congestion_control(self) -> CongestionControl: ...
    @property
    def priority(self) -> Priority: ...
    @property
    def reliability(self) -> Reliability: ...
    def put(
        self,
        payload: _IntoZBytes,
        *,
        encoding: _IntoEncoding | None = None,
        attachment: _IntoZBytes | None = None,
        timestamp: Timestamp | None = None,
        source_info: SourceInfo | None = None,
    ) -> None: ...
    def delete(
        self,
        *,
        attachment: _IntoZBytes | None = None,
        timestamp: Timestamp | None = None,
        source_info: SourceInfo | None = None,
    ) -> None: ...

@final
class Querier(_Matched):
    @property
    def accept_replies(self) -> ReplyKeyExpr: ...
    @property
    def id(self) -> EntityGlobalId: ...
    def get(
        self,
        handler: _Handler = None,
        *,
        parameters: str | Parameters | None = None,
        payload: _IntoZBytes | None = None,
        encoding: _IntoEncoding | None = None,
        attachment: _IntoZBytes | None = None,
        source_info: SourceInfo | None = None,
        cancellation_token: CancellationToken | None = None,
    ) -> Any: ...

@final
class LivelinessToken:
    def __enter__(self) -> LivelinessToken: ...
    def __exit__(self, *args: object) -> None: ...
    def undeclare(self) -> None: ...

@final
class Liveliness:
    def declare_token(self, key_expr: _IntoKeyExpr) -> LivelinessToken: ...
    def declare_subscriber(
        self, key_expr: _IntoKeyExpr, handler: _Handler = None, *, history: bool = False
    ) -> Subscriber: ...
    def get(
        self, key_expr: _IntoKeyExpr, handler: _Handler = None, *, timeout: float | None = None
    ) -> Any: ...

@final
class WhatAmI:
    ROUTER: WhatAmI
    PEER: WhatAmI
    CLIENT: WhatAmI
    def __int__(self) -> int: ...

@final
class WhatAmIMatcher:
    def __new__(cls, matcher: str | None = None) -> WhatAmIMatcher: ...
    @classmethod
    def empty(cls) -> WhatAmIMatcher: ...
    def router(self) -> WhatAmIMatcher: ...
    def peer(self) -> WhatAmIMatcher: ...
    def client(self) -> WhatAmIMatcher: ...
    def is_empty(self) -> bool: ...
    def matches(self, whatami: WhatAmI) -> bool: ...

@final
class Transport:
    @property
    def zid(self) -> ZenohId: ...
    @property
    def whatami(self) -> WhatAmI: ...
    @property
    def is_qos(self) -> bool: ...
    @property
    def is_multicast(self) -> bool: ...

@final
class TransportEvent:
    @property
    def kind(self) -> SampleKind: ...
    @property
    def transport(self) -> Transport: ...

@final
class TransportEventsListener(_Declared[TransportEvent]): ...

@final
class Link:
    @property
    def zid(self) -> ZenohId: ...
    @property
    def src(self) -> str: ...
    @property
    def dst(self) -> str: ...
    @property
    def group(self) -> str | None: ...
    @property
    def mtu(self) -> int: ...
    @property
    def is_streamed(self) -> bool: ...
    @property
    def interfaces(self) -> list[str]: ...
    @property
    def auth_identifier(self) -> str | None: ...
    @property
    def priorities(self) -> tuple[int, int] | None: ...
    @property
    def reliability(self) -> Reliability | None: ...

@final
class LinkEvent:
    @property
    def kind(self) -> SampleKind: ...
    @property
    def link(self) -> Link: ...

@final
class LinkEventsListener(_Declared[LinkEvent]): ...

@final
class SessionInfo:
    def declare_transport_events_listener(
        self, handler: _Handler = None, *, history: bool | None = None
    ) -> TransportEventsListener: ...
    def declare_link_events_listener(
        self, handler: _Handler = None, *, history: bool | None = None
    ) -> LinkEventsListener: ...
    def zid(self) -> ZenohId: ...
    def routers_zid(self) -> list[ZenohId]: ...
    def peers_zid(self) -> list[ZenohId]: ...
    def transports(self) -> list[Transport]: ...
    def links(self) -> list[Link]: ...

@final
class Session:
    def __enter__(self) -> Session: ...
    def __exit__(self, *args: object) -> None: ...
    @property
    def id(self) -> EntityGlobalId: ...
    @property
    def info(self) -> SessionInfo: ...
    def zid(self) -> ZenohId: ...
    def close(self) -> None: ...
    def is_closed(self) -> bool: ...
    def new_timestamp(self) -> Timestamp: ...
    def liveliness(self) -> Liveliness: ...
    def declare_keyexpr(self, key_expr: _IntoKeyExpr) -> KeyExpr: ...
    def undeclare(self, obj: KeyExpr) -> None: ...
    def put(
        self,
        key_expr: _IntoKeyExpr,
        payload: _IntoZBytes,
        *,
        encoding: _IntoEncoding | None = None,
        congestion_control: CongestionControl | None = None,
        priority: Priority | None = None,
        express: bool | None = None,
        attachment: _IntoZBytes | None = None,
        timestamp: Timestamp | None = None,
        allowed_destination: Locality | None = None,
        source_info: SourceInfo | None = None,
    ) -> None: ...
    def delete(
        self,
        key_expr: _IntoKeyExpr,
        *,
        congestion_control: CongestionControl | None = None,
        priority: Priority | None = None,
        express: bool | None = None,
        attachment: _IntoZBytes | None = None,
        timestamp: Timestamp | None = None,
        allowed_destination: Locality | None = None,
        source_info: SourceInfo | None = None,
    ) -> None: ...
    def declare_subscriber(
        self,
        key_expr: _IntoKeyExpr,
        handler: _Handler = None,
        *,
        allowed_origin: Locality | None = None,
    ) -> Subscriber: ...
    def declare_queryable(
        self,
        key_expr: _IntoKeyExpr,
        handler: _Handler = None,
        *,
        complete: bool = False,
        allowed_origin: Locality | None = None,
    ) -> Queryable: ...
    def declare_publisher(
        self,
        key_expr: _IntoKeyExpr,
        *,
        encoding: _IntoEncoding | None = None,
        congestion_control: CongestionControl | None = None,
        priority: Priority | None = None,
        express: bool | None = None,
        reliability: Reliability | None = None,
        allowed_destination: Locality | None = None,
    ) -> Publisher: ...
    def declare_querier(
        self,
        key_expr: _IntoKeyExpr,
        *,
        target: QueryTarget | None = None,
        consolidation: ConsolidationMode | None = None,
        timeout: float | None = None,
        congestion_control: CongestionControl | None = None,
        priority: Priority | None = None,
        express: bool | None = None,
        accept_replies: ReplyKeyExpr | None = None,
        allowed_destination: Locality | None = None,
    ) -> Querier: ...
    def get(
        self,
        selector: str | Selector | KeyExpr,
        handler: _Handler = None,
        *,
        target: QueryTarget | None = None,
        consolidation: ConsolidationMode | None = None,
        accept_replies: ReplyKeyExpr | None = None,
        timeout: float | None = None,
        congestion_control: CongestionControl | None = None,
        priority: Priority | None = None,
        express: bool | None = None,
        payload: _IntoZBytes | None = None,
        encoding: _IntoEncoding | None = None,
        attachment: _IntoZBytes | None = None,
        allowed_destination: Locality | None = None,
        source_info: SourceInfo | None = None,
        cancellation_token: CancellationToken | None = None,
    ) -> Any: ...

@final
class Hello:
    @property
    def whatami(self) -> WhatAmI: ...
    @property
    def zid(self) -> ZenohId: ...
    @property
    def locators(self) -> list[str]: ...

@final
class Scout(_Handled[Hello]):
    def stop(self) -> None: ...

def open(config: Config) -> Session: ...
def scout(
    handler: _Handler = None,
    what: WhatAmI | WhatAmIMatcher | str | None = None,
    config: Config | None = None,
) -> Scout: ...
def init_log_from_env_or(level: str) -> None: ...
def try_init_log_from_env() -> None: ...
