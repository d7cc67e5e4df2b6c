/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_ping.c - `rdmig ping` / `rdmig pong`: REGISTER_REQUEST ->
 * REGISTER_RESULT round trips with the protocol's READY credit flow, as a
 * migration's dynamic registration does them.  The destination answers
 * each request with rkey 0 and host_addr = the request's key, which the
 * source checks, then REGISTER_FINISHED ends the exchange.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

struct ping_args {
	struct rdmig_opts opts;
	char host[256], port[16];
	long count;
	int json;
};

static int parse_args(int argc, char **argv, const char *cmd, const char *addr_opt,
		      struct ping_args *a)
{
	static const struct option longopts[] = {
		{"to", required_argument, NULL, 't'},       {"listen", required_argument, NULL, 'l'},
		{"count", required_argument, NULL, 'n'},    {"inline", required_argument, NULL, 'i'},
		{"timeout", required_argument, NULL, 'T'},  {"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},        {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	char err[300];
	const char *addr = NULL;
	int c;

	rdmig_opts_init(&a->opts);
	a->count = 1000;
	while ((c = getopt_long(argc, argv, "t:l:n:i:T:jvh", longopts, NULL)) != -1) {
		switch (c) {
		case 't': case 'l':
			if (strcmp(longopts[c == 't' ? 0 : 1].name, addr_opt))
				return cli_fail(cmd, "wrong address option (see --help)") + 1;
			addr = optarg;
			break;
		case 'n': a->count = strtol(optarg, NULL, 10); break;
		case 'i':
			if (cli_parse_inline(optarg, &a->opts.inline_request))
				return cli_fail(cmd, "--inline takes auto, 0 or a size up to 1024") + 1;
			break;
		case 'T': a->opts.timeout_ms = atoi(optarg) * 1000; break;
		case 'j': a->json = 1; break;
		case 'v': a->opts.log = cli_log; a->opts.log_level = RDMIG_LOG_DEBUG; break;
		case 'h':
			printf("usage: rdmig %s --%s ADDR:PORT [-n COUNT] [--inline auto|0|N] "
			       "[--timeout S] [--json] [-v]\n", cmd, addr_opt);
			return 1;
		default: return 2;
		}
	}
	if (!addr || optind != argc)
		return cli_fail(cmd, "needs --to/--listen ADDR:PORT and no other argument") + 1;
	if (a->count < 1 || a->count > 100000000)
		return cli_fail(cmd, "--count must be from 1 to 100000000") + 1;
	if (cli_split_addr(addr, a->host, sizeof(a->host), a->port, sizeof(a->port), err, sizeof(err)))
		return cli_fail(cmd, err) + 1;
	return 0;
}

static void print_conn_summary(const char *who, struct rdmig_conn *c)
{
	struct rdmig_inline_info inl;
	struct rdmig_counters k = {.size = sizeof(k)};
	uint64_t inl_n = 0, cp_n = 0;

	rdmig_conn_inline(c, &inl);
	rdmig_conn_counters(c, &k);
	for (int t = 0; t < RDMIG_MSG_TYPE_COUNT; t++) {
		inl_n += k.sent_inline[t];
		cp_n += k.sent_copied[t];
	}
	printf("%s: device %s, inline asked %u granted %u (tries %u); sent %llu inline, "
	       "%llu copied\n", who, rdmig_conn_device(c), inl.asked, inl.granted, inl.tries,
	       (unsigned long long)inl_n, (unsigned long long)cp_n);
}

/* Serve one connection: answer REGISTER requests until REGISTER_FINISHED. */
static int pong_serve(struct rdmig_conn *c)
{
	for (;;) {
		struct rdmig_msg m;
		struct rdmig_register reg;
		struct rdmig_register_result res;
		uint8_t out[RDMIG_REGISTER_RESULT_SIZE];
		int ret = rdmig_recv(c, RDMIG_MSG_NONE, &m);

		if (ret)
			return ret;
		if (m.type == RDMIG_MSG_REGISTER_FINISHED)
			return 0;
		if (m.type != RDMIG_MSG_REGISTER_REQUEST || m.repeat != 1) {
			rdmig_send_error(c);
			fprintf(stderr, "rdmig: pong: unexpected %s (repeat %u)\n",
				rdmig_msg_type_name(m.type), m.repeat);
			return RDMIG_EPROTO;
		}
		rdmig_decode_register(m.payload, &reg);
		res = (struct rdmig_register_result){.rkey = 0, .host_addr = reg.key};
		rdmig_encode_register_result(&res, out);
		ret = rdmig_reply(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_RESULT, 1, sizeof(out), out});
		if (ret)
			return ret;
	}
}

int cmd_pong(int argc, char **argv)
{
	struct ping_args a;
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	int ret = parse_args(argc, argv, "pong", "listen", &a);

	if (ret)
		return ret - 1;
	if ((ret = rdmig_listener_create(&a.opts, &l)) || (ret = rdmig_listen(l, a.host, a.port)) ||
	    (ret = rdmig_accept(l, &c))) {
		ret = cli_fail("pong", l ? rdmig_listener_errmsg(l) : rdmig_strerror(ret));
		rdmig_listener_destroy(l);
		return ret;
	}
	ret = pong_serve(c);
	if (ret)
		ret = cli_fail("pong", rdmig_conn_errmsg(c));
	else
		print_conn_summary("pong", c);
	rdmig_conn_destroy(c);
	rdmig_listener_destroy(l);
	return ret;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* One round trip; checks that the answer belongs to the question. */
static int ping_once(struct rdmig_conn *c, uint64_t key)
{
	struct rdmig_register reg = {.key = key, .block_index = 0, .chunks = 0}; /* one chunk */
	struct rdmig_register_result res;
	uint8_t out[RDMIG_REGISTER_SIZE];
	struct rdmig_msg reply;
	int ret;

	rdmig_encode_register(&reg, out);
	ret = rdmig_request(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_REQUEST, 1, sizeof(out), out},
			    RDMIG_MSG_REGISTER_RESULT, &reply);
	if (ret)
		return ret;
	rdmig_decode_register_result(reply.payload, &res);
	return res.host_addr == key ? 0 : RDMIG_EPROTO;
}

int cmd_ping(int argc, char **argv)
{
	struct ping_args a;
	struct rdmig_conn *c = NULL;
	double *rtt;
	int ret = parse_args(argc, argv, "ping", "to", &a);

	if (ret)
		return ret - 1;
	rtt = calloc((size_t)a.count, sizeof(*rtt));
	if (!rtt)
		return cli_fail("ping", "out of memory");
	ret = rdmig_conn_create(&a.opts, &c);
	if (!ret)
		ret = rdmig_connect(c, a.host, a.port);
	for (long i = 0; i < a.count && !ret; i++) {
		double t0 = rdmig_monotonic_seconds();
		ret = ping_once(c, (uint64_t)i << 20);
		rtt[i] = (rdmig_monotonic_seconds() - t0) * 1e6; /* microseconds */
	}
	if (!ret)
		ret = rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL});
	if (ret) {
		ret = cli_fail("ping", c ? rdmig_conn_errmsg(c) : rdmig_strerror(ret));
	} else {
		qsort(rtt, (size_t)a.count, sizeof(*rtt), cmp_double);
		print_conn_summary("ping", c);
		printf("ping: %ld REGISTER round trips: p50 %.1f us, p99 %.1f us, max %.1f us\n",
		       a.count, rtt[a.count / 2], rtt[a.count * 99 / 100], rtt[a.count - 1]);
	}
	rdmig_conn_destroy(c);
	free(rtt);
	return ret;
}
