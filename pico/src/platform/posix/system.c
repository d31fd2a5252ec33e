/* POSIX port: clock, sleep, random, mutex, tasks. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "zenoh-pico/platform.h"

uint64_t _z_clock_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void _z_sleep_ms(uint32_t ms) {
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void _z_random_fill(void *buf, size_t len) {
    uint8_t *p = (uint8_t *)buf;
    int fd = open("/dev/urandom", O_RDONLY);
    size_t got = 0;
    if (fd >= 0) {
        while (got < len) {
            ssize_t n = read(fd, p + got, len - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        close(fd);
    }
    if (got < len) {
        srand((unsigned)time(NULL) ^ (unsigned)getpid());
        for (; got < len; got++) p[got] = (uint8_t)rand();
    }
}

#if Z_FEATURE_MULTI_THREAD == 1
z_result_t _z_mutex_init(_z_mutex_t *m) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    int r = pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
    return r == 0 ? Z_OK : Z_EGENERIC;
}
z_result_t _z_mutex_lock(_z_mutex_t *m) { return pthread_mutex_lock(m) == 0 ? Z_OK : Z_EGENERIC; }
z_result_t _z_mutex_unlock(_z_mutex_t *m) { return pthread_mutex_unlock(m) == 0 ? Z_OK : Z_EGENERIC; }
void _z_mutex_drop(_z_mutex_t *m) { pthread_mutex_destroy(m); }

z_result_t _z_task_start(_z_task_t *t, void *(*fn)(void *), void *arg) {
    return pthread_create(t, NULL, fn, arg) == 0 ? Z_OK : Z_EGENERIC;
}
void _z_task_join(_z_task_t *t) { pthread_join(*t, NULL); }
#endif
