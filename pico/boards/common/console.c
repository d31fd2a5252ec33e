/* Line output on the board's console (console.h). */
#include "console.h"

#include "../../src/platform/baremetal/board.h"

static char line[128];
static size_t used;

static void con_char(char c) {
    if (used == sizeof(line)) {
        board_console_write(line, used);
        used = 0;
    }
    line[used++] = c;
}

void con_str(const char *s) {
    while (*s != '\0') con_char(*s++);
}

void con_text(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) con_char(s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '.');
}

void con_int(long v) {
    char digits[12];
    int n = 0;
    unsigned long u = v < 0 ? 0ul - (unsigned long)v : (unsigned long)v;
    if (v < 0) con_char('-');
    do {
        digits[n++] = (char)('0' + u % 10u);
        u /= 10u;
    } while (u != 0 && n < (int)sizeof(digits));
    while (n > 0) con_char(digits[--n]);
}

void con_nl(void) {
    con_char('\n');
    board_console_write(line, used);
    used = 0;
}
