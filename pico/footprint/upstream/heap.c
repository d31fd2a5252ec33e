/*
 * The C library's malloc takes its memory here (sbrk for picolibc, _sbrk for
 * newlib): a fixed arena in .bss of HEAP_SIZE bytes, and the highest break
 * reached, which is the RAM the heap really needs (blocks, the allocator's
 * headers and its fragmentation).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "heap.h"

#ifndef HEAP_SIZE
#define HEAP_SIZE 65536
#endif

static uint8_t heap_arena[HEAP_SIZE] __attribute__((aligned(8)));
static size_t heap_brk, heap_peak;

void *sbrk(ptrdiff_t incr);
void *_sbrk(ptrdiff_t incr);

void *sbrk(ptrdiff_t incr) {
    if ((incr > 0 && (size_t)incr > HEAP_SIZE - heap_brk) || (incr < 0 && (size_t)-incr > heap_brk)) {
        errno = ENOMEM;
        return (void *)-1;
    }
    void *old = &heap_arena[heap_brk];
    heap_brk = (size_t)((ptrdiff_t)heap_brk + incr);
    if (heap_brk > heap_peak) heap_peak = heap_brk;
    return old;
}

void *_sbrk(ptrdiff_t incr) { return sbrk(incr); }

size_t heap_used(void) { return heap_peak; }

size_t heap_size(void) { return HEAP_SIZE; }
