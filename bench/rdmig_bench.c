/*
 * rdmig_bench.c - control-plane benchmarks, using only the public API.
 *
 *   rdmig-bench server --listen ADDR:PORT [--conns N]
 *   rdmig-bench latency --to ADDR:PORT [--iters N] [--warmup N] [--rounds N] [--json]
 *   rdmig-bench cost --to ADDR:PORT --inline auto|0 --bytes B --count N
 *
 * latency opens two connections to one server, one with inline auto and
 * one with inline 0, and measures them interleaved (A B A B ... in rounds),
 * so drift in an emulated guest hits both alike.  For every message class
 * it times one-way sends (each send includes waiting for the READY credit
 * of the previous one, as in a migration) and REGISTER_REQUEST ->
 * REGISTER_RESULT round trips; it reports p50, p99, p99.9 and mean, and
 * the ratio auto / off.
 *
 * cost sends N messages of B bytes on one connection; run it under
 * `valgrind --tool=callgrind --toggle-collect=...` to count the sender's
 * instructions per message deterministically (scripts/bench does).
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rdmig.h"

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

static int spin_us = -1; /* --spin: the library's busy-poll before sleeping */

static void bench_opts(struct rdmig_opts *o)
{
	rdmig_opts_init(o);
	if (spin_us >= 0)
		o->spin_us = spin_us;
}

static int split_addr(const char *s, char *host, size_t hl, char *port, size_t pl)
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

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "rdmig-bench: %s: %s\n", what, msg);
	return 1;
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

static int cmd_server(const char *addr, int nconns)
{
	char host[256], port[16];
	struct rdmig_opts o;
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c[MAX_CONNS] = {0};
	pthread_t th[MAX_CONNS];
	int ret;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port)))
		return die("server", "bad --listen");
	bench_opts(&o);
	o.timeout_ms = 0;              /* the client may think for a while */
	o.accept_timeout_ms = 60000;   /* but a client that never comes must not hang us */
	if ((ret = rdmig_listener_create(&o, &l)) || (ret = rdmig_listen(l, host, port)))
		return die("server", rdmig_listener_errmsg(l));
	for (int i = 0; i < nconns; i++)
		if (rdmig_accept(l, &c[i]))
			return die("server", rdmig_listener_errmsg(l));
	for (int i = 0; i < nconns; i++)
		pthread_create(&th[i], NULL, serve, c[i]);
	for (int i = 0; i < nconns; i++) {
		pthread_join(th[i], NULL);
		rdmig_conn_destroy(c[i]);
	}
	rdmig_listener_destroy(l);
	return 0;
}

/* ------------------------------------------------------------ client -- */

static int connect_to(const char *addr, int inline_request, struct rdmig_conn **c)
{
	char host[256], port[16];
	struct rdmig_opts o;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port)))
		return die("client", "bad --to");
	bench_opts(&o);
	o.inline_request = inline_request;
	/* the server may still be starting: retry a refused connect for 10 s */
	for (int tries = 0;; tries++) {
		int ret = rdmig_conn_create(&o, c);
		if (!ret)
			ret = rdmig_connect(*c, host, port);
		if (!ret)
			return 0;
		if (tries == 100 || ret == RDMIG_EINVAL)
			return die("connect", rdmig_conn_errmsg(*c));
		rdmig_conn_destroy(*c);
		*c = NULL;
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
}

/* One operation of a class; returns its duration in microseconds (< 0: error). */
static double one_op(struct rdmig_conn *c, const struct msg_class *k, const uint8_t *payload)
{
	struct rdmig_msg reply;
	double t0 = now_us();
	int ret;

	if (k->round_trip)
		ret = rdmig_request(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_REQUEST, 1,
							   RDMIG_REGISTER_SIZE, payload},
				    RDMIG_MSG_REGISTER_RESULT, &reply);
	else
		ret = rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1,
							k->bytes - RDMIG_HEADER_SIZE, payload});
	return ret ? -1 : now_us() - t0;
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

static void print_samples_json(FILE *f, const double *v, size_t n)
{
	/* every 10th sorted sample: enough for a CDF plot */
	fprintf(f, "[");
	for (size_t i = 0; i < n; i += 10)
		fprintf(f, "%s%.2f", i ? "," : "", v[i]);
	fprintf(f, "]");
}

static int cmd_latency(const char *addr, long iters, long warmup, long rounds, const char *json_path)
{
	static const char *mode_name[2] = {"auto", "off"};
	struct rdmig_conn *c[2] = {0};
	struct rdmig_inline_info inl[2];
	uint8_t *payload = calloc(1, 32768);
	double *samples[2];
	FILE *json = json_path ? fopen(json_path, "w") : NULL;
	long per_round = iters / rounds;

	if (!payload || connect_to(addr, RDMIG_INLINE_AUTO, &c[0]) || connect_to(addr, 0, &c[1]))
		return 1;
	for (int m = 0; m < 2; m++) {
		rdmig_conn_inline(c[m], &inl[m]);
		samples[m] = calloc((size_t)iters, sizeof(double));
	}
	printf("# device %s, inline auto granted %u (asked %u, %u tries); inline off granted %u\n",
	       rdmig_conn_device(c[0]), inl[0].granted, inl[0].asked, inl[0].tries, inl[1].granted);
	printf("%-24s %6s %9s %9s %9s %9s %9s\n", "class", "inline", "p50 us", "p99 us", "p99.9 us",
	       "mean us", "auto/off");
	if (json)
		fprintf(json, "{\"device\": \"%s\", \"granted_auto\": %u, \"classes\": [",
			rdmig_conn_device(c[0]), inl[0].granted);
	for (size_t k = 0; k < NCLASSES; k++) {
		struct summary s[2];
		size_t n[2] = {0, 0};

		for (int m = 0; m < 2; m++) /* warm-up, not recorded */
			for (long i = 0; i < warmup; i++)
				if (one_op(c[m], &classes[k], payload) < 0)
					return die("warm-up", rdmig_conn_errmsg(c[m]));
		for (long r = 0; r < rounds; r++)
			for (int m = 0; m < 2; m++) /* A B A B ... */
				for (long i = 0; i < per_round; i++) {
					double us = one_op(c[m], &classes[k], payload);
					if (us < 0)
						return die(classes[k].name, rdmig_conn_errmsg(c[m]));
					samples[m][n[m]++] = us;
				}
		for (int m = 0; m < 2; m++) {
			s[m] = summarize(samples[m], n[m]);
			printf("%-24s %6s %9.1f %9.1f %9.1f %9.1f", classes[k].name, mode_name[m],
			       s[m].p50, s[m].p99, s[m].p999, s[m].mean);
			printf(m ? " %9.3f\n" : "\n", s[0].p50 / s[1].p50);
		}
		if (json) {
			fprintf(json, "%s\n {\"class\": \"%s\", \"bytes\": %u, \"round_trip\": %s, "
				      "\"inline_auto\": %s, \"ratio_p50\": %.4f, \"ratio_mean\": %.4f",
				k ? "," : "", classes[k].name, classes[k].bytes,
				classes[k].round_trip ? "true" : "false",
				classes[k].bytes <= inl[0].granted ? "true" : "false",
				s[0].p50 / s[1].p50, s[0].mean / s[1].mean);
			for (int m = 0; m < 2; m++) {
				fprintf(json, ", \"%s\": {\"p50\": %.2f, \"p99\": %.2f, \"p999\": %.2f, "
					      "\"mean\": %.2f, \"n\": %zu, \"sorted_every_10th\": ",
					mode_name[m], s[m].p50, s[m].p99, s[m].p999, s[m].mean, n[m]);
				print_samples_json(json, samples[m], n[m]);
				fprintf(json, "}");
			}
			fprintf(json, "}");
		}
	}
	if (json) {
		fprintf(json, "\n]}\n");
		fclose(json);
	}
	for (int m = 0; m < 2; m++) {
		rdmig_send(c[m], &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL});
		rdmig_conn_destroy(c[m]);
		free(samples[m]);
	}
	free(payload);
	return 0;
}

/* The instruction-count harness: the same message, count times. */
static int cmd_cost(const char *addr, int inline_request, long bytes, long count)
{
	static const struct msg_class rtt = {"register", 40, 1};
	struct msg_class k = {"cost", (uint32_t)bytes, 0};
	struct rdmig_conn *c = NULL;
	uint8_t *payload = calloc(1, (size_t)bytes + 1);

	if (!payload || connect_to(addr, inline_request, &c))
		return 1;
	for (long i = 0; i < count; i++)
		if (one_op(c, bytes == 0 ? &rtt : &k, payload) < 0)
			return die("cost", rdmig_conn_errmsg(c));
	rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL});
	rdmig_conn_destroy(c);
	free(payload);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: rdmig-bench server --listen ADDR:PORT [--conns N]\n"
			"       rdmig-bench latency --to ADDR:PORT [--iters N] [--warmup N] "
			"[--rounds N] [--json FILE] [--spin US]\n"
			"       rdmig-bench cost --to ADDR:PORT --inline auto|0 --bytes B "
			"(0: register round trip) --count N\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"listen", required_argument, NULL, 'l'}, {"to", required_argument, NULL, 't'},
		{"conns", required_argument, NULL, 'c'},  {"iters", required_argument, NULL, 'n'},
		{"warmup", required_argument, NULL, 'w'}, {"rounds", required_argument, NULL, 'r'},
		{"json", required_argument, NULL, 'j'},   {"inline", required_argument, NULL, 'i'},
		{"bytes", required_argument, NULL, 'b'},  {"count", required_argument, NULL, 'k'},
		{"spin", required_argument, NULL, 's'},   {NULL, 0, NULL, 0}};
	const char *addr = NULL, *json = NULL;
	long iters = 2000, warmup = 200, rounds = 10, conns = 2, bytes = 40, count = 1000;
	int inline_request = RDMIG_INLINE_AUTO, c;

	if (argc < 2) {
		usage();
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'l': case 't': addr = optarg; break;
		case 'c': conns = atol(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'w': warmup = atol(optarg); break;
		case 'r': rounds = atol(optarg); break;
		case 'j': json = optarg; break;
		case 'i': inline_request = strcmp(optarg, "auto") ? atoi(optarg) : RDMIG_INLINE_AUTO; break;
		case 'b': bytes = atol(optarg); break;
		case 'k': count = atol(optarg); break;
		case 's': spin_us = atoi(optarg); break;
		default: usage(); return 2;
		}
	}
	if (!addr || conns < 1 || conns > MAX_CONNS || iters < 10 || rounds < 1 || rounds > iters ||
	    warmup < 0 || count < 1 || (bytes && (bytes < 16 || bytes > 32768 + 16))) {
		usage();
		return 2;
	}
	if (!strcmp(argv[1], "server"))
		return cmd_server(addr, (int)conns);
	if (!strcmp(argv[1], "latency"))
		return cmd_latency(addr, iters, warmup, rounds, json);
	if (!strcmp(argv[1], "cost"))
		return cmd_cost(addr, inline_request, bytes, count);
	usage();
	return 2;
}
