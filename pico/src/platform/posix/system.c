/* POSIX port: clock, sleep, random, mutex, tasks, wake-up events. */
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
/* A lock is held for a few hundred nanoseconds (a put, a batch hand-over): a
 * short run of tries before sleeping in the kernel saves the two system calls
 * of a contended wait and wake-up. */
#define _Z_MUTEX_TRIES 100
z_result_t _z_mutex_lock(_z_mutex_t *m) {
    for (int i = 0; i < _Z_MUTEX_TRIES; i++) {
        if (pthread_mutex_trylock(m) == 0) return Z_OK;
    }
    return pthread_mutex_lock(m) == 0 ? Z_OK : Z_EGENERIC;
}
z_result_t _z_mutex_unlock(_z_mutex_t *m) { return pthread_mutex_unlock(m) == 0 ? Z_OK : Z_EGENERIC; }
void _z_mutex_drop(_z_mutex_t *m) { pthread_mutex_destroy(m); }

z_result_t _z_task_start(_z_task_t *t, void *(*fn)(void *), void *arg) {
    return pthread_create(t, NULL, fn, arg) == 0 ? Z_OK : Z_EGENERIC;
}
void _z_task_join(_z_task_t *t) { pthread_join(*t, NULL); }
#endif

#if Z_FEATURE_AUTO_BATCHING == 1
z_result_t _z_event_init(_z_event_t *e) {
    pthread_condattr_t a;
    e->set = 0;
    if (pthread_mutex_init(&e->m, NULL) != 0) return Z_EGENERIC;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int r = pthread_cond_init(&e->c, &a);
    pthread_condattr_destroy(&a);
    if (r != 0) {
        pthread_mutex_destroy(&e->m);
        return Z_EGENERIC;
    }
    return Z_OK;
}

void _z_event_set(_z_event_t *e) {
    pthread_mutex_lock(&e->m);
    e->set = 1;
    pthread_cond_signal(&e->c);
    pthread_mutex_unlock(&e->m);
}

bool _z_event_wait(_z_event_t *e, uint32_t timeout_ms) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(timeout_ms / 1000u);
    until.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&e->m);
    while (!e->set) {
        if (pthread_cond_timedwait(&e->c, &e->m, &until) == ETIMEDOUT) break;
    }
    bool was_set = e->set != 0;
    e->set = 0;
    pthread_mutex_unlock(&e->m);
    return was_set;
}

void _z_event_drop(_z_event_t *e) {
    pthread_cond_destroy(&e->c);
    pthread_mutex_destroy(&e->m);
}
#endif
