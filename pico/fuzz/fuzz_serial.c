/* Fuzz target: the serial link's framing. The input is taken off the line by
 * the decoder (into a small buffer and into an MTU-sized one); every frame
 * that checks is stuffed again and must decode to itself. Then the input
 * itself, as a payload, must come back whole from its frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/transport/serial.h"

typedef struct {
    uint8_t buf[2048];
    size_t len;
} line_t;

static z_result_t to_line(void *ctx, const uint8_t *p, size_t len) {
    line_t *l = (line_t *)ctx;
    if (l->len + len > sizeof(l->buf)) abort(); /* a frame is never longer than 1,514 bytes */
    memcpy(l->buf + l->len, p, len);
    l->len += len;
    return Z_OK;
}

/* `flags` and payload[len] stuffed, then decoded: the same, exactly one frame. */
static void round_trip(uint8_t flags, const uint8_t *payload, size_t len) {
    static line_t line;
    static uint8_t back[_Z_SERIAL_MTU];
    line.len = 0;
    if (_z_serial_encode(flags, payload, len, to_line, &line) != Z_OK) abort();
    if (line.len > _Z_SERIAL_MAX_WIRE || line.buf[line.len - 1] != 0) abort();
    _z_serial_dec_t d;
    _z_serial_dec_init(&d, back, sizeof(back));
    for (size_t i = 0; i < line.len; i++) {
        bool frame = _z_serial_dec_push(&d, line.buf[i]);
        if (frame != (i + 1 == line.len)) abort();
    }
    if (d.flags != flags || d.len != len || (len > 0 && memcmp(back, payload, len) != 0)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static uint8_t small[16], big[_Z_SERIAL_MTU], copy[_Z_SERIAL_MTU];
    _z_serial_dec_t ds, db;
    _z_serial_dec_init(&ds, small, sizeof(small));
    _z_serial_dec_init(&db, big, sizeof(big));
    for (size_t i = 0; i < size; i++) {
        if (_z_serial_dec_push(&ds, data[i])) {
            memcpy(copy, small, ds.len);
            round_trip(ds.flags, copy, ds.len);
        }
        if (_z_serial_dec_push(&db, data[i])) {
            memcpy(copy, big, db.len);
            round_trip(db.flags, copy, db.len);
        }
    }
    size_t n = size < _Z_SERIAL_MTU ? size : _Z_SERIAL_MTU;
    round_trip(size > 0 ? data[0] : 0, data, n);
    return 0;
}
