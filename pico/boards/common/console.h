/* Line output on the board's console (board_console_write), without stdio. */
#ifndef WEFT_PICO_BOARDS_CONSOLE_H
#define WEFT_PICO_BOARDS_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

void con_str(const char *s);
/* `len` bytes as text (non-printable bytes as '.'). */
void con_text(const char *s, size_t len);
void con_int(long v);
/* Ends the line and writes it out. */
void con_nl(void);

#endif
