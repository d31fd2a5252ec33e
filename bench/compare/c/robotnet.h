/*
 * The robot-net scenario for the C clients of bench/compare.sh (ZeroMQ, Redis, MQTT,
 * weft-pico, DDS): the same workload, statistics and output as weft's `robotnet` example and
 * Zenoh's `zrobotnet` (crates/weft/examples/robotnet/scenario.rs), so that bench/compare's
 * driver reads every system alike.
 *
 * Ten nodes in one process: nine sensors each publish a 64 B state sample on
 * `robot/<i>/state` at 10 kHz; a controller (node 9) receives the nine and publishes a 64 B
 * command to each on `robot/<i>/cmd` at 10 kHz; every node publishes a 100 Hz event on
 * `robot/<i>/event`, which the controller receives (its own are not counted). Each node has
 * one thread that sleeps until its next 100 µs deadline and publishes; a tick started more
 * than 100 µs after its deadline counts as late. A payload carries the send time (8 bytes,
 * little-endian ns), a sequence number (8), the phase (1: warm-up 0, measured 1) and the
 * sending node (1). Warm-up lasts until every stream has reached its subscriber and at
 * least 0.5 s; then every tick due in the next S seconds is measured; afterwards the run
 * waits until every measured sample arrived, or nothing arrived for 1 s.
 *
 * A system provides, in the file that includes this one:
 *   static const char *TOPOLOGY;           its topology (p2p, broker) in the output
 *   static int sys_start(const char *host, int port, int qos);
 *                                          opens the ten nodes, subscribes, starts the
 *                                          receiving; 0 on success
 *   static int sys_publish(int node, int kind, int to, const uint8_t *payload);
 *                                          from node `node`'s own thread; 0 once sent or
 *                                          queued to be sent by sys_tick_done
 *   static void sys_tick_done(int node);   after a tick's messages (a system that queues
 *                                          writes them here)
 * and calls rn_received(kind, payload, len) for every sample a subscriber gets.
 *
 * The state the nodes and the receivers share (the streams' counters and latencies, the
 * phases, the pacing) lives in a shared anonymous mapping, so that a system may run some
 * nodes in a process of its own: sys_start forks it, marks those nodes in rn_elsewhere (no
 * thread of this process runs them) and runs them there with rn_node; rn_main waits until
 * they have finished their ticks. Such a process must end with the first one (it is killed
 * when the first one leaves: PR_SET_PDEATHSIG).
 *
 * Command line: NAME [--seconds S] [--qos Q] HOST:PORT. Prints a table, then one JSON line
 * starting with {"robotnet": in the format of weft's example. Latencies are kept in
 * nanoseconds as 32-bit numbers, as weft's example keeps them: one of 4.29 s or more is
 * counted as 4.29 s.
 */
#ifndef WEFT_ROBOTNET_H
#define WEFT_ROBOTNET_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RN_SENSORS 9
#define RN_CONTROLLER 9
#define RN_NODES 10
#define RN_RATE_HZ 10000
#define RN_EVENT_HZ 100
#define RN_PAYLOAD 64
#define RN_LATE_NS 100000ull
#define RN_MIN_WARM_UP_NS 500000000ull
#define RN_MATCH_TIMEOUT_S 20

enum { RN_STATE = 0, RN_COMMAND = 1, RN_EVENT = 2 };
static const char *const RN_KINDS[3] = {"state", "command", "event"};

/* One stream's receiving end. */
struct rn_stream {
    atomic_ullong warm;
    atomic_ullong received;
    atomic_ullong sent;
    uint32_t *latencies; /* ns, one per measured sample, allocated before the run */
    atomic_size_t count;
    size_t capacity;
};

/* How late one node's measured ticks were, ns. */
struct rn_lateness {
    uint64_t *ns;
    size_t n, cap;
};

/* What every process of a run shares (see the top of this file). */
struct rn_shared {
    struct rn_stream streams[3][RN_SENSORS];
    atomic_ullong measure_from;
    atomic_ullong measure_until;
    atomic_int abort;
    struct rn_lateness late[RN_NODES];
    atomic_int finished[RN_NODES];
};

static struct rn_shared *rn;
/* Nodes that another process of the run runs (set by sys_start). */
static int rn_elsewhere[RN_NODES];
static struct timespec rn_epoch;

/* Zeroed memory shared with the processes forked afterwards. */
static void *rn_shared_alloc(size_t size) {
    void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return p;
}

/* Nanoseconds since the run started. */
static inline uint64_t rn_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)(t.tv_sec - rn_epoch.tv_sec) * 1000000000ull + (uint64_t)t.tv_nsec -
           (uint64_t)rn_epoch.tv_nsec;
}

static inline uint64_t rn_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static inline void rn_put_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A sample arrived on stream `kind` (its payload as sent: its sender names the stream of a
   state sample or an event; a command's stream is its receiver's, given as `to`). */
static inline void rn_received(int kind, int to, const uint8_t *p, size_t len) {
    uint64_t now = rn_now_ns();
    if (len < 18 || kind < 0 || kind > 2) return;
    int sensor = kind == RN_COMMAND ? to : p[17];
    if (sensor < 0 || sensor >= RN_SENSORS) return; /* the controller's own events */
    struct rn_stream *s = &rn->streams[kind][sensor];
    if (p[16] == 0) {
        atomic_fetch_add_explicit(&s->warm, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&s->received, 1, memory_order_relaxed);
    uint64_t sent = rn_le64(p);
    uint64_t ns = now > sent ? now - sent : 0;
    size_t i = atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
    if (i < s->capacity) s->latencies[i] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static int rn_matched(void) {
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < RN_SENSORS; i++)
            if (atomic_load_explicit(&rn->streams[k][i].warm, memory_order_relaxed) == 0) return 0;
    return 1;
}

/* The topic of a message of `kind` from `node` (to `to`, for a command). */
static inline void rn_topic(char *out, size_t size, int kind, int node, int to) {
    if (kind == RN_STATE) snprintf(out, size, "robot/%d/state", node);
    else if (kind == RN_COMMAND) snprintf(out, size, "robot/%d/cmd", to);
    else snprintf(out, size, "robot/%d/event", node);
}

/* The kind of a message on `topic`. */
static inline int rn_kind_of(const char *topic) {
    return strstr(topic, "/state") ? RN_STATE : strstr(topic, "/cmd") ? RN_COMMAND : RN_EVENT;
}

/* Provided by the system (see the top of this file). */
static const char *TOPOLOGY;
static int sys_start(const char *host, int port, int qos);
static int sys_publish(int node, int kind, int to, const uint8_t *payload);
static void sys_tick_done(int node);

/* Stamps `p` and publishes it; counts it on its stream when measured and sent. */
static void rn_put(int node, int kind, int to, uint8_t *p, int measured) {
    rn_put_le64(p, rn_now_ns());
    int ok = sys_publish(node, kind, to, p) == 0;
    int sensor = kind == RN_COMMAND ? to : node;
    if (ok && measured && sensor < RN_SENSORS)
        atomic_fetch_add_explicit(&rn->streams[kind][sensor].sent, 1, memory_order_relaxed);
}

static void *rn_node(void *arg) {
    int index = (int)(intptr_t)arg;
    const uint64_t period = 1000000000ull / RN_RATE_HZ;
    const uint64_t event_every = RN_RATE_HZ / RN_EVENT_HZ;
    uint8_t payload[RN_PAYLOAD] = {0};
    payload[17] = (uint8_t)index;
    uint64_t tick = rn_now_ns() / period + 1;
    uint64_t offset = period * (uint64_t)index / (RN_SENSORS + 1);
    uint64_t seq = 0;
    struct rn_lateness *late = &rn->late[index];
    while (!atomic_load(&rn->abort)) {
        uint64_t due = tick * period + offset;
        uint64_t from = atomic_load(&rn->measure_from), until = atomic_load(&rn->measure_until);
        if (due >= until) break;
        uint64_t now = rn_now_ns();
        if (due > now) {
            struct timespec t = {.tv_sec = (time_t)((due - now) / 1000000000ull),
                                 .tv_nsec = (long)((due - now) % 1000000000ull)};
            nanosleep(&t, NULL);
        }
        int measured = due >= from;
        uint64_t start = rn_now_ns();
        if (measured && late->n < late->cap) late->ns[late->n++] = start > due ? start - due : 0;
        rn_put_le64(payload + 8, seq);
        payload[16] = (uint8_t)measured;
        if (index == RN_CONTROLLER) {
            for (int to = 0; to < RN_SENSORS; to++) rn_put(index, RN_COMMAND, to, payload, measured);
        } else {
            rn_put(index, RN_STATE, index, payload, measured);
        }
        if (tick % event_every == 0) rn_put(index, RN_EVENT, RN_CONTROLLER, payload, measured);
        sys_tick_done(index);
        seq++;
        tick++;
    }
    atomic_store(&rn->finished[index], 1);
    return NULL;
}

static int rn_cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int rn_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Percentile `q` (0 to 1) of sorted `v` (n values, ns), in µs; -1 when empty. */
static double rn_pct32(const uint32_t *v, size_t n, double q) {
    if (n == 0) return -1;
    size_t i = (size_t)((double)n * q + 0.999999);
    if (i < 1) i = 1;
    if (i > n) i = n;
    return v[i - 1] / 1e3;
}

static double rn_pct64(const uint64_t *v, size_t n, double q) {
    if (n == 0) return -1;
    size_t i = (size_t)((double)n * q + 0.999999);
    if (i < 1) i = 1;
    if (i > n) i = n;
    return v[i - 1] / 1e3;
}

static void rn_json_number(char *out, size_t size, double x) {
    if (x < 0) snprintf(out, size, "null");
    else snprintf(out, size, "%.1f", x);
}

static void rn_usage(const char *name) {
    fprintf(stderr, "usage: %s [--seconds S] [--qos Q] HOST:PORT\n", name);
    exit(2);
}

/* Runs the scenario on the system the including file provides; returns the exit status. */
static int rn_main(int argc, char **argv) {
    double seconds = 4;
    int qos = 0;
    const char *addr = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--qos") && i + 1 < argc) qos = atoi(argv[++i]);
        else if (!addr && argv[i][0] != '-') addr = argv[i];
        else rn_usage(argv[0]);
    }
    if (!addr || seconds < 0.1 || seconds > 600) rn_usage(argv[0]);
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= sizeof host) rn_usage(argv[0]);
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    int port = atoi(colon + 1);
    setvbuf(stdout, NULL, _IOLBF, 0);
    clock_gettime(CLOCK_MONOTONIC, &rn_epoch);
    rn = rn_shared_alloc(sizeof *rn);
    atomic_store(&rn->measure_from, UINT64_MAX);
    atomic_store(&rn->measure_until, UINT64_MAX);
    size_t per_stream = (size_t)(seconds * RN_RATE_HZ * 1.1) + 1000;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < RN_SENSORS; i++) {
            rn->streams[k][i].capacity = per_stream;
            rn->streams[k][i].latencies = rn_shared_alloc(per_stream * sizeof(uint32_t));
        }
    for (int i = 0; i < RN_NODES; i++) {
        rn->late[i].cap = (size_t)(seconds * RN_RATE_HZ) + 2;
        rn->late[i].ns = rn_shared_alloc(rn->late[i].cap * sizeof(uint64_t));
    }
    if (sys_start(host, port, qos) != 0) {
        atomic_store(&rn->abort, 1);
        return 1;
    }
    pthread_t threads[RN_NODES];
    for (int i = 0; i < RN_NODES; i++)
        if (!rn_elsewhere[i]) pthread_create(&threads[i], NULL, rn_node, (void *)(intptr_t)i);
    /* Warm-up: until every stream is matched and at least 0.5 s has passed. */
    uint64_t started = rn_now_ns();
    while (!rn_matched()) {
        if (rn_now_ns() - started > RN_MATCH_TIMEOUT_S * 1000000000ull ||
            atomic_load(&rn->abort)) {
            fprintf(stderr, "not every stream reached its subscriber within %d s\n",
                    RN_MATCH_TIMEOUT_S);
            atomic_store(&rn->abort, 1);
            for (int i = 0; i < RN_NODES; i++)
                if (!rn_elsewhere[i]) pthread_join(threads[i], NULL);
            return 1;
        }
        usleep(5000);
    }
    uint64_t matched_after = rn_now_ns() - started;
    if (matched_after < RN_MIN_WARM_UP_NS) usleep((useconds_t)((RN_MIN_WARM_UP_NS - matched_after) / 1000));
    uint64_t from = rn_now_ns() + 10000000ull;
    uint64_t until = from + (uint64_t)(seconds * 1e9);
    atomic_store(&rn->measure_until, until);
    atomic_store(&rn->measure_from, from);
    for (int i = 0; i < RN_NODES; i++)
        if (!rn_elsewhere[i]) pthread_join(threads[i], NULL);
    /* The nodes of other processes: until they have published their last tick (at most
       5 s more). */
    for (int i = 0; i < RN_NODES; i++)
        while (rn_elsewhere[i] && !atomic_load(&rn->finished[i]) &&
               rn_now_ns() < until + 5000000000ull)
            usleep(1000);
    /* Every measured sample, or nothing new for 1 s. */
    uint64_t last_total = 0, quiet_since = rn_now_ns();
    for (;;) {
        uint64_t received = 0, sent = 0;
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < RN_SENSORS; i++) {
                received += atomic_load(&rn->streams[k][i].received);
                sent += atomic_load(&rn->streams[k][i].sent);
            }
        if (received >= sent) break;
        if (received != last_total) {
            last_total = received;
            quiet_since = rn_now_ns();
        } else if (rn_now_ns() - quiet_since > 1000000000ull) {
            break;
        }
        usleep(10000);
    }
    /* The figures. */
    char json[4096];
    size_t used = (size_t)snprintf(json, sizeof json, "{\"robotnet\":\"%s\",\"seconds\":%g", TOPOLOGY,
                                   seconds);
    printf("    stream      p50 µs    p99 µs  p99.9 µs    max µs      sent  received   lost\n");
    for (int k = 0; k < 3; k++) {
        size_t n = 0;
        uint64_t sent = 0, received = 0;
        for (int i = 0; i < RN_SENSORS; i++) {
            size_t c = atomic_load(&rn->streams[k][i].count);
            n += c < rn->streams[k][i].capacity ? c : rn->streams[k][i].capacity;
            sent += atomic_load(&rn->streams[k][i].sent);
            received += atomic_load(&rn->streams[k][i].received);
        }
        uint32_t *all = calloc(n ? n : 1, sizeof *all);
        size_t at = 0;
        for (int i = 0; i < RN_SENSORS; i++) {
            size_t c = atomic_load(&rn->streams[k][i].count);
            if (c > rn->streams[k][i].capacity) c = rn->streams[k][i].capacity;
            memcpy(all + at, rn->streams[k][i].latencies, c * sizeof *all);
            at += c;
        }
        qsort(all, n, sizeof *all, rn_cmp_u32);
        double p50 = rn_pct32(all, n, 0.5), p99 = rn_pct32(all, n, 0.99),
               p999 = rn_pct32(all, n, 0.999), max = n ? all[n - 1] / 1e3 : -1;
        uint64_t lost = sent > received ? sent - received : 0;
        printf("    %-8s %9.1f %9.1f %9.1f %9.1f %9llu %9llu %6llu\n", RN_KINDS[k], p50, p99, p999,
               max, (unsigned long long)sent, (unsigned long long)received,
               (unsigned long long)lost);
        char a[32], b[32], c[32], d[32];
        rn_json_number(a, sizeof a, p50);
        rn_json_number(b, sizeof b, p99);
        rn_json_number(c, sizeof c, p999);
        rn_json_number(d, sizeof d, max);
        used += (size_t)snprintf(json + used, sizeof json - used,
                                 ",\"%s\":{\"p50_us\":%s,\"p99_us\":%s,\"p999_us\":%s,\"max_us\":%s,"
                                 "\"sent\":%llu,\"received\":%llu,\"lost\":%llu}",
                                 RN_KINDS[k], a, b, c, d, (unsigned long long)sent,
                                 (unsigned long long)received, (unsigned long long)lost);
        free(all);
    }
    size_t ticks = 0;
    for (int i = 0; i < RN_NODES; i++) ticks += rn->late[i].n;
    uint64_t *late = calloc(ticks ? ticks : 1, sizeof *late);
    size_t at = 0, sent_late = 0;
    for (int i = 0; i < RN_NODES; i++) {
        memcpy(late + at, rn->late[i].ns, rn->late[i].n * sizeof *late);
        at += rn->late[i].n;
    }
    qsort(late, ticks, sizeof *late, rn_cmp_u64);
    for (size_t i = 0; i < ticks; i++) sent_late += late[i] > RN_LATE_NS;
    char lp99[32], lmax[32], load[64] = "";
    rn_json_number(lp99, sizeof lp99, rn_pct64(late, ticks, 0.99));
    rn_json_number(lmax, sizeof lmax, ticks ? late[ticks - 1] / 1e3 : -1);
    FILE *f = fopen("/proc/loadavg", "r");
    double l1, l5, l15;
    if (f && fscanf(f, "%lf %lf %lf", &l1, &l5, &l15) == 3)
        snprintf(load, sizeof load, "%.2f %.2f %.2f", l1, l5, l15);
    if (f) fclose(f);
    printf("    pacing: %zu of %zu ticks published more than 100 µs late\n", sent_late, ticks);
    snprintf(json + used, sizeof json - used,
             ",\"ticks\":%zu,\"sent_late\":%zu,\"late_p99_us\":%s,\"late_max_us\":%s,\"links\":[],"
             "\"loadavg\":\"%s\"}",
             ticks, sent_late, lp99, lmax, load);
    printf("%s\n", json);
    fflush(stdout);
    _exit(0);
}

#endif
