/*
 * ZeroMQ client of bench/compare.sh, against libzmq (Debian's libzmq3-dev): PUB/SUB for
 * throughput (the subscriber binds, the publisher connects), REQ/REP for round trips (the
 * replier binds). Default socket options (high-water marks of 1000 messages: a PUB socket
 * drops what a slow subscriber cannot take; the subscriber's count is what is reported).
 * See bench.h for the command line and the output.
 */
#include <zmq.h>

#include "bench.h"

static void *sock(void *ctx, int type) {
    void *s = zmq_socket(ctx, type);
    if (!s) {
        fprintf(stderr, "zmq_socket: %s\n", zmq_strerror(zmq_errno()));
        exit(1);
    }
    return s;
}

static void check(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", what, zmq_strerror(zmq_errno()));
        exit(1);
    }
}

int main(int argc, char **argv) {
    struct bench_args a;
    bench_parse(argc, argv, &a);
    char ep[300];
    snprintf(ep, sizeof ep, "tcp://%s:%d", a.host, a.port);
    void *ctx = zmq_ctx_new();
    if (!strcmp(a.mode, "sub")) {
        void *s = sock(ctx, ZMQ_SUB);
        check(zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0), "subscribe");
        int timeout_ms = (int)(a.max_seconds * 1000);
        check(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms), "rcvtimeo");
        check(zmq_bind(s, ep), "bind");
        struct bench_rounds r = {.a = &a};
        double give_up = bench_now() + a.max_seconds;
        zmq_msg_t m;
        zmq_msg_init(&m);
        for (;;) {
            int n = zmq_msg_recv(&m, s, 0);
            if (n < 0 || bench_now() > give_up) {
                bench_rounds_print_median(&r);
                break;
            }
            bench_seq_record(&r, zmq_msg_data(&m), (size_t)n);
            if (bench_rounds_tick(&r, (size_t)n)) break;
        }
        zmq_msg_close(&m);
        bench_exit(0);
    } else if (!strcmp(a.mode, "pub")) {
        void *s = sock(ctx, ZMQ_PUB);
        check(zmq_connect(s, ep), "connect");
        if (a.also[0]) {
            snprintf(ep, sizeof ep, "tcp://%s", a.also);
            check(zmq_connect(s, ep), "connect");
        }
        char *buf = calloc(1, a.size ? a.size : 1);
        double end = bench_now() + a.duration;
        uint64_t sent = 0;
        while (bench_now() < end) {
            for (int i = 0; i < 1000; i++) {
                if (a.seq) bench_put_seq(buf, sent);
                check(zmq_send(s, buf, a.size, 0), "send");
                sent++;
            }
        }
        printf("sent=%llu payload=%zu\n", (unsigned long long)sent, a.size);
        bench_exit(0);
    } else if (!strcmp(a.mode, "ping")) {
        void *s = sock(ctx, ZMQ_REQ);
        check(zmq_connect(s, ep), "connect");
        char *buf = calloc(1, a.size ? a.size : 1);
        char *back = malloc(a.size + 1);
        double *rtt = malloc(sizeof(double) * a.samples);
        for (uint64_t i = 0; i < a.samples + BENCH_WARMUP; i++) {
            double t0 = bench_now();
            check(zmq_send(s, buf, a.size, 0), "send");
            check(zmq_recv(s, back, a.size + 1, 0), "recv");
            if (i >= BENCH_WARMUP) rtt[i - BENCH_WARMUP] = bench_now() - t0;
        }
        bench_print_latency(rtt, a.samples, a.size);
        bench_exit(0);
    } else {
        void *s = sock(ctx, ZMQ_REP);
        int timeout_ms = (int)(a.max_seconds * 1000);
        check(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms), "rcvtimeo");
        check(zmq_bind(s, ep), "bind");
        zmq_msg_t m;
        zmq_msg_init(&m);
        while (zmq_msg_recv(&m, s, 0) >= 0) check(zmq_msg_send(&m, s, 0), "send");
        bench_exit(0);
    }
}
