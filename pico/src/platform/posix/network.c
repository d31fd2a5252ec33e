/* POSIX port: TCP, UDP unicast and UDP multicast links over BSD sockets;
 * serial links on a tty (serial.c). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serial.h"
#include "zenoh-pico/platform.h"

#define _Z_NET_TRY(expr)              \
    do {                              \
        z_result_t _r = (expr);       \
        if (_r != Z_OK) return _r;    \
    } while (0)

static void _z_sockaddr(struct sockaddr_in *sa, const uint8_t addr[4], uint16_t port) {
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons(port);
    memcpy(&sa->sin_addr.s_addr, addr, 4);
}

#if Z_FEATURE_MULTICAST_TRANSPORT == 1 || Z_FEATURE_SCOUTING == 1
/* The IPv4 address of interface `name` ("" = any). */
static z_result_t _z_iface_addr(int fd, const char *name, struct in_addr *out) {
    struct ifreq ifr;
    out->s_addr = htonl(INADDR_ANY);
    if (name[0] == '\0') return Z_OK;
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, name, strlen(name) < IFNAMSIZ ? strlen(name) : IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFADDR, &ifr) != 0) return Z_ECONFIG;
    *out = ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr;
    return Z_OK;
}
#endif

#if Z_FEATURE_SCOUTING == 1
static z_result_t _z_open_scout(_z_sys_socket_t *sock, const _z_endpoint_t *ep) {
    struct sockaddr_in any;
    struct in_addr local;
    unsigned char ttl = 1;
    uint8_t no_addr[4] = {0, 0, 0, 0};
    _Z_NET_TRY(_z_iface_addr(sock->fd, ep->iface, &local));
    _z_sockaddr(&any, no_addr, 0);
    if (bind(sock->fd, (struct sockaddr *)&any, sizeof(any)) != 0) return Z_ETRANSPORT;
    setsockopt(sock->fd, IPPROTO_IP, IP_MULTICAST_IF, &local, sizeof(local));
    setsockopt(sock->fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));
    return Z_OK;
}
#endif

#if Z_FEATURE_MULTICAST_TRANSPORT == 1
static z_result_t _z_open_multicast(_z_sys_socket_t *sock, const _z_endpoint_t *ep) {
    struct sockaddr_in any;
    struct ip_mreq mreq;
    struct in_addr local;
    int one = 1;
    unsigned char zero = 0, ttl = 1;
    uint8_t no_addr[4] = {0, 0, 0, 0};
    _Z_NET_TRY(_z_iface_addr(sock->fd, ep->iface, &local));
    setsockopt(sock->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    _z_sockaddr(&any, no_addr, ep->port);
    if (bind(sock->fd, (struct sockaddr *)&any, sizeof(any)) != 0) return Z_ETRANSPORT;
    memcpy(&mreq.imr_multiaddr.s_addr, ep->addr, 4);
    mreq.imr_interface = local;
    if (setsockopt(sock->fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) != 0) return Z_ETRANSPORT;
    setsockopt(sock->fd, IPPROTO_IP, IP_MULTICAST_IF, &local, sizeof(local));
    setsockopt(sock->fd, IPPROTO_IP, IP_MULTICAST_LOOP, &zero, sizeof(zero));
    setsockopt(sock->fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));
    return Z_OK;
}
#endif

/* connect() bounded by ZP_OPEN_TIMEOUT_MS (a blocking connect to an
 * unreachable host could otherwise stall a spin loop for minutes). */
static z_result_t _z_connect(int fd, const struct sockaddr_in *sa) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return Z_ETRANSPORT;
    int r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
    if (r != 0 && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT, .revents = 0};
        int err = 0;
        socklen_t len = sizeof(err);
        r = poll(&p, 1, ZP_OPEN_TIMEOUT_MS) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0
                ? 0
                : -1;
    }
    if (fcntl(fd, F_SETFL, flags) != 0) return Z_ETRANSPORT;
    return r == 0 ? Z_OK : Z_ETRANSPORT;
}

z_result_t _z_net_open(_z_sys_socket_t *sock, const _z_endpoint_t *ep) {
    struct sockaddr_in sa;
    z_result_t res = Z_OK;
#if Z_FEATURE_LINK_SERIAL == 1
    if (ep->kind == _Z_LINK_SERIAL) return _z_posix_serial_open(sock, ep);
#endif
    sock->kind = ep->kind;
    sock->port = ep->port;
    memcpy(sock->group, ep->addr, 4);
    sock->fd = socket(AF_INET, ep->kind == _Z_LINK_TCP ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (sock->fd < 0) return Z_ETRANSPORT;
    if (ep->kind == _Z_LINK_UDP_MULTICAST) {
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
        res = _z_open_multicast(sock, ep);
#else
        res = Z_EUNSUPPORTED;
#endif
    } else if (ep->kind == _Z_LINK_UDP_SCOUT) {
#if Z_FEATURE_SCOUTING == 1
        res = _z_open_scout(sock, ep);
#else
        res = Z_EUNSUPPORTED;
#endif
    } else {
        _z_sockaddr(&sa, ep->addr, ep->port);
        res = _z_connect(sock->fd, &sa);
        if (ep->kind == _Z_LINK_TCP) {
            int one = 1;
            setsockopt(sock->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        }
    }
    if (res != Z_OK) {
        close(sock->fd);
        sock->fd = -1;
    }
    return res;
}

z_result_t _z_net_send(const _z_sys_socket_t *sock, const uint8_t *buf, size_t len) {
#if Z_FEATURE_LINK_SERIAL == 1
    if (sock->kind == _Z_LINK_SERIAL) return _z_posix_serial_write(sock->fd, buf, len);
#endif
    if (sock->kind == _Z_LINK_UDP_MULTICAST || sock->kind == _Z_LINK_UDP_SCOUT) {
        struct sockaddr_in sa;
        _z_sockaddr(&sa, sock->group, sock->port);
        ssize_t n = sendto(sock->fd, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa));
        return n == (ssize_t)len ? Z_OK : Z_ETRANSPORT;
    }
    size_t sent = 0;
    while (sent < len) {
        ssize_t n = send(sock->fd, buf + sent, len - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return Z_ETRANSPORT;
        sent += (size_t)n;
    }
    return Z_OK;
}

/*
 * DROP: a stream socket is first asked whether it is writable (Linux reports
 * POLLOUT only while a third of its send buffer is free, so a batch then goes
 * out whole in all but rare cases); only then is the batch sent, without
 * waiting. A batch the socket takes in part is completed with a blocking send.
 */
z_result_t _z_net_try_send(const _z_sys_socket_t *sock, const uint8_t *buf, size_t len, uint32_t wait_ms) {
    bool datagram = sock->kind == _Z_LINK_UDP_MULTICAST || sock->kind == _Z_LINK_UDP_SCOUT;
    struct pollfd p = {.fd = sock->fd, .events = POLLOUT, .revents = 0};
    int r = poll(&p, 1, 0);
    if (r == 0 && wait_ms > 0) r = poll(&p, 1, (int)wait_ms);
    if (r < 0 && errno != EINTR) return Z_ETRANSPORT;
    if (r <= 0) return _Z_NET_BUSY;
#if Z_FEATURE_LINK_SERIAL == 1
    if (sock->kind == _Z_LINK_SERIAL) return _z_posix_serial_write(sock->fd, buf, len);
#endif
    ssize_t n;
    if (datagram) {
        struct sockaddr_in sa;
        _z_sockaddr(&sa, sock->group, sock->port);
        n = sendto(sock->fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa));
    } else {
        do {
            n = send(sock->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        } while (n < 0 && errno == EINTR);
    }
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? _Z_NET_BUSY : Z_ETRANSPORT;
    if (datagram) return n == (ssize_t)len ? Z_OK : Z_ETRANSPORT;
    return (size_t)n == len ? Z_OK : _z_net_send(sock, buf + n, len - (size_t)n);
}

int32_t _z_net_recv(const _z_sys_socket_t *sock, uint8_t *buf, size_t len, uint32_t timeout_ms, uint8_t src[6]) {
    struct pollfd p = {.fd = sock->fd, .events = POLLIN, .revents = 0};
    int r = poll(&p, 1, (int)timeout_ms);
    if (r == 0 || (r < 0 && errno == EINTR)) return 0;
    if (r < 0) return -1;
#if Z_FEATURE_LINK_SERIAL == 1
    if (sock->kind == _Z_LINK_SERIAL) {
        ssize_t got = read(sock->fd, buf, len);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
        /* a pseudo-terminal whose other side closed reports POLLHUP and reads nothing */
        if (got <= 0) return (p.revents & (POLLHUP | POLLERR)) != 0 || got < 0 ? -1 : 0;
        return (int32_t)got;
    }
#endif
    struct sockaddr_in from;
    socklen_t flen = sizeof(from);
    ssize_t n = recvfrom(sock->fd, buf, len, 0, (struct sockaddr *)&from, &flen);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    if (n < 0) return -1;
    if (n == 0 && sock->kind == _Z_LINK_TCP) return -1; /* orderly close */
    if (src != NULL) {
        memcpy(src, &from.sin_addr.s_addr, 4);
        memcpy(src + 4, &from.sin_port, 2);
    }
    return (int32_t)n;
}

void _z_net_close(_z_sys_socket_t *sock) {
    if (sock->fd >= 0) {
        if (sock->kind == _Z_LINK_TCP) shutdown(sock->fd, SHUT_RDWR);
        close(sock->fd);
    }
    sock->fd = -1;
}
