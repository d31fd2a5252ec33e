"""Handlers fed from Python: what a user's handler (a callable, ``Callback``, a
``(callable, handler)`` pair, or a channel) becomes when the items come from Python code
rather than from weft's own threads."""

from __future__ import annotations

import collections
import logging
import threading
from typing import Any, Callable, Deque, Generic, Optional, TypeVar

from .._weft import ZError
from ..handlers import Callback, DefaultHandler, FifoChannel, RingChannel

_T = TypeVar("_T")
_log = logging.getLogger("weft")

#: The capacity of the default handler's channel (weft's default handler's).
DEFAULT_CAPACITY = 256


class Channel(Generic[_T]):
    """A FIFO channel (delivery waits for room) or a ring (the oldest item is dropped
    for the newest), read with ``recv()``, ``try_recv()`` or by iterating it."""

    def __init__(self, capacity: int, ring: bool) -> None:
        self._items: Deque[_T] = collections.deque()
        self._capacity = max(1, capacity)
        self._ring = ring
        self._closed = False
        self._cond = threading.Condition()

    def push(self, item: _T) -> None:
        """Adds `item`; a full FIFO waits for the reader (or the channel's closing)."""
        with self._cond:
            while not self._ring and not self._closed and len(self._items) >= self._capacity:
                self._cond.wait(0.05)
            if self._closed:
                return
            if len(self._items) >= self._capacity:
                self._items.popleft()
            self._items.append(item)
            self._cond.notify_all()

    def close(self) -> None:
        """No more items: a reader gets what is left, then the end."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def try_recv(self) -> Optional[_T]:
        """The next item, or None if there is none now."""
        with self._cond:
            if self._items:
                item = self._items.popleft()
                self._cond.notify_all()
                return item
            if self._closed:
                raise ZError("the channel is closed (its entity is undeclared)")
            return None

    def _next(self) -> Optional[_T]:
        """The next item, waiting for it (in slices, so that Ctrl-C is seen); None at
        the end."""
        with self._cond:
            while not self._items:
                if self._closed:
                    return None
                self._cond.wait(0.05)
            item = self._items.popleft()
            self._cond.notify_all()
            return item

    def recv(self) -> _T:
        """The next item, waiting for it; raises ``ZError`` once the channel is closed."""
        item = self._next()
        if item is None:
            raise ZError("the channel is closed (its entity is undeclared)")
        return item

    def __iter__(self) -> "Channel[_T]":
        return self

    def __next__(self) -> _T:
        item = self._next()
        if item is None:
            raise StopIteration
        return item


class Sink(Generic[_T]):
    """Where items go: a callable (with an optional end), or a channel."""

    def __init__(self, handler: Any) -> None:
        self.call: Callable[[_T], Any]
        self.end: Optional[Callable[[], Any]] = None
        #: What the entity's ``handler`` property returns.
        self.handler: Any = None
        #: The channel, for an entity read with recv().
        self.channel: Optional[Channel[_T]] = None
        if handler is None:
            handler = DefaultHandler()
        if isinstance(handler, (DefaultHandler, FifoChannel, RingChannel)):
            capacity = getattr(handler, "capacity", DEFAULT_CAPACITY)
            channel: Channel[_T] = Channel(capacity, isinstance(handler, RingChannel))
            self.channel = channel
            self.handler = channel
            self.call = channel.push
            self.end = channel.close
        elif isinstance(handler, Callback):
            self.call = handler.callback
            self.end = handler.drop
        elif isinstance(handler, tuple) and len(handler) == 2 and callable(handler[0]):
            self.call = handler[0]
            self.handler = handler[1]
        elif callable(handler):
            self.call = handler
        else:
            raise TypeError(f"not a handler: {handler!r}")
        self._ended = False
        self._lock = threading.Lock()

    def __call__(self, item: _T) -> None:
        """Hands `item` over; an exception from a callback is logged."""
        try:
            self.call(item)
        except Exception:
            _log.exception("a callback raised")

    def finish(self) -> None:
        """Calls the end once (closes the channel, or calls ``drop``)."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
        if self.end is not None:
            try:
                self.end()
            except Exception:
                _log.exception("a callback's drop raised")
