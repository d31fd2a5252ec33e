/* POSIX port: serial links on a tty (a UART, a USB adapter, a pseudo-terminal). */
#define _DEFAULT_SOURCE /* cfmakeraw, the B* rates above 38400 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "serial.h"

#if Z_FEATURE_LINK_SERIAL == 1

/* The termios speed of a baud rate (0: not one the system knows). */
static speed_t _z_speed(uint32_t baud) {
    static const struct {
        uint32_t baud;
        speed_t speed;
    } rates[] = {{1200, B1200},     {2400, B2400},     {4800, B4800},     {9600, B9600},
                 {19200, B19200},   {38400, B38400},   {57600, B57600},   {115200, B115200},
                 {230400, B230400}, {460800, B460800}, {921600, B921600}};
    for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
        if (rates[i].baud == baud) return rates[i].speed;
    return 0;
}

z_result_t _z_posix_serial_open(_z_sys_socket_t *sock, const _z_endpoint_t *ep) {
    speed_t speed = _z_speed(ep->baudrate);
    if (speed == 0) return Z_ECONFIG;
    int fd = open(ep->dev, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return Z_ETRANSPORT;
    struct termios tio;
    if (tcgetattr(fd, &tio) != 0) {
        close(fd);
        return Z_ETRANSPORT;
    }
    cfmakeraw(&tio); /* 8 data bits, no parity, no character processing */
    tio.c_cflag &= ~(tcflag_t)(CSTOPB | CRTSCTS);
    tio.c_cflag |= CLOCAL | CREAD;
    tio.c_iflag &= ~(tcflag_t)(IXON | IXOFF | IXANY);
    tio.c_cc[VMIN] = 0; /* reads wait in poll(), never in read() */
    tio.c_cc[VTIME] = 0;
    if (cfsetispeed(&tio, speed) != 0 || cfsetospeed(&tio, speed) != 0 || tcsetattr(fd, TCSANOW, &tio) != 0) {
        close(fd);
        return Z_ETRANSPORT;
    }
    (void)ioctl(fd, TIOCEXCL); /* like Zenoh: nobody else opens the port meanwhile */
    (void)tcflush(fd, TCIOFLUSH);
    sock->fd = fd;
    sock->kind = _Z_LINK_SERIAL;
    return Z_OK;
}

z_result_t _z_posix_serial_write(int fd, const uint8_t *buf, size_t len) {
    size_t sent = 0;
    while (sent < len) {
        ssize_t n = write(fd, buf + sent, len - sent);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return Z_ETRANSPORT;
        sent += (size_t)n;
    }
    return Z_OK;
}

#endif
