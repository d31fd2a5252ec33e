"""Types of weft's handlers."""

from collections.abc import Callable
from typing import Any, final

@final
class DefaultHandler:
    def __new__(cls) -> DefaultHandler: ...

@final
class FifoChannel:
    def __new__(cls, capacity: int) -> FifoChannel: ...

@final
class RingChannel:
    def __new__(cls, capacity: int) -> RingChannel: ...

@final
class Callback:
    def __new__(
        cls,
        callback: Callable[[Any], Any],
        drop: Callable[[], Any] | None = None,
        *,
        indirect: bool = True,
    ) -> Callback: ...
    @property
    def callback(self) -> Callable[[Any], Any]: ...
    @property
    def drop(self) -> Callable[[], Any] | None: ...
    @property
    def indirect(self) -> bool: ...
    def __call__(self, arg: Any, /) -> Any: ...

@final
class Handler:
    def recv(self) -> Any: ...
    def try_recv(self) -> Any | None: ...
    def __iter__(self) -> Handler: ...
    def __next__(self) -> Any: ...
