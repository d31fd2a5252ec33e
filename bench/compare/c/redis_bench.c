/*
 * Redis client of bench/compare.sh, against hiredis (Debian's libhiredis-dev), through a
 * redis-server that the driver starts: SUBSCRIBE / PUBLISH on channel `thr`; the publisher
 * pipelines (PIPELINE commands written before their replies are read), Redis's own advice
 * for speed. Round trips: `ping` publishes on channel `ping` and awaits `pong` on channel
 * `pong`; each side needs two connections, since a subscribed connection cannot publish.
 * See bench.h for the command line and the output.
 */
#include <hiredis/hiredis.h>

#include "bench.h"

/* PUBLISH commands in flight on the publisher's connection. */
#define PIPELINE 256

static redisContext *conn(const struct bench_args *a) {
    redisContext *c = NULL;
    double give_up = bench_now() + 10;
    for (;;) {
        c = redisConnect(a->host, a->port);
        if (c && !c->err) return c;
        if (bench_now() > give_up) {
            fprintf(stderr, "connect %s:%d: %s\n", a->host, a->port, c ? c->errstr : "?");
            exit(1);
        }
        if (c) redisFree(c);
        usleep(20000);
    }
}

/* Sends SUBSCRIBE CHANNEL on `c` and reads its confirmation. */
static void subscribe(redisContext *c, const char *channel) {
    redisReply *r = redisCommand(c, "SUBSCRIBE %s", channel);
    if (!r) {
        fprintf(stderr, "subscribe: %s\n", c->errstr);
        exit(1);
    }
    freeReplyObject(r);
}

/* Reads the next message pushed to a subscribed connection; returns its payload length,
   -1 on failure; its first 8 bytes (those there are) go to `head`, if given. */
static long next_message(redisContext *c, char head[8]) {
    void *v = NULL;
    if (redisGetReply(c, &v) != REDIS_OK || !v) return -1;
    redisReply *r = v;
    long n = 0;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3) {
        n = (long)r->element[2]->len;
        if (head) memcpy(head, r->element[2]->str, n < 8 ? (size_t)n : 8);
    }
    freeReplyObject(r);
    return n;
}

int main(int argc, char **argv) {
    struct bench_args a;
    bench_parse(argc, argv, &a);
    if (!strcmp(a.mode, "sub")) {
        redisContext *c = conn(&a);
        struct timeval tv = {(time_t)a.max_seconds, 0};
        redisSetTimeout(c, tv);
        subscribe(c, "thr");
        printf("subscribed\n");
        struct bench_rounds r = {.a = &a};
        double give_up = bench_now() + a.max_seconds;
        for (;;) {
            char head[8] = {0};
            long n = next_message(c, head);
            if (n < 0 || bench_now() > give_up) {
                bench_rounds_print_median(&r);
                break;
            }
            bench_seq_record(&r, head, n < 8 ? (size_t)n : 8);
            if (bench_rounds_tick(&r, (size_t)n)) break;
        }
        bench_exit(0);
    } else if (!strcmp(a.mode, "pub")) {
        redisContext *c = conn(&a);
        char *buf = calloc(1, a.size ? a.size : 1);
        double end = bench_now() + a.duration;
        uint64_t sent = 0;
        while (bench_now() < end) {
            for (int i = 0; i < PIPELINE; i++) {
                if (a.seq) bench_put_seq(buf, sent + (uint64_t)i);
                redisAppendCommand(c, "PUBLISH thr %b", buf, a.size);
            }
            for (int i = 0; i < PIPELINE; i++) {
                void *v = NULL;
                if (redisGetReply(c, &v) != REDIS_OK) {
                    fprintf(stderr, "publish: %s\n", c->errstr);
                    bench_exit(1);
                }
                freeReplyObject(v);
            }
            sent += PIPELINE;
        }
        printf("sent=%llu payload=%zu\n", (unsigned long long)sent, a.size);
        bench_exit(0);
    } else if (!strcmp(a.mode, "ping")) {
        redisContext *pub = conn(&a), *sub = conn(&a);
        subscribe(sub, "pong");
        char *buf = calloc(1, a.size ? a.size : 1);
        double *rtt = malloc(sizeof(double) * a.samples);
        uint64_t i = 0;
        double give_up = bench_now() + 30;
        while (i < a.samples + BENCH_WARMUP) {
            double t0 = bench_now();
            redisReply *r = redisCommand(pub, "PUBLISH ping %b", buf, a.size);
            if (!r) {
                fprintf(stderr, "publish: %s\n", pub->errstr);
                bench_exit(1);
            }
            long receivers = r->type == REDIS_REPLY_INTEGER ? (long)r->integer : 0;
            freeReplyObject(r);
            if (receivers == 0) {
                /* The pong side has not subscribed yet. */
                if (bench_now() > give_up) {
                    fprintf(stderr, "nobody answers on channel ping\n");
                    bench_exit(1);
                }
                usleep(10000);
                continue;
            }
            if (next_message(sub, NULL) < 0) {
                fprintf(stderr, "pong: %s\n", sub->errstr);
                bench_exit(1);
            }
            if (i >= BENCH_WARMUP) rtt[i - BENCH_WARMUP] = bench_now() - t0;
            i++;
        }
        bench_print_latency(rtt, a.samples, a.size);
        bench_exit(0);
    } else {
        redisContext *pub = conn(&a), *sub = conn(&a);
        struct timeval tv = {(time_t)a.max_seconds, 0};
        redisSetTimeout(sub, tv);
        subscribe(sub, "ping");
        printf("subscribed\n");
        for (;;) {
            void *v = NULL;
            if (redisGetReply(sub, &v) != REDIS_OK || !v) break;
            redisReply *m = v;
            if (m->type == REDIS_REPLY_ARRAY && m->elements == 3) {
                redisReply *r =
                    redisCommand(pub, "PUBLISH pong %b", m->element[2]->str, m->element[2]->len);
                if (!r) break;
                freeReplyObject(r);
            }
            freeReplyObject(m);
        }
        bench_exit(0);
    }
}
