/*
 * Zenoh-Pico's build configuration for the footprint comparison
 * (scripts/footprint_upstream.sh): Zenoh-Pico's config.h includes this file
 * when ZENOH_GENERIC is defined. The defaults are the full client's set,
 * chosen to match weft-pico's full_client image (scripts/firmware.sh): a
 * single-threaded client on a serial link, no TCP/UDP, multicast or
 * scouting, no unicast peer mode, no matching listeners, no unstable or
 * advanced API. The script passes -DNAME=VALUE for the minimal publisher's
 * reductions.
 */
#ifndef WEFT_UPSTREAM_GENERIC_CONFIG_H
#define WEFT_UPSTREAM_GENERIC_CONFIG_H

/* sizes: 1,500-byte batches and 2 KiB reassembly as weft-pico's images; key
 * expressions as long as weft-pico's ZP_KEYEXPR_CAPACITY */
#ifndef Z_FRAG_MAX_SIZE
#define Z_FRAG_MAX_SIZE 2048
#endif
#ifndef Z_BATCH_UNICAST_SIZE
#define Z_BATCH_UNICAST_SIZE 1500
#endif
#ifndef Z_BATCH_MULTICAST_SIZE
#define Z_BATCH_MULTICAST_SIZE 1500
#endif
#ifndef Z_MAX_KEYEXPR_LENGTH
#define Z_MAX_KEYEXPR_LENGTH 64
#endif
/* tasks of the single-threaded runtime (read, lease, reconnection, query
 * timeouts); Zenoh-Pico's CMake default is 64 */
#ifndef Z_RUNTIME_MAX_TASKS
#define Z_RUNTIME_MAX_TASKS 8
#endif

/* timing: Zenoh-Pico's CMake defaults (also weft-pico's) */
#define Z_CONFIG_SOCKET_TIMEOUT 100
#define Z_TRANSPORT_LEASE 10000
#define Z_TRANSPORT_LEASE_EXPIRE_FACTOR 3
#define Z_RUNTIME_IDLE_READ_TASK_SLEEP 0
#define Z_TRANSPORT_ACCEPT_TIMEOUT 1000
#define Z_TRANSPORT_CONNECT_TIMEOUT 10000

/* the API */
#ifndef Z_FEATURE_PUBLICATION
#define Z_FEATURE_PUBLICATION 1
#endif
#ifndef Z_FEATURE_SUBSCRIPTION
#define Z_FEATURE_SUBSCRIPTION 1
#endif
#ifndef Z_FEATURE_QUERY
#define Z_FEATURE_QUERY 1
#endif
#ifndef Z_FEATURE_QUERYABLE
#define Z_FEATURE_QUERYABLE 1
#endif
#ifndef Z_FEATURE_LIVELINESS
#define Z_FEATURE_LIVELINESS 1
#endif
#define Z_FEATURE_INTEREST 1 /* always on in weft-pico */
#define Z_FEATURE_ENCODING_VALUES 1 /* always on in weft-pico */
#define Z_FEATURE_MATCHING 0
#define Z_FEATURE_ADVANCED_PUBLICATION 0
#define Z_FEATURE_ADVANCED_SUBSCRIPTION 0
#define Z_FEATURE_CONNECTIVITY 0
#define Z_FEATURE_ADMIN_SPACE 0
#define Z_FEATURE_LOCAL_SUBSCRIBER 0
#define Z_FEATURE_LOCAL_QUERYABLE 0
#define Z_FEATURE_SESSION_CHECK 1

/* the transport */
#ifndef Z_FEATURE_FRAGMENTATION
#define Z_FEATURE_FRAGMENTATION 1
#endif
#ifndef Z_FEATURE_BATCHING
#define Z_FEATURE_BATCHING 1
#endif
#ifndef Z_FEATURE_AUTO_RECONNECT
#define Z_FEATURE_AUTO_RECONNECT 1
#endif
#define Z_FEATURE_MULTI_THREAD 0
#define Z_FEATURE_UNICAST_TRANSPORT 1
#define Z_FEATURE_MULTICAST_TRANSPORT 0
#define Z_FEATURE_RAWETH_TRANSPORT 0
#define Z_FEATURE_UNICAST_PEER 0
#define Z_FEATURE_MULTICAST_DECLARATIONS 0
#define Z_FEATURE_RX_CACHE 0
#define Z_FEATURE_BATCH_TX_MUTEX 0
#define Z_FEATURE_BATCH_PEER_MUTEX 0

/* the links: serial only */
#define Z_FEATURE_LINK_SERIAL 1
#define Z_FEATURE_LINK_SERIAL_USB 0
#define Z_FEATURE_LINK_TCP 0
#define Z_FEATURE_TCP_NODELAY 0
#define Z_FEATURE_LINK_UDP_UNICAST 0
#define Z_FEATURE_LINK_UDP_MULTICAST 0
#define Z_FEATURE_SCOUTING 0
#define Z_FEATURE_LINK_BLUETOOTH 0
#define Z_FEATURE_LINK_WS 0
#define Z_FEATURE_LINK_TLS 0

#endif
