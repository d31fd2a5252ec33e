"""weft: the zenoh-python 1.x API over weft's Rust library.

``import weft as zenoh`` runs zenoh-python programs that use what is here; see
``python/README.md`` for what is not supported yet.
"""

import atexit as _atexit

from . import handlers
from ._weft import (
    CancellationToken,
    Config,
    CongestionControl,
    ConsolidationMode,
    Encoding,
    EntityGlobalId,
    Hello,
    KeyExpr,
    Link,
    Liveliness,
    LivelinessToken,
    MatchingListener,
    MatchingStatus,
    Parameters,
    Priority,
    Publisher,
    Querier,
    Query,
    Queryable,
    QueryTarget,
    Reliability,
    Reply,
    ReplyError,
    Sample,
    SampleKind,
    Scout,
    Selector,
    Session,
    SessionInfo,
    SourceInfo,
    Subscriber,
    Timestamp,
    Transport,
    TransportEvent,
    TransportEventsListener,
    WhatAmI,
    ZBytes,
    ZenohId,
    ZError,
    init_log_from_env_or,
    open,
    scout,
    try_init_log_from_env,
)
from ._weft import _shutdown
from .handlers import Handler

from . import ext  # noqa: E402 (ext uses ZBytes from _weft)

__all__ = [
    "CancellationToken",
    "Config",
    "CongestionControl",
    "ConsolidationMode",
    "Encoding",
    "EntityGlobalId",
    "Hello",
    "Handler",
    "KeyExpr",
    "Link",
    "Liveliness",
    "LivelinessToken",
    "MatchingListener",
    "MatchingStatus",
    "Parameters",
    "Priority",
    "Publisher",
    "Querier",
    "Query",
    "Queryable",
    "QueryTarget",
    "Reliability",
    "Reply",
    "ReplyError",
    "Sample",
    "SampleKind",
    "Scout",
    "Selector",
    "Session",
    "SessionInfo",
    "SourceInfo",
    "Subscriber",
    "Timestamp",
    "Transport",
    "TransportEvent",
    "TransportEventsListener",
    "WhatAmI",
    "ZBytes",
    "ZenohId",
    "ZError",
    "ext",
    "handlers",
    "init_log_from_env_or",
    "open",
    "scout",
    "try_init_log_from_env",
]

# Close every open session before the interpreter finalises, so that exiting never waits
# on weft's threads (nor they on the GIL).
_atexit.register(_shutdown)
