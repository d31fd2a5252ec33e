/* Fixed block pool (or malloc when ZP_MALLOC == 1). */
#include "pool.h"

#include <stdint.h>

#if ZP_MALLOC == 1
#include <stdlib.h>
void *_z_mem_alloc(size_t len) { return malloc(len > 0 ? len : 1); }
void _z_mem_free(void *p) { free(p); }
#else
typedef union {
    uint8_t bytes[ZP_POOL_BLOCK_SIZE];
    uint64_t align; /* blocks are 8-byte aligned */
} _z_block_t;

_z_block_t _zp_pool_blocks[ZP_POOL_BLOCKS];
/* Word-sized flags: a compare-and-swap every target has as instructions (an
 * RV32 one has none for bytes, and the C runtime's emulation takes 1.2 KB). */
static volatile uint32_t _zp_pool_used[ZP_POOL_BLOCKS];

void *_z_mem_alloc(size_t len) {
    if (len > ZP_POOL_BLOCK_SIZE) return NULL;
    for (unsigned i = 0; i < ZP_POOL_BLOCKS; i++) {
        if (__sync_bool_compare_and_swap(&_zp_pool_used[i], 0, 1)) return _zp_pool_blocks[i].bytes;
    }
    return NULL;
}

void _z_mem_free(void *p) {
    if (p == NULL) return;
    for (unsigned i = 0; i < ZP_POOL_BLOCKS; i++) {
        if (p == (void *)_zp_pool_blocks[i].bytes) {
            __sync_lock_release(&_zp_pool_used[i]);
            return;
        }
    }
}
#endif

void _z_mem_deleter(void *data, void *context) {
    (void)context;
    _z_mem_free(data);
}
