/*
 * Firmware entry: starts the board, runs the application with the arguments
 * baked into the image (args.c, written by scripts/firmware.sh), reports the
 * stack's high-water mark and exits with the application's status (a
 * failure too when the whole stack was used: it probably overflowed).
 */
#include "../../src/platform/baremetal/board.h"
#include "../apps/app.h"
#include "console.h"
#include "stack.h"

extern const char *const app_argv[];
extern const int app_argc;

int main(void) {
    board_init();
    int rc = app_main(app_argc, app_argv);
    size_t used = stack_used();
    con_str("STACK ");
    con_int((long)used);
    con_str(" of ");
    con_int((long)stack_size());
    con_nl();
    if (used >= stack_size()) rc = rc != 0 ? rc : 99; /* the stack overflowed */
    con_str("EXIT ");
    con_int(rc);
    con_nl();
    board_exit(rc);
}
