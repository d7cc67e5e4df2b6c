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
#include "cli_json.h"

struct ping_args {
	struct rdmig_opts opts;
	const char *addr; /* --to or --listen as given */
	char host[256], port[16];
	long count;
	int json;
};

static void usage(FILE *f, const char *cmd)
{
	bool ping = !strcmp(cmd, "ping");

	fprintf(f, "usage: rdmig %s %s ADDR:PORT%s [--inline auto|0|N] [--timeout S]\n"
		   "                  [--json] [-v]\n", cmd, ping ? "--to" : "--listen",
		ping ? " [-n COUNT]" : "");
	if (ping)
		fprintf(f, "Time REGISTER_REQUEST -> REGISTER_RESULT round trips against a pong.\n"
			   "  -t, --to ADDR:PORT  the pong\n"
			   "  -n, --count N   round trips, from 1 to 100000000 (default 1000)\n");
	else
		fprintf(f, "Answer one ping's REGISTER requests until it sends REGISTER_FINISHED.\n"
			   "  -l, --listen ADDR:PORT  where to wait for the ping\n");
	fprintf(f, "  -i, --inline    inline size of control messages (default auto)\n"
		   "  -T, --timeout S the limit of every wait, 0 to 86400 seconds (0: none;\n"
		   "                  default 60)\n"
		   "  -j, --json      one JSON object on stdout instead of the summary\n"
		   "  -v, --verbose   the library's notes on stderr; -vv adds its debug log\n"
		   "  -h, --help      this help\n");
}

/* Fills *a from scratch: 0, 1 (help shown) or 2 (a usage error, said). */
static int parse_args(int argc, char **argv, const char *cmd, struct ping_args *a)
{
	bool ping = !strcmp(cmd, "ping");
	static const struct option ping_opts[] = {
		{"to", required_argument, NULL, 't'},       {"count", required_argument, NULL, 'n'},
		{"inline", required_argument, NULL, 'i'},   {"timeout", required_argument, NULL, 'T'},
		{"json", no_argument, NULL, 'j'},           {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
	static const struct option pong_opts[] = {
		{"listen", required_argument, NULL, 'l'},   {"inline", required_argument, NULL, 'i'},
		{"timeout", required_argument, NULL, 'T'},  {"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},        {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	char err[300];
	long v;
	int c;

	/* Every field starts known: the caller's struct is uninitialised
	 * stack, and --json and --to/--listen are only set when given. */
	*a = (struct ping_args){.count = 1000};
	rdmig_opts_init(&a->opts);
	if (cli_wants_help(argc, argv)) {
		usage(stdout, cmd);
		return 1;
	}
	while ((c = getopt_long(argc, argv, ping ? ":t:n:i:T:jvh" : ":l:i:T:jvh",
				ping ? ping_opts : pong_opts, NULL)) != -1) {
		switch (c) {
		case 't': case 'l': a->addr = optarg; break;
		case 'n':
			if (cli_parse_long(optarg, 1, 100000000, &a->count))
				return cli_usage("--count '%s': takes a number from 1 to 100000000",
						 optarg);
			break;
		case 'i':
			if (cli_parse_inline(optarg, &a->opts.inline_request))
				return cli_usage("--inline '%s': takes auto, 0 or a size up to 1024",
						 optarg);
			break;
		case 'T':
			if (cli_parse_long(optarg, 0, 86400, &v))
				return cli_usage("--timeout '%s': takes whole seconds from 0 (no "
						 "limit) to 86400", optarg);
			a->opts.timeout_ms = (int)v * 1000;
			break;
		case 'j': a->json = 1; cli_run.json = true; break;
		case 'v': /* as send and recv: -v notes, -vv the debug log too */
			a->opts.log_level = a->opts.log == cli_log ? RDMIG_LOG_DEBUG : RDMIG_LOG_INFO;
			a->opts.log = cli_log;
			break;
		case 'h': usage(stdout, cmd); return 1;
		default: return cli_bad_option(c, argv);
		}
	}
	if (optind != argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (!a->addr)
		return cli_usage("%s ADDR:PORT is required", ping ? "--to" : "--listen");
	if (cli_split_addr(a->addr, a->host, sizeof(a->host), a->port, sizeof(a->port), err,
			   sizeof(err)))
		return cli_usage("%s %s", ping ? "--to" : "--listen", err);
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
static int pong_serve(struct rdmig_conn *c, uint64_t *answered, char *err, size_t errlen)
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
			snprintf(err, errlen, "unexpected %s (repeat %u)", rdmig_msg_type_name(m.type),
				 m.repeat);
			return RDMIG_EPROTO;
		}
		rdmig_decode_register(m.payload, &reg);
		res = (struct rdmig_register_result){.rkey = 0, .host_addr = reg.key};
		rdmig_encode_register_result(&res, out);
		ret = rdmig_reply(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_RESULT, 1, sizeof(out), out});
		if (ret)
			return ret;
		++*answered;
	}
}

/* pong's object: where it listened, the requests it answered, the
 * connection (c may be NULL after a failure before a ping came). */
static void pong_json(const struct ping_args *a, uint64_t answered, const struct rdmig_conn *c,
		      const struct rdmig_listener *l)
{
	struct json_object *o = cj_summary();

	cj_str(o, "listen", a->host);
	cj_i64(o, "port", l ? rdmig_listener_port(l) : strtol(a->port, NULL, 10));
	cj_u64(o, "register_requests", answered);
	mig_json_conn(o, c);
	cj_summary_print(o);
}

int cmd_pong(int argc, char **argv)
{
	struct ping_args a;
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	uint64_t answered = 0;
	char err[128] = "";
	int ret;

	cli_run_begin("pong", NULL, "pong", argc, argv);
	if ((ret = parse_args(argc, argv, "pong", &a)))
		return ret == 1 ? 0 : ret;
	cli_phase("accept");
	if ((ret = rdmig_listener_create(&a.opts, &l)) || (ret = rdmig_listen(l, a.host, a.port)) ||
	    (ret = rdmig_accept(l, &c))) {
		ret = cli_fail_lib("pong", ret, l ? rdmig_listener_errmsg(l) : rdmig_strerror(ret));
		rdmig_listener_destroy(l);
		return ret;
	}
	cli_phase("serve");
	ret = pong_serve(c, &answered, err, sizeof(err));
	if (ret)
		ret = cli_fail_lib("pong", ret, err[0] ? err : rdmig_conn_errmsg(c));
	if (a.json)
		pong_json(&a, answered, c, l);
	else if (!ret)
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

/* ping's object: the pong, the round trips done and their percentiles
 * (rtt sorted; NULL after a failure: null), the connection. */
static void ping_json(const struct ping_args *a, long done, const double *rtt,
		      const struct rdmig_conn *c)
{
	struct json_object *o = cj_summary();

	cj_str(o, "to", a->host);
	cj_i64(o, "port", strtol(a->port, NULL, 10));
	cj_u64(o, "register_requests", (uint64_t)done);
	if (rtt) {
		cj_fixed(o, "register_rtt_p50_us", rtt[a->count / 2], 1);
		cj_fixed(o, "register_rtt_p99_us", rtt[a->count * 99 / 100], 1);
		cj_fixed(o, "register_rtt_max_us", rtt[a->count - 1], 1);
	} else {
		cj_null(o, "register_rtt_p50_us");
		cj_null(o, "register_rtt_p99_us");
		cj_null(o, "register_rtt_max_us");
	}
	mig_json_conn(o, c);
	cj_summary_print(o);
}

int cmd_ping(int argc, char **argv)
{
	struct ping_args a;
	struct rdmig_conn *c = NULL;
	double *rtt;
	long done = 0;
	int ret;

	cli_run_begin("ping", NULL, "ping", argc, argv);
	if ((ret = parse_args(argc, argv, "ping", &a)))
		return ret == 1 ? 0 : ret;
	cli_phase("connect");
	rtt = calloc((size_t)a.count, sizeof(*rtt));
	if (!rtt)
		return cli_fail_code("ping", "failed", "out of memory");
	ret = rdmig_conn_create(&a.opts, &c);
	if (!ret)
		ret = rdmig_connect(c, a.host, a.port);
	if (!ret)
		cli_phase("round_trips");
	for (; done < a.count && !ret; done += !ret) {
		double t0 = rdmig_monotonic_seconds();
		ret = ping_once(c, (uint64_t)done << 20);
		rtt[done] = (rdmig_monotonic_seconds() - t0) * 1e6; /* microseconds */
	}
	if (!ret)
		ret = rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL});
	if (ret)
		ret = cli_fail_lib("ping", ret, c ? rdmig_conn_errmsg(c) : rdmig_strerror(ret));
	else
		qsort(rtt, (size_t)a.count, sizeof(*rtt), cmp_double);
	if (a.json) {
		ping_json(&a, done, ret ? NULL : rtt, c);
	} else if (!ret) {
		print_conn_summary("ping", c);
		printf("ping: %ld REGISTER round trips: p50 %.1f us, p99 %.1f us, max %.1f us\n",
		       a.count, rtt[a.count / 2], rtt[a.count * 99 / 100], rtt[a.count - 1]);
	}
	rdmig_conn_destroy(c);
	free(rtt);
	return ret;
}
