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
use std::io::{self, IoSlice};
use std::net::{Shutdown, SocketAddr};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use quinn::{Connection, ConnectionError, RecvStream, SendStream, VarInt};
use tokio::net::UnixStream;

/// Most bytes the bridge reads at once from weft's socket.
pub(super) const CHUNK: usize = 64 * 1024;

/// Most received pieces of the QUIC stream written to weft's socket in one call. quinn
/// hands the stream over as it arrived, about a packet (1.2–1.5 kB) per piece: writing
/// them one by one would cost a system call and a wake-up of weft's reader each.
const PIECES: usize = 64;

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
/// Everything the stream holds (up to [`PIECES`] pieces) goes to weft in one write.
async fn downstream(mut recv: RecvStream, far: Arc<UnixStream>, peer: SocketAddr) {
    let mut pieces: [Bytes; PIECES] = std::array::from_fn(|_| Bytes::new());
    loop {
        match recv.read_chunks(&mut pieces).await {
            Ok(Some(n)) => {
                if write_all_pieces(&far, &mut pieces[..n]).await.is_err() {
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

/// Writes all of `pieces` into the socket pair, in order, as few writes as the room
/// allows, waiting for room; the pieces are emptied as they are written.
async fn write_all_pieces(far: &UnixStream, mut pieces: &mut [Bytes]) -> io::Result<()> {
    loop {
        while pieces.first().is_some_and(Bytes::is_empty) {
            pieces = &mut pieces[1..];
        }
        if pieces.is_empty() {
            return Ok(());
        }
        far.writable().await?;
        let mut slices = [IoSlice::new(&[]); PIECES];
        for (slice, piece) in slices.iter_mut().zip(pieces.iter()) {
            *slice = IoSlice::new(piece);
        }
        match far.try_write_vectored(&slices[..pieces.len().min(PIECES)]) {
            Ok(mut n) => {
                for piece in pieces.iter_mut() {
                    let taken = n.min(piece.len());
                    bytes::Buf::advance(piece, taken);
                    n -= taken;
                    if n == 0 {
                        break;
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
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

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn pieces_reach_the_socket_whole_and_in_order_through_partial_writes() {
        let (near, far) = std::os::unix::net::UnixStream::pair().unwrap();
        // A small buffer on the writing end: most writes take only part of the pieces.
        socket2::SockRef::from(&far)
            .set_send_buffer_size(4096)
            .unwrap();
        far.set_nonblocking(true).unwrap();
        let pieces: Vec<Bytes> = (0..PIECES)
            .map(|i| {
                Bytes::from(
                    (0..(i * 97 % 3000 + 1))
                        .map(|b| (b + i) as u8)
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        let want: Vec<u8> = pieces.iter().flat_map(|p| p.iter().copied()).collect();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut near = near;
            near.read_to_end(&mut got).unwrap();
            got
        });
        let written = super::super::runtime::run(async move {
            let far = UnixStream::from_std(far).unwrap();
            let mut pieces = pieces;
            let result = write_all_pieces(&far, &mut pieces).await;
            (result.is_ok(), pieces.iter().all(Bytes::is_empty))
        })
        .unwrap();
        assert_eq!(written, (true, true));
        assert_eq!(reader.join().unwrap(), want);
    }
}
