/* POSIX port: the public z_malloc/z_free, z_mutex_*, z_condvar_* and z_task_* helpers. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../api/olv.h"

void *z_malloc(size_t size) { return malloc(size); }
void *z_realloc(void *ptr, size_t size) { return realloc(ptr, size); }
void z_free(void *ptr) { free(ptr); }

#if Z_FEATURE_MULTI_THREAD == 1
static void _z_mutex_null_(_z_mutex_t *m) { (void)m; }
static bool _z_mutex_check_(const _z_mutex_t *m) { (void)m; return true; }
static void _z_mutex_drop_(_z_mutex_t *m) { pthread_mutex_destroy(m); }
_ZP_OWNED_IMPL(mutex, _z_mutex_t, _z_mutex_null_, _z_mutex_check_, _z_mutex_drop_)

static void _z_condvar_null_(_z_condvar_t *c) { (void)c; }
static bool _z_condvar_check_(const _z_condvar_t *c) { (void)c; return true; }
static void _z_condvar_drop_(_z_condvar_t *c) { pthread_cond_destroy(c); }
_ZP_OWNED_IMPL(condvar, _z_condvar_t, _z_condvar_null_, _z_condvar_check_, _z_condvar_drop_)

z_result_t z_mutex_init(z_owned_mutex_t *m) { return pthread_mutex_init(&m->_val, NULL) == 0 ? Z_OK : Z_EGENERIC; }
z_result_t z_mutex_lock(z_loaned_mutex_t *m) { return pthread_mutex_lock(m) == 0 ? Z_OK : Z_EGENERIC; }
z_result_t z_mutex_unlock(z_loaned_mutex_t *m) { return pthread_mutex_unlock(m) == 0 ? Z_OK : Z_EGENERIC; }
/* The condition variable waits on CLOCK_MONOTONIC, the clock of z_clock_now. */
z_result_t z_condvar_init(z_owned_condvar_t *cv) {
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0) return Z_EGENERIC;
    int r = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (r == 0) r = pthread_cond_init(&cv->_val, &a);
    pthread_condattr_destroy(&a);
    return r == 0 ? Z_OK : Z_EGENERIC;
}
z_result_t z_condvar_signal(z_loaned_condvar_t *cv) { return pthread_cond_signal(cv) == 0 ? Z_OK : Z_EGENERIC; }
z_result_t z_condvar_wait(z_loaned_condvar_t *cv, z_loaned_mutex_t *m) {
    return pthread_cond_wait(cv, m) == 0 ? Z_OK : Z_EGENERIC;
}
z_result_t z_condvar_timedwait(z_loaned_condvar_t *cv, z_loaned_mutex_t *m, const z_clock_t *abstime) {
    struct timespec ts = {(time_t)(abstime->_us / 1000000u), (long)(abstime->_us % 1000000u) * 1000L};
    int r = pthread_cond_timedwait(cv, m, &ts);
    return r == 0 ? Z_OK : r == ETIMEDOUT ? Z_ETIMEDOUT : Z_EGENERIC;
}
z_result_t z_task_init(z_owned_task_t *task, z_task_attr_t *attr, void *(*fun)(void *), void *arg) {
    (void)attr;
    return pthread_create(&task->_val, NULL, fun, arg) == 0 ? Z_OK : Z_EGENERIC;
}
z_moved_task_t *z_task_move(z_owned_task_t *task) { return (z_moved_task_t *)task; }
z_result_t z_task_join(z_moved_task_t *task) {
    return pthread_join(task->_this._val, NULL) == 0 ? Z_OK : Z_EGENERIC;
}
#endif
