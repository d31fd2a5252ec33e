/* Fuzz target: transport messages (decode every message of the input, re-encode
 * each), and the same input as one scouting datagram. */
#include <stdint.h>
#include <stdlib.h>

#include "../src/codec/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static uint8_t out[70000];
    _zr_t r;
    _z_smsg_t s;
    _zr_init(&r, data, size);
    if (_z_scouting_decode(&r, &s) == Z_OK) {
        _zw_t w;
        _zw_init(&w, out, sizeof(out));
        if (_z_scouting_encode(&w, &s) != Z_OK) abort();
    }
    _zr_init(&r, data, size);
    while (_zr_left(&r) > 0) {
        _z_tmsg_t m;
        _zw_t w;
        if (_z_transport_decode(&r, &m) != Z_OK) break;
        _zw_init(&w, out, sizeof(out));
        (void)_z_transport_encode(&w, &m);
        if (m.id == _Z_T_FRAME) {
            while (_z_frame_more(&r)) {
                _z_nmsg_t n;
                if (_z_network_decode(&r, &n) != Z_OK) return 0;
            }
        }
    }
    return 0;
}
