/*
 * The board contract: what the bare-metal port (platform.c) needs from a
 * board. A new board implements these functions in boards/<target>/ (with
 * its startup code and linker script); nothing else in weft-pico touches
 * the hardware.
 */
#ifndef WEFT_PICO_BAREMETAL_BOARD_H
#define WEFT_PICO_BAREMETAL_BOARD_H

#include <stddef.h>
#include <stdint.h>

/* Starts the clock and the console; called once by main before anything else. */
void board_init(void);
/* Monotonic microseconds since board_init (a 1 ms tick with the counter's
 * sub-tick position, or a free-running timer). */
uint64_t board_clock_us(void);
/* Some unpredictable bits (a timer's low bits will do on a board without a
 * random number generator: they only seed the ZenohID and initial SNs). */
uint32_t board_entropy(void);

/* The UART named `dev` ("uart0", "uart1"...) at `baudrate`, 8N1, no flow
 * control, with its receive side emptied: its index, or -1 when the board
 * has no such UART. */
int board_uart_open(const char *dev, uint32_t baudrate);
/* Sends one byte (waits while the transmitter is full). */
void board_uart_putc(int uart, uint8_t byte);
/* The next byte received, or -1 when none is waiting. A board whose UART has
 * a small receive FIFO must fill a ring buffer from its receive interrupt,
 * or bytes arriving while the application is busy are lost. */
int board_uart_getc(int uart);
void board_uart_close(int uart);

/* Debug output, not the link (semihosting, a second UART, RTT...); may do nothing. */
void board_console_write(const char *s, size_t len);
/* Ends the program: under an emulator, the emulator exits with `code` (0 or not). */
void board_exit(int code) __attribute__((noreturn));

#endif
