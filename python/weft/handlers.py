"""Handlers: what subscribers, queryables and ``get`` do with what they receive.

A Python callable is called for each item on a thread of its entity; a channel
(``DefaultHandler``, ``FifoChannel(n)``, ``RingChannel(n)``) is read with ``recv()``,
``try_recv()`` or by iterating the returned ``Handler``.
"""

from ._weft import Callback, DefaultHandler, FifoChannel, Handler, RingChannel

__all__ = ["Callback", "DefaultHandler", "FifoChannel", "Handler", "RingChannel"]
