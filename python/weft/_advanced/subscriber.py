"""The advanced subscriber: history from the publishers' caches, samples of each
publisher delivered in order, misses noticed, and missed samples recovered."""

from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Dict, Optional

from .._weft import (
    ConsolidationMode,
    EntityGlobalId,
    KeyExpr,
    LivelinessToken,
    QueryTarget,
    Reply,
    Sample,
    SampleKind,
    Session,
    Subscriber,
    ZError,
)
from ..handlers import Callback
from . import keys
from .channel import Sink
from .config import HistoryConfig, Miss, RecoveryConfig

#: How long a history or recovery query waits for replies (Zenoh's advanced
#: subscriber's default).
QUERY_TIMEOUT = 10.0

# Entity ids for the liveliness tokens of subscriber detection: weft does not tell a
# subscriber's own id, so these come from a range weft's sessions do not reach.
_token_ids = itertools.count(0x80000000)


class _Source:
    """What is known of one publisher: the last sample delivered (a sequence number, or a
    timestamp), samples held back until the gap before them is filled or given up, and
    queries under way."""

    __slots__ = ("last", "pending_queries", "pending", "alive", "periodic")

    def __init__(self) -> None:
        self.last: Any = None
        self.pending_queries = 0
        self.pending: Dict[Any, Sample] = {}
        self.alive = False
        self.periodic = False


class _State:
    """The subscriber's state, shared by the callbacks of its entities (and not holding
    the ``AdvancedSubscriber`` itself, so that dropping it undeclares a channel one)."""

    def __init__(
        self,
        session: Session,
        key: str,
        sink: Sink[Sample],
        history: Optional[HistoryConfig],
        recovery: Optional[RecoveryConfig],
    ) -> None:
        self.lock = threading.RLock()
        self.session = session
        self.key = key
        self.key_expr = KeyExpr(key)
        self.sink: Optional[Sink[Sample]] = sink
        self.history = history
        self.retransmission = recovery is not None
        self.period = recovery.periodic_queries if recovery is not None else None
        self.depth = (
            history.max_samples if history is not None and history.max_samples else None
        )
        self.global_pending = 1 if history is not None else 0
        self.sequenced: Dict[tuple[str, int], _Source] = {}
        self.timestamped: Dict[str, _Source] = {}
        #: Replaced whole under `miss_lock` (never changed in place), read without it.
        self.miss_sinks: Dict[int, Sink[Miss]] = {}
        self.miss_lock = threading.Lock()
        self.closed = False
        self.stop = threading.Event()
        self.token: Optional[LivelinessToken] = None

    # -- delivery ---------------------------------------------------------------------

    def _deliver(self, sample: Sample) -> None:
        if self.sink is not None:
            self.sink(sample)

    def _miss(self, sample: Sample, nb: int) -> None:
        info = sample.source_info
        if info is None:
            return
        miss = Miss(info.source_id, nb)
        for sink in self.miss_sinks.values():
            sink(miss)

    def _deliver_in_order(self, source: _Source, sn: int, sample: Sample) -> None:
        """Delivers `sample` (number `sn`), then the held samples that follow it."""
        self._deliver(sample)
        source.last = sn
        while True:
            nxt = keys.sn_add(sn, 1)
            held = source.pending.pop(nxt, None)
            if held is None:
                return
            self._deliver(held)
            sn = nxt
            source.last = sn

    def handle(self, sample: Sample) -> bool:
        """Takes a sample in (live or from a reply); True if its publisher is new."""
        if self.sink is None:
            return False
        info = sample.source_info
        if info is not None:
            sid = (str(info.source_id.zid), info.source_id.eid)
            sn = info.source_sn
            source = self.sequenced.get(sid)
            new = source is None
            if source is None:
                source = self.sequenced[sid] = _Source()
            if source.last is None and self.global_pending != 0:
                if self.depth == 1:
                    source.last = sn
                    self._deliver(sample)
                else:
                    source.pending[sn] = sample
                    if self.depth is not None and len(source.pending) >= self.depth:
                        first = _sorted_sns(source.pending, None)[0]
                        self._deliver_in_order(source, first, source.pending.pop(first))
            elif source.last is not None and sn != keys.sn_add(source.last, 1):
                if keys.sn_after(sn, source.last):
                    if self.retransmission:
                        source.pending[sn] = sample
                    else:
                        self._miss(sample, (sn - source.last - 1) & keys.SN_MASK)
                        self._deliver(sample)
                        source.last = sn
            elif source.last is None and source.pending:
                # Samples of this publisher are held already (replies of a query still
                # under way): this one waits with them, so that they all go in order.
                source.pending[sn] = sample
                self._flush_sequenced(source)
            else:
                self._deliver_in_order(source, sn, sample)
            return new
        ts = sample.timestamp
        if ts is not None:
            tid = str(ts.get_id())
            source = self.timestamped.setdefault(tid, _Source())
            if source.last is None or source.last < ts:
                if (self.global_pending == 0 and source.pending_queries == 0) or self.depth == 1:
                    source.last = ts
                    self._deliver(sample)
                else:
                    source.pending.setdefault(ts, sample)
                    if self.depth is not None and len(source.pending) >= self.depth:
                        self._flush_timestamped(source)
            return False
        self._deliver(sample)
        return False

    def _flush_sequenced(self, source: _Source) -> None:
        """Delivers what is held once no query is under way; gaps left are misses."""
        if self.sink is None or source.pending_queries != 0 or not source.pending:
            return
        held, source.pending = source.pending, {}
        for sn in _sorted_sns(held, source.last):
            sample = held[sn]
            if source.last is None or sn == keys.sn_add(source.last, 1):
                source.last = sn
                self._deliver(sample)
            elif keys.sn_after(sn, source.last):
                self._miss(sample, (sn - source.last - 1) & keys.SN_MASK)
                source.last = sn
                self._deliver(sample)

    def _flush_timestamped(self, source: _Source) -> None:
        if self.sink is None or source.pending_queries != 0 or not source.pending:
            return
        held, source.pending = source.pending, {}
        for ts in sorted(held):
            if source.last is None or ts > source.last:
                source.last = ts
                self._deliver(held[ts])

    # -- queries ----------------------------------------------------------------------

    def query(self, selector: str, on_done: Callable[[], None]) -> None:
        """Asks `selector` (replies on any key), handing the samples in, then calls
        `on_done` (outside the state's lock)."""
        key_expr = self.key_expr

        def on_reply(reply: Reply) -> None:
            sample = reply.ok
            if sample is not None and key_expr.intersects(sample.key_expr):
                with self.lock:
                    self.handle(sample)

        def done() -> None:
            with self.lock:
                on_done()

        selector = selector + (";" if "?" in selector else "?") + "_anyke"
        try:
            self.session.get(
                selector,
                Callback(on_reply, done),
                target=QueryTarget.ALL,
                consolidation=ConsolidationMode.NONE,
                timeout=QUERY_TIMEOUT,
            )
        except ZError:
            done()

    def history_parameters(self) -> str:
        params = []
        history = self.history
        if history is not None and history.max_samples is not None:
            params.append(f"_max={history.max_samples}")
        if history is not None and history.max_age is not None:
            params.append(keys.max_age_range(history.max_age))
        return ";".join(params)

    def initial_done(self) -> None:
        """A history query (of every publisher) is over."""
        self.global_pending = max(0, self.global_pending - 1)
        if self.global_pending == 0:
            for source in self.sequenced.values():
                self._flush_sequenced(source)
                if self.period is not None:
                    source.periodic = True
            for source in self.timestamped.values():
                self._flush_timestamped(source)

    def sequenced_done(self, sid: tuple[str, int]) -> None:
        source = self.sequenced.get(sid)
        if source is not None:
            source.pending_queries = max(0, source.pending_queries - 1)
            if self.global_pending == 0:
                self._flush_sequenced(source)

    def timestamped_done(self, tid: str) -> None:
        source = self.timestamped.get(tid)
        if source is not None:
            source.pending_queries = max(0, source.pending_queries - 1)
            if self.global_pending == 0:
                self._flush_timestamped(source)

    def source_query(self, sid: tuple[str, int], start: Optional[int], end: Optional[int], key: Optional[str] = None) -> None:
        """Asks publisher `sid`'s cache for `start`..`end`; the caller counted the query in
        the source's ``pending_queries`` and holds no lock."""
        zid, eid = sid
        where = key if key is not None else f"{self.key}/{keys.ADV}/*/{zid}/{eid}/**"
        self.query(f"{where}?{keys.sn_range(start, end)}", lambda: self.sequenced_done(sid))

    # -- callbacks of the entities ----------------------------------------------------

    def on_sample(self, sample: Sample) -> None:
        """A live sample."""
        ask = None
        with self.lock:
            info = sample.source_info
            new = self.handle(sample)
            if info is not None:
                sid = (str(info.source_id.zid), info.source_id.eid)
                source = self.sequenced.get(sid)
                if source is not None:
                    if new and self.period is not None:
                        source.periodic = True
                    if self.retransmission and source.pending_queries == 0 and source.pending:
                        source.pending_queries += 1
                        start = None if source.last is None else keys.sn_add(source.last, 1)
                        ask = (sid, start)
        if ask is not None:
            self.source_query(ask[0], ask[1], None)

    def on_publisher(self, token: Sample) -> None:
        """A publisher's liveliness token appeared (or went): ask it for its history."""
        parsed = keys.parse_adv(str(token.key_expr))
        if parsed is None:
            return
        _, zid, eid_text = parsed
        token_key = str(token.key_expr)
        params = self.history_parameters()
        selector = f"{token_key}?{params}" if params else token_key
        with self.lock:
            if not keys.valid_zid(zid):
                if token.kind == SampleKind.PUT:
                    self.global_pending += 1
                    on_done: Callable[[], None] = self.initial_done
                else:
                    return
            elif eid_text == keys.UHLC:
                source = self.timestamped.get(zid)
                if token.kind == SampleKind.DELETE:
                    if source is not None:
                        source.alive = False
                    return
                source = self.timestamped.setdefault(zid, _Source())
                source.pending_queries += 1
                source.alive = True
                on_done = lambda: self.timestamped_done(zid)  # noqa: E731
            else:
                eid = keys.parse_eid(eid_text)
                if eid is None:
                    return
                sid = (zid, eid)
                seq = self.sequenced.get(sid)
                if token.kind == SampleKind.DELETE:
                    if seq is not None:
                        seq.alive = False
                    return
                if seq is None:
                    seq = self.sequenced[sid] = _Source()
                    if self.period is not None:
                        seq.periodic = True
                seq.pending_queries += 1
                seq.alive = True
                on_done = lambda: self.sequenced_done(sid)  # noqa: E731
        self.query(selector, on_done)

    def on_heartbeat(self, beat: Sample) -> None:
        """A publisher's heartbeat: the last sequence number it sent."""
        if beat.kind != SampleKind.PUT:
            return
        beat_key = str(beat.key_expr)
        parsed = keys.parse_adv(beat_key)
        if parsed is None or not keys.valid_zid(parsed[1]):
            return
        eid = keys.parse_eid(parsed[2])
        last_sent = keys.heartbeat_sn(beat.payload.to_bytes())
        if eid is None or last_sent is None:
            return
        sid = (parsed[1], eid)
        with self.lock:
            source = self.sequenced.get(sid)
            if source is None:
                source = self.sequenced[sid] = _Source()
                if self.period is not None:
                    source.periodic = True
                if self.global_pending > 0:
                    return
            if source.pending_queries != 0:
                return
            if source.last is not None and not keys.sn_after(last_sent, source.last):
                return
            start = None if source.last is None else keys.sn_add(source.last, 1)
            source.pending_queries += 1
        self.source_query(sid, start, last_sent, key=beat_key)

    def periodic_round(self) -> None:
        """Asks each publisher with periodic queries for what follows its last sample."""
        asks = []
        with self.lock:
            for sid, source in self.sequenced.items():
                if source.periodic:
                    source.pending_queries += 1
                    start = None if source.last is None else keys.sn_add(source.last, 1)
                    asks.append((sid, start))
        for sid, start in asks:
            self.source_query(sid, start, None)

    def run_periodic(self, period: float) -> None:
        while not self.stop.wait(period):
            try:
                self.periodic_round()
            except ZError:
                return

    def close(self) -> None:
        """No more samples nor misses: ends the handlers."""
        with self.lock, self.miss_lock:
            if self.closed:
                return
            self.closed = True
            sink, self.sink = self.sink, None
            miss_sinks = list(self.miss_sinks.values())
            self.miss_sinks = {}
        self.stop.set()
        if sink is not None:
            sink.finish()
        for m in miss_sinks:
            m.finish()


def _sorted_sns(held: Dict[int, Sample], last: Optional[int]) -> list[int]:
    """The held sequence numbers in order (modulo 2**32), from just after `last`, or from
    the earliest if `last` is None."""
    if last is not None:
        base = keys.sn_add(last, 1)
    else:
        probe = next(iter(held))
        base = min(held, key=lambda sn: (sn - probe + 0x80000000) & keys.SN_MASK)
    return sorted(held, key=lambda sn: (sn - base) & keys.SN_MASK)


class SampleMissListener:
    """Told of the samples an advanced subscriber missed (a ``Miss`` each time), through
    its handler; made by ``AdvancedSubscriber.sample_miss_listener``."""

    def __init__(self, state: _State, handler: Any) -> None:
        self._state = state
        self._sink: Sink[Miss] = Sink(handler)
        self._id = id(self)
        # Not the subscriber's lock: a delivery may hold it while it waits for this
        # thread to read a channel.
        with state.miss_lock:
            if state.closed:
                self._sink.finish()
            else:
                state.miss_sinks = {**state.miss_sinks, self._id: self._sink}

    @property
    def handler(self) -> Any:
        """What the handler gave to read misses with (a channel's reader), else None."""
        return self._sink.handler

    def undeclare(self) -> None:
        """Stops telling of misses."""
        # The end first: a delivery waiting for room in the channel (holding the
        # subscriber's lock) gives up.
        self._sink.finish()
        with self._state.miss_lock:
            sinks = dict(self._state.miss_sinks)
            sinks.pop(self._id, None)
            self._state.miss_sinks = sinks

    def _channel(self) -> Any:
        if self._sink.channel is None:
            raise ZError("this listener has a callback, not a channel")
        return self._sink.channel

    def recv(self) -> Miss:
        """The next miss, waiting for it."""
        miss: Miss = self._channel().recv()
        return miss

    def try_recv(self) -> Optional[Miss]:
        """The next miss if there is one now, else None."""
        miss: Optional[Miss] = self._channel().try_recv()
        return miss

    def __iter__(self) -> Any:
        return iter(self._channel())

    def __del__(self) -> None:
        if self._sink.channel is not None:
            self.undeclare()


class AdvancedSubscriber:
    """A subscriber that gets the publishers' history (``history``), delivers each
    advanced publisher's samples in order, tells of the ones it missed
    (``sample_miss_listener``), recovers them from the publishers' caches (``recovery``),
    and can be detected (``subscriber_detection``). Made by
    ``declare_advanced_subscriber``."""

    def __init__(
        self,
        session: Session,
        key_expr: Any,
        handler: Any = None,
        *,
        history: Optional[HistoryConfig] = None,
        recovery: Optional[RecoveryConfig] = None,
        subscriber_detection: Optional[bool] = None,
    ) -> None:
        if history is not None and history.max_samples == 0:
            raise ZError("max_samples must not be zero")
        if history is not None and history.max_age == 0.0:
            raise ZError("max_age must not be zero")
        key = str(KeyExpr(str(key_expr)))
        sink: Sink[Sample] = Sink(handler)
        state = _State(session, key, sink, history, recovery)
        self._state = state
        self._sink = sink
        self._liveliness: Optional[Subscriber] = None
        self._heartbeat: Optional[Subscriber] = None
        self._token: Optional[LivelinessToken] = None
        self._undeclared = False
        self._subscriber = session.declare_subscriber(key, Callback(state.on_sample, state.close))
        try:
            if history is not None:
                params = state.history_parameters()
                where = f"{key}/{keys.ADV}/**"
                state.query(f"{where}?{params}" if params else where, state.initial_done)
                if history.detect_late_publishers:
                    self._liveliness = session.liveliness().declare_subscriber(
                        f"{key}/{keys.ADV}/pub/**", state.on_publisher, history=True
                    )
            if recovery is not None and recovery.heartbeat:
                self._heartbeat = session.declare_subscriber(
                    f"{key}/{keys.ADV}/pub/**", state.on_heartbeat
                )
            if recovery is not None and recovery.periodic_queries is not None:
                threading.Thread(
                    target=state.run_periodic,
                    args=(recovery.periodic_queries,),
                    name="weft-adv-periodic",
                    daemon=True,
                ).start()
            if subscriber_detection:
                suffix = keys.subscriber_suffix(str(session.zid()), next(_token_ids))
                self._token = session.liveliness().declare_token(f"{key}/{suffix}")
                # A callback subscriber runs on when dropped: so does its token.
                state.token = self._token
        except BaseException:
            self.undeclare()
            raise

    def __enter__(self) -> "AdvancedSubscriber":
        return self

    def __exit__(self, *_args: object) -> None:
        self.undeclare()

    def __del__(self) -> None:
        # A channel subscriber goes with its last reference; a callback one runs on.
        if getattr(self, "_sink", None) is not None and self._sink.channel is not None:
            try:
                self.undeclare()
            except Exception:
                pass

    @property
    def id(self) -> EntityGlobalId:
        """The subscriber's id: its session's and the entity id of the subscriber it
        declared on its key expression."""
        return self._subscriber.id

    @property
    def key_expr(self) -> KeyExpr:
        """The key expression it subscribes to."""
        return self._subscriber.key_expr

    @property
    def handler(self) -> Any:
        """What the handler gave to read samples with (a channel's reader), else None."""
        return self._sink.handler

    def sample_miss_listener(self, handler: Any = None) -> SampleMissListener:
        """Declares a listener told of each run of samples missed (a ``Miss``): samples
        of publishers declared with ``sample_miss_detection`` that could not be
        recovered."""
        if self._undeclared:
            raise ZError("Undeclared subscriber")
        return SampleMissListener(self._state, handler)

    def detect_publishers(self, handler: Any = None, *, history: Optional[bool] = None) -> Subscriber:
        """Subscribes to the liveliness tokens of the advanced publishers (declared with
        ``publisher_detection``) publishing on its key expression; with `history`, those
        present already are told first."""
        if self._undeclared:
            raise ZError("Undeclared subscriber")
        return self._state.session.liveliness().declare_subscriber(
            f"{self._state.key}/{keys.ADV}/pub/**", handler, history=bool(history)
        )

    def undeclare(self) -> None:
        """Undeclares the subscriber and what it declared with it."""
        if self._undeclared:
            raise ZError("Undeclared subscriber")
        self._undeclared = True
        if self._sink.channel is not None:
            # A delivery waiting for room in the channel (on a thread that undeclaring
            # waits for) gives up.
            self._sink.channel.close()
        for entity in (self._token, self._heartbeat, self._liveliness, self._subscriber):
            if entity is not None:
                try:
                    entity.undeclare()
                except ZError:
                    pass
        self._state.close()

    def _channel(self) -> Any:
        if self._undeclared:
            raise ZError("Undeclared subscriber")
        if self._sink.channel is None:
            raise ZError("this subscriber has a callback, not a channel")
        return self._sink.channel

    def recv(self) -> Sample:
        """The next sample, waiting for it."""
        sample: Sample = self._channel().recv()
        return sample

    def try_recv(self) -> Optional[Sample]:
        """The next sample if there is one now, else None."""
        sample: Optional[Sample] = self._channel().try_recv()
        return sample

    def __iter__(self) -> Any:
        return iter(self._channel())


def declare_advanced_subscriber(
    session: Session,
    key_expr: Any,
    handler: Any = None,
    *,
    history: Optional[HistoryConfig] = None,
    recovery: Optional[RecoveryConfig] = None,
    subscriber_detection: Optional[bool] = None,
) -> AdvancedSubscriber:
    """Declares an advanced subscriber on `key_expr` with `handler` (a callable,
    ``Callback``, ``(callable, handler)`` pair or channel; the default channel if None)."""
    return AdvancedSubscriber(
        session,
        key_expr,
        handler,
        history=history,
        recovery=recovery,
        subscriber_detection=subscriber_detection,
    )
