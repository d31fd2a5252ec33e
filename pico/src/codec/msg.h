/*
 * Wire message values for the Zenoh protocol 0x09, and their codec.
 *
 * Decoded values are views: byte and string fields point into the buffer that
 * was decoded and stay valid only as long as it does. The same structures are
 * filled by the session to encode outgoing messages. Extensions that the codec
 * does not model are kept (up to _Z_KEPT_EXTS per message) so that a decoded
 * message re-encodes to the same bytes.
 */
#ifndef WEFT_PICO_CODEC_MSG_H
#define WEFT_PICO_CODEC_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rw.h"
#include "zenoh-pico/config.h"

#define Z_PROTO_VERSION_BYTE 0x09

/* ---- message ids (header bits 0-4) ---- */
#define _Z_S_SCOUT 0x01
#define _Z_S_HELLO 0x02

#define _Z_MID_MASK 0x1f
#define _Z_FLAG_1 0x20
#define _Z_FLAG_2 0x40
#define _Z_FLAG_Z 0x80

#define _Z_T_OAM 0x00
#define _Z_T_INIT 0x01
#define _Z_T_OPEN 0x02
#define _Z_T_CLOSE 0x03
#define _Z_T_KEEPALIVE 0x04
#define _Z_T_FRAME 0x05
#define _Z_T_FRAGMENT 0x06
#define _Z_T_JOIN 0x07

#define _Z_N_INTEREST 0x19
#define _Z_N_RESPONSE_FINAL 0x1a
#define _Z_N_RESPONSE 0x1b
#define _Z_N_REQUEST 0x1c
#define _Z_N_PUSH 0x1d
#define _Z_N_DECLARE 0x1e
#define _Z_N_OAM 0x1f

#define _Z_D_KEYEXPR 0x00
#define _Z_U_KEYEXPR 0x01
#define _Z_D_SUBSCRIBER 0x02
#define _Z_U_SUBSCRIBER 0x03
#define _Z_D_QUERYABLE 0x04
#define _Z_U_QUERYABLE 0x05
#define _Z_D_TOKEN 0x06
#define _Z_U_TOKEN 0x07
#define _Z_D_FINAL 0x1a

#define _Z_Z_PUT 0x01
#define _Z_Z_DEL 0x02
#define _Z_Z_QUERY 0x03
#define _Z_Z_REPLY 0x04
#define _Z_Z_ERR 0x05

/* Interest modes and option bits. */
#define _Z_INTEREST_FINAL 0
#define _Z_INTEREST_CURRENT 1
#define _Z_INTEREST_FUTURE 2
#define _Z_INTEREST_CURRENT_FUTURE 3
#define _Z_IOPT_K 0x01
#define _Z_IOPT_S 0x02
#define _Z_IOPT_Q 0x04
#define _Z_IOPT_T 0x08
#define _Z_IOPT_R 0x10
#define _Z_IOPT_N 0x20
#define _Z_IOPT_M 0x40
#define _Z_IOPT_A 0x80

/* WhatAmI 2-bit codes (Init, Join, Hello). */
#define _Z_WAI_ROUTER 0
#define _Z_WAI_PEER 1
#define _Z_WAI_CLIENT 2

/* Extension header fields. */
#define _Z_EXT_ENC_MASK 0x60
#define _Z_EXT_UNIT 0x00
#define _Z_EXT_Z64 0x20
#define _Z_EXT_ZBUF 0x40
#define _Z_EXT_M 0x10

#define _Z_KEPT_EXTS 4

/* A view on bytes owned by someone else. */
typedef struct {
    const uint8_t *ptr;
    size_t len;
} _z_view_t;

/* One extension as read from the wire (header without its Z bit). */
typedef struct {
    uint8_t hdr;
    uint64_t z64;
    _z_view_t buf;
} _z_ext_t;

/*
 * Extensions kept because the codec does not model them: only a build that
 * re-encodes decoded messages (ZP_CODEC_ALL) keeps them; otherwise an unknown
 * extension is checked (mandatory: the message fails) and skipped, and n stays 0.
 */
#ifndef ZP_CODEC_ALL
#define ZP_CODEC_ALL 0
#endif
#define _Z_KEEP_EXTS ZP_CODEC_ALL
typedef struct {
#if _Z_KEEP_EXTS
    _z_ext_t e[_Z_KEPT_EXTS];
#endif
    uint8_t n;
} _z_exts_t;

/* A ZenohID as sent: 1..16 little-endian bytes. */
typedef struct {
    uint8_t len;
    uint8_t id[16];
} _z_zid_t;

typedef struct {
    uint64_t time;
    _z_zid_t id;
} _z_ts_t;

typedef struct {
    uint16_t id;
    bool has_schema;
    uint8_t schema_len;
    const uint8_t *schema;
} _z_enc_t;

typedef struct {
    _z_zid_t zid;
    uint32_t eid;
    uint32_t sn;
} _z_sinfo_t;

/* Wire expression: scope + optional suffix (N flag set iff suffix != NULL). */
typedef struct {
    uint16_t scope;
    bool sender_mapping; /* M flag */
    const char *suffix;
    uint16_t suffix_len;
} _z_wexpr_t;

/* Put, Del or Err (the body of a Push, of a Reply, or a Response's Err). */
typedef struct {
    uint8_t id;
    bool has_ts;
    bool has_enc;
    bool has_sinfo;
    bool has_att;
    _z_ts_t ts;
    _z_enc_t enc;
    _z_sinfo_t sinfo;
    _z_view_t att;
    _z_view_t payload;
    _z_exts_t kept;
} _z_data_t;

typedef struct {
    bool has_cons;
    uint8_t cons;
    const char *params; /* P flag set iff params != NULL */
    uint16_t params_len;
    bool has_sinfo;
    bool has_body;
    bool has_att;
    _z_sinfo_t sinfo;
    _z_enc_t body_enc;
    _z_view_t body;
    _z_view_t att;
    _z_exts_t kept;
} _z_qmsg_t;

/* Extensions shared by every network message. */
typedef struct {
    bool has_qos;
    bool has_ts;
    bool has_nodeid;
    bool has_tsstack;
    uint8_t qos;
    uint16_t nodeid;
    _z_ts_t ts;
    _z_view_t tsstack;
    _z_exts_t kept;
} _z_nexts_t;

typedef struct {
    uint8_t id;
    uint32_t eid; /* entity id, or expr id for (Un)DeclareKeyExpr */
    _z_wexpr_t key;
    bool has_wire_ext; /* undeclarations: WireExpr extension 0x5F present */
    bool has_qinfo;
    uint64_t qinfo;
    _z_exts_t kept;
} _z_decl_t;

typedef struct {
    uint8_t id;
    _z_nexts_t ext;
    union {
        struct {
            _z_wexpr_t key;
            _z_data_t body;
        } push;
        struct {
            uint32_t rid;
            _z_wexpr_t key;
            bool has_target, has_budget, has_timeout;
            uint8_t target;
            uint32_t budget;
            uint64_t timeout;
            _z_qmsg_t query;
        } request;
        struct {
            uint32_t rid;
            _z_wexpr_t key;
            bool has_responder;
            _z_zid_t rzid;
            uint32_t reid;
            uint8_t body_id; /* _Z_Z_REPLY or _Z_Z_ERR */
            bool has_cons;   /* Reply only */
            uint8_t cons;
            _z_exts_t reply_kept;
            _z_data_t body;
        } response;
        struct {
            uint32_t rid;
        } final;
        struct {
            uint32_t id;
            uint8_t mode;
            uint8_t options;
            _z_wexpr_t key; /* when options has R */
        } interest;
        struct {
            bool has_iid;
            uint32_t iid;
            _z_decl_t decl;
        } declare;
        struct {
            uint8_t enc;
            uint16_t oam_id;
            uint64_t z64;
            _z_view_t body;
        } oam;
    } m;
} _z_nmsg_t;

typedef struct {
    uint8_t id;
    _z_exts_t kept;
    union {
        struct {
            bool ack;
            uint8_t whatami;
            _z_zid_t zid;
            bool has_size;
            uint8_t resolution;
            uint16_t batch_size;
            _z_view_t cookie; /* InitAck */
            bool qos, has_qoslink, has_shm, has_auth, has_mlink, lowlatency, compression, has_patch, has_region;
            uint64_t qoslink, patch;
            _z_view_t shm, auth, mlink, region;
        } init;
        struct {
            bool ack;
            bool lease_in_s;
            uint64_t lease;
            uint64_t initial_sn;
            _z_view_t cookie; /* OpenSyn */
            bool qos, has_shm, has_auth, has_mlink, mlink_ack, lowlatency, compression, has_remote_bound;
            uint64_t remote_bound;
            _z_view_t shm, auth, mlink;
        } open;
        struct {
            bool session;
            uint8_t reason;
        } close;
        struct {
            bool reliable;
            bool more; /* Fragment */
            uint64_t sn;
            bool has_qos;
            uint64_t qos;
            bool first, drop; /* Fragment markers */
            _z_view_t payload; /* Fragment: the slice; Frame: unused */
        } frame;
        struct {
            uint8_t version;
            uint8_t whatami;
            _z_zid_t zid;
            bool has_size;
            uint8_t resolution;
            uint16_t batch_size;
            bool lease_in_s;
            uint64_t lease;
            uint64_t next_sn_r, next_sn_be;
            bool has_qos_sns, has_shm, has_patch;
            _z_view_t qos_sns, shm;
            uint64_t patch;
        } join;
        struct {
            uint8_t enc;
            uint16_t oam_id;
            bool has_qos;
            uint64_t qos;
            uint64_t z64;
            _z_view_t body;
        } oam;
    } m;
} _z_tmsg_t;

/*
 * Encoders of messages a build never sends are left out; ZP_CODEC_ALL = 1
 * keeps every encoder, and every field and extension of every message (the
 * conformance tests and fuzzers need them). Every decoder is always present:
 * any message may arrive; without ZP_CODEC_ALL it only fills what the
 * library reads.
 */
#define _Z_ENC_REQUEST (ZP_CODEC_ALL || Z_FEATURE_QUERY)
#define _Z_ENC_RESPONSE (ZP_CODEC_ALL || Z_FEATURE_QUERYABLE)
#define _Z_ENC_INTEREST (ZP_CODEC_ALL || Z_FEATURE_LIVELINESS)
#define _Z_ENC_DECLARE (ZP_CODEC_ALL || Z_FEATURE_SUBSCRIPTION || Z_FEATURE_QUERYABLE || Z_FEATURE_LIVELINESS)
#define _Z_ENC_FRAGMENT (ZP_CODEC_ALL || Z_FEATURE_FRAGMENTATION)
#define _Z_ENC_JOIN (ZP_CODEC_ALL || Z_FEATURE_MULTICAST_TRANSPORT)

/* True if this build can encode network message `id`. */
static inline bool _z_enc_enabled(uint8_t id) {
    switch (id) {
        case _Z_N_PUSH: return true;
        case _Z_N_REQUEST: return _Z_ENC_REQUEST;
        case _Z_N_RESPONSE:
        case _Z_N_RESPONSE_FINAL: return _Z_ENC_RESPONSE;
        case _Z_N_INTEREST: return _Z_ENC_INTEREST;
        case _Z_N_DECLARE: return _Z_ENC_DECLARE;
        case _Z_N_OAM: return ZP_CODEC_ALL;
        default: return false;
    }
}

/* A Scout or a Hello. */
typedef struct {
    uint8_t id;
    uint8_t what; /* Scout: role bitmask; Hello: 2-bit role code */
    bool has_zid;
    bool has_locators;
    uint8_t nloc;
    _z_zid_t zid;
    _z_view_t locators; /* Hello: the nloc <utf8;z8> locators, as on the wire */
    _z_exts_t kept;
} _z_smsg_t;

/* ---- core (codec/core.c) ---- */
z_result_t _z_zid_read(_zr_t *r, uint8_t len, _z_zid_t *out);
uint8_t _z_zid_wire_len(const uint8_t id[16]);
z_result_t _z_ts_read(_zr_t *r, _z_ts_t *out);
z_result_t _z_ts_write(_zw_t *w, const _z_ts_t *ts);
z_result_t _z_enc_read(_zr_t *r, _z_enc_t *out);
z_result_t _z_enc_write(_zw_t *w, const _z_enc_t *e);
bool _z_enc_is_default(const _z_enc_t *e);
z_result_t _z_wexpr_read(_zr_t *r, bool has_suffix, bool sender, _z_wexpr_t *out);
z_result_t _z_wexpr_write(_zw_t *w, const _z_wexpr_t *k);
z_result_t _z_sinfo_read(_zr_t *r, _z_sinfo_t *out);
z_result_t _z_sinfo_write(_zw_t *w, const _z_sinfo_t *s);

/* Reads one extension; *more tells whether another one follows. */
z_result_t _z_ext_read(_zr_t *r, _z_ext_t *e, bool *more);
/* Keeps an unmodelled extension, or fails if it is mandatory. */
z_result_t _z_ext_keep(_z_exts_t *kept, const _z_ext_t *e);

/*
 * Writing an extension chain. The encoder counts the extensions it writes
 * first (_z_wexts_begin), so that each header carries the Z flag while
 * another follows; a chain is written in one go, with no list built first.
 */
static inline void _z_wexts_begin(_zw_t *w, uint8_t n) { w->exts = n; }
/* A Unit extension, or a Z64 one with value v (by the encoding bits of hdr). */
z_result_t _z_wext_z64(_zw_t *w, uint8_t hdr, uint64_t v);
/* A ZBuf extension holding len bytes at p. */
z_result_t _z_wext_buf(_zw_t *w, uint8_t hdr, const uint8_t *p, size_t len);
/* A ZBuf extension whose body `fn` writes (run twice: to measure, then to write). */
typedef z_result_t (*_z_body_fn)(_zw_t *w, const void *ctx);
z_result_t _z_wext_fn(_zw_t *w, uint8_t hdr, _z_body_fn fn, const void *ctx);
/* A field the library never sets when it sends (a source info, a timestamp
 * extension...): only a ZP_CODEC_ALL build encodes it. */
#if ZP_CODEC_ALL
#define _Z_SENT(flag) (flag)
#else
#define _Z_SENT(flag) false
#endif
#if _Z_KEEP_EXTS
#define _z_kept_n(k) ((k)->n)
/* The kept extensions, as they were read. */
z_result_t _z_wext_kept(_zw_t *w, const _z_exts_t *kept);
#else
#define _z_kept_n(k) 0
static inline z_result_t _z_wext_kept(_zw_t *w, const _z_exts_t *kept) {
    (void)kept;
    return w->err;
}
#endif

/* ---- zenoh layer (codec/zenoh.c) ---- */
z_result_t _z_data_read(_zr_t *r, _z_data_t *out);
z_result_t _z_data_write(_zw_t *w, const _z_data_t *d);
z_result_t _z_qmsg_read(_zr_t *r, _z_qmsg_t *out);
z_result_t _z_qmsg_write(_zw_t *w, const _z_qmsg_t *q);

/* ---- declarations (codec/declare.c) ---- */
z_result_t _z_decl_read(_zr_t *r, _z_decl_t *out);
z_result_t _z_decl_write(_zw_t *w, const _z_decl_t *d);

/* ---- network layer (codec/network.c) ---- */
/* True if b is the header byte of a network message (ends a Frame otherwise). */
bool _z_is_network_header(uint8_t b);
/* Decodes one network message. */
z_result_t _z_network_decode(_zr_t *r, _z_nmsg_t *out);
/* Encodes one network message. */
z_result_t _z_network_encode(_zw_t *w, const _z_nmsg_t *m);

/* ---- scouting (codec/scouting.c) ---- */
z_result_t _z_scouting_decode(_zr_t *r, _z_smsg_t *out);
z_result_t _z_scouting_encode(_zw_t *w, const _z_smsg_t *m);

/* ---- transport layer (codec/transport.c) ---- */
/*
 * Decodes one transport message. For a Frame only the header is consumed:
 * the network messages follow in r (read them while _z_frame_more(r)).
 * A Fragment takes the rest of r as its payload.
 */
z_result_t _z_transport_decode(_zr_t *r, _z_tmsg_t *out);
/* Decodes an Init or an Open, the messages of a unicast handshake (any other
 * message: Z_EOPEN), without the code of the others. */
z_result_t _z_handshake_decode(_zr_t *r, _z_tmsg_t *m);
/* Encodes one transport message (a Frame: header only; a Fragment: with payload).
 * Without ZP_CODEC_ALL only Frames, Fragments and Joins: the unicast transport
 * writes its InitSyn, OpenSyn, Close and KeepAlive itself. */
z_result_t _z_transport_encode(_zw_t *w, const _z_tmsg_t *m);
/* True while a Frame being read still has network messages. */
bool _z_frame_more(const _zr_t *r);

#endif
