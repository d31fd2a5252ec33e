/*
 * Storage for payload copies, owned strings and owned key expressions.
 *
 * Default build: a fixed pool of ZP_POOL_BLOCKS blocks of ZP_POOL_BLOCK_SIZE
 * bytes, claimed and released lock-free; an allocation larger than a block
 * fails. With ZP_MALLOC == 1 the C heap is used instead.
 */
#ifndef WEFT_PICO_MEM_POOL_H
#define WEFT_PICO_MEM_POOL_H

#include <stddef.h>

#include "zenoh-pico/config.h"

/* Returns `len` bytes of storage, or NULL. */
void *_z_mem_alloc(size_t len);
/* Releases storage from _z_mem_alloc (NULL is ignored). */
void _z_mem_free(void *p);
/* A deleter (as used by owned bytes/strings) that calls _z_mem_free. */
void _z_mem_deleter(void *data, void *context);

#endif
