/* Types of the POSIX port (Linux, macOS, BSD). */
#ifndef ZENOH_PICO_PLATFORM_POSIX_H
#define ZENOH_PICO_PLATFORM_POSIX_H

#include <stdint.h>

#if Z_FEATURE_MULTI_THREAD == 1
#include <pthread.h>
typedef pthread_mutex_t _z_mutex_t;
typedef pthread_t _z_task_t;
typedef pthread_cond_t _z_condvar_t;
#endif
#if Z_FEATURE_AUTO_BATCHING == 1
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c; /* waits on CLOCK_MONOTONIC */
    int set;
} _z_event_t;
#endif

typedef struct {
    int fd;
    uint8_t kind;
    uint8_t group[4]; /* multicast: destination group */
    uint16_t port;
} _z_sys_socket_t;

#endif
