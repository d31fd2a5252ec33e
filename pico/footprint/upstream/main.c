/*
 * Firmware entry of the Zenoh-Pico images (scripts/footprint_upstream.sh),
 * as boards/common/main.c for weft-pico's: starts the board, runs the
 * application with the arguments baked into the image, reports the stack's
 * and the heap's high-water marks and exits with the application's status.
 */
#include "../../boards/apps/app.h"
#include "../../boards/common/console.h"
#include "../../boards/common/stack.h"
#include "../../src/platform/baremetal/board.h"
#include "heap.h"

extern const char *const app_argv[];
extern const int app_argc;

#if defined(__riscv)
/* picolibc keeps errno in thread-local storage, which Zenoh-Pico uses (strtoul
 * in the serial locator's parsing) and weft-pico does not: boards/riscv32's
 * startup leaves the thread pointer unset. This block is the whole TLS segment
 * (errno alone; scripts/footprint_upstream.sh checks its size). */
#define TLS_BLOCK_SIZE 16
static uint32_t tls_block[TLS_BLOCK_SIZE / 4] __attribute__((aligned(16)));
#endif

int main(void) {
#if defined(__riscv)
    __asm__ volatile("mv tp, %0" : : "r"(tls_block));
#endif
    board_init();
    int rc = app_main(app_argc, app_argv);
    size_t used = stack_used();
    con_str("STACK ");
    con_int((long)used);
    con_str(" of ");
    con_int((long)stack_size());
    con_nl();
    con_str("HEAP ");
    con_int((long)heap_used());
    con_str(" of ");
    con_int((long)heap_size());
    con_nl();
    if (used >= stack_size()) rc = rc != 0 ? rc : 99; /* the stack overflowed */
    con_str("EXIT ");
    con_int(rc);
    con_nl();
    board_exit(rc);
}
