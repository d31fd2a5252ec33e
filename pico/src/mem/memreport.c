/*
 * Memory report: not linked into anything. Each symbol below is a buffer
 * whose size is the RAM of one pool or table of the current configuration;
 * scripts/memreport.sh reads them back with `nm -S` (works for any target).
 */
#include "../session/session.h"

#define _ZP_REPORT(name, bytes) char zp_mem_##name[(bytes) > 0 ? (bytes) : 1];

#define _ZP_TP ((_z_transport_t *)0)
#define _ZP_S ((_z_session_t *)0)

_ZP_REPORT(total_sessions, sizeof(_z_session_t) * ZP_MAX_SESSIONS)
_ZP_REPORT(tx_batch, sizeof(_ZP_TP->tx) * ZP_MAX_SESSIONS)
_ZP_REPORT(rx_batch, sizeof(_ZP_TP->rx) * ZP_MAX_SESSIONS)
#if Z_FEATURE_AUTO_BATCHING == 1
_ZP_REPORT(tx_writer_batch, sizeof(_ZP_TP->tx_out) * ZP_MAX_SESSIONS)
#endif
#if Z_FEATURE_FRAGMENTATION == 1
_ZP_REPORT(fragmentation, sizeof(_ZP_TP->defrag) * ZP_MAX_SESSIONS)
#endif
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
_ZP_REPORT(multicast_peers, sizeof(_ZP_TP->peers) * ZP_MAX_SESSIONS)
#endif
#if Z_FEATURE_PUBLICATION == 1
_ZP_REPORT(publication, sizeof(_ZP_S->pubs) * ZP_MAX_SESSIONS)
#endif
#if Z_FEATURE_SUBSCRIPTION == 1
_ZP_REPORT(subscription, sizeof(_ZP_S->subs) * ZP_MAX_SESSIONS)
#endif
#if Z_FEATURE_QUERYABLE == 1
_ZP_REPORT(queryable, sizeof(_ZP_S->qbls) * ZP_MAX_SESSIONS)
#endif
#if Z_FEATURE_QUERY == 1
_ZP_REPORT(query, sizeof(_ZP_S->pending) * ZP_MAX_SESSIONS)
#endif
#if Z_FEATURE_LIVELINESS == 1
_ZP_REPORT(liveliness_tokens, sizeof(_ZP_S->tokens) * ZP_MAX_SESSIONS)
#if Z_FEATURE_SUBSCRIPTION == 1
_ZP_REPORT(liveliness_remote, sizeof(_ZP_S->rtokens) * ZP_MAX_SESSIONS)
#endif
#endif
#if ZP_MALLOC == 0
_ZP_REPORT(block_pool, (size_t)ZP_POOL_BLOCKS * (ZP_POOL_BLOCK_SIZE + 4u)) /* blocks and their 32-bit flags (pool.c) */
#endif
