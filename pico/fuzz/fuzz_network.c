/* Fuzz target: one network message (and the declaration / data bodies inside),
 * decoded then re-encoded; a successful decode must re-encode to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/codec/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static uint8_t out[140000];
    _zr_t r;
    _z_nmsg_t m;
    _zr_init(&r, data, size);
    if (_z_network_decode(&r, &m) == Z_OK) {
        _zw_t w;
        _zw_init(&w, out, sizeof(out));
        if (_z_network_encode(&w, &m) != Z_OK) abort();
        /* window-encode the same message in two halves, as the fragmenter does */
        size_t half = w.pos / 2;
        _zw_t a, b;
        static uint8_t pieces[140000];
        _zw_init(&a, pieces, half);
        (void)_z_network_encode(&a, &m);
        _zw_init(&b, pieces + half, w.pos - half);
        b.skip = half;
        (void)_z_network_encode(&b, &m);
        if (memcmp(pieces, out, w.pos) != 0) abort();
    }
    return 0;
}
