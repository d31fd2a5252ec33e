//! The replies of a REST query, answered within bounded memory. They are read from a
//! paced get ([`weft::Session::get_paced`]: the repliers wait while [`PACED_BYTES`] of
//! replies wait to be read) and consolidated here:
//!
//! - up to [`HELD_BYTES`] of replies, they are held until the query ends, consolidated as
//!   the plugin's get asks (the latest reply per key, or every reply for a time range),
//!   and answered at once with a `Content-Length`, as the plugin answers;
//! - beyond, the answer is streamed (chunked): what is held is written, then every reply
//!   as it comes, a reply on a key answered already written only if it is newer (so a
//!   key may be answered twice, never with an older value), the writer waiting for its
//!   client through a queue of at most [`QUEUED_BYTES`]. So 20,000 replies of 16 KiB cost
//!   weftd a few tens of MiB, not the whole answer several times over.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};

use weft::{PacedReplies, Reply, Timestamp};

use crate::http::Response;

/// Replies a query holds (payloads and keys) before its answer is streamed.
pub(super) const HELD_BYTES: usize = 8 << 20;

/// Replies waiting in the session for the query's reader, at most (about).
pub(super) const PACED_BYTES: usize = 4 << 20;

/// Answer bytes waiting for the HTTP client, at most (one part is always taken).
const QUEUED_BYTES: usize = 1 << 20;

/// How the replies are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// A JSON array.
    Json,
    /// An HTML definition list.
    Html,
}

impl Form {
    const fn content_type(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Html => "text/html; charset=utf-8",
        }
    }

    const fn open(self) -> &'static str {
        match self {
            Self::Json => "[",
            Self::Html => "<dl>\n",
        }
    }

    const fn close(self) -> &'static str {
        match self {
            Self::Json => "]",
            Self::Html => "</dl>\n",
        }
    }

    /// One reply, `first` of the answer or not.
    fn item(self, reply: &Reply, first: bool) -> String {
        match self {
            Self::Json => {
                let json = super::reply_json(reply).to_string();
                if first {
                    json
                } else {
                    format!(",{json}")
                }
            }
            Self::Html => super::html_item(reply),
        }
    }
}

fn timestamp_of(reply: &Reply) -> Option<Timestamp> {
    reply.result.as_ref().ok().and_then(|s| s.timestamp)
}

fn key_of(reply: &Reply) -> Option<&str> {
    reply.result.as_ref().ok().map(|s| &*s.key_expr)
}

/// The replies of one query, consolidated: held while they fit, then passed on.
pub(super) struct Consolidator {
    /// The latest reply per key (else every reply).
    latest: bool,
    /// Held, in arrival order; `None` where a later reply replaced one.
    held: Vec<Option<Reply>>,
    /// Where each key's reply is held.
    index: HashMap<String, usize>,
    held_bytes: usize,
    /// Past [`HELD_BYTES`]: replies are passed on as they come.
    streaming: bool,
    /// While streaming, the timestamp of each key's last reply passed on.
    passed: HashMap<String, Option<Timestamp>>,
}

impl Consolidator {
    /// The latest reply per key with `latest`, else every reply.
    pub(super) fn new(latest: bool) -> Self {
        Self {
            latest,
            held: Vec::new(),
            index: HashMap::new(),
            held_bytes: 0,
            streaming: false,
            passed: HashMap::new(),
        }
    }

    /// Whether the answer is streamed from now on.
    pub(super) const fn streaming(&self) -> bool {
        self.streaming
    }

    /// Takes `reply` in; what is to be answered now goes to `out`.
    pub(super) fn take(&mut self, reply: Reply, out: &mut Vec<Reply>) {
        if self.streaming {
            self.pass(reply, out);
            return;
        }
        self.held_bytes += weft_reply_bytes(&reply);
        match key_of(&reply).filter(|_| self.latest) {
            Some(key) => match self.index.get(key) {
                Some(&at) => {
                    let old = self.held[at].as_ref().and_then(timestamp_of);
                    let replace = match (old, timestamp_of(&reply)) {
                        (Some(old), Some(new)) => new >= old,
                        (Some(_), None) => false,
                        _ => true,
                    };
                    if replace {
                        self.held[at] = Some(reply);
                    }
                }
                None => {
                    self.index.insert(key.to_owned(), self.held.len());
                    self.held.push(Some(reply));
                }
            },
            None => self.held.push(Some(reply)),
        }
        if self.held_bytes > HELD_BYTES {
            self.streaming = true;
            self.index.clear();
            for reply in std::mem::take(&mut self.held).into_iter().flatten() {
                self.pass(reply, out);
            }
            self.held_bytes = 0;
        }
    }

    /// Passes `reply` on while streaming: with `latest`, only if newer than its key's
    /// last one passed on.
    fn pass(&mut self, reply: Reply, out: &mut Vec<Reply>) {
        if self.latest {
            if let Some(key) = key_of(&reply) {
                let new = timestamp_of(&reply);
                match self.passed.get(key) {
                    Some(old) if !matches!((old, new), (Some(o), Some(n)) if n > *o) => return,
                    _ => {}
                }
                self.passed.insert(key.to_owned(), new);
            }
        }
        out.push(reply);
    }

    /// The query ended: what is held goes to `out`.
    pub(super) fn finish(&mut self, out: &mut Vec<Reply>) {
        out.extend(std::mem::take(&mut self.held).into_iter().flatten());
        self.index.clear();
    }
}

/// A reply's bytes as the session paces them.
fn weft_reply_bytes(reply: &Reply) -> usize {
    match &reply.result {
        Ok(s) => s.payload.len() + s.key_expr.len(),
        Err(e) => e.payload.len(),
    }
}

/// The answer to a query whose replies come from `replies`, written as `form`: all at
/// once if the replies fit in [`HELD_BYTES`], else streamed (the rest read on a thread of
/// the blocking pool, at its client's pace).
pub(super) fn answer(
    replies: PacedReplies,
    mut consolidator: Consolidator,
    form: Form,
) -> Response {
    let mut out = Vec::new();
    while !consolidator.streaming() {
        match replies.recv() {
            Ok(reply) => consolidator.take(reply, &mut out),
            Err(_) => {
                consolidator.finish(&mut out);
                let mut body = String::from(form.open());
                for (i, reply) in out.iter().enumerate() {
                    body.push_str(&form.item(reply, i == 0));
                }
                body.push_str(form.close());
                return Response::new(200, form.content_type(), body);
            }
        }
    }
    let queue = Arc::new(Queue::default());
    let writer = queue.clone();
    let write = move || {
        let mut first = true;
        let mut pending = out;
        let mut part = String::from(form.open());
        loop {
            for reply in pending.drain(..) {
                part.push_str(&form.item(&reply, first));
                first = false;
            }
            if !part.is_empty() && !writer.push(std::mem::take(&mut part).into_bytes()) {
                // The client is gone: so is the query's reader.
                return;
            }
            match replies.recv() {
                Ok(reply) => consolidator.take(reply, &mut pending),
                Err(_) => break,
            }
        }
        let _ = writer.push(form.close().as_bytes().to_vec());
        writer.end();
    };
    // Handlers run on the HTTP edge's blocking pool, which the connection limit bounds:
    // the writer takes one of its threads, never a thread of its own.
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return Response::new(
            500,
            "text/plain",
            "no HTTP runtime to stream the answer from".to_string(),
        );
    };
    drop(runtime.spawn_blocking(write));
    Response::stream(200, form.content_type(), Box::new(Streamed(queue)))
}

/// The parts of a streamed answer waiting for its client.
#[derive(Default)]
struct Queue {
    parts: Mutex<Parts>,
    room: Condvar,
}

#[derive(Default)]
struct Parts {
    waiting: VecDeque<Vec<u8>>,
    bytes: usize,
    reader: Option<Waker>,
    /// The answer is complete.
    ended: bool,
    /// The client went.
    gone: bool,
}

impl Queue {
    /// Queues `part`, waiting while [`QUEUED_BYTES`] wait already; false when the client
    /// went.
    fn push(&self, part: Vec<u8>) -> bool {
        let mut parts = self.parts.lock().unwrap_or_else(|e| e.into_inner());
        while parts.bytes >= QUEUED_BYTES && !parts.gone {
            parts = self.room.wait(parts).unwrap_or_else(|e| e.into_inner());
        }
        if parts.gone {
            return false;
        }
        parts.bytes += part.len();
        parts.waiting.push_back(part);
        let reader = parts.reader.take();
        drop(parts);
        if let Some(reader) = reader {
            reader.wake();
        }
        true
    }

    /// Nothing more comes.
    fn end(&self) {
        let mut parts = self.parts.lock().unwrap_or_else(|e| e.into_inner());
        parts.ended = true;
        let reader = parts.reader.take();
        drop(parts);
        if let Some(reader) = reader {
            reader.wake();
        }
    }
}

/// A streamed answer, as the HTTP edge writes it.
struct Streamed(Arc<Queue>);

impl crate::http::Stream for Streamed {
    fn poll_part(&mut self, cx: &mut Context<'_>) -> Poll<Option<Vec<u8>>> {
        let mut parts = self.0.parts.lock().unwrap_or_else(|e| e.into_inner());
        match parts.waiting.pop_front() {
            Some(part) => {
                parts.bytes -= part.len();
                drop(parts);
                self.0.room.notify_all();
                Poll::Ready(Some(part))
            }
            None if parts.ended => Poll::Ready(None),
            None => {
                parts.reader = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl Drop for Streamed {
    fn drop(&mut self) {
        self.0.parts.lock().unwrap_or_else(|e| e.into_inner()).gone = true;
        self.0.room.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft::{Sample, SampleKind};

    fn reply(key: &str, value: &str, time: Option<u64>) -> Reply {
        let sample = Sample {
            key_expr: key.into(),
            kind: SampleKind::Put,
            payload: value.as_bytes().to_vec().into(),
            encoding: "text/plain".into(),
            timestamp: time.map(|t| Timestamp {
                time: t,
                id: weft::ZenohId::new(1).unwrap(),
            }),
            attachment: None,
            priority: weft::Priority::default(),
            congestion_control: weft::CongestionControl::default(),
            express: false,
            source_info: None,
        };
        Reply {
            result: Ok(sample),
            replier_id: None,
        }
    }

    fn values(replies: &[Reply]) -> Vec<String> {
        replies
            .iter()
            .map(|r| {
                let s = r.result.as_ref().unwrap();
                format!("{}={}", s.key_expr, String::from_utf8_lossy(&s.payload))
            })
            .collect()
    }

    #[test]
    fn held_replies_keep_the_latest_per_key_in_arrival_order() {
        let mut c = Consolidator::new(true);
        let mut out = Vec::new();
        c.take(reply("a", "1", Some(5)), &mut out);
        c.take(reply("b", "1", Some(5)), &mut out);
        c.take(reply("a", "old", Some(3)), &mut out);
        c.take(reply("a", "2", Some(7)), &mut out);
        assert!(out.is_empty() && !c.streaming());
        c.finish(&mut out);
        assert_eq!(values(&out), ["a=2", "b=1"]);
        // Every reply, for a time range.
        let mut c = Consolidator::new(false);
        let mut out = Vec::new();
        c.take(reply("a", "1", Some(5)), &mut out);
        c.take(reply("a", "2", Some(3)), &mut out);
        c.finish(&mut out);
        assert_eq!(values(&out), ["a=1", "a=2"]);
    }

    #[test]
    fn beyond_what_is_held_replies_pass_on_never_older_than_their_key_s_last() {
        let mut c = Consolidator::new(true);
        let mut out = Vec::new();
        let big = "x".repeat(HELD_BYTES / 2);
        c.take(reply("a", &big, Some(5)), &mut out);
        assert!(out.is_empty());
        c.take(reply("b", &big, Some(5)), &mut out);
        assert!(c.streaming());
        assert_eq!(out.len(), 2, "what was held passes on");
        out.clear();
        c.take(reply("a", "older", Some(4)), &mut out);
        c.take(reply("c", "1", None), &mut out);
        c.take(reply("c", "again", None), &mut out);
        c.take(reply("a", "newer", Some(9)), &mut out);
        c.finish(&mut out);
        assert_eq!(values(&out), ["c=1", "a=newer"]);
    }
}
