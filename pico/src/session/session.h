/*
 * Session: the entity tables (publishers, subscribers, queryables, pending
 * queries, tokens), the dispatch of received network messages to them, the
 * link lifecycle (open, loss, reconnection with re-declaration) and the two
 * run models (spin/poll and POSIX tasks). All state is in fixed tables.
 */
#ifndef WEFT_PICO_SESSION_H
#define WEFT_PICO_SESSION_H

#include "../transport/transport.h"
#include "zenoh-pico/api/types.h"

/* A stored key expression. */
typedef struct {
    uint16_t len;
    char s[ZP_KEYEXPR_CAPACITY];
} _z_kebuf_t;

/* A client's publisher names its key by an id it declares (see declare.c);
 * a build that cannot encode declarations always sends the key in full. */
#define _Z_PUB_KEY_IDS (Z_FEATURE_PUBLICATION && _Z_ENC_DECLARE)

#define _ZS_SUB_DATA 0
#define _ZS_SUB_LIVELINESS 1

typedef struct {
    bool used;
    uint8_t kind;
    bool history;
    uint32_t id;
    _z_kebuf_t key;
    _z_closure_sample_t cb;
    _z_keyexpr_t view; /* loaned view on key */
} _zs_sub_t;

typedef struct {
    bool used;
    uint32_t id;
    uint8_t qos; /* network QoS byte: priority | D | E */
    bool reliable;
#if _Z_PUB_KEY_IDS
    uint16_t ke_id;  /* key-expression id declared for key (client mode; 0: none) */
    uint32_t ke_iid; /* the interest whose DeclareFinal confirms it (0: none awaited) */
    uint32_t ke_gen; /* the link generation it is confirmed on: puts name it only then */
#endif
    _z_encoding_t enc;
    _z_kebuf_t key;
    _z_keyexpr_t view; /* loaned view on key */
} _zs_pub_t;

typedef struct {
    bool used;
    bool complete;
    uint32_t id;
    _z_kebuf_t key;
    _z_closure_query_t cb;
    _z_keyexpr_t view; /* loaned view on key */
} _zs_qbl_t;

#define _ZS_PENDING_GET 0
#define _ZS_PENDING_LIVELINESS 1

typedef struct {
    bool used;
    uint8_t kind;
    bool anyke;
    uint32_t id; /* request id, or interest id for liveliness */
    uint64_t deadline_ms;
    _z_kebuf_t key;
    _z_closure_reply_t cb;
} _zs_pending_t;

typedef struct {
    bool used;
    uint32_t id;
    _z_kebuf_t key;
} _zs_token_t;

/* A received query whose ResponseFinal waits for its last reference. */
typedef struct {
    bool used;
    uint8_t qos;
    uint16_t refs;
    uint32_t rid;
    uint32_t gen; /* link generation: finals of a lost link are never sent */
} _zs_open_query_t;

struct _z_session_t {
    bool used;
    bool closed;
    bool connected;
    bool connecting;
    bool close_pending; /* link lost while the read task may be in recv: it closes the socket */
    uint8_t mode; /* 0 client, 1 peer */
    uint32_t link_gen;
    _z_endpoint_t ep;
    uint64_t next_reconnect_ms;
    uint32_t next_id;
    uint32_t next_rid;
#if Z_FEATURE_PUBLICATION == 1
    _zs_pub_t pubs[ZP_MAX_PUBLISHERS];
#endif
#if _Z_PUB_KEY_IDS
    uint16_t next_ke_id; /* the last key-expression id declared */
#endif
#if Z_FEATURE_SUBSCRIPTION == 1
    _zs_sub_t subs[ZP_MAX_SUBSCRIBERS];
#endif
#if Z_FEATURE_QUERYABLE == 1
    _zs_qbl_t qbls[ZP_MAX_QUERYABLES];
#endif
#if Z_FEATURE_QUERY == 1
    _zs_pending_t pending[ZP_MAX_PENDING_QUERIES];
#endif
#if Z_FEATURE_QUERYABLE == 1
    _zs_open_query_t open_queries[ZP_MAX_OPEN_QUERIES];
#endif
#if Z_FEATURE_LIVELINESS == 1
    _zs_token_t tokens[ZP_MAX_TOKENS];
#if Z_FEATURE_SUBSCRIPTION == 1
    _zs_token_t rtokens[ZP_MAX_REMOTE_TOKENS];
#endif
#endif
#if Z_FEATURE_MULTI_THREAD == 1
    _z_mutex_t mtx;
    _z_task_t read_task;
    _z_task_t lease_task;
    volatile bool read_running;
    volatile bool lease_running;
#endif
    _z_transport_t tp; /* last: its buffers would put the tables out of an immediate offset's reach */
};

/* ---- session.c ---- */
_z_session_t *_z_session_alloc(void);
void _z_session_free(_z_session_t *s);
z_result_t _z_session_open(_z_session_t *s, const _z_config_t *cfg);
void _z_session_close(_z_session_t *s);
void _z_session_lock(_z_session_t *s);
void _z_session_unlock(_z_session_t *s);
/* Sends one network message; marks the link lost on failure. Takes the lock. */
z_result_t _z_session_send(_z_session_t *s, const _z_nmsg_t *m, bool reliable, bool express);
/* One step of work: receive/process (waiting at most timeout_ms), then tick. */
z_result_t _z_session_read_step(_z_session_t *s, uint32_t timeout_ms);
z_result_t _z_session_tick(_z_session_t *s);
#if Z_FEATURE_AUTO_BATCHING == 1
/* The writer task's step: sends the batch being built, if any, without the
 * lock. False when there was nothing to send. */
bool _z_session_write_step(_z_session_t *s);
/* Starts (a writer task runs) or ends automatic batching; ending it sends
 * what the writer was handed and what is built. */
void _z_session_auto_batching(_z_session_t *s, bool on);
#endif
uint32_t _z_session_new_id(_z_session_t *s);
/* Re-sends every declaration (after a reconnection). */
void _z_session_redeclare(_z_session_t *s);

/* ---- scout.c ---- */
/* Multicasts Scouts on `group` and copies the first usable Hello locator to out. */
z_result_t _z_scout_locator(const char *group, uint32_t timeout_ms, const _z_zid_t *zid, char *out, size_t out_len);

/* ---- declare.c: declaration messages ---- */
z_result_t _z_send_declare(_z_session_t *s, uint8_t decl_id, uint32_t eid, const _z_kebuf_t *key, uint64_t qinfo);
z_result_t _z_send_interest(_z_session_t *s, uint8_t mode, uint32_t id, uint8_t options, const _z_kebuf_t *key);
#if _Z_PUB_KEY_IDS
/* Declares a publisher's key by id (client mode, connected; lock held) and asks for
 * the confirmation puts wait for before they name it so. */
void _z_publisher_declare_key(_z_session_t *s, _zs_pub_t *e);
/* A DeclareFinal for interest iid: the publisher's key id it confirms, if any. */
void _z_publisher_confirm_key(_z_session_t *s, uint32_t iid);
#endif

/* ---- api/pubsub.c: shared by liveliness subscribers ---- */
z_result_t _z_declare_sub(_z_session_t *s, _z_subscriber_t *out, const z_loaned_keyexpr_t *keyexpr,
                          z_moved_closure_sample_t *callback, uint8_t kind, bool history);

/* ---- api/query.c: shared by liveliness get ---- */
int _z_pending_add(_z_session_t *s, uint8_t kind, uint32_t id, const z_loaned_keyexpr_t *keyexpr, uint64_t timeout_ms,
                   z_moved_closure_reply_t *callback);
void _z_pending_cancel(_z_session_t *s, int slot);

/* ---- dispatch.c ---- */
void _z_session_handle(void *ctx, const _z_nmsg_t *m, const _z_rx_info_t *info);
/* Ends every pending query (drop callbacks) — link lost or session closed. */
void _z_session_fail_pending(_z_session_t *s);
/* Ends pending queries whose deadline passed. */
void _z_session_expire_pending(_z_session_t *s, uint64_t now);

#if Z_FEATURE_QUERYABLE == 1
/* Adds a reference to a received query (z_query_clone); Z_ENOMEM if untracked. */
z_result_t _z_open_query_ref(_z_session_t *s, uint32_t rid);
/* Drops a reference; the last one sends the ResponseFinal. */
void _z_open_query_unref(_z_session_t *s, uint32_t rid);
#endif

/* ---- helpers ---- */
/* True if the selector parameters p[0..len) contain "_anyke". */
bool _z_has_anyke(const char *p, size_t len);
/* The wire encoding of an encoding (its schema cut to 255 bytes). */
void _z_enc_from(_z_enc_t *w, const _z_encoding_t *e);
/* Fills the zeroed body `d` of a Put, Del or Err the session sends: payload,
 * encoding (unless the default one), attachment, timestamp (when valid with a
 * non-zero id); any of them may be NULL. */
void _z_data_fill(_z_data_t *d, uint8_t kind, const _z_bytes_t *payload, const _z_encoding_t *enc,
                  const _z_bytes_t *att, const z_timestamp_t *ts);
z_result_t _z_kebuf_set(_z_kebuf_t *k, const char *s, size_t len);
void _z_wexpr_from_kebuf(_z_wexpr_t *w, const _z_kebuf_t *k);
uint8_t _z_qos_byte(z_priority_t prio, z_congestion_control_t cc, bool express);

#endif
