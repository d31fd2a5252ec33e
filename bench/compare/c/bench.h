/*
 * Shared by the C clients of bench/compare.sh (ZeroMQ, Redis, MQTT): the command line, the
 * clock, throughput rounds and latency percentiles, printed in the format of weft's tools
 * (`round N: R msgs/s`, `median_msgs_per_s=R payload=S`, `p50_us=A p99_us=B payload=S`, the
 * latencies one-way, half the round trip) so that one parser reads every system.
 *
 * Command line of every client:
 *   NAME sub ADDR [--samples N] [--rounds R] [--round-seconds S] [--max-seconds S] [--qos Q]
 *   NAME pub SIZE ADDR [--duration S] [--qos Q]
 *   NAME ping SIZE ADDR [--samples N] [--qos Q]
 *   NAME pong ADDR [--max-seconds S] [--qos Q]
 * ADDR is HOST:PORT. `--seq` (pub and sub) numbers the messages: the publisher writes each
 * one's number (8 bytes, little-endian, from 0) at the start of its payload, and the
 * subscriber prints `seq_received=R seq_lost=L seq_max_gap_us=G` after each round line:
 * R and L counted from the first message it received (L: numbers skipped), G the longest
 * wait between two messages since the previous such line. `--also HOST:PORT` (ZeroMQ's pub) connects to a second subscriber.
 */
#ifndef WEFT_BENCH_H
#define WEFT_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The parsed command line. */
struct bench_args {
    const char *mode;    /* sub, pub, ping or pong */
    size_t size;         /* payload of pub and ping */
    char host[256];      /* of ADDR */
    int port;            /* of ADDR */
    uint64_t samples;    /* messages per round (sub) or round trips (ping) */
    int rounds;          /* rounds measured by sub */
    double round_seconds;/* a sub round also ends after this long */
    double max_seconds;  /* sub and pong give up after this long */
    double duration;     /* pub sends for this long */
    int qos;             /* MQTT quality of service */
    int seq;             /* --seq: numbered messages */
    char also[256];      /* --also: a second address (ZeroMQ's pub) */
};

/* Seconds on the monotonic clock. */
static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void bench_usage(const char *name) {
    fprintf(stderr,
            "usage: %s sub ADDR [--samples N] [--rounds R] [--round-seconds S] [--max-seconds S]\n"
            "       %s pub SIZE ADDR [--duration S]\n"
            "       %s ping SIZE ADDR [--samples N]\n"
            "       %s pong ADDR [--max-seconds S]   (all take --qos Q; ADDR is HOST:PORT)\n",
            name, name, name, name);
    exit(2);
}

/* Parses argv into `a`; exits with status 2 on a malformed command line. */
static inline void bench_parse(int argc, char **argv, struct bench_args *a) {
    const char *name = argv[0];
    memset(a, 0, sizeof *a);
    a->samples = 100000;
    a->rounds = 5;
    a->round_seconds = 1.0;
    a->max_seconds = 60.0;
    a->duration = 10.0;
    if (argc < 3) bench_usage(name);
    a->mode = argv[1];
    int i = 2;
    if (!strcmp(a->mode, "pub") || !strcmp(a->mode, "ping")) {
        a->size = (size_t)strtoull(argv[i++], NULL, 10);
        if (i >= argc) bench_usage(name);
    } else if (strcmp(a->mode, "sub") && strcmp(a->mode, "pong")) {
        bench_usage(name);
    }
    const char *addr = argv[i++];
    const char *colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= sizeof a->host) bench_usage(name);
    memcpy(a->host, addr, (size_t)(colon - addr));
    a->port = atoi(colon + 1);
    for (; i < argc; i++) {
        const char *k = argv[i];
        if (!strcmp(k, "--seq")) {
            a->seq = 1;
            continue;
        }
        if (i + 1 >= argc) bench_usage(name);
        const char *v = argv[++i];
        if (!strcmp(k, "--samples")) a->samples = strtoull(v, NULL, 10);
        else if (!strcmp(k, "--rounds")) a->rounds = atoi(v);
        else if (!strcmp(k, "--round-seconds")) a->round_seconds = atof(v);
        else if (!strcmp(k, "--max-seconds")) a->max_seconds = atof(v);
        else if (!strcmp(k, "--duration")) a->duration = atof(v);
        else if (!strcmp(k, "--qos")) a->qos = atoi(v);
        else if (!strcmp(k, "--also") && strlen(v) < sizeof a->also) strcpy(a->also, v);
        else bench_usage(name);
    }
    if (a->samples == 0 || a->rounds <= 0) bench_usage(name);
    if (a->seq && (!strcmp(a->mode, "pub") || !strcmp(a->mode, "ping")) && a->size < 8) {
        fprintf(stderr, "%s: --seq needs SIZE of 8 bytes or more\n", name);
        exit(2);
    }
    /* Lines reach the driver as they are printed. */
    setvbuf(stdout, NULL, _IOLBF, 0);
}

/*
 * Throughput rounds, fed one call per message received: after the first message, each
 * round lasts until `samples` more messages or `round_seconds`, whichever comes first.
 * Returns 1 once every round is measured (the median was printed).
 */
struct bench_rounds {
    const struct bench_args *a;
    uint64_t count;       /* messages received */
    uint64_t round_start; /* count at the start of the round */
    double t_start;       /* clock at the start of the round */
    int round;
    double rates[64];
    size_t last_size;
    /* --seq: the number expected next (once have_next), what was received and skipped,
       the arrival of the last message and the longest wait between two */
    int have_next;
    uint64_t next, seq_received, seq_lost;
    double seq_last, seq_max_gap;
};

/* --seq: the number of message `n` written at the start of `buf` (of `size` >= 8 bytes). */
static inline void bench_put_seq(char *buf, uint64_t n) {
    for (int i = 0; i < 8; i++) buf[i] = (char)(uint8_t)(n >> (8 * i));
}

/* --seq: a message received, its payload `p` of `size` bytes. */
static inline void bench_seq_record(struct bench_rounds *r, const void *p, size_t size) {
    if (!r->a->seq) return;
    double t = bench_now();
    if (r->seq_received++ > 0 && t - r->seq_last > r->seq_max_gap) r->seq_max_gap = t - r->seq_last;
    r->seq_last = t;
    if (size < 8) return;
    const uint8_t *b = p;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | b[i];
    if (r->have_next && n < r->next) return; /* repeated or out of order: not a loss */
    if (r->have_next && n > r->next) r->seq_lost += n - r->next;
    r->next = n + 1;
    r->have_next = 1;
}

static int bench_cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static inline void bench_rounds_print_median(struct bench_rounds *r) {
    if (r->round == 0) {
        fprintf(stderr, "no complete round\n");
        exit(1);
    }
    qsort(r->rates, (size_t)r->round, sizeof r->rates[0], bench_cmp_double);
    printf("median_msgs_per_s=%.0f payload=%zu\n", r->rates[r->round / 2], r->last_size);
}

static inline int bench_rounds_tick(struct bench_rounds *r, size_t size) {
    r->last_size = size;
    if (r->count++ == 0) {
        r->t_start = bench_now();
        r->round_start = 1;
        return 0;
    }
    /* The clock is read every 16 messages at most (and at every message of 4 KiB or more). */
    uint64_t n = r->count - r->round_start;
    if (size < 4096 && (n & 15) != 0 && n < r->a->samples) return 0;
    double t = bench_now();
    if (n >= r->a->samples || t - r->t_start >= r->a->round_seconds) {
        double rate = (double)n / (t - r->t_start);
        printf("round %d: %.0f msgs/s\n", r->round, rate);
        if (r->a->seq)
            printf("seq_received=%llu seq_lost=%llu seq_max_gap_us=%.0f\n",
                   (unsigned long long)r->seq_received, (unsigned long long)r->seq_lost,
                   r->seq_max_gap * 1e6);
        r->seq_max_gap = 0;
        r->rates[r->round++] = rate;
        r->round_start = r->count;
        r->t_start = t;
        if (r->round >= r->a->rounds || r->round >= 64) {
            bench_rounds_print_median(r);
            return 1;
        }
    }
    return 0;
}

/* Prints the one-way latency percentiles (half of each round trip, in µs) of `n` round trips. */
static inline void bench_print_latency(double *rtt_s, size_t n, size_t size) {
    if (n == 0) {
        fprintf(stderr, "no round trip\n");
        exit(1);
    }
    qsort(rtt_s, n, sizeof rtt_s[0], bench_cmp_double);
    size_t i50 = (size_t)((double)n * 0.5), i99 = (size_t)((double)n * 0.99);
    if (i50 >= n) i50 = n - 1;
    if (i99 >= n) i99 = n - 1;
    printf("p50_us=%.1f p99_us=%.1f payload=%zu\n", rtt_s[i50] * 1e6 / 2, rtt_s[i99] * 1e6 / 2, size);
}

/* Flushes standard output and leaves at once (no library teardown, which may block). */
static inline void bench_exit(int code) {
    fflush(stdout);
    _exit(code);
}

/* Warm-up round trips before the measured ones. */
#define BENCH_WARMUP 100

#endif
