/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmig_bench.c - control-plane benchmarks, using only the public API.
 *
 *   rdmig-bench server --listen ADDR:PORT [--conns N]
 *   rdmig-bench latency --to ADDR:PORT [--iters N] [--warmup N] [--rounds N] [--json FILE]
 *   rdmig-bench cost --to ADDR:PORT --inline auto|0 --bytes B --count N
 *   rdmig-bench footprint --to ADDR:PORT [--json FILE]
 *   rdmig-bench bulk-recv | bulk-send ...   (bench_bulk.c)
 *
 * latency opens two connections to one server, one with inline auto and
 * one with inline 0, and measures them interleaved (A B A B ... in rounds),
 * so drift in an emulated guest hits both alike.  For every message class
 * it times one-way sends (each send includes waiting for the READY credit
 * of the previous one, as in a migration) and REGISTER_REQUEST ->
 * REGISTER_RESULT round trips; it reports p50, p99, p99.9 and mean, and
 * the ratio auto / off.
 *
 * cost sends N messages of B bytes on one connection, each from one call of
 * send_one(); run it under callgrind (--toggle-collect=send_one
 * --dump-after=send_one) to count the sender's instructions per message
 * (bench/run-in-guest.sh does).
 *
 * footprint connects once with inline auto and once with inline 0 and
 * reports what each connection costs this process: memory pinned by
 * registration (VmPin: the control buffers) and queue memory mapped from
 * the verbs device.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"

#define MAX_CONNS 4

/* The message classes of the benchmark: total bytes on the wire. */
static const struct msg_class {
	const char *name;
	uint32_t bytes; /* header + payload */
	int round_trip; /* REGISTER_REQUEST -> REGISTER_RESULT */
} classes[] = {
	{"16B_header_only", 16, 0},
	{"32B", 32, 0},
	{"40B", 40, 0},
	{"336B_ram_blocks_result", 336, 0},
	{"4KiB_stream", 4096 + 16, 0},
	{"32KiB_stream", 32768 + 16, 0},
	{"register_round_trip", 40, 1},
};
#define NCLASSES (sizeof(classes) / sizeof(classes[0]))

/* ------------------------------------------------------------ shared -- */

int bench_split_addr(const char *s, char *host, size_t hl, char *port, size_t pl)
{
	const char *colon = s[0] == '[' ? strstr(s, "]:") : strrchr(s, ':');
	size_t n;

	if (!colon)
		return -1;
	n = (size_t)(colon - s) - (s[0] == '[');
	if (n >= hl || strlen(colon + 1 + (s[0] == '[')) >= pl)
		return -1;
	memcpy(host, s + (s[0] == '['), n);
	host[n] = '\0';
	strcpy(port, colon + 1 + (s[0] == '['));
	return 0;
}

void bench_opts(const struct bench_args *a, struct rdmig_opts *o)
{
	rdmig_opts_init(o);
	o->inline_request = a->inline_request;
	if (a->spin_us >= 0)
		o->spin_us = a->spin_us;
}

double bench_t_main, bench_t_listening, bench_t_request;

double bench_now_us(void)
{
	return rdmig_monotonic_seconds() * 1e6;
}

int bench_die(const char *what, const char *msg)
{
	fprintf(stderr, "rdmig-bench: %s: %s\n", what, msg);
	return 1;
}

int bench_connect(const struct bench_args *a, const struct rdmig_opts *o, struct rdmig_conn **c)
{
	char host[256], port[16];

	*c = NULL;
	if (bench_split_addr(a->addr, host, sizeof(host), port, sizeof(port)))
		return bench_die("connect", "bad --to");
	/* the server may still be starting: retry a refused connect for 10 s */
	for (int tries = 0;; tries++) {
		int ret = rdmig_conn_create(o, c);
		if (!ret)
			ret = rdmig_connect(*c, host, port);
		if (!ret)
			return 0;
		if (tries == 100 || ret == RDMIG_EINVAL)
			return bench_die("connect", rdmig_conn_errmsg(*c));
		rdmig_conn_destroy(*c);
		*c = NULL;
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
}

/* The connection request came: the end of the wait for a client. */
static bool note_request(void *ctx, const struct sockaddr *source)
{
	(void)ctx;
	(void)source;
	bench_t_request = rdmig_monotonic_seconds();
	return true;
}

int bench_accept(const struct bench_args *a, const struct rdmig_opts *o, struct rdmig_listener **l,
		 struct rdmig_conn **c)
{
	char host[256], port[16];
	struct rdmig_opts lo = *o;

	if (bench_split_addr(a->addr, host, sizeof(host), port, sizeof(port)))
		return bench_die("listen", "bad --listen");
	lo.accept_timeout_ms = 120000; /* a client that never comes must not hang us */
	if (rdmig_listener_create(&lo, l) || rdmig_listen(*l, host, port))
		return bench_die("listen", rdmig_listener_errmsg(*l));
	bench_t_listening = rdmig_monotonic_seconds();
	rdmig_listener_set_filter(*l, note_request, NULL);
	/* scripts wait for this line before they start the client */
	fprintf(stderr, "rdmig-bench: listening on %s\n", a->addr);
	if (rdmig_accept(*l, c))
		return bench_die("accept", rdmig_listener_errmsg(*l));
	return 0;
}

/* ------------------------------------------------------------ server -- */

static void *serve(void *arg)
{
	struct rdmig_conn *c = arg;
	uint8_t out[RDMIG_REGISTER_RESULT_SIZE] = {0};

	for (;;) {
		struct rdmig_msg m;
		int ret = rdmig_recv(c, RDMIG_MSG_NONE, &m);

		if (ret || m.type == RDMIG_MSG_REGISTER_FINISHED) {
			if (ret && ret != RDMIG_EDISCONNECTED)
				fprintf(stderr, "rdmig-bench: server: %s\n", rdmig_conn_errmsg(c));
			return NULL;
		}
		if (m.type == RDMIG_MSG_REGISTER_REQUEST &&
		    rdmig_reply(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_RESULT, 1, sizeof(out), out}))
			return NULL;
	}
}

static int cmd_server(const struct bench_args *a)
{
	char host[256], port[16];
	struct rdmig_opts o;
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c[MAX_CONNS] = {0};
	pthread_t th[MAX_CONNS];
	int ret;

	if (bench_split_addr(a->addr, host, sizeof(host), port, sizeof(port)))
		return bench_die("server", "bad --listen");
	bench_opts(a, &o);
	o.inline_request = RDMIG_INLINE_AUTO; /* the client's side is the one measured */
	o.timeout_ms = 0;              /* the client may think for a while */
	o.accept_timeout_ms = 120000;  /* but a client that never comes must not hang us */
	if ((ret = rdmig_listener_create(&o, &l)) || (ret = rdmig_listen(l, host, port)))
		return bench_die("server", rdmig_listener_errmsg(l));
	fprintf(stderr, "rdmig-bench: listening on %s\n", a->addr);
	for (int i = 0; i < a->conns; i++)
		if (rdmig_accept(l, &c[i]))
			return bench_die("server", rdmig_listener_errmsg(l));
	for (int i = 0; i < a->conns; i++)
		pthread_create(&th[i], NULL, serve, c[i]);
	for (int i = 0; i < a->conns; i++) {
		pthread_join(th[i], NULL);
		rdmig_conn_destroy(c[i]);
	}
	rdmig_listener_destroy(l);
	return 0;
}

/* ------------------------------------------------------------ client -- */

/* One operation of a class; returns its duration in microseconds (< 0: error). */
static double one_op(struct rdmig_conn *c, const struct msg_class *k, const uint8_t *payload)
{
	struct rdmig_msg reply;
	double t0 = bench_now_us();
	int ret;

	if (k->round_trip)
		ret = rdmig_request(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_REQUEST, 1,
							   RDMIG_REGISTER_SIZE, payload},
				    RDMIG_MSG_REGISTER_RESULT, &reply);
	else
		ret = rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1,
							k->bytes - RDMIG_HEADER_SIZE, payload});
	return ret ? -1 : bench_now_us() - t0;
}

static void finish_conn(struct rdmig_conn *c)
{
	/* ends the server's thread for this connection */
	rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL});
	rdmig_conn_destroy(c);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct summary {
	double p50, p99, p999, mean;
};

static struct summary summarize(double *v, size_t n)
{
	struct summary s = {0};
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s.p50 = v[n / 2];
	s.p99 = v[n * 99 / 100];
	s.p999 = v[n * 999 / 1000];
	s.mean = sum / (double)n;
	return s;
}

/* Every 10th sorted sample: enough for a CDF plot. */
static struct json_object *samples_json(const double *v, size_t n)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i += 10)
		json_object_array_add(arr, bj_fixed(v[i], 2));
	return arr;
}

/* One class of the latency JSON: the ratios auto/off, each round's, and
 * both connections' statistics and samples (the keys report.py reads). */
static struct json_object *class_json(const struct msg_class *cls, uint32_t granted,
				      const struct summary s[2], double *const samples[2],
				      const size_t n[2], const double *round_ratio, long rounds)
{
	static const char *mode_name[2] = {"auto", "off"};
	struct json_object *o = json_object_new_object(), *rr = json_object_new_array();

	bj_add_str(o, "class", cls->name);
	bj_add_int(o, "bytes", cls->bytes);
	json_object_object_add(o, "round_trip", json_object_new_boolean(cls->round_trip));
	json_object_object_add(o, "inline_auto", json_object_new_boolean(cls->bytes <= granted));
	bj_add_fixed(o, "ratio_p50", s[0].p50 / s[1].p50, 4);
	bj_add_fixed(o, "ratio_p99", s[0].p99 / s[1].p99, 4);
	bj_add_fixed(o, "ratio_p999", s[0].p999 / s[1].p999, 4);
	bj_add_fixed(o, "ratio_mean", s[0].mean / s[1].mean, 4);
	for (long r = 0; r < rounds; r++)
		json_object_array_add(rr, bj_fixed(round_ratio[r], 4));
	json_object_object_add(o, "round_ratios_p50", rr);
	for (int m = 0; m < 2; m++) {
		struct json_object *st = json_object_new_object();

		bj_add_fixed(st, "p50", s[m].p50, 2);
		bj_add_fixed(st, "p99", s[m].p99, 2);
		bj_add_fixed(st, "p999", s[m].p999, 2);
		bj_add_fixed(st, "mean", s[m].mean, 2);
		bj_add_int(st, "n", (int64_t)n[m]);
		json_object_object_add(st, "sorted_every_10th", samples_json(samples[m], n[m]));
		json_object_object_add(o, mode_name[m], st);
	}
	return o;
}

/* The median of the n values at v, which must not be reordered (scratch
 * holds n values). */
static double median_of(const double *v, size_t n, double *scratch)
{
	memcpy(scratch, v, n * sizeof(*v));
	qsort(scratch, n, sizeof(*scratch), cmp_double);
	return scratch[n / 2];
}

/*
 * Warm up, then measure one class on both connections, interleaved.
 * round_ratio[r] is auto's median over inline 0's in round r: the spread
 * of these says how much of a difference is noise (an emulated guest on a
 * shared host drifts by more than inline can change).
 */
static int measure_class(const struct bench_args *a, struct rdmig_conn *c[2],
			 const struct msg_class *k, const uint8_t *payload, double *samples[2],
			 size_t n[2], double *round_ratio, double *scratch)
{
	long per_round = a->iters / a->rounds;

	n[0] = n[1] = 0;
	for (int m = 0; m < 2; m++) /* warm-up, not recorded */
		for (long i = 0; i < a->warmup; i++)
			if (one_op(c[m], k, payload) < 0)
				return bench_die("warm-up", rdmig_conn_errmsg(c[m]));
	for (long r = 0; r < a->rounds; r++) {
		double p50[2];

		for (int m = 0; m < 2; m++) { /* A B A B ... */
			for (long i = 0; i < per_round; i++) {
				double us = one_op(c[m], k, payload);
				if (us < 0)
					return bench_die(k->name, rdmig_conn_errmsg(c[m]));
				samples[m][n[m]++] = us;
			}
			p50[m] = median_of(samples[m] + n[m] - per_round, (size_t)per_round, scratch);
		}
		round_ratio[r] = p50[0] / p50[1];
	}
	return 0;
}

static int cmd_latency(const struct bench_args *a)
{
	static const char *mode_name[2] = {"auto", "off"};
	struct bench_args am[2] = {*a, *a};
	struct rdmig_conn *c[2] = {0};
	struct rdmig_inline_info inl[2];
	struct rdmig_opts o;
	uint8_t *payload = calloc(1, 32768);
	double *samples[2] = {calloc((size_t)a->iters, sizeof(double)),
			      calloc((size_t)a->iters, sizeof(double))};
	double *round_ratio = calloc((size_t)a->rounds, sizeof(double));
	double *scratch = calloc((size_t)a->iters, sizeof(double));
	FILE *json = a->json ? fopen(a->json, "w") : NULL;
	struct json_object *top = NULL, *classes_json = NULL;
	int ret = 1;

	am[0].inline_request = RDMIG_INLINE_AUTO;
	am[1].inline_request = 0;
	if (!payload || !samples[0] || !samples[1] || !round_ratio || !scratch ||
	    (a->json && !json))
		goto out;
	for (int m = 0; m < 2; m++) {
		bench_opts(&am[m], &o);
		if (bench_connect(&am[m], &o, &c[m]))
			goto out;
		rdmig_conn_inline(c[m], &inl[m]);
	}
	printf("# device %s, inline auto granted %u (asked %u, %u tries); inline off granted %u\n",
	       rdmig_conn_device(c[0]), inl[0].granted, inl[0].asked, inl[0].tries, inl[1].granted);
	printf("%-24s %6s %9s %9s %9s %9s %9s\n", "class", "inline", "p50 us", "p99 us", "p99.9 us",
	       "mean us", "auto/off");
	if (json) {
		top = json_object_new_object();
		classes_json = json_object_new_array();
		bj_add_str(top, "device", rdmig_conn_device(c[0]));
		bj_add_int(top, "granted_auto", inl[0].granted);
		bj_add_int(top, "granted_off", inl[1].granted);
		bj_add_int(top, "iters", a->iters);
		bj_add_int(top, "warmup", a->warmup);
		bj_add_int(top, "rounds", a->rounds);
		bj_add_int(top, "spin_us", a->spin_us);
		json_object_object_add(top, "classes", classes_json);
	}
	for (size_t k = 0; k < NCLASSES; k++) {
		struct summary s[2];
		size_t n[2];

		if (measure_class(a, c, &classes[k], payload, samples, n, round_ratio, scratch))
			goto out;
		for (int m = 0; m < 2; m++) {
			s[m] = summarize(samples[m], n[m]);
			printf("%-24s %6s %9.1f %9.1f %9.1f %9.1f", classes[k].name, mode_name[m],
			       s[m].p50, s[m].p99, s[m].p999, s[m].mean);
			printf(m ? " %9.3f\n" : "\n", s[0].p50 / s[1].p50);
		}
		if (json)
			json_object_array_add(classes_json,
					      class_json(&classes[k], inl[0].granted, s, samples,
							 n, round_ratio, a->rounds));
	}
	ret = 0;
	if (json) {
		ret = bj_write(json, top) ? 1 : 0;
		top = NULL;
	}
out:
	json_object_put(top);
	if (json && fclose(json)) {
		fprintf(stderr, "rdmig-bench: cannot write %s\n", a->json);
		ret = 1;
	}
	for (int m = 0; m < 2; m++) {
		if (c[m])
			finish_conn(c[m]);
		free(samples[m]);
	}
	free(round_ratio);
	free(scratch);
	free(payload);
	return ret;
}

/*
 * The instruction-count harness: one message per call of send_one, which
 * callgrind counts alone (--toggle-collect=send_one --dump-after=send_one
 * gives one count per message).  Before each call the harness sleeps
 * until the peer's READY credit (and, on the copy path, the previous
 * send's completion) has surely arrived, so a count holds the work of one
 * message - posting it, taking the credit, reaping completions - and no
 * idle polling, whose length would depend on timing.  A round trip still
 * waits for its reply inside the call: that wait is part of it.
 */
static __attribute__((noinline)) int send_one(struct rdmig_conn *c, const struct msg_class *k,
					      const uint8_t *payload)
{
	return one_op(c, k, payload) < 0 ? -1 : 0;
}

static int cmd_cost(const struct bench_args *a)
{
	static const struct msg_class rtt = {"register", 40, 1};
	const struct timespec settle = {0, 3 * 1000 * 1000};
	struct msg_class k = {"cost", (uint32_t)a->bytes, 0};
	struct rdmig_conn *c = NULL;
	struct rdmig_opts o;
	uint8_t *payload = calloc(1, (size_t)a->bytes + 1);
	int ret = 1;

	bench_opts(a, &o);
	if (payload && !bench_connect(a, &o, &c)) {
		ret = 0;
		for (long i = 0; i < a->count && !ret; i++) {
			nanosleep(&settle, NULL);
			ret = send_one(c, a->bytes == 0 ? &rtt : &k, payload);
		}
		if (ret)
			bench_die("cost", rdmig_conn_errmsg(c));
		finish_conn(c);
	}
	free(payload);
	return ret ? 1 : 0;
}

/* ---------------------------------------------------------- footprint -- */

/* A "Name:   123 kB" line of /proc/self/status, in bytes (0 if absent). */
static unsigned long long status_bytes(const char *name)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t len = strlen(name);
	unsigned long long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':') {
			kb = strtoull(line + len + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return kb * 1024;
}

/* Bytes of this process's mappings of the verbs device (queues, CQs). */
static unsigned long long uverbs_mapped_bytes(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long long total = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		if (strstr(line, "/dev/infiniband/uverbs") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			total += hi - lo;
	}
	if (f)
		fclose(f);
	return total;
}

static int cmd_footprint(const struct bench_args *a)
{
	static const char *mode_name[2] = {"auto", "off"};
	struct bench_args am[2] = {*a, *a};
	struct rdmig_conn *c[2] = {0};
	unsigned long long pinned[2], mapped[2];
	struct rdmig_inline_info inl[2];
	struct rdmig_opts o;
	FILE *json = a->json ? fopen(a->json, "w") : NULL;
	int ret = 1;

	am[0].inline_request = RDMIG_INLINE_AUTO;
	am[1].inline_request = 0;
	if (a->json && !json)
		return bench_die("footprint", "cannot write the JSON file");
	for (int m = 0; m < 2; m++) {
		unsigned long long pin0 = status_bytes("VmPin"), map0 = uverbs_mapped_bytes();

		bench_opts(&am[m], &o);
		if (bench_connect(&am[m], &o, &c[m]))
			goto out;
		pinned[m] = status_bytes("VmPin") - pin0;
		mapped[m] = uverbs_mapped_bytes() - map0;
		rdmig_conn_inline(c[m], &inl[m]);
	}
	printf("%-8s %6s %8s %14s %16s\n", "device", "inline", "granted", "pinned bytes",
	       "queue map bytes");
	for (int m = 0; m < 2; m++)
		printf("%-8s %6s %8u %14llu %16llu\n", rdmig_conn_device(c[m]), mode_name[m],
		       inl[m].granted, pinned[m], mapped[m]);
	ret = 0;
	if (json) {
		struct json_object *top = json_object_new_object(), *arr = json_object_new_array();

		bj_add_str(top, "device", rdmig_conn_device(c[0]));
		for (int m = 0; m < 2; m++) {
			struct json_object *conn = json_object_new_object();

			bj_add_str(conn, "inline", mode_name[m]);
			bj_add_int(conn, "granted", inl[m].granted);
			bj_add_int(conn, "pinned_bytes", (int64_t)pinned[m]);
			bj_add_int(conn, "queue_mapped_bytes", (int64_t)mapped[m]);
			json_object_array_add(arr, conn);
		}
		json_object_object_add(top, "connections", arr);
		ret = bj_write(json, top) ? 1 : 0;
	}
out:
	if (json && fclose(json)) {
		fprintf(stderr, "rdmig-bench: cannot write %s\n", a->json);
		ret = 1;
	}
	for (int m = 0; m < 2; m++)
		if (c[m])
			finish_conn(c[m]);
	return ret;
}

/* -------------------------------------------------------------- main -- */

static void usage(void)
{
	fprintf(stderr,
		"usage: rdmig-bench server --listen ADDR:PORT [--conns N] [--spin US]\n"
		"       rdmig-bench latency --to ADDR:PORT [--iters N] [--warmup N] [--rounds N]\n"
		"                           [--json FILE] [--spin US]\n"
		"       rdmig-bench cost --to ADDR:PORT --inline auto|0 --bytes B (0: register\n"
		"                        round trip) --count N [--spin US]\n"
		"       rdmig-bench footprint --to ADDR:PORT [--json FILE]   (server --conns 2)\n"
		"       rdmig-bench bulk-recv --listen ADDR:PORT --file F [--pin-all] [--json FILE]\n"
		"                             [--chunk-size BYTES]\n"
		"       rdmig-bench bulk-send --to ADDR:PORT --file F [--pin-all] [--json FILE]\n"
		"                             [--hash none|inline|thread] [--chunk-size BYTES]\n"
		"                             [--as-send]  (lookahead, pin-local and register threads, as rdmig send)\n"
		"       rdmig-bench regmr [--dev NAME] [--mb N] [--pieces 1,2,4] [--rounds R]\n");
}

static int parse_args(int argc, char **argv, struct bench_args *a)
{
	static const struct option lo[] = {
		{"listen", required_argument, NULL, 'l'}, {"to", required_argument, NULL, 't'},
		{"conns", required_argument, NULL, 'c'},  {"iters", required_argument, NULL, 'n'},
		{"warmup", required_argument, NULL, 'w'}, {"rounds", required_argument, NULL, 'r'},
		{"json", required_argument, NULL, 'j'},   {"inline", required_argument, NULL, 'i'},
		{"bytes", required_argument, NULL, 'b'},  {"count", required_argument, NULL, 'k'},
		{"spin", required_argument, NULL, 's'},   {"file", required_argument, NULL, 'f'},
		{"pin-all", no_argument, NULL, 'P'},      {"hash", required_argument, NULL, 'H'},
		{"chunk-size", required_argument, NULL, 'C'}, {"as-send", no_argument, NULL, 'S'},
		{NULL, 0, NULL, 0}};
	int c;

	*a = (struct bench_args){.iters = 2000, .warmup = 200, .rounds = 10, .conns = 2,
				 .bytes = 40, .count = 1000, .inline_request = RDMIG_INLINE_AUTO,
				 .spin_us = -1};
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'l': case 't': a->addr = optarg; break;
		case 'c': a->conns = atol(optarg); break;
		case 'n': a->iters = atol(optarg); break;
		case 'w': a->warmup = atol(optarg); break;
		case 'r': a->rounds = atol(optarg); break;
		case 'j': a->json = optarg; break;
		case 'i':
			a->inline_request = strcmp(optarg, "auto") ? atoi(optarg) : RDMIG_INLINE_AUTO;
			break;
		case 'b': a->bytes = atol(optarg); break;
		case 'k': a->count = atol(optarg); break;
		case 's': a->spin_us = atoi(optarg); break;
		case 'f': a->file = optarg; break;
		case 'P': a->pin_all = 1; break;
		case 'C': a->chunk_size = strtoull(optarg, NULL, 10); break;
		case 'S': a->send_settings = 1; break;
		case 'H':
			a->hash = !strcmp(optarg, "inline")   ? BENCH_HASH_INLINE
				  : !strcmp(optarg, "thread") ? BENCH_HASH_THREAD
				  : !strcmp(optarg, "none")   ? BENCH_HASH_NONE
							      : -1;
			if (a->hash < 0)
				return -1;
			break;
		default: return -1;
		}
	}
	if (optind != argc || !a->addr || a->conns < 1 || a->conns > MAX_CONNS || a->iters < 10 ||
	    a->rounds < 1 || a->rounds > a->iters || a->warmup < 0 || a->count < 1 ||
	    (a->bytes && (a->bytes < 16 || a->bytes > 32768 + 16)))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(const struct bench_args *a);
		int needs_file;
	} cmds[] = {
		{"server", cmd_server, 0},	    {"latency", cmd_latency, 0},
		{"cost", cmd_cost, 0},		    {"footprint", cmd_footprint, 0},
		{"bulk-send", bench_bulk_send, 1}, {"bulk-recv", bench_bulk_recv, 1},
	};
	struct bench_args a;

	bench_t_main = rdmig_monotonic_seconds();

	if (argc >= 2 && !strcmp(argv[1], "regmr")) /* no peer, its own options */
		return bench_regmr(argc - 1, argv + 1);
	if (argc < 2 || parse_args(argc, argv, &a)) {
		usage();
		return 2;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			if (cmds[i].needs_file && !a.file) {
				usage();
				return 2;
			}
			return cmds[i].run(&a);
		}
	usage();
	return 2;
}
