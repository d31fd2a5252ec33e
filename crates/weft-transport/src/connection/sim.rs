//! A simulated network for connections, in memory and in made-up time: two ends joined
//! by a stream link of bounded capacity (a socket's buffers) read at a chosen rate, or by
//! a datagram link that loses and reorders what it carries.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use weft_proto::core::{Priority, WireExpr};
use weft_proto::network::{NetworkMessage, Push};
use weft_proto::zenoh::{PushBody, Put};

use super::{Connection, Event, Framing, Limits, Transmit};
use crate::establish::Negotiated;

/// Both ends' view of one handshake (initiator's, acceptor's), with `batch_size` and
/// leases in milliseconds.
pub(super) fn negotiated(batch_size: u16, lease_ms: u64) -> (Negotiated, Negotiated) {
    crate::test_support::negotiated(batch_size, Some(lease_ms))
}

/// A Put of `payload` on `key` with `priority` (express when asked).
pub(super) fn put(
    key: &'static str,
    payload: &[u8],
    priority: Priority,
    express: bool,
) -> NetworkMessage<'static> {
    let payload: &'static [u8] = Box::leak(payload.to_vec().into_boxed_slice());
    let mut push = Push::new(WireExpr::key(key), PushBody::Put(Put::new(payload)));
    push.qos = weft_proto::core::NetworkQos::new(
        priority,
        weft_proto::core::CongestionControl::Block,
        express,
    );
    NetworkMessage::Push(push)
}

/// What one end received: (priority, key, payload) per message.
pub(super) type Received = Vec<(Priority, String, Vec<u8>)>;

/// One end of the simulated network.
pub(super) struct End {
    pub conn: Connection,
    pub received: Received,
    pub events: Vec<Event>,
    /// Bytes read from the link and not yet consumed (the start of a batch).
    pending: Vec<u8>,
    /// Bytes this end reads from its link per step (`usize::MAX`: all).
    pub read_rate: usize,
    /// A dead end neither reads, writes nor handles its timeouts.
    pub dead: bool,
}

impl End {
    fn new(conn: Connection) -> Self {
        Self {
            conn,
            received: Vec::new(),
            events: Vec::new(),
            pending: Vec::new(),
            read_rate: usize::MAX,
            dead: false,
        }
    }

    fn record(received: &mut Received, m: &crate::rx::Incoming<'_, '_>) {
        if let NetworkMessage::Push(p) = m.message {
            if let PushBody::Put(put) = &p.body {
                received.push((
                    m.priority,
                    p.wire_expr.suffix.to_string(),
                    put.payload.to_vec(),
                ));
            }
        }
    }

    /// Writes what the connection has into `link` while it has room.
    fn write(&mut self, link: &mut Link, now: Instant) {
        while let Some(t) = self.conn.poll_transmit(now) {
            let n = link.push(&t);
            if !self.conn.transmitted(t, n, now) {
                break;
            }
        }
    }

    /// Reads what `link` delivers.
    fn read(&mut self, link: &mut Link, now: Instant) {
        match link {
            Link::Stream { bytes, .. } => {
                let n = self.read_rate.min(bytes.len());
                self.pending.extend(bytes.drain(..n));
                let received = &mut self.received;
                let input = self
                    .conn
                    .handle_stream(&self.pending, now, |m, _| Self::record(received, m));
                self.pending.drain(..input.consumed);
            }
            Link::Datagrams { queue, .. } => {
                while let Some(d) = queue.pop_front() {
                    let received = &mut self.received;
                    self.conn
                        .handle_datagram(&d, now, |m, _| Self::record(received, m));
                }
            }
        }
    }

    fn events(&mut self) {
        while let Some(e) = self.conn.poll_event() {
            self.events.push(e);
        }
    }
}

/// One direction of a link.
pub(super) enum Link {
    /// A byte stream holding at most `capacity` bytes not yet read.
    Stream {
        bytes: VecDeque<u8>,
        capacity: usize,
    },
    /// Datagrams, every `lose_every`-th lost (0: none), every `swap_every`-th swapped
    /// with the one before it (0: none).
    Datagrams {
        queue: VecDeque<Vec<u8>>,
        count: u64,
        lose_every: u64,
        swap_every: u64,
    },
}

impl Link {
    pub(super) fn stream(capacity: usize) -> Self {
        Self::Stream {
            bytes: VecDeque::new(),
            capacity,
        }
    }

    pub(super) fn datagrams(lose_every: u64, swap_every: u64) -> Self {
        Self::Datagrams {
            queue: VecDeque::new(),
            count: 0,
            lose_every,
            swap_every,
        }
    }

    /// Takes what it has room for of `t`; returns how many bytes.
    fn push(&mut self, t: &Transmit) -> usize {
        match self {
            Self::Stream { bytes, capacity } => {
                let mut slices = [std::io::IoSlice::new(&[]); 2 * super::GATHER_MAX];
                let count = t.io_slices(&mut slices);
                let mut n = 0;
                for s in &slices[..count] {
                    let room = capacity.saturating_sub(bytes.len());
                    let take = room.min(s.len());
                    bytes.extend(&s[..take]);
                    n += take;
                    if take < s.len() {
                        break;
                    }
                }
                n
            }
            Self::Datagrams {
                queue,
                count,
                lose_every,
                swap_every,
            } => {
                let mut n = 0;
                for d in t.datagrams() {
                    n += d.len();
                    *count += 1;
                    if *lose_every > 0 && *count % *lose_every == 0 {
                        continue;
                    }
                    queue.push_back(d.to_vec());
                    if *swap_every > 0 && *count % *swap_every == 0 && queue.len() >= 2 {
                        let last = queue.len() - 1;
                        queue.swap(last, last - 1);
                    }
                }
                n
            }
        }
    }
}

/// Two connected ends and the links between them, in made-up time.
pub(super) struct Net {
    pub a: End,
    pub b: End,
    pub ab: Link,
    pub ba: Link,
    pub now: Instant,
}

impl Net {
    /// Two ends joined by stream links holding `capacity` bytes each way.
    pub(super) fn stream(batch_size: u16, lease_ms: u64, capacity: usize, limits: Limits) -> Self {
        let (ni, na) = negotiated(batch_size, lease_ms);
        let now = Instant::now();
        let framing = Framing::Stream(weft_proto::batch::framing::PrefixWidth::U16);
        Self {
            a: End::new(Connection::new(&ni, framing, limits.clone(), now)),
            b: End::new(Connection::new(&na, framing, limits, now)),
            ab: Link::stream(capacity),
            ba: Link::stream(capacity),
            now,
        }
    }

    /// Two ends joined by datagram links losing every `lose_every`-th datagram and
    /// swapping every `swap_every`-th with the one before.
    pub(super) fn datagrams(batch_size: u16, lose_every: u64, swap_every: u64) -> Self {
        let (ni, na) = negotiated(batch_size, 10_000);
        let now = Instant::now();
        Self {
            a: End::new(Connection::new(
                &ni,
                Framing::Datagram,
                Limits::default(),
                now,
            )),
            b: End::new(Connection::new(
                &na,
                Framing::Datagram,
                Limits::default(),
                now,
            )),
            ab: Link::datagrams(lose_every, swap_every),
            ba: Link::datagrams(lose_every, swap_every),
            now,
        }
    }

    /// One step of `dt`: each live end writes, then reads, then handles its timeouts.
    pub(super) fn step(&mut self, dt: Duration) {
        let now = self.now;
        Self::turn(&mut self.a, &mut self.ab, &mut self.ba, now);
        Self::turn(&mut self.b, &mut self.ba, &mut self.ab, now);
        self.now += dt;
    }

    /// End `a` writes what it has, nobody reads.
    pub(super) fn write_a(&mut self) {
        self.a.write(&mut self.ab, self.now);
    }

    /// One end's turn: write, read, timeouts, write again, events.
    fn turn(end: &mut End, out: &mut Link, inp: &mut Link, now: Instant) {
        if end.dead {
            return;
        }
        end.write(out, now);
        end.read(inp, now);
        if end.conn.poll_timeout().is_some_and(|t| t <= now) {
            end.conn.handle_timeout(now);
        }
        end.write(out, now);
        end.events();
    }

    /// Steps until `done` holds or `max` steps have passed; whether it held.
    pub(super) fn run_until(
        &mut self,
        dt: Duration,
        max: usize,
        mut done: impl FnMut(&Self) -> bool,
    ) -> bool {
        for _ in 0..max {
            if done(self) {
                return true;
            }
            self.step(dt);
        }
        done(self)
    }
}
