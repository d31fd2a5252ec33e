/*
 * Transport: one link to a router (unicast, client mode) or to a multicast
 * group (peer mode). It owns the link buffers, frames network messages into
 * batches (with fragmentation when a message does not fit), checks sequence
 * numbers, reassembles fragments, keeps the lease, and hands every received
 * network message to a handler.
 *
 * Not thread-safe by itself: the session serialises calls with its lock.
 */
#ifndef WEFT_PICO_TRANSPORT_H
#define WEFT_PICO_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "../codec/msg.h"
#include "serial.h"
#include "zenoh-pico/platform.h"

#if Z_FEATURE_MULTICAST_TRANSPORT == 1 && Z_BATCH_MULTICAST_SIZE > Z_BATCH_UNICAST_SIZE
#define _Z_TX_CAPACITY Z_BATCH_MULTICAST_SIZE
#else
#define _Z_TX_CAPACITY Z_BATCH_UNICAST_SIZE
#endif
/* With automatic batching a stream (unicast) link queues up to
 * Z_TX_QUEUE_BATCHES batches, back to back with their length prefixes, so
 * that the writer sends them in one write when the application puts faster
 * than one batch per write. */
#if Z_FEATURE_AUTO_BATCHING == 1 && Z_BATCH_UNICAST_SIZE * Z_TX_QUEUE_BATCHES > _Z_TX_CAPACITY
#define _Z_TX_REGION (Z_BATCH_UNICAST_SIZE * Z_TX_QUEUE_BATCHES)
#else
#define _Z_TX_REGION _Z_TX_CAPACITY
#endif
#if Z_FEATURE_MULTICAST_TRANSPORT == 1 && Z_BATCH_MULTICAST_RX_SIZE > _Z_TX_CAPACITY
#define _Z_RX_CAPACITY Z_BATCH_MULTICAST_RX_SIZE
#else
#define _Z_RX_CAPACITY _Z_TX_CAPACITY
#endif

/*
 * Priority channels. With Z_FEATURE_QOS the unicast handshake offers QoS; once
 * both sides have it, each (priority, reliability) pair has its own SN space
 * and every Frame/Fragment carries the priority of its messages. Without it
 * (or when the router does not offer QoS, or in peer mode) there is one
 * channel per reliability, and every frame has the default priority.
 */
#if Z_FEATURE_QOS == 1
#define _Z_PRIO_CHANNELS 8
#else
#define _Z_PRIO_CHANNELS 1
#endif
#define _Z_PRIO_DEFAULT 5

/* Where a received network message came from (multicast: peer index). */
typedef struct {
    bool reliable;
    int8_t peer; /* -1 for unicast */
    uint8_t prio; /* priority of the Frame/Fragment (5 without QoS) */
} _z_rx_info_t;

typedef void (*_z_nmsg_handler_t)(void *ctx, const _z_nmsg_t *m, const _z_rx_info_t *info);

/* Per-channel receive state. */
typedef struct {
    uint32_t last_r;
    uint32_t last_be;
} _z_rx_sn_t;

#if Z_FEATURE_MULTICAST_TRANSPORT == 1
typedef struct {
    bool used;
    uint8_t addr[6];
    _z_zid_t zid;
    uint8_t whatami;
    uint32_t sn_mask;
    _z_rx_sn_t sn;
    uint64_t lease_ms;
    uint64_t last_rx_ms;
} _z_mpeer_t;
#endif

#if Z_FEATURE_FRAGMENTATION == 1
typedef struct {
    size_t len;
    bool active;
    bool reliable;
    int8_t peer;
    uint8_t prio;
    uint32_t next_sn;
    uint8_t buf[Z_FRAG_MAX_SIZE];
} _z_defrag_t;
#endif

typedef struct {
    _z_sys_socket_t sock;
    _z_endpoint_t ep;
    bool open;
    bool stream;      /* TCP: 2-byte length prefix */
    bool multicast;
#if Z_FEATURE_LINK_SERIAL == 1
    bool serial;               /* a batch per frame (serial.h) */
    _z_serial_dec_t sdec;      /* unstuffs into rx */
    uint8_t sin[32];           /* bytes read off the line, not yet unstuffed */
    uint8_t sin_at, sin_len;
#endif
    uint8_t whatami;  /* our 2-bit code */
    _z_zid_t zid;     /* ours */
    /* negotiated / remote */
    _z_zid_t remote_zid;
    uint8_t remote_whatami;
    uint16_t batch_size; /* largest batch we may send, prefix included */
    uint32_t sn_mask;
    bool qos; /* QoS negotiated: _Z_PRIO_CHANNELS SN spaces per reliability */
    uint32_t lease_ms;        /* ours (32 bits: no 64-bit division for the lease in seconds) */
    uint64_t remote_lease_ms; /* the other side's */
    /* tx */
    uint32_t tx_sn_r[_Z_PRIO_CHANNELS], tx_sn_be[_Z_PRIO_CHANNELS];
    size_t tx_base;  /* offset in tx of the batch being built (after sealed ones; 0 without automatic batching) */
    size_t tx_len;   /* bytes of the batch being built (after its prefix) */
    int8_t tx_frame; /* -1: no open frame, else (channel << 1) | reliable */
    bool tx_block;   /* the batch holds a message that must not be dropped */
    uint32_t tx_msgs; /* network messages in tx */
    uint32_t tx_dropped; /* messages dropped by congestion control DROP (kept across reconnections) */
    bool batching;
    uint64_t last_tx_ms;
#if Z_FEATURE_AUTO_BATCHING == 1
    /* The writer task's batch: the session's writer sends tx_out without the
     * lock; every other sender waits until it is free (tx_out_len 0, atomic). */
    bool auto_tx;          /* a writer task runs (changed with the lock held) */
    size_t tx_out_len;     /* bytes handed to the writer (batches with their prefixes); 0: free */
    bool tx_out_sending;   /* atomic: a thread claimed tx_out and sends it */
    bool tx_pending;       /* atomic hint: the batch being built waits for the writer */
    bool tx_out_droppable; /* written before tx_out_len is published */
    uint32_t tx_out_msgs;
    bool writer_ready;   /* atomic: the writer has nothing to send and wants the batch being built */
    bool writer_idle;    /* atomic: the writer waits, or is about to, on tx_wake */
    bool tx_done_wanted; /* atomic: a sender waits on tx_done for the writer's buffer */
    _z_event_t tx_wake;  /* set when the writer has work and waits */
    _z_event_t tx_done;  /* set when the writer has sent tx_out and a sender waits */
#endif
    /* rx */
    _z_rx_sn_t rx_sn[_Z_PRIO_CHANNELS];
    uint64_t last_rx_ms;
    size_t rx_have; /* stream: bytes of the current batch (or prefix) received */
    size_t rx_need; /* stream: 0 while reading the prefix */
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    uint64_t last_join_ms;
#endif
    _z_nmsg_handler_t handler;
    void *handler_ctx;
    /* The buffers last: every other member stays within the reach of one
     * load or store with an immediate offset (a smaller and faster access). */
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    _z_mpeer_t peers[ZP_MAX_PEERS];
#endif
    uint8_t tx[_Z_TX_REGION];
#if Z_FEATURE_AUTO_BATCHING == 1
    uint8_t tx_out[_Z_TX_REGION];
#endif
    uint8_t rx[_Z_RX_CAPACITY];
#if Z_FEATURE_FRAGMENTATION == 1
    _z_defrag_t defrag;
#endif
} _z_transport_t;

/* Links other than TCP this build may open: without them every link is a
 * stream, and the code of datagrams is left out. */
#define _Z_UDP_LINKS (Z_FEATURE_LINK_UDP_UNICAST || Z_FEATURE_MULTICAST_TRANSPORT)
#define _Z_DATAGRAM_LINKS (_Z_UDP_LINKS || Z_FEATURE_LINK_SERIAL)

/* Parses a locator ("tcp/1.2.3.4:7447", "udp/224.0.0.225:7447#iface=eth0"). */
z_result_t _z_endpoint_parse(_z_endpoint_t *ep, const char *locator);

/* Opens the link and runs the unicast handshake (or the multicast join). */
z_result_t _z_transport_open(_z_transport_t *t, const _z_endpoint_t *ep);
/* Sends Close (when `send_close`) and closes the link. */
void _z_transport_close(_z_transport_t *t, bool send_close);

/*
 * Queues one network message. It is framed into the current batch, which is
 * sent at once unless batching is on (an express message is always sent at once);
 * a message too large for one batch is fragmented.
 *
 * Congestion control: a batch made only of DROP messages (Push, Request or
 * Response without the QoS D bit) is dropped whole, and its messages counted
 * in tx_dropped, when the link cannot take its first byte within
 * ZP_CONGESTION_DROP_WAIT_MS; anything else waits for the link (BLOCK). A
 * fragmented DROP message is decided by its first fragment.
 */
z_result_t _z_transport_send(_z_transport_t *t, const _z_nmsg_t *m, bool reliable, bool express);
/* Sends the batch being built, if any. */
z_result_t _z_transport_flush(_z_transport_t *t);

#if Z_FEATURE_AUTO_BATCHING == 1
/*
 * Automatic batching. While a writer task runs (auto_tx), a message that is
 * not express is appended to the batch being built (tx), and tx is handed
 * over to the writer's buffer (tx_out) when that is free and either the
 * writer asks for work (writer_ready: it has nothing to send; woken if it
 * sleeps) or tx is a quarter of a batch full. The writer sends tx_out without
 * the lock; the messages put meanwhile fill tx, handed over by a later put,
 * or taken by the writer itself when no put comes within a few microseconds.
 * On a stream link a full batch is sealed and the next one started behind it
 * in tx, up to Z_TX_QUEUE_BATCHES, so that the writer sends them all in one
 * write; when tx has no room left, the put waits until tx_out is free
 * (BLOCK; a hand-over of DROP messages only is dropped by the writer when the
 * link has no room). Manual batching (zp_batch_start) suspends it.
 */
/* How long one side of the hand-over looks for the other before sleeping or
 * taking the lock: the writer for a put to hand its batch over, a put for the
 * writer to free its buffer. A few puts' time, so that a tight put loop keeps
 * the lock to itself (measured best of 3, 10 and 20 µs). */
#ifndef _Z_WRITER_PATIENCE_US
#define _Z_WRITER_PATIENCE_US 10u
#endif
/* A bounded busy wait that reads the clock only every _Z_SPIN_STRIDE looks
 * (a look is a few atomic loads; a clock read costs more than several). */
#define _Z_SPIN_STRIDE 16u
typedef struct {
    uint64_t until_us; /* 0 until the first clock read */
    uint32_t patience_us;
    uint32_t looks;
} _z_spin_t;
static inline void _z_spin_start(_z_spin_t *sp, uint32_t patience_us) {
    sp->until_us = 0;
    sp->patience_us = patience_us;
    sp->looks = 0;
}
/* True while the patience lasts. */
static inline bool _z_spin_more(_z_spin_t *sp) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause(); /* leaves the core to its sibling thread and the line to its writer */
#elif defined(__aarch64__) || (defined(__ARM_ARCH) && __ARM_ARCH >= 7)
    __asm__ volatile("yield");
#endif
    if (++sp->looks % _Z_SPIN_STRIDE != 0) return true;
    uint64_t now = _z_clock_us();
    if (sp->until_us == 0) sp->until_us = now + sp->patience_us;
    return now < sp->until_us;
}
/* Claims the batch handed over for sending (no lock needed; exactly one
 * thread wins). True when the caller must now send it. */
bool _z_transport_claim_batch(_z_transport_t *t);
/* Called by the writer with the lock held: hands over the batch being built
 * if the writer's buffer is free, and claims it. True when the writer has a batch to send. */
bool _z_transport_take_batch(_z_transport_t *t);
/* Called by the writer without the lock: sends the batch it claimed and frees
 * its buffer. *dropped counts the messages of a DROP batch the link had no
 * room for. */
z_result_t _z_transport_write_batch(_z_transport_t *t, uint32_t *dropped);
/* Lock held: makes the writer's buffer free. A batch handed over but not yet
 * claimed is sent by the calling thread; one the writer claimed is waited for
 * (the writer needs no lock to finish it). */
z_result_t _z_transport_wait_writer(_z_transport_t *t);
#endif

/*
 * Receives from the link, waiting at most timeout_ms. When a whole batch is
 * in the receive buffer, *len is its length (else 0) and `src` its sender
 * (datagrams). Touches only the receive state: it may run without the
 * session lock while others send.
 */
z_result_t _z_transport_recv(_z_transport_t *t, uint32_t timeout_ms, size_t *len, uint8_t src[6]);
/* Processes the batch that _z_transport_recv reported (calls the handler). */
z_result_t _z_transport_process(_z_transport_t *t, size_t len, const uint8_t src[6]);
/* Keep-alive / Join when due; lease check. Error when the remote expired. */
z_result_t _z_transport_tick(_z_transport_t *t);
/* Sends a KeepAlive (unicast) or a Join (multicast) now. */
z_result_t _z_transport_send_keepalive(_z_transport_t *t);

/* Internals shared by the transport files. */
/* A batch in a buffer is preceded by its length, 2 bytes little-endian: the
 * stream framing, and how queued batches are told apart. */
#define _Z_BATCH_PREFIX 2u
static inline void _z_batch_prefix(uint8_t *p, size_t len) {
    p[0] = (uint8_t)(len & 0xffu);
    p[1] = (uint8_t)(len >> 8);
}
/* Empties the batch being built (and those queued behind it). */
void _z_tx_reset(_z_transport_t *t);
/* Sends one batch; `batch` has _Z_BATCH_PREFIX bytes of room before it. */
z_result_t _z_link_send_batch(_z_transport_t *t, uint8_t *batch, size_t len);
/* The same, for a batch of droppable messages: _Z_NET_BUSY when the link had no room. */
z_result_t _z_link_try_send_batch(_z_transport_t *t, uint8_t *batch, size_t len);
/* Sends `len` bytes of sealed batches, each behind its 2-byte little-endian
 * length: one write on a stream link, one datagram per batch otherwise.
 * `droppable` as _z_link_try_send_batch (decided for all of them at once). */
z_result_t _z_link_send_sealed(_z_transport_t *t, uint8_t *buf, size_t len, bool droppable);
/* Processes one batch; `peer` is the multicast sender's index (-1: unknown
 * sender or unicast), `src` its address (multicast Joins). */
z_result_t _z_rx_batch(_z_transport_t *t, const uint8_t *b, size_t len, int8_t peer, const uint8_t *src);
#if Z_FEATURE_LINK_SERIAL == 1
/* Serial link (serial_link.c). Opening: the connecting side's exchange of
 * control frames (I, answered I+A; R: start again) before the handshake. */
z_result_t _z_serial_open(_z_transport_t *t);
/* Sends one frame; `droppable`: _Z_NET_BUSY (nothing sent) when the line had no room. */
#define _Z_SERIAL_DATA 0u
z_result_t _z_serial_write(_z_transport_t *t, uint8_t flags, const uint8_t *payload, size_t len, bool droppable);
/* Reads what the line has (waiting at most timeout_ms); *len as _z_transport_recv.
 * An I (the other side started again) is answered R, and it or an R ends the link. */
z_result_t _z_serial_recv(_z_transport_t *t, uint32_t timeout_ms, size_t *len);
#endif
uint32_t _z_sn_mask(uint8_t resolution);
/* Sets every SN counter of both directions from the initial SNs (handshake, Join). */
void _z_sn_init(_z_transport_t *t, uint32_t tx_initial, uint32_t rx_initial);
/* The channel index of a priority: the priority when QoS is on, else 0. */
static inline unsigned _z_prio_channel(const _z_transport_t *t, uint8_t prio) {
#if Z_FEATURE_QOS == 1
    return t->qos ? (unsigned)(prio & 0x07u) : 0u;
#else
    (void)t;
    (void)prio;
    return 0u;
#endif
}
bool _z_sn_accept(uint32_t *last, uint32_t sn, uint32_t mask);
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
z_result_t _z_mcast_open(_z_transport_t *t);
z_result_t _z_mcast_send_join(_z_transport_t *t);
void _z_mcast_on_join(_z_transport_t *t, const _z_tmsg_t *m, const uint8_t src[6]);
int8_t _z_mcast_peer(_z_transport_t *t, const uint8_t src[6]);
void _z_mcast_expire(_z_transport_t *t, uint64_t now);
#endif

#endif
