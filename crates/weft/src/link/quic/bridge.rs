//! The bridge between a QUIC stream and weft: one task per link, on the QUIC runtime,
//! copies the bytes weft writes into its end of a Unix socket pair to the QUIC stream,
//! and the bytes the stream delivers into the socket pair for weft to read.
//!
//! Each direction holds at most one chunk ([`CHUNK`]) in the task; everything else waits
//! in bounded places: the socket pair's kernel buffers, quinn's send buffer (its send
//! window) and its receive buffer (the stream's flow-control window). A side that stops
//! reading stops the other side's writer through them.
//!
//! Closing either side closes the other: weft ending its socket (a transport closing)
//! finishes the QUIC stream, which the peer reads as the end of the link, and the
//! connection is closed once the peer has it (or after [`LINGER`]); the peer finishing its
//! stream ends weft's socket for writing (weft reads the end of the link); a connection
//! lost or closed by the peer ends weft's socket both ways.

use std::future::{poll_fn, Future};
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::BytesMut;
use quinn::{Connection, ConnectionError, RecvStream, SendStream, VarInt};
use tokio::net::UnixStream;

/// Most bytes the bridge moves at once, each way.
pub(super) const CHUNK: usize = 64 * 1024;

/// How long a closing link waits for the peer to acknowledge the last bytes and to end
/// its own side, before the connection is closed regardless.
pub(super) const LINGER: Duration = Duration::from_secs(2);

/// How the weft-to-QUIC direction ended.
enum Upstream {
    /// weft ended its socket: the stream is to be finished.
    Ended(SendStream),
    /// The stream or the socket failed.
    Failed(String),
    /// The connection is gone.
    Lost(ConnectionError),
}

/// Runs the bridge of one established link until both sides are closed.
pub(super) async fn run(
    conn: Connection,
    send: SendStream,
    recv: RecvStream,
    far: std::os::unix::net::UnixStream,
    peer: SocketAddr,
) {
    let far = match UnixStream::from_std(far) {
        Ok(f) => Arc::new(f),
        Err(e) => {
            tracing::warn!("QUIC link with {peer}: cannot bridge it: {e}");
            conn.close(VarInt::from_u32(0), b"");
            return;
        }
    };
    let downstream = tokio::spawn(downstream(recv, far.clone(), peer));
    let lost = {
        let conn = conn.clone();
        async move { Upstream::Lost(conn.closed().await) }
    };
    match first(upstream(send, &far), lost).await {
        Upstream::Ended(mut send) => {
            // What weft wrote is delivered, then the end of the stream; the peer ends
            // its side in turn (or not: LINGER bounds both waits).
            let _ = send.finish();
            let _ = tokio::time::timeout(LINGER, send.stopped()).await;
            let _ = tokio::time::timeout(LINGER, downstream).await;
        }
        Upstream::Failed(reason) => {
            tracing::debug!("QUIC link with {peer}: {reason}");
            shutdown(&far, Shutdown::Both);
        }
        Upstream::Lost(reason) => {
            tracing::debug!("QUIC link with {peer} closed: {reason}");
            shutdown(&far, Shutdown::Both);
        }
    }
    conn.close(VarInt::from_u32(0), b"");
}

/// Copies what weft writes to the QUIC stream, until weft ends its socket.
async fn upstream(mut send: SendStream, far: &UnixStream) -> Upstream {
    let mut buf = BytesMut::new();
    loop {
        if let Err(e) = far.readable().await {
            return Upstream::Failed(format!("socket pair: {e}"));
        }
        // Read into fresh room (the chunks handed to quinn before are its own until
        // acknowledged), then hand the bytes over without a copy.
        buf.reserve(CHUNK);
        match far.try_read_buf(&mut buf) {
            Ok(0) => return Upstream::Ended(send),
            Ok(_) => {
                if let Err(e) = send.write_chunk(buf.split().freeze()).await {
                    return Upstream::Failed(format!("cannot send: {e}"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Upstream::Failed(format!("socket pair: {e}")),
        }
    }
}

/// Copies what the QUIC stream delivers to weft, until the peer finishes the stream
/// (weft's socket is then ended for writing) or the stream fails (ended both ways).
async fn downstream(mut recv: RecvStream, far: Arc<UnixStream>, peer: SocketAddr) {
    loop {
        match recv.read_chunk(CHUNK, true).await {
            Ok(Some(chunk)) => {
                if write_all(&far, &chunk.bytes).await.is_err() {
                    // weft has closed its socket: nothing more is read.
                    let _ = recv.stop(VarInt::from_u32(0));
                    return;
                }
            }
            Ok(None) => {
                shutdown(&far, Shutdown::Write);
                return;
            }
            Err(e) => {
                tracing::debug!("QUIC link with {peer}: the stream ended: {e}");
                shutdown(&far, Shutdown::Both);
                return;
            }
        }
    }
}

/// Writes all of `data` into the socket pair, waiting for room.
async fn write_all(far: &UnixStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        far.writable().await?;
        match far.try_write(data) {
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn shutdown(far: &UnixStream, how: Shutdown) {
    let _ = socket2::SockRef::from(far).shutdown(how);
}

/// The output of whichever of `a` and `b` completes first.
async fn first<T>(a: impl Future<Output = T>, b: impl Future<Output = T>) -> T {
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| match a.as_mut().poll(cx) {
        Poll::Ready(v) => Poll::Ready(v),
        Poll::Pending => b.as_mut().poll(cx),
    })
    .await
}
