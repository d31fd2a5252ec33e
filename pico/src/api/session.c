/* Session API: open/close, info, run models (tasks, spin, read), batching. */
#include <string.h>

#include "../session/session.h"
#include "olv.h"

static void _z_session_ref_null(_z_session_ref_t *r) { r->_s = NULL; }
static bool _z_session_ref_check(const _z_session_ref_t *r) { return r->_s != NULL; }

#if Z_FEATURE_MULTI_THREAD == 1
static void _z_stop_tasks(_z_session_t *s);
#endif

/* Ends every entity still declared (calls the closures' drop) and frees the session. */
static void _z_session_ref_drop(_z_session_ref_t *r) {
    _z_session_t *s = r->_s;
    if (s == NULL) return;
#if Z_FEATURE_MULTI_THREAD == 1
    _z_stop_tasks(s); /* first: no task may use the link while it closes */
#endif
    if (!s->closed) _z_session_close(s);
#if Z_FEATURE_SUBSCRIPTION == 1
    for (unsigned i = 0; i < ZP_MAX_SUBSCRIBERS; i++) {
        if (s->subs[i].used && s->subs[i].cb.drop != NULL) s->subs[i].cb.drop(s->subs[i].cb.context);
    }
#endif
#if Z_FEATURE_QUERYABLE == 1
    for (unsigned i = 0; i < ZP_MAX_QUERYABLES; i++) {
        if (s->qbls[i].used && s->qbls[i].cb.drop != NULL) s->qbls[i].cb.drop(s->qbls[i].cb.context);
    }
#endif
#if Z_FEATURE_PUBLICATION == 1
    for (unsigned i = 0; i < ZP_MAX_PUBLISHERS; i++) {
        if (s->pubs[i].used) _z_encoding_drop(&s->pubs[i].enc);
    }
#endif
    _z_session_free(s);
}

_ZP_OWNED_IMPL(session, _z_session_ref_t, _z_session_ref_null, _z_session_ref_check, _z_session_ref_drop)

#if Z_FEATURE_MULTI_THREAD == 1
/* Task run flags are shared between the tasks and the thread that stops them. */
static bool _z_flag(volatile bool *f) { return __atomic_load_n(f, __ATOMIC_ACQUIRE); }
static void _z_flag_set(volatile bool *f, bool v) { __atomic_store_n(f, v, __ATOMIC_RELEASE); }

static void *_z_read_task(void *arg) {
    _z_session_t *s = (_z_session_t *)arg;
    while (_z_flag(&s->read_running)) (void)_z_session_read_step(s, Z_CONFIG_SOCKET_TIMEOUT);
    return NULL;
}

#define _Z_LEASE_TICK_MS 50u

/* Lease, reconnection and query deadlines every _Z_LEASE_TICK_MS; with
 * automatic batching, also the session's writer in between. */
static void *_z_lease_task(void *arg) {
    _z_session_t *s = (_z_session_t *)arg;
#if Z_FEATURE_AUTO_BATCHING == 1
    uint64_t next_tick = 0;
    while (_z_flag(&s->lease_running)) {
        bool wrote = _z_session_write_step(s);
        uint64_t now = _z_clock_ms();
        if (now >= next_tick) {
            (void)_z_session_tick(s);
            next_tick = now + _Z_LEASE_TICK_MS;
        } else if (!wrote) { /* announce the wait, look once more (a put may have just handed over), then wait */
            __atomic_store_n(&s->tp.writer_idle, true, __ATOMIC_SEQ_CST);
            if (!_z_session_write_step(s)) (void)_z_event_wait(&s->tp.tx_wake, (uint32_t)(next_tick - now));
            __atomic_store_n(&s->tp.writer_idle, false, __ATOMIC_SEQ_CST);
        }
    }
#else
    while (_z_flag(&s->lease_running)) {
        (void)_z_session_tick(s);
        _z_sleep_ms(_Z_LEASE_TICK_MS);
    }
#endif
    return NULL;
}

static void _z_stop_lease_task(_z_session_t *s) {
    if (!_z_flag(&s->lease_running)) return;
    _z_flag_set(&s->lease_running, false);
#if Z_FEATURE_AUTO_BATCHING == 1
    _z_event_set(&s->tp.tx_wake);
#endif
    _z_task_join(&s->lease_task);
#if Z_FEATURE_AUTO_BATCHING == 1
    _z_session_auto_batching(s, false);
#endif
}

static void _z_stop_tasks(_z_session_t *s) {
    if (_z_flag(&s->read_running)) {
        _z_flag_set(&s->read_running, false);
        _z_task_join(&s->read_task);
    }
    _z_stop_lease_task(s);
}

void zp_task_read_options_default(zp_task_read_options_t *options) { options->task_attributes = NULL; }
void zp_task_lease_options_default(zp_task_lease_options_t *options) { options->task_attributes = NULL; }

z_result_t zp_start_read_task(z_loaned_session_t *zs, const zp_task_read_options_t *options) {
    (void)options;
    _z_session_t *s = zs->_s;
    if (_z_flag(&s->read_running)) return Z_OK;
    _z_flag_set(&s->read_running, true);
    if (_z_task_start(&s->read_task, _z_read_task, s) != Z_OK) {
        _z_flag_set(&s->read_running, false);
        return Z_EGENERIC;
    }
    return Z_OK;
}
z_result_t zp_stop_read_task(z_loaned_session_t *zs) {
    _z_session_t *s = zs->_s;
    if (_z_flag(&s->read_running)) {
        _z_flag_set(&s->read_running, false);
        _z_task_join(&s->read_task);
    }
    return Z_OK;
}
bool zp_read_task_is_running(const z_loaned_session_t *zs) { return _z_flag(&zs->_s->read_running); }

z_result_t zp_start_lease_task(z_loaned_session_t *zs, const zp_task_lease_options_t *options) {
    (void)options;
    _z_session_t *s = zs->_s;
    if (_z_flag(&s->lease_running)) return Z_OK;
    _z_flag_set(&s->lease_running, true);
#if Z_FEATURE_AUTO_BATCHING == 1
    _z_session_auto_batching(s, true);
#endif
    if (_z_task_start(&s->lease_task, _z_lease_task, s) != Z_OK) {
#if Z_FEATURE_AUTO_BATCHING == 1
        _z_session_auto_batching(s, false);
#endif
        _z_flag_set(&s->lease_running, false);
        return Z_EGENERIC;
    }
    return Z_OK;
}
z_result_t zp_stop_lease_task(z_loaned_session_t *zs) {
    _z_stop_lease_task(zs->_s);
    return Z_OK;
}
bool zp_lease_task_is_running(const z_loaned_session_t *zs) { return _z_flag(&zs->_s->lease_running); }
#endif

void z_open_options_default(z_open_options_t *options) {
#if Z_FEATURE_MULTI_THREAD == 1
    options->auto_start_read_task = true;
    options->auto_start_lease_task = true;
#else
    options->__dummy = 0;
#endif
}

z_result_t z_open(z_owned_session_t *zs, z_moved_config_t *config, const z_open_options_t *options) {
    z_open_options_t opts;
    _z_config_t cfg;
    zs->_val._s = NULL;
    if (config == NULL) return Z_EINVAL;
    cfg = config->_this._val;
    z_config_drop(config);
    if (options != NULL) {
        opts = *options;
    } else {
        z_open_options_default(&opts);
    }
    _z_session_t *s = _z_session_alloc();
    if (s == NULL) return Z_ENOMEM;
    z_result_t res = _z_session_open(s, &cfg);
    if (res != Z_OK) {
        s->used = false;
        return res;
    }
    zs->_val._s = s;
#if Z_FEATURE_MULTI_THREAD == 1
    if (opts.auto_start_read_task) (void)zp_start_read_task(&zs->_val, NULL);
    if (opts.auto_start_lease_task) (void)zp_start_lease_task(&zs->_val, NULL);
#else
    (void)opts;
#endif
    return Z_OK;
}

void z_close_options_default(z_close_options_t *options) { options->__dummy = 0; }

z_result_t z_close(z_loaned_session_t *zs, const z_close_options_t *options) {
    (void)options;
    _z_session_t *s = zs->_s;
    if (s == NULL) return Z_EINVAL;
#if Z_FEATURE_MULTI_THREAD == 1
    _z_stop_tasks(s);
#endif
    if (!s->closed) _z_session_close(s);
    return Z_OK;
}

bool z_session_is_closed(const z_loaned_session_t *zs) { return zs->_s == NULL || zs->_s->closed; }

z_id_t z_info_zid(const z_loaned_session_t *zs) {
    z_id_t id;
    memcpy(id.id, zs->_s->tp.zid.id, 16);
    return id;
}

z_result_t z_info_routers_zid(const z_loaned_session_t *zs, z_moved_closure_zid_t *callback) {
    _z_session_t *s = zs->_s;
    _z_closure_zid_t cb = callback->_this._val;
    memset(&callback->_this._val, 0, sizeof(cb));
    _z_session_lock(s);
    if (s->connected && s->mode == 0 && cb.call != NULL) {
        z_id_t id;
        memcpy(id.id, s->tp.remote_zid.id, 16);
        cb.call(&id, cb.context);
    }
    _z_session_unlock(s);
    if (cb.drop != NULL) cb.drop(cb.context);
    return Z_OK;
}

z_result_t z_info_peers_zid(const z_loaned_session_t *zs, z_moved_closure_zid_t *callback) {
    _z_session_t *s = zs->_s;
    _z_closure_zid_t cb = callback->_this._val;
    memset(&callback->_this._val, 0, sizeof(cb));
    _z_session_lock(s);
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    for (unsigned i = 0; s->connected && s->mode == 1 && i < ZP_MAX_PEERS; i++) {
        if (!s->tp.peers[i].used || cb.call == NULL) continue;
        z_id_t id;
        memcpy(id.id, s->tp.peers[i].zid.id, 16);
        cb.call(&id, cb.context);
    }
#endif
    _z_session_unlock(s);
    if (cb.drop != NULL) cb.drop(cb.context);
    return Z_OK;
}

z_result_t z_id_to_string(const z_id_t *id, z_owned_string_t *str) {
    static const char hex[] = "0123456789abcdef";
    char buf[33];
    size_t n = 0;
    int top = 15;
    while (top > 0 && id->id[top] == 0) top--;
    for (int i = top; i >= 0; i--) {
        uint8_t b = id->id[i];
        if (n > 0 || (b >> 4) != 0) buf[n++] = hex[b >> 4];
        buf[n++] = hex[b & 0x0f];
    }
    return z_string_copy_from_substr(str, buf, n);
}

/* ---- single-threaded drivers ---- */
void zp_read_options_default(zp_read_options_t *options) { options->single_read = false; }

z_result_t zp_read(const z_loaned_session_t *zs, const zp_read_options_t *options) {
    (void)options;
    z_result_t res = _z_session_read_step(zs->_s, Z_CONFIG_SOCKET_TIMEOUT);
    return res == Z_ECLOSED ? res : Z_OK;
}

void zp_send_keep_alive_options_default(zp_send_keep_alive_options_t *options) { options->__dummy = 0; }

z_result_t zp_send_keep_alive(const z_loaned_session_t *zs, const zp_send_keep_alive_options_t *options) {
    (void)options;
    _z_session_t *s = zs->_s;
    _z_session_lock(s);
    z_result_t res = s->connected ? _z_transport_send_keepalive(&s->tp) : Z_ETRANSPORT;
    _z_session_unlock(s);
    return res;
}

void zp_send_join_options_default(zp_send_join_options_t *options) { options->__dummy = 0; }

z_result_t zp_send_join(const z_loaned_session_t *zs, const zp_send_join_options_t *options) {
    (void)options;
    if (zs->_s->mode != 1) return Z_EINVAL;
    return zp_send_keep_alive(zs, NULL);
}

bool zp_spin_once(const z_loaned_session_t *zs) {
    _z_session_t *s = zs->_s;
    if (s == NULL || s->closed) return false;
    (void)_z_session_read_step(s, 10);
    (void)_z_session_tick(s);
    return !s->closed;
}

uint32_t zp_dropped_messages(const z_loaned_session_t *zs) {
    _z_session_t *s = zs->_s;
    if (s == NULL) return 0;
    _z_session_lock(s);
    uint32_t n = s->tp.tx_dropped;
    _z_session_unlock(s);
    return n;
}

/* ---- batching ---- */
#if Z_FEATURE_BATCHING == 1
static z_result_t _z_batching(const z_loaned_session_t *zs, bool on, bool flush) {
    _z_session_t *s = zs->_s;
    z_result_t res = Z_OK;
    _z_session_lock(s);
    s->tp.batching = on;
    if (flush && s->connected) res = _z_transport_flush(&s->tp);
    _z_session_unlock(s);
    return res;
}
z_result_t zp_batch_start(const z_loaned_session_t *zs) { return _z_batching(zs, true, false); }
z_result_t zp_batch_flush(const z_loaned_session_t *zs) { return _z_batching(zs, zs->_s->tp.batching, true); }
z_result_t zp_batch_stop(const z_loaned_session_t *zs) { return _z_batching(zs, false, true); }
#endif
