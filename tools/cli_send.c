/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_send.c - `rdmig send`: migrate files, each as one RAM block, to an
 * `rdmig recv`, the way QEMU's source migrates guest RAM.
 *
 *   connect -> the library's image-set source (rdmig/images.h): stream
 *   header (names, lengths) -> RAM_BLOCKS setup -> every chunk (32 MiB, or
 *   --chunk-size) a 4 MiB span at a time, zero pages skipped (the
 *   destination's memory starts zeroed), and as soon as a span has been
 *   handed over and hashed (a pool of threads hashes every span from the
 *   start), a digest record for the destination to check it as it lands
 *   -> end of iteration (REGISTER_FINISHED) -> the last records -> stream
 *   trailer (every block's digest) -> disconnect.
 *
 * Here: the options, the files (send_files.c), the locked-memory checks,
 * the progress line and the summary.
 *
 * What send shares with the other migration commands is elsewhere: the
 * options in cli_mig_options.c, the progress and summary lines in
 * cli_mig_report.c.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "cli_budget.h"
#include "cli_json.h"
#include "send_files.h"

/* Between two rdmigs the chunk size is free (the receiver reads it from the
 * stream header), and 32 MiB measured faster than QEMU's 1 MiB with
 * dynamic registration: 32x fewer REGISTER round trips and registrations
 * (docs/performance.md).  send --qemu-replay keeps the 1 MiB of the QEMU
 * it replays. */
#define SEND_DEFAULT_CHUNK (32ull << 20)

struct send_args {
	struct mig_common m;
	char host[256], port[16];
	char **files;
	int nfiles;
	enum rdmig_digest_alg verify;
	int commit_timeout_s;  /* --commit-timeout (0: no bound) */
	bool unconfirmed;      /* --unconfirmed: a destination without a verdict is 0 */
};

/* How long send waits, after its last byte, for recv's verdict by default:
 * recv's last digests and its durable commit of every image. */
#define SEND_DEFAULT_COMMIT_TIMEOUT_S 60
/* The exit status of a migration that went, to a destination that cannot
 * say whether it committed (QEMU, an rdmig before 0.3). */
#define SEND_EXIT_UNCONFIRMED 3

struct send_state {
	struct send_args a;
	struct send_files in;       /* the blocks: files, stream descriptions */
	struct rdmig_conn *conn;
	struct rdmig_images_source *src;
	struct mig_progress prog;
	struct rdmig_images_stats ist;
	bool pin_local;             /* our blocks registered whole (rdmig_source_set_pin_local) */
	double t_start, t_end;
	/* the budget's marks (rdmig_monotonic_seconds): connect begins, the
	 * connection is up, the images source runs, it returned */
	double t_connect, t_connected, t_run, t_run_end;
	char err[512];
};

static void send_usage(FILE *f)
{
	fprintf(f, "usage: rdmig send --to ADDR:PORT [--pin-all] [--inline auto|0|N] [--json]\n"
		   "                  [--timeout S] [--verify xxh64|xxh3-128|sha256|off]\n"
		   "                  [--chunk-size SIZE] [--progress auto|human|json|none]\n"
		   "                  [--commit-timeout S] [--unconfirmed] [-v] FILE|NAME=FILE...\n"
		   "Each FILE becomes one RAM block named after its basename (or NAME).\n"
		   "send exits 0 only when recv answered that it committed every image, durably,\n"
		   "as sent.\n"
		   "  --pin-all      ask the destination to register all its memory up front\n"
		   "  --chunk-size SIZE  registration chunk, a power of two from 1M to 1G\n"
		   "                 (default 32M); the receiver uses the same\n"
		   "  --verify ALG   checksum every 4 MiB for the destination to check as it\n"
		   "                 lands: xxh64 (default; against corruption, and fast\n"
		   "                 everywhere), xxh3-128, sha256 (cryptographic), or off\n"
		   "                 (the destination cannot check the data)\n"
		   "  --inline       inline size of control messages (default auto)\n"
		   "  --timeout S    give up when the destination stays silent this long\n"
"                 (0: never; default %d)\n"
		   "  --commit-timeout S  after the last byte, how long to wait for recv's\n"
		   "                 verdict: its last checks and durable commit (0: no bound;\n"
		   "                 default %d)\n"
		   "  --unconfirmed  exit 0, not 3, when the destination cannot say whether it\n"
		   "                 committed (QEMU, or an rdmig recv older than 0.3)\n"
		   "  --json         one JSON object on stdout instead of the summary\n"
		   "  --progress M   on stderr while it runs: human (a line), json (JSON\n"
		   "                 lines), none, or auto (default: human on a terminal)\n"
		   "  -v, --verbose  the library's notes on stderr; -vv adds its debug log\n"
		   "  -h, --help     this help\n"
		   "SIGINT or SIGTERM aborts the migration: the destination is told, and the exit\n"
		   "status is 128 + the signal.\n", MIG_DEFAULT_TIMEOUT_S,
	   SEND_DEFAULT_COMMIT_TIMEOUT_S);
}

/* A mapped file that shrinks under us raises SIGBUS on the next read:
 * say what happened instead of dying silently. */
static void on_sigbus(int sig)
{
	static const char msg[] = "rdmig: send: a file shrank while it was being sent\n";
	ssize_t n = write(STDERR_FILENO, msg, sizeof(msg) - 1);

	(void)n;
	(void)sig;
	_exit(1);
}

static int parse_send_args(int argc, char **argv, struct send_args *a)
{
	static const struct option longopts[] = {
		{"to", required_argument, NULL, 't'}, {"verify", required_argument, NULL, 'V'},
		{"commit-timeout", required_argument, NULL, 'W'},
		{"unconfirmed", no_argument, NULL, 'U'}, MIG_PROGRESS_OPTION, MIG_COMMON_OPTIONS, {NULL, 0, NULL, 0}};
	const char *to = NULL;
	long secs;
	int c, r;

	mig_common_init(&a->m);
	a->verify = RDMIG_DIGEST_DEFAULT;
	a->commit_timeout_s = SEND_DEFAULT_COMMIT_TIMEOUT_S;
	a->m.opts.verdict = true;
	if (cli_wants_help(argc, argv)) {
		send_usage(stdout);
		return 1;
	}
	while ((c = getopt_long(argc, argv, ":t:V:W:U" MIG_COMMON_SHORT, longopts, NULL)) != -1) {
		if (c == 't')
			to = optarg;
		else if (c == 'U')
			a->unconfirmed = true;
		else if (c == 'W' && cli_parse_long(optarg, 0, 86400, &secs))
			return cli_usage("--commit-timeout '%s': takes whole seconds from 0 (no "
					 "bound) to 86400", optarg);
		else if (c == 'W')
			a->commit_timeout_s = (int)secs;
		else if (c == 'V' && rdmig_digest_parse(optarg, &a->verify))
			return cli_usage("--verify '%s': takes xxh64, xxh3-128, sha256 or off",
					 optarg);
		else if (c == 'V')
			continue;
		else if ((r = mig_other_option(&a->m, c, optarg, argv, send_usage)))
			return r;
	}
	if (!to)
		return cli_usage("--to ADDR:PORT is required");
	if (!a->m.chunk_given)
		a->m.opts.chunk_size = SEND_DEFAULT_CHUNK;
	if (optind >= argc)
		return cli_usage("no FILE to send");
	if (argc - optind > (int)RDMIG_IMGS_MAX_BLOCKS)
		return cli_usage("%d files: at most %u blocks per migration", argc - optind,
				 RDMIG_IMGS_MAX_BLOCKS);
	if ((r = mig_parse_to(to, a->host, sizeof(a->host), a->port, sizeof(a->port))))
		return r;
	a->files = argv + optind;
	a->nfiles = argc - optind;
	return 0;
}

/* Is the locked-memory limit enough for our blocks?  Before connecting
 * when the limit applies whatever the device (no CAP_IPC_LOCK); else once
 * the device is known (siw applies it to everyone).  1: did not apply. */
static int check_memlock(struct send_state *s, bool pin_all, const char *device)
{
	struct rdmig_pin_need need;

	if (cli_memlock_need(device, pin_all, s->a.m.opts.chunk_size, s->in.blocks,
			     (size_t)s->a.nfiles, &need, s->err, sizeof(s->err)))
		return -1;
	return cli_memlock_check("send", &need, s->err, sizeof(s->err));
}

/* Files pinned whole go in pieces, one thread each: the library's choice
 * (0: one per CPU, at most 8), or RDMIG_REGISTER_THREADS's (checked by
 * cli_env_threads before the run), as RDMIG_HASH_THREADS says how many
 * threads hash. */
static unsigned register_threads(void)
{
	unsigned n = 0;

	cli_env_threads("RDMIG_REGISTER_THREADS", &n);
	return n;
}

/* Whether our blocks may be pinned whole (rdmig_source_set_pin_local). */
static bool pin_local_fits(const struct send_state *s, const char *device)
{
	struct rdmig_pin_need need;
	char err[256];

	return !cli_memlock_need(device, false, s->a.m.opts.chunk_size, s->in.blocks,
				 (size_t)s->a.nfiles, &need, err, sizeof(err)) &&
	       need.most <= need.limit;
}

/* The images source's options: the digest, and our blocks registered
 * whole at setup when the limit lets us pin them all. */
static void source_opts(struct send_state *s, struct rdmig_images_source_opts *o)
{
	rdmig_images_source_opts_init(o);
	o->digest = s->a.verify;
	o->hash_threads = cli_hash_threads();
	o->register_threads = register_threads();
	s->pin_local = pin_local_fits(s, rdmig_conn_device(s->conn));
	o->pin_local = s->pin_local;
	o->verdict_timeout_ms = s->a.commit_timeout_s ? s->a.commit_timeout_s * 1000 : -1;
}

/* After every step: the progress line, and a way out for SIGINT/SIGTERM. */
static int on_progress(void *ctx, const struct rdmig_images_event *ev)
{
	struct send_state *s = ctx;

	if (ev->type == RDMIG_IMAGES_EV_HEADER)
		mig_progress_start(&s->prog, s->a.m.progress, "send", s->in.total);
	else if (ev->type == RDMIG_IMAGES_EV_PROGRESS)
		mig_progress(&s->prog, ev->bytes_done);
	else
		mig_progress_end(&s->prog);
	return cli_cancelled();
}

/* The migration proper (rdmig/images.h).  Errors of the library leave
 * their message in the handles; our own go to s->err. */
static int migrate(struct send_state *s)
{
	struct rdmig_images_source_opts o;
	struct rdmig_caps caps;
	int ret, early = check_memlock(s, s->a.m.opts.pin_all, NULL);

	if (early < 0)
		return -1;
	cli_phase("connect");
	s->t_connect = rdmig_monotonic_seconds();
	if ((ret = rdmig_conn_create(&s->a.m.opts, &s->conn)))
		return ret;
	s->t_start = rdmig_monotonic_seconds(); /* the transfer: connect .. end of iteration */
	if ((ret = rdmig_connect(s->conn, s->a.host, s->a.port)))
		return ret;
	s->t_connected = rdmig_monotonic_seconds();
	cli_phase("migrate");
	rdmig_conn_caps(s->conn, &caps);
	if (early == 1 &&
	    check_memlock(s, caps.flags & RDMIG_CAP_PIN_ALL, rdmig_conn_device(s->conn)) < 0)
		return -1;
	source_opts(s, &o);
	if ((ret = rdmig_images_source_create(s->conn, s->in.items, (uint32_t)s->a.nfiles, &o,
					      &s->src)))
		return ret;
	s->t_run = rdmig_monotonic_seconds();
	ret = rdmig_images_source_run(s->src, on_progress, s);
	s->t_run_end = rdmig_monotonic_seconds();
	s->ist.size = sizeof(s->ist);
	rdmig_images_source_stats(s->src, &s->ist);
	/* the transfer ends when the data and its digests are ready: before
	 * the trailer and the teardown */
	s->t_end = rdmig_monotonic_seconds() - s->ist.commit_seconds - s->ist.teardown_seconds;
	return ret;
}

static struct json_object *json_blocks(const struct send_state *s)
{
	const struct rdmig_imgs_block *desc = rdmig_images_source_blocks(s->src);
	struct json_object *arr = cj_array();

	for (int i = 0; i < s->a.nfiles; i++) {
		struct json_object *b = cj_object();
		char hex[RDMIG_DIGEST_HEX_MAX];

		rdmig_digest_hex(desc[i].digest, rdmig_digest_size(s->a.verify), hex);
		cj_str(b, "name", desc[i].name);
		cj_str(b, "file", s->in.f[i].path);
		cj_u64(b, "length", desc[i].length);
		cj_str(b, "digest", hex);
		cj_push(arr, b);
	}
	return arr;
}

/*
 * Where the run's time went (cli_budget.h), once cleanup() is done: the
 * library's phases (rdmig_images_stats) between the tool's own marks.
 * The source never waits for its hashing threads before the end of the
 * data (the records of the spans hashed by then go with the writes): the
 * writes are the transfer minus the wait for REGISTER_RESULTs.
 */
static void send_budget(const struct send_state *s, const struct rdmig_engine_stats *st,
			double t_cleaned, struct cli_budget *b)
{
	memset(b, 0, sizeof(*b));
	cli_budget_add(b, "start", s->t_connect - cli_t_main);
	cli_budget_add(b, "connect", s->t_connected - s->t_connect);
	cli_budget_add(b, "setup", s->t_run - s->t_connected + s->ist.header_seconds);
	cli_budget_add(b, "register_wait", st->register_wait_seconds);
	cli_budget_add(b, "writes", s->ist.transfer_seconds - st->register_wait_seconds);
	cli_budget_add(b, "hash_wait", s->ist.hash_wait_seconds);
	cli_budget_add(b, "commit", s->ist.commit_seconds);
	cli_budget_add(b, "teardown", s->ist.teardown_seconds + t_cleaned - s->t_run_end);
	cli_budget_close(b, t_cleaned);
}

static const char *verdict_name(int state)
{
	switch (state) {
	case RDMIG_VERDICT_COMMITTED:
		return "committed";
	case RDMIG_VERDICT_FAILED:
		return "failed";
	case RDMIG_VERDICT_UNKNOWN:
		return "unknown";
	case RDMIG_VERDICT_PENDING:
		return "pending";
	default:
		return "none";
	}
}

static void source_verdict(const struct send_state *s, struct rdmig_images_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	rdmig_images_source_verdict(s->src, v);
}

/* "verdict": what recv answered (rdmig-json(7)). */
static struct json_object *json_verdict(const struct send_state *s)
{
	struct json_object *o = cj_object();
	struct rdmig_images_verdict v;

	source_verdict(s, &v);
	cj_str(o, "state", verdict_name(v.state));
	if (v.state == RDMIG_VERDICT_COMMITTED) {
		cj_u64(o, "images", v.images);
		cj_u64(o, "bytes", v.bytes);
	}
	if (v.reason[0])
		cj_str(o, "reason", v.reason);
	return o;
}

/* The summary without its budget, which cleanup() has yet to end. */
static struct json_object *send_json(const struct send_state *s,
				     const struct rdmig_engine_stats *st)
{
	double secs = s->t_end - s->t_start;
	struct json_object *o = cj_summary();

	mig_json_destination(o, s->a.host, s->a.port, s->conn);
	cj_add(o, "blocks", json_blocks(s));
	cj_u64(o, "bytes_total", s->in.total);
	cj_u64(o, "bytes_written", st->bytes_written);
	cj_u64(o, "bytes_compressed", st->bytes_compressed);
	cj_u64(o, "bytes_skipped_zero", s->ist.bytes_skipped_zero);
	cj_u64(o, "stream_bytes", st->stream_bytes);
	cj_fixed(o, "seconds", secs, 6);
	cj_str(o, "verify", rdmig_digest_name(s->a.verify));
	cj_u64(o, "hash_threads", s->ist.hash_threads);
	cj_fixed(o, "hash_seconds", s->ist.hash_seconds, 6);
	cj_fixed(o, "hash_exposed_seconds", s->ist.hash_wait_seconds, 6);
	cj_fixed(o, "throughput_MBps", secs > 0 ? (double)s->in.total / secs / 1e6 : 0.0, 2);
	cj_u64(o, "writes_posted", st->writes_posted);
	cj_u64(o, "writes_signaled", st->writes_signaled);
	cj_u64(o, "iterations", st->iterations);
	mig_json_register(o, st);
	cj_bool(o, "pin_local", s->pin_local);
	cj_u64(o, "chunks_registered", st->chunks_registered);
	mig_json_conn(o, s->conn);
	cj_add(o, "verdict", json_verdict(s));
	return o;
}

static void print_verdict(const struct send_state *s)
{
	struct rdmig_images_verdict v;
	char a[32];

	source_verdict(s, &v);
	if (v.state == RDMIG_VERDICT_COMMITTED)
		printf("send: recv committed %u image%s (%s), durably, as sent\n", v.images,
		       v.images == 1 ? "" : "s", size_text(v.bytes, a, sizeof(a)));
	else
		printf("send: the destination gives no verdict: whether it committed is unknown\n");
}

static void print_human(const struct send_state *s, const struct rdmig_engine_stats *st)
{
	double secs = s->t_end - s->t_start;
	char a[32], b[32], c[32], d[32];
	struct rdmig_caps caps;

	rdmig_conn_caps(s->conn, &caps);
	printf("send: %d block%s, %s in %.2f s (%.1f MB/s), %s registration\n", s->a.nfiles,
	       s->a.nfiles == 1 ? "" : "s", size_text(s->in.total, a, sizeof(a)), secs,
	       secs > 0 ? (double)s->in.total / secs / 1e6 : 0.0,
	       caps.flags & RDMIG_CAP_PIN_ALL ? "pin-all" : "dynamic");
	printf("send: written %s, compressed %s, skipped as zero %s, stream %s\n",
	       size_text(st->bytes_written, a, sizeof(a)), size_text(st->bytes_compressed, b, sizeof(b)),
	       size_text(s->ist.bytes_skipped_zero, c, sizeof(c)),
	       size_text(st->stream_bytes, d, sizeof(d)));
	if (s->a.verify == RDMIG_DIGEST_OFF)
		printf("send: no checksums (--verify off)\n");
	else
		printf("send: %s of every 4 MiB span took %.2f s on %u thread%s, %.2f s of it "
		       "after the data\n",
		       rdmig_digest_name(s->a.verify), s->ist.hash_seconds, s->ist.hash_threads,
		       s->ist.hash_threads == 1 ? "" : "s", s->ist.hash_wait_seconds);
	printf("send: %llu RDMA writes, %llu register round trips (%llu ahead of the previous "
	       "write; the others p50 %.1f us, p99 %.1f us), %llu iteration%s\n",
	       (unsigned long long)st->writes_posted, (unsigned long long)st->register_requests,
	       (unsigned long long)st->register_ahead, st->register_rtt_p50_us,
	       st->register_rtt_p99_us, (unsigned long long)st->iterations,
	       st->iterations == 1 ? "" : "s");
	printf("send: %.2f s waiting for REGISTER_RESULTs, %.2f s registering our memory",
	       st->register_wait_seconds, st->register_seconds);
	if (st->register_threads)
		printf(" (blocks whole, on %llu thread%s)", (unsigned long long)st->register_threads,
		       st->register_threads == 1 ? "" : "s");
	printf("\n");
	mig_print_conn("send", s->conn);
	print_verdict(s);
}

/* The message of whatever failed: ours, the source's, or the connection's. */
static const char *send_errmsg(const struct send_state *s, int ret)
{
	if (s->err[0])
		return s->err;
	if (s->src)
		return rdmig_images_source_errmsg(s->src);
	if (s->conn)
		return rdmig_conn_errmsg(s->conn);
	return rdmig_strerror(ret);
}

/* SIGINT or SIGTERM: tell the destination (if connected), close, and exit
 * with 128 + the signal. */
static int send_cancelled(struct send_state *s)
{
	char msg[160];
	bool told;

	told = cli_cancel_tell_peer(s->conn);
	snprintf(msg, sizeof(msg), "interrupted by %s: migration aborted%s", cli_cancel_name(),
		 told ? "; the destination was told" : "");
	cli_fail_code("send", "interrupted", msg);
	return cli_cancel_status();
}

/* The migration went but recv did not commit, or did not say: the one
 * line says which, and under --json the object carries the verdict. */
static int send_not_committed(struct send_state *s, const struct rdmig_images_verdict *v)
{
	struct json_object *o;

	cli_fail_code("send", v->state == RDMIG_VERDICT_FAILED ? "not_committed" : "verdict_unknown",
		      rdmig_images_source_errmsg(s->src));
	if (!cli_run.json)
		return 1;
	o = cj_summary();
	mig_json_destination(o, s->a.host, s->a.port, s->conn);
	cj_add(o, "verdict", json_verdict(s));
	cj_summary_print(o);
	return 1;
}

/* A destination that rejects us without saying why may be filtering. */
static int send_failed(struct send_state *s, int ret)
{
	char msg[sizeof(s->err) + 128];
	struct rdmig_images_verdict v;

	source_verdict(s, &v);
	if (s->src && (v.state == RDMIG_VERDICT_FAILED || v.state == RDMIG_VERDICT_UNKNOWN))
		return send_not_committed(s, &v);

	/* the library tells the peer about its own failures; ours we report
	 * here (best effort) */
	if (s->err[0] && s->conn)
		rdmig_send_error(s->conn);
	snprintf(msg, sizeof(msg), "%s%s", send_errmsg(s, ret),
		 ret == RDMIG_EREJECTED ? " (a destination started with --allow rejects the "
					  "sources it does not list)" : "");
	return s->err[0] ? cli_fail("send", msg) : cli_fail_lib("send", ret, msg);
}

/* Everything went, but the destination cannot say whether it committed:
 * SEND_EXIT_UNCONFIRMED, unless --unconfirmed accepts that. */
static int unconfirmed_status(struct send_state *s)
{
	struct rdmig_images_verdict v;

	source_verdict(s, &v);
	if (v.state == RDMIG_VERDICT_COMMITTED || s->a.unconfirmed)
		return 0;
	cli_fail_code("send", "unconfirmed", "every byte went and the destination's device "
		      "acknowledged it, but the destination gives no verdict (QEMU, or an rdmig "
		      "recv older than 0.3): whether it committed is unknown; --unconfirmed "
		      "accepts that");
	return SEND_EXIT_UNCONFIRMED;
}

static void cleanup(struct send_state *s)
{
	rdmig_images_source_destroy(s->src); /* its threads read the files */
	rdmig_conn_destroy(s->conn); /* a clean disconnect ends the migration */
	send_files_free(&s->in);
}

int cmd_send(int argc, char **argv)
{
	struct send_state s;
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct json_object *o = NULL;
	struct cli_budget b;
	int ret, status;

	cli_run_begin("send", "files", "send", argc, argv);
	memset(&s, 0, sizeof(s));
	if ((ret = parse_send_args(argc, argv, &s.a)))
		return ret == 1 ? 0 : ret;
	if ((ret = cli_env_check()))
		return ret;
	cli_phase("setup");
	/* a bad block name is a usage error (2); a file we cannot read is not (1) */
	if (send_files_name(&s.in, s.a.files, s.a.nfiles, s.err, sizeof(s.err)))
		ret = cli_usage("%s", s.err);
	else if (send_files_map(&s.in, s.err, sizeof(s.err)))
		ret = cli_fail("send", s.err);
	if (ret) {
		cleanup(&s);
		return ret;
	}
	signal(SIGBUS, on_sigbus);
	if (cli_cancel_install(&s.a.m.opts)) {
		cli_fail("send", "cannot catch SIGINT and SIGTERM");
		cleanup(&s);
		return 1;
	}
	if ((ret = migrate(&s))) {
		mig_progress_end(&s.prog);
		ret = cli_cancelled() ? send_cancelled(&s) : send_failed(&s, ret);
		cleanup(&s);
		return ret;
	}
	rdmig_images_source_engine_stats(s.src, &st);
	status = unconfirmed_status(&s);
	/* the summary is built while the handles exist; the budget ends
	 * after their teardown */
	if (s.a.m.json)
		o = send_json(&s, &st);
	else
		print_human(&s, &st);
	cleanup(&s);
	send_budget(&s, &st, rdmig_monotonic_seconds(), &b);
	if (o) {
		cj_add(o, "budget", cj_budget(&b, false));
		cj_summary_print(o);
	} else if (s.a.m.verbose) {
		cli_budget_print(stdout, "send", &b, false);
	}
	return status;
}
