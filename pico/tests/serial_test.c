/*
 * Serial link: frames byte for byte as weft's Rust encoder and Zenoh's write
 * them (the vectors of crates/weft-proto batch::serial), the stuffing against
 * a plain reference encoder, damaged frames, locators, and the opening
 * exchange over a socket pair standing for the UART.
 */
#define _DEFAULT_SOURCE
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/transport/transport.h"
#include "test.h"

#if Z_FEATURE_LINK_SERIAL == 1

/* ---- helpers ---- */

typedef struct {
    uint8_t buf[4096];
    size_t len;
    size_t calls;
} sink_t;

static z_result_t to_buf(void *ctx, const uint8_t *p, size_t len) {
    sink_t *s = (sink_t *)ctx;
    if (s->len + len > sizeof(s->buf)) return Z_ENOSPACE;
    memcpy(s->buf + s->len, p, len);
    s->len += len;
    s->calls++;
    return Z_OK;
}

static size_t frame(uint8_t flags, const uint8_t *payload, size_t len, uint8_t *out) {
    sink_t s;
    s.len = 0;
    s.calls = 0;
    if (_z_serial_encode(flags, payload, len, to_buf, &s) != Z_OK) return 0;
    memcpy(out, s.buf, s.len);
    return s.len;
}

/* Pushes `len` line bytes; the number of frames that checked (the last in d). */
static int push_all(_z_serial_dec_t *d, const uint8_t *p, size_t len) {
    int frames = 0;
    for (size_t i = 0; i < len; i++) frames += _z_serial_dec_push(d, p[i]) ? 1 : 0;
    return frames;
}

/* The textbook COBS encoder over a whole buffer (no delimiter), with the
 * last 01 block after data that ends on a full block. */
static size_t cobs_reference(const uint8_t *in, size_t n, uint8_t *out) {
    size_t code_at = 0, o = 1, run = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == 0) {
            out[code_at] = (uint8_t)(run + 1);
            code_at = o++;
            run = 0;
            continue;
        }
        out[o++] = in[i];
        if (++run == 254) {
            out[code_at] = 0xFF;
            code_at = o++;
            run = 0;
        }
    }
    out[code_at] = (uint8_t)(run + 1);
    return o;
}

/* ---- cases ---- */

static void test_check_values(void) {
    const uint8_t a[] = {0x00, 0x11, 0x00}, b[] = {0x11, 0x22, 0x00, 0x33};
    CHECK_EQ(_z_serial_crc(NULL, 0), 0);
    CHECK_EQ(_z_serial_crc(a, sizeof(a)), 0xF975EC73u); /* 73 EC 75 F9 on the wire */
    CHECK_EQ(_z_serial_crc(b, sizeof(b)), 0xFB6D038Du);
}

static void test_frames_on_the_line(void) {
    static const uint8_t p1[] = {0x00, 0x11, 0x00}, p2[] = {0x11, 0x22, 0x00, 0x33};
    static const uint8_t w_init[] = {0x02, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00};
    static const uint8_t w_ack[] = {0x02, 0x03, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00};
    static const uint8_t w_reset[] = {0x02, 0x04, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00};
    static const uint8_t w1[] = {0x01, 0x02, 0x03, 0x01, 0x02, 0x11, 0x05, 0x73, 0xEC, 0x75, 0xF9, 0x00};
    static const uint8_t w2[] = {0x01, 0x02, 0x04, 0x03, 0x11, 0x22, 0x06, 0x33, 0x8D, 0x03, 0x6D, 0xFB, 0x00};
    const struct {
        uint8_t flags;
        const uint8_t *payload;
        size_t len;
        const uint8_t *wire;
        size_t wire_len;
    } v[] = {
        {_Z_SERIAL_FLAG_INIT, NULL, 0, w_init, sizeof(w_init)},
        {_Z_SERIAL_FLAG_INIT | _Z_SERIAL_FLAG_ACK, NULL, 0, w_ack, sizeof(w_ack)},
        {_Z_SERIAL_FLAG_RESET, NULL, 0, w_reset, sizeof(w_reset)},
        {0, p1, sizeof(p1), w1, sizeof(w1)},
        {0, p2, sizeof(p2), w2, sizeof(w2)},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        uint8_t out[64], rx[64];
        size_t n = frame(v[i].flags, v[i].payload, v[i].len, out);
        CHECK_EQ(n, v[i].wire_len);
        CHECK_MEM(out, v[i].wire, n);
        _z_serial_dec_t d;
        _z_serial_dec_init(&d, rx, sizeof(rx));
        CHECK_EQ(push_all(&d, v[i].wire, v[i].wire_len), 1);
        CHECK_EQ(d.flags, v[i].flags);
        CHECK_EQ(d.len, v[i].len);
        if (v[i].len > 0) CHECK_MEM(rx, v[i].payload, v[i].len);
    }
}

/* Every payload size up to the MTU, with runs of zeros and of 254+ non-zero
 * bytes: the streaming encoder writes what the reference one does, and the
 * decoder, fed in one go, gives the payload back. */
static void test_stuffing_matches_the_reference(void) {
    static uint8_t payload[_Z_SERIAL_MTU], plain[_Z_SERIAL_MTU + 7], want[2048], got[2048], rx[_Z_SERIAL_MTU];
    _z_serial_dec_t d;
    _z_serial_dec_init(&d, rx, sizeof(rx));
    for (size_t len = 0; len <= _Z_SERIAL_MTU; len += (len < 600 ? 1 : 37)) {
        for (size_t i = 0; i < len; i++) payload[i] = (uint8_t)((i % 300) < 260 ? 1 + (i * 7) % 255 : (i % 3 == 0 ? 0 : i));
        uint32_t c = _z_serial_crc(payload, len);
        plain[0] = 0;
        plain[1] = (uint8_t)len;
        plain[2] = (uint8_t)(len >> 8);
        memcpy(plain + 3, payload, len);
        for (int k = 0; k < 4; k++) plain[3 + len + (size_t)k] = (uint8_t)(c >> (8 * k));
        size_t wn = cobs_reference(plain, len + 7, want);
        want[wn++] = 0;
        size_t gn = frame(0, payload, len, got);
        CHECK_EQ(gn, wn);
        CHECK_MEM(got, want, wn);
        CHECK(gn <= 1514); /* the line limit with the longest payload */
        CHECK_EQ(push_all(&d, got, gn), 1);
        CHECK_EQ(d.len, len);
        if (len > 0) CHECK_MEM(rx, payload, len);
    }
    CHECK_EQ(d.dropped, 0);
    uint8_t one_more[_Z_SERIAL_MTU + 1] = {0};
    sink_t s;
    s.len = 0;
    CHECK_EQ(_z_serial_encode(0, one_more, sizeof(one_more), to_buf, &s), Z_ENOSPACE);
}

static void test_damaged_frames_are_dropped(void) {
    static const uint8_t good[] = {0x01, 0x02, 0x04, 0x03, 0x11, 0x22, 0x06, 0x33, 0x8D, 0x03, 0x6D, 0xFB, 0x00};
    uint8_t rx[64], line[64];
    _z_serial_dec_t d;
    _z_serial_dec_init(&d, rx, sizeof(rx));
    /* wrong check value */
    memcpy(line, good, sizeof(good));
    line[9] ^= 0x40;
    CHECK_EQ(push_all(&d, line, sizeof(good)), 0);
    CHECK_EQ(d.dropped, 1);
    /* a code past the end of the frame */
    const uint8_t truncated[] = {0x05, 0x11, 0x00};
    CHECK_EQ(push_all(&d, truncated, sizeof(truncated)), 0);
    CHECK_EQ(d.dropped, 2);
    /* too short for flags, length and check */
    const uint8_t short_frame[] = {0x03, 0x01, 0x02, 0x00};
    CHECK_EQ(push_all(&d, short_frame, sizeof(short_frame)), 0);
    CHECK_EQ(d.dropped, 3);
    /* a length field larger than the frame */
    const uint8_t long_len[] = {0x09, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x00};
    CHECK_EQ(push_all(&d, long_len, sizeof(long_len)), 0);
    CHECK_EQ(d.dropped, 4);
    /* delimiters alone are not frames, and the good frame still comes */
    const uint8_t zeros[] = {0x00, 0x00};
    CHECK_EQ(push_all(&d, zeros, sizeof(zeros)), 0);
    CHECK_EQ(d.dropped, 4);
    CHECK_EQ(push_all(&d, good, sizeof(good)), 1);
    CHECK_EQ(d.len, 4);
    /* a burst of noise with no delimiter costs the frame it runs into, no more */
    for (int i = 0; i < 5 * 1517; i++) CHECK(!_z_serial_dec_push(&d, 0x42));
    CHECK_EQ(push_all(&d, good, sizeof(good)), 0);
    CHECK_EQ(d.dropped, 5);
    CHECK_EQ(push_all(&d, good, sizeof(good)), 1);
    /* a payload larger than the receive buffer is dropped, nothing written past it */
    uint8_t small[2], big[16], wire[64];
    memset(big, 0x33, sizeof(big));
    _z_serial_dec_init(&d, small, sizeof(small));
    CHECK_EQ(push_all(&d, wire, frame(0, big, sizeof(big), wire)), 0);
    CHECK_EQ(d.dropped, 1);
}

static void test_serial_locators(void) {
    _z_endpoint_t ep;
    CHECK_EQ(_z_endpoint_parse(&ep, "serial//dev/ttyUSB0#baudrate=115200"), Z_OK);
    CHECK_EQ(ep.kind, _Z_LINK_SERIAL);
    CHECK(strcmp(ep.dev, "/dev/ttyUSB0") == 0);
    CHECK_EQ(ep.baudrate, 115200);
    CHECK_EQ(_z_endpoint_parse(&ep, "serial/uart0#tout=1000;baudrate=9600"), Z_OK);
    CHECK(strcmp(ep.dev, "uart0") == 0);
    CHECK_EQ(ep.baudrate, 9600);
    CHECK_EQ(_z_endpoint_parse(&ep, "serial/uart0"), Z_ECONFIG);
    CHECK_EQ(_z_endpoint_parse(&ep, "serial/uart0#baudrate=fast"), Z_ECONFIG);
    CHECK_EQ(_z_endpoint_parse(&ep, "serial/#baudrate=9600"), Z_ECONFIG);
    CHECK_EQ(_z_endpoint_parse(&ep, "serial//dev/a/very/long/path/to/some/serial/device#baudrate=9600"), Z_ECONFIG);
}

/* ---- the opening exchange, the UART being one end of a socket pair ---- */

static _z_transport_t tp;

/* Reads frames from the other end until one ends (bounded). */
static bool line_frame(int fd, _z_serial_dec_t *d, int timeout_ms) {
    uint8_t b;
    struct pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
    while (poll(&p, 1, timeout_ms) == 1) {
        if (read(fd, &b, 1) != 1) return false;
        if (_z_serial_dec_push(d, b)) return true;
    }
    return false;
}

static void send_frame(int fd, uint8_t flags, const uint8_t *payload, size_t len) {
    uint8_t wire[2048];
    size_t n = frame(flags, payload, len, wire);
    if (write(fd, wire, n) != (ssize_t)n) abort();
}

static void test_opening_exchange(void) {
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    memset(&tp, 0, sizeof(tp));
    tp.sock.fd = sv[0];
    tp.sock.kind = _Z_LINK_SERIAL;
    tp.serial = true;
    tp.open = true;
    uint8_t rx[64];
    _z_serial_dec_t d;
    _z_serial_dec_init(&d, rx, sizeof(rx));
    /* the listener answers R first (a session of ours was still open), then I+A */
    pid_t child = fork();
    if (child == 0) {
        bool ok = line_frame(sv[1], &d, 2000) && d.flags == _Z_SERIAL_FLAG_INIT;
        send_frame(sv[1], _Z_SERIAL_FLAG_RESET, NULL, 0);
        uint64_t t0 = _z_clock_ms();
        ok = ok && line_frame(sv[1], &d, 2000) && d.flags == _Z_SERIAL_FLAG_INIT && _z_clock_ms() - t0 >= 200;
        send_frame(sv[1], _Z_SERIAL_FLAG_INIT | _Z_SERIAL_FLAG_ACK, NULL, 0);
        const uint8_t data[] = {0x2a, 0x00, 0x07};
        send_frame(sv[1], 0, data, sizeof(data));
        /* then the other side starts again: its I must be answered R */
        send_frame(sv[1], _Z_SERIAL_FLAG_INIT, NULL, 0);
        ok = ok && line_frame(sv[1], &d, 2000) && d.flags == _Z_SERIAL_FLAG_RESET;
        _exit(ok ? 0 : 1);
    }
    CHECK_EQ(_z_serial_open(&tp), Z_OK);
    size_t len = 0;
    for (int i = 0; i < 100 && len == 0; i++) CHECK_EQ(_z_serial_recv(&tp, 100, &len), Z_OK);
    CHECK_EQ(len, 3);
    CHECK_EQ(tp.rx[0], 0x2a);
    CHECK_EQ(tp.rx[2], 0x07);
    z_result_t res = Z_OK;
    len = 0;
    for (int i = 0; i < 100 && res == Z_OK; i++) res = _z_serial_recv(&tp, 100, &len);
    CHECK_EQ(res, Z_ETRANSPORT);
    int status = -1;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK_EQ(status, 0);
    close(sv[0]);
    close(sv[1]);
}

TEST_LIST = {
    {"check values", test_check_values},
    {"frames on the line (weft's and Zenoh's bytes)", test_frames_on_the_line},
    {"stuffing matches the reference for every size", test_stuffing_matches_the_reference},
    {"damaged frames are dropped, the next one comes", test_damaged_frames_are_dropped},
    {"serial locators", test_serial_locators},
    {"opening exchange: I, R, I again, I+A; an I later is answered R", test_opening_exchange},
    {NULL, NULL},
};

int main(void) { return test_run_all(test_list); }

#else
int main(void) {
    printf("skipped: Z_FEATURE_LINK_SERIAL is 0\n");
    return 0;
}
#endif
