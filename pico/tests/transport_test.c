/*
 * Transport tests over a local socket pair (no router): framing, batching
 * (nothing leaves before flush; one batch carries several messages),
 * fragmentation and reassembly, the bounded reassembly buffer, and the
 * sequence-number rule.
 */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/transport/transport.h"
#include "test.h"

typedef struct {
    int count;
    uint8_t last_prio; /* priority of the Frame that carried the last message */
    size_t last_len;
    uint8_t last[8192];
} sink_t;

static void on_msg(void *ctx, const _z_nmsg_t *m, const _z_rx_info_t *info) {
    sink_t *s = (sink_t *)ctx;
    if (m->id != _Z_N_PUSH) return;
    s->count++;
    s->last_prio = info->prio;
    s->last_len = m->m.push.body.payload.len;
    if (s->last_len <= sizeof(s->last)) memcpy(s->last, m->m.push.body.payload.ptr, s->last_len);
}

static _z_transport_t ta, tb;
static sink_t sink;

static void pair(uint16_t batch) {
    int fds[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
    memset(&ta, 0, sizeof(ta));
    memset(&tb, 0, sizeof(tb));
    memset(&sink, 0, sizeof(sink));
    _z_transport_t *ts[2] = {&ta, &tb};
    for (int i = 0; i < 2; i++) {
        _z_transport_t *t = ts[i];
        t->sock.fd = fds[i];
        t->sock.kind = _Z_LINK_TCP;
        t->open = true;
        t->stream = true;
        t->batch_size = batch;
        t->sn_mask = _z_sn_mask(2);
        t->tx_frame = -1;
        t->lease_ms = 10000;
        t->remote_lease_ms = 10000;
        _z_sn_init(t, 0, 0); /* both initial SNs are 0 */
        t->handler = on_msg;
        t->handler_ctx = &sink;
    }
}

static void unpair(void) {
    _z_net_close(&ta.sock);
    _z_net_close(&tb.sock);
}

/* Processes everything B can read within a short time. */
static void drain(void) {
    for (int i = 0; i < 200; i++) {
        size_t len = 0;
        if (_z_transport_recv(&tb, 5, &len, NULL) != Z_OK) return;
        if (len > 0) (void)_z_transport_process(&tb, len, NULL);
        if (len == 0 && tb.rx_have == 0 && tb.rx_need == 0 && i > 3) return;
    }
}

static void push(_z_nmsg_t *m, const uint8_t *p, size_t n) {
    memset(m, 0, sizeof(*m));
    m->id = _Z_N_PUSH;
    m->m.push.key.suffix = "demo/t";
    m->m.push.key.suffix_len = 6;
    m->m.push.body.id = _Z_Z_PUT;
    m->m.push.body.payload.ptr = p;
    m->m.push.body.payload.len = n;
    m->ext.has_qos = true; /* Data, BLOCK: these tests fill the link before reading it */
    m->ext.qos = 0x0d;
}

static void test_single_message(void) {
    _z_nmsg_t m;
    pair(1024);
    push(&m, (const uint8_t *)"hello", 5);
    CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    drain();
    CHECK_EQ(sink.count, 1);
    CHECK_MEM(sink.last, "hello", 5);
    unpair();
}

static void test_batching(void) {
    _z_nmsg_t m;
    pair(1024);
    ta.batching = true;
    for (int i = 0; i < 3; i++) {
        push(&m, (const uint8_t *)"abc", 3);
        CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    }
    drain();
    CHECK_EQ(sink.count, 0); /* nothing left before the flush */
    CHECK_EQ(_z_transport_flush(&ta), Z_OK);
    drain();
    CHECK_EQ(sink.count, 3);
    CHECK_EQ(ta.tx_sn_r[0], 1); /* the three messages shared one Frame */
    /* an express message leaves at once, with what was batched before it */
    push(&m, (const uint8_t *)"def", 3);
    CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    push(&m, (const uint8_t *)"now", 3);
    CHECK_EQ(_z_transport_send(&ta, &m, true, true), Z_OK);
    drain();
    CHECK_EQ(sink.count, 5);
    CHECK_MEM(sink.last, "now", 3);
    unpair();
}

#if Z_FEATURE_AUTO_BATCHING == 1
/*
 * Automatic batching while the writer is busy: full batches queue behind each
 * other in the buffer being built (nothing leaves), then go in one write; the
 * receiver gets every message, in order, in batches of the negotiated size.
 */
static void test_queued_batches(void) {
    static uint8_t payload[100];
    _z_nmsg_t m;
    pair(1024);
    ta.auto_tx = true;
    ta.tx_out_len = 1; /* the writer's buffer is taken and being sent */
    ta.tx_out_sending = true;
    enum { N = 25 }; /* about 9 messages per 1 KiB batch: 3 batches */
    for (int i = 0; i < N; i++) {
        payload[0] = (uint8_t)i;
        push(&m, payload, sizeof(payload));
        CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    }
    CHECK(ta.tx_base > 1024); /* at least two full batches sealed behind each other */
    CHECK(ta.tx_pending);     /* the writer is told there is work */
    drain();
    CHECK_EQ(sink.count, 0);
    ta.tx_out_len = 0; /* the writer is done: the queued batches leave together */
    ta.tx_out_sending = false;
    CHECK_EQ(_z_transport_flush(&ta), Z_OK);
    drain();
    CHECK_EQ(sink.count, N);
    CHECK_EQ(sink.last[0], N - 1);
    CHECK(ta.tx_sn_r[0] >= 3); /* one Frame per batch */
    unpair();
}
#endif

#if Z_FEATURE_FRAGMENTATION == 1
static void test_fragmentation(void) {
    static uint8_t big[3500];
    _z_nmsg_t m;
    for (size_t i = 0; i < sizeof(big); i++) big[i] = (uint8_t)(i * 13 + 1);
    pair(1024);
    push(&m, big, sizeof(big));
    CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    CHECK(ta.tx_sn_r[0] >= 4); /* at least four fragments of <= 1022 bytes */
    drain();
    CHECK_EQ(sink.count, 1);
    CHECK_EQ(sink.last_len, sizeof(big));
    CHECK_MEM(sink.last, big, sizeof(big));
    unpair();
}

static void test_reassembly_limit(void) {
    static uint8_t huge[Z_FRAG_MAX_SIZE + 100];
    _z_nmsg_t m;
    pair(1024);
    push(&m, huge, sizeof(huge));
    CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    push(&m, (const uint8_t *)"after", 5);
    CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    drain();
    CHECK_EQ(sink.count, 1); /* the oversized message is dropped, the link survives */
    CHECK_MEM(sink.last, "after", 5);
    unpair();
}

#endif

static void test_duplicate_sn_dropped(void) {
    _z_nmsg_t m;
    pair(1024);
    push(&m, (const uint8_t *)"one", 3);
    CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    ta.tx_sn_r[0] = 0; /* replay SN 0 */
    push(&m, (const uint8_t *)"dup", 3);
    CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    drain();
    CHECK_EQ(sink.count, 1);
    CHECK_MEM(sink.last, "one", 3);
    uint32_t last = 5;
    CHECK(!_z_sn_accept(&last, 5, 0x7f));
    CHECK(_z_sn_accept(&last, 6, 0x7f));
    CHECK(!_z_sn_accept(&last, 6 + 0x41, 0x7f)); /* more than half the space ahead */
    CHECK(_z_sn_accept(&last, 0x7f & (6 + 0x40), 0x7f));
    unpair();
}

/* Reads the next whole batch that `ta` sent, without processing it. */
static size_t next_batch(uint8_t *out, size_t cap) {
    uint8_t pre[2];
    if (recv(tb.sock.fd, pre, 2, MSG_WAITALL) != 2) return 0;
    size_t len = (size_t)pre[0] | ((size_t)pre[1] << 8);
    if (len > cap || recv(tb.sock.fd, out, len, MSG_WAITALL) != (ssize_t)len) return 0;
    return len;
}

static void send_at(_z_transport_t *t, uint8_t prio, const char *payload) {
    _z_nmsg_t m;
    push(&m, (const uint8_t *)payload, strlen(payload));
    m.ext.has_qos = true;
    m.ext.qos = (uint8_t)(0x08u | prio);
    CHECK_EQ(_z_transport_send(t, &m, true, false), Z_OK);
}

/* Without QoS, every frame has the default priority: no Frame QoS extension. */
static void test_priority_without_qos(void) {
    uint8_t b[256];
    pair(1024);
    send_at(&ta, 1, "rt");
    size_t len = next_batch(b, sizeof(b));
    CHECK(len > 2);
    CHECK_EQ(b[0], 0x25); /* Frame, reliable, no extension */
    CHECK_EQ(ta.tx_sn_r[0], 1);
    unpair();
}

#if Z_FEATURE_QOS == 1
/* With QoS: one SN space per priority, the priority in the Frame QoS extension
 * (omitted for Data), and the receiver accepts every priority. */
static void test_priority_channels(void) {
    uint8_t b[256];
    pair(1024);
    ta.qos = true;
    tb.qos = true;
    ta.tx_sn_r[1] = 40; /* each channel counts on its own */
    send_at(&ta, 1, "rt");
    size_t len = next_batch(b, sizeof(b));
    CHECK(len > 4);
    CHECK_EQ(b[0], 0xa5); /* Frame, reliable, Z: extensions follow */
    CHECK_EQ(b[1], 40);   /* SN of the RealTime channel */
    CHECK_EQ(b[2], 0x31); /* Frame QoS extension (Z64, mandatory) */
    CHECK_EQ(b[3], 1);    /* priority 1 */
    CHECK_EQ(ta.tx_sn_r[1], 41);
    CHECK_EQ(ta.tx_sn_r[5], 0);
    send_at(&ta, 5, "data");
    len = next_batch(b, sizeof(b));
    CHECK_EQ(b[0], 0x25); /* Data: no extension */
    CHECK_EQ(b[1], 0);
    CHECK_EQ(ta.tx_sn_r[5], 1);
    /* the receiver: SN 40 is ahead of 0 on channel 1, SN 0 ahead of -1 on channel 5 */
    tb.rx_sn[1].last_r = 39;
    ta.tx_sn_r[1] = 40;
    ta.tx_sn_r[5] = 0;
    ta.tx_sn_r[7] = 0;
    send_at(&ta, 1, "one");
    send_at(&ta, 7, "seven");
    send_at(&ta, 5, "five");
    drain();
    CHECK_EQ(sink.count, 3);
    CHECK_EQ(sink.last_prio, 5);
    CHECK_MEM(sink.last, "five", 4);
    send_at(&ta, 7, "bg");
    drain();
    CHECK_EQ(sink.count, 4);
    CHECK_EQ(sink.last_prio, 7);
    /* a replayed SN is dropped on its own channel only */
    ta.tx_sn_r[7] = 0;
    send_at(&ta, 7, "replay");
    send_at(&ta, 2, "ih");
    drain();
    CHECK_EQ(sink.count, 5);
    CHECK_EQ(sink.last_prio, 2);
    /* batched messages of several priorities: one Frame per priority change */
    ta.batching = true;
    uint32_t r2 = ta.tx_sn_r[2], r3 = ta.tx_sn_r[3];
    send_at(&ta, 2, "a");
    send_at(&ta, 2, "b");
    send_at(&ta, 3, "c");
    CHECK_EQ(_z_transport_flush(&ta), Z_OK);
    CHECK_EQ(ta.tx_sn_r[2], r2 + 1);
    CHECK_EQ(ta.tx_sn_r[3], r3 + 1);
    drain();
    CHECK_EQ(sink.count, 8);
    CHECK_EQ(sink.last_prio, 3);
    unpair();
}

#if Z_FEATURE_FRAGMENTATION == 1
static void test_priority_fragments(void) {
    static uint8_t big[3000];
    uint8_t b[1100];
    _z_nmsg_t m;
    for (size_t i = 0; i < sizeof(big); i++) big[i] = (uint8_t)(i * 7 + 3);
    pair(1024);
    ta.qos = true;
    tb.qos = true;
    push(&m, big, sizeof(big));
    m.ext.has_qos = true;
    m.ext.qos = 0x08 | 6;
    CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    CHECK(ta.tx_sn_r[6] >= 3);
    CHECK_EQ(ta.tx_sn_r[5], 0);
    size_t len = next_batch(b, sizeof(b));
    CHECK(len > 4);
    CHECK_EQ(b[0] & 0x1f, _Z_T_FRAGMENT);
    CHECK_EQ(b[2], 0xb1); /* Fragment QoS extension, more extensions follow (First) */
    CHECK_EQ(b[3], 6);
    while (len > 0 && (b[0] & _Z_FLAG_2) != 0) len = next_batch(b, sizeof(b)); /* the other fragments */
    CHECK(len > 0);
    /* again, through the receiver */
    uint32_t first = ta.tx_sn_r[6];
    CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
    tb.rx_sn[6].last_r = first - 1u;
    drain();
    CHECK_EQ(sink.count, 1);
    CHECK_EQ(sink.last_prio, 6);
    CHECK_EQ(sink.last_len, sizeof(big));
    CHECK_MEM(sink.last, big, sizeof(big));
    unpair();
}
#endif
#endif

/*
 * Congestion control with a receiver that does not read: DROP messages are
 * dropped whole and counted, never blocking; what did go out is whole
 * batches only; a BLOCK message waits until the receiver reads.
 */
static void test_congestion_drop(void) {
    static uint8_t payload[600];
    _z_nmsg_t m;
    int small = 4096;
    pair(1024);
    setsockopt(ta.sock.fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    setsockopt(tb.sock.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    int sent = 0;
    uint64_t start = _z_clock_ms(), slowest = 0;
    while (ta.tx_dropped < 20 && sent < 20000 && _z_clock_ms() - start < 5000) {
        push(&m, payload, sizeof(payload));
        m.ext.has_qos = false; /* the default QoS: Data, DROP */
        uint64_t t0 = _z_clock_ms();
        CHECK_EQ(_z_transport_send(&ta, &m, true, false), Z_OK);
        if (_z_clock_ms() - t0 > slowest) slowest = _z_clock_ms() - t0;
        sent++;
    }
    CHECK(ta.tx_dropped >= 20);
    CHECK(slowest < 100); /* a DROP send never waits for the reader */
    /* BLOCK messages wait: 2000 of them (far more than the link holds) are sent
     * from a child process, which must still be blocked after 300 ms, and done
     * once the receiver reads */
    enum { N_BLOCK = 2000 };
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        for (int i = 0; i < N_BLOCK; i++) {
            push(&m, payload, sizeof(payload)); /* Data, BLOCK */
            if (_z_transport_send(&ta, &m, true, false) != Z_OK) _exit(1);
        }
        _exit(0);
    }
    int status = 0;
    _z_sleep_ms(300);
    bool blocked = waitpid(child, &status, WNOHANG) == 0;
    int got = 0;
    for (int i = 0; i < 400 && got == 0; i++) { /* read everything, at most ~4 s */
        drain();
        got = waitpid(child, &status, WNOHANG);
    }
    if (got == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    CHECK(blocked);
    CHECK(got == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    drain();
    /* every message is either received whole or counted as dropped, and the child's all arrived */
    CHECK_EQ(sink.count + (int)ta.tx_dropped, sent + N_BLOCK);
    CHECK_EQ(sink.last_len, sizeof(payload));
    unpair();
}

static void test_oversized_batch_is_an_error(void) {
    uint8_t junk[4] = {0xff, 0xff, 0x00, 0x00};
    size_t len = 0;
    pair(1024);
    CHECK(write(ta.sock.fd, junk, sizeof(junk)) == 4);
    CHECK_EQ(_z_transport_recv(&tb, 100, &len, NULL), Z_EDESERIALIZE);
    unpair();
}

static void test_keepalive_and_lease(void) {
    uint8_t buf[8];
    pair(1024);
    uint64_t now = _z_clock_ms();
    ta.last_rx_ms = now;
    ta.last_tx_ms = now;
    CHECK_EQ(_z_transport_tick(&ta), Z_OK);
    CHECK(recv(tb.sock.fd, buf, sizeof(buf), MSG_DONTWAIT) < 0); /* nothing due yet */
    ta.last_tx_ms = now - ta.lease_ms / 4u;                     /* silent for lease/4 */
    CHECK_EQ(_z_transport_tick(&ta), Z_OK);
    CHECK_EQ(recv(tb.sock.fd, buf, sizeof(buf), MSG_DONTWAIT), 3);
    CHECK_EQ(buf[0], 1);
    CHECK_EQ(buf[1], 0);
    CHECK_EQ(buf[2], _Z_T_KEEPALIVE);
    ta.last_rx_ms = now - ta.remote_lease_ms - 1; /* nothing received for the remote's lease */
    CHECK_EQ(_z_transport_tick(&ta), Z_ETIMEDOUT);
    unpair();
}

static void test_close_ends_link(void) {
    size_t len = 0;
    pair(1024);
    _z_transport_close(&ta, true);
    CHECK_EQ(_z_transport_recv(&tb, 100, &len, NULL), Z_OK); /* prefix */
    CHECK_EQ(_z_transport_recv(&tb, 100, &len, NULL), Z_OK); /* Close */
    CHECK_EQ(len, 2);
    CHECK_EQ(_z_transport_process(&tb, len, NULL), Z_ECLOSED);
    _z_net_close(&tb.sock);
}

static void test_locators(void) {
    _z_endpoint_t ep;
    CHECK_EQ(_z_endpoint_parse(&ep, "tcp/127.0.0.1:7447"), Z_OK);
    CHECK_EQ(ep.kind, _Z_LINK_TCP);
    CHECK_EQ(ep.port, 7447);
    CHECK_EQ(ep.addr[0], 127);
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    CHECK_EQ(_z_endpoint_parse(&ep, "udp/224.0.0.225:7447#iface=veth0"), Z_OK);
    CHECK_EQ(ep.kind, _Z_LINK_UDP_MULTICAST);
    CHECK(strcmp(ep.iface, "veth0") == 0);
#else
    CHECK_EQ(_z_endpoint_parse(&ep, "udp/224.0.0.225:7447"), Z_EUNSUPPORTED);
#endif
#if Z_FEATURE_LINK_UDP_UNICAST == 1
    CHECK_EQ(_z_endpoint_parse(&ep, "udp/10.0.0.1:9"), Z_OK);
    CHECK_EQ(ep.kind, _Z_LINK_UDP);
#else
    CHECK_EQ(_z_endpoint_parse(&ep, "udp/10.0.0.1:9"), Z_EUNSUPPORTED);
#endif
    CHECK(_z_endpoint_parse(&ep, "tcp/256.0.0.1:7447") != Z_OK);
    CHECK(_z_endpoint_parse(&ep, "tcp/1.2.3.4") != Z_OK);
    CHECK(_z_endpoint_parse(&ep, "tcp/1.2.3.4:70000") != Z_OK);
    CHECK(_z_endpoint_parse(&ep, "quic/1.2.3.4:7447") != Z_OK);
}

TEST_LIST = {
    {"one message over a stream", test_single_message},
    {"manual batching holds messages until flush", test_batching},
#if Z_FEATURE_AUTO_BATCHING == 1
    {"automatic batching queues full batches while the writer sends, then one write", test_queued_batches},
#endif
#if Z_FEATURE_FRAGMENTATION == 1
    {"fragmentation on send, reassembly on receive", test_fragmentation},
    {"reassembly buffer limit drops, link survives", test_reassembly_limit},
#endif
    {"sequence-number rule drops duplicates", test_duplicate_sn_dropped},
    {"without QoS, frames have the default priority", test_priority_without_qos},
#if Z_FEATURE_QOS == 1
    {"QoS: a SN space and a Frame priority per channel, every priority received", test_priority_channels},
#if Z_FEATURE_FRAGMENTATION == 1
    {"QoS: fragments carry the priority", test_priority_fragments},
#endif
#endif
    {"congestion control: DROP drops whole batches and counts them, BLOCK waits", test_congestion_drop},
    {"batch longer than advertised is an error", test_oversized_batch_is_an_error},
    {"keep-alive after lease/4 of silence, expiry after the remote lease", test_keepalive_and_lease},
    {"Close from the other side ends the link", test_close_ends_link},
    {"locator parsing", test_locators},
    {NULL, NULL},
};

int main(void) { return test_run_all(test_list); }
