/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv.c - `rdmig recv`: accept one migration from `rdmig send`, like
 * QEMU's destination.  The migration itself (header, allocation,
 * verification of every span as it lands) is the library's
 * (rdmig/images.h); the files are the session's (src/sessions/recv_dir.h:
 * its sink writes every checked span into DIR/<name>.img, temporary until
 * committed, and the raw stream into DIR/stream.bin).  Here are the
 * options, what a header may ask for (verification, chunk size, locked
 * memory, a --serve share), the phases and the printing.  A migration
 * that fails or is interrupted (SIGINT, SIGTERM) leaves none of these
 * files behind.
 */
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"

#include "recv_files.h"

static void recv_usage(FILE *f)
{
	fprintf(f, "usage: rdmig recv --listen ADDR:PORT --out DIR [--pin-all] [--inline auto|0|N]\n"
		   "                  [--json] [--timeout S] [--max-total SIZE] [--allow ADDR[/N]]\n"
		   "                  [--force] [--no-sync] [--verify on|off] [--chunk-size SIZE]\n"
		   "                  [--progress auto|human|json|none] [-v]\n"
		   "       rdmig recv --serve ...: source after source (rdmig recv --serve --help)\n"
		   "ADDR: a name, an IPv4 address, [IPv6] or empty for any ([::]:4444, :4444).\n"
		   "Writes DIR/<block>.img per block and the raw stream to DIR/stream.bin, after\n"
		   "a verified migration only: a failed or interrupted one leaves neither.\n"
		   "Outputs are on stable storage before they get their names, and before the\n"
		   "source is told that they are committed (its send exits 0 only then).\n"
		   "  --pin-all       let the source have all memory registered up front\n"
		   "  --inline        inline size of control messages (default auto)\n"
		   "  --chunk-size SIZE  the source's registration chunk (1M..1G, a power of\n"
		   "                  two); recv learns it from the source's stream header, and\n"
		   "                  a value given here must match it\n"
		   "  --timeout S     give up when the source stays silent this long (0: never;\n"
		   "                  default %d); given, it also bounds the wait for a source\n"
		   "  --idle-timeout S  end a source that moves no data (stream bytes,\n"
		   "                  registrations, COMPRESS) this long: keep-alives do not\n"
		   "                  count (0: never; default %d)\n"
		   "  --max-total N   most bytes a source may ask for (suffixes K, M, G, T;\n"
		   "                  default: the smaller of MemAvailable and DIR's free space)\n"
		   "  --force         accept a DIR others may write into, and replace outputs that\n"
		   "                  exist (by rename; without it recv refuses to start)\n"
		   "  --no-sync       do not flush outputs to stable storage (scratch use: after a\n"
		   "                  power cut a committed output may be short, empty or gone)\n"
		   "  --allow A[/N]   accept sources from this address or prefix only (repeat for\n"
		   "                  more); others are rejected before anything is registered\n"
		   "  --verify off    do not check the source's checksums (the images are still\n"
		   "                  written; default on: each 4 MiB is checked as it lands,\n"
		   "                  and a source that sends none is refused)\n"
		   "  --json          one JSON object on stdout instead of the summary\n"
		   "  --progress M    on stderr while it runs: human (a line), json (JSON\n"
		   "                  lines), none, or auto (default: human on a terminal)\n"
		   "  -v, --verbose   the library's notes on stderr; -vv adds its debug log\n"
		   "  -h, --help      this help\n"
		   "SIGINT or SIGTERM aborts the migration: the source is told, and the exit\n"
		   "status is 128 + the signal.\n", MIG_DEFAULT_TIMEOUT_S,
		   RECV_DEFAULT_IDLE_TIMEOUT_S);
}

static int parse_recv_args(int argc, char **argv, struct recv_args *a, bool *verify_off)
{
	static const struct option longopts[] = {
		RECV_OPTIONS, {"verify", required_argument, NULL, 'V'}, MIG_PROGRESS_OPTION,
		{NULL, 0, NULL, 0}};
	int c, r;

	recv_args_init(a);
	a->m.opts.verdict = true; /* send hears whether we committed */
	if (cli_wants_help(argc, argv)) {
		recv_usage(stdout);
		return 1;
	}
	while ((c = getopt_long(argc, argv, ":" RECV_SHORT "V:", longopts, NULL)) != -1) {
		if (c == 'V' && strcmp(optarg, "off") && strcmp(optarg, "on"))
			return cli_usage("--verify '%s': takes on or off", optarg);
		if (c == 'V')
			*verify_off = !strcmp(optarg, "off");
		else if ((r = recv_args_option(a, c, optarg, argv, recv_usage)))
			return r;
	}
	return recv_args_finish(a, argc, argv);
}

/* ------------------------------------------- the header, the commit -- */

/* The header's stream: does this recv take it?  The receiver decides
 * whether the images may go unverified, and a --chunk-size given must be
 * the source's. */
static int accept_params(void *ctx, const struct rdmig_imgs_params *prm, char *err, size_t errlen)
{
	struct recv_state *s = ctx;
	uint64_t given = s->a.m.opts.chunk_size, chunk = 1ull << prm->chunk_shift;

	if (recv_verify_policy(s->verify_off, prm->digest == RDMIG_DIGEST_OFF, err, errlen))
		return -1;
	if (s->a.m.chunk_given && given != chunk) {
		snprintf(err, errlen, "chunk-size mismatch: --chunk-size %llu here, but the source "
			 "registers in chunks of %llu bytes", (unsigned long long)given,
			 (unsigned long long)chunk);
		return -1;
	}
	return 0;
}

/* Can we pin what the source announced?  Checked before the blocks go to
 * the library (and the source learns them): a refusal reaches the source
 * as ERROR before any data moves. */
static int check_memlock(struct recv_state *s, const struct rdmig_imgs_block *blocks, uint32_t n,
			 uint64_t chunk, struct rdmig_pin_need *need, char *err, size_t errlen)
{
	struct rdmig_block *b = calloc(n ? n : 1, sizeof(*b));
	struct rdmig_caps caps;
	int ret;

	if (!b) {
		snprintf(err, errlen, "out of memory for %u blocks", n);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		b[i].length = blocks[i].length;
	rdmig_conn_caps(s->conn, &caps);
	/* a dynamic registration pins the source's chunk, not QEMU's 1 MiB */
	ret = cli_memlock_need(rdmig_conn_device(s->conn), caps.flags & RDMIG_CAP_PIN_ALL, chunk, b,
			       n, need, err, errlen);
	free(b);
	return ret || cli_memlock_check("recv", need, err, errlen) < 0 ? -1 : 0;
}

/* The header's blocks, their files named: what they need (locked memory;
 * with --serve, a share of what the other sources leave), then the
 * progress line. */
static int accept_blocks(void *ctx, const struct rdmig_imgs_block *blocks, uint32_t n,
			 const struct rdmig_imgs_params *prm, char *err, size_t errlen)
{
	struct recv_state *s = ctx;
	uint64_t chunk = 1ull << prm->chunk_shift, total = 0;
	struct rdmig_pin_need pins;

	if (check_memlock(s, blocks, n, chunk, &pins, err, errlen))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		total += blocks[i].length;
	/* recv --serve: within what the other sources leave, the hashing
	 * copies included (the span size is the source's, up to 1 GiB) */
	if (s->serve) {
		struct rdmig_images_dest_opts o;

		rdmig_images_dest_opts_init(&o);
		o.verify = !s->verify_off;
		o.hash_threads = cli_hash_threads();
		if (s->serve->admit(s->serve->ctx, total,
				    rdmig_images_dest_copy_bytes(&o, prm, blocks, n),
				    (uint64_t)n + 1, &pins, err, errlen))
			return -1;
		atomic_store(&s->serve->bytes_total, total);
		atomic_store(&s->serve->phase, SERVE_PHASE_RECEIVING);
	}
	s->span_shift = prm->span_shift;
	s->total = total;
	mig_progress_start(&s->prog, s->a.m.progress, "recv", s->total);
	return 0;
}

/* Verified (or --verify off): the outputs get their names next. */
static void committing(void *ctx)
{
	struct recv_state *s = ctx;

	if (!s->serve) /* the run's phase is the main thread's */
		cli_phase("write");
	else
		atomic_store(&s->serve->phase, SERVE_PHASE_COMMITTING);
}

void recv_outputs_init(struct recv_state *s)
{
	const struct recv_dir_hooks hooks = {
		.ctx = s, .params = accept_params, .blocks = accept_blocks,
		.committing = committing,
	};

	recv_dir_init(&s->out, &s->a.dir, &hooks);
}

/* ------------------------------------------------------ the migration -- */

/* After every step: the progress line, and a way out for SIGINT/SIGTERM. */
static int on_progress(void *ctx, const struct rdmig_images_event *ev)
{
	struct recv_state *s = ctx;

	if (ev->type == RDMIG_IMAGES_EV_PROGRESS) {
		mig_progress(&s->prog, ev->bytes_done);
		if (s->serve)
			atomic_store(&s->serve->bytes_done, ev->bytes_done);
	}
	return s->serve ? atomic_load(&s->serve->stop) : cli_cancelled();
}

int recv_receive(struct recv_state *s)
{
	struct rdmig_images_sink sink;
	struct rdmig_images_dest_opts o;
	int ret;

	recv_dir_sink(&s->out, &sink);
	rdmig_images_dest_opts_init(&o);
	o.max_total = s->a.max_total;
	o.verify = !s->verify_off;
	o.hash_threads = cli_hash_threads();
	s->t_run = rdmig_monotonic_seconds();
	if ((ret = rdmig_images_dest_create(s->conn, &o, &sink, &s->dest)))
		return ret;
	ret = rdmig_images_dest_run(s->dest, on_progress, s);
	s->t_run_end = rdmig_monotonic_seconds();
	s->ist.size = sizeof(s->ist);
	rdmig_images_dest_stats(s->dest, &s->ist);
	s->st.size = sizeof(s->st);
	rdmig_images_dest_engine_stats(s->dest, &s->st);
	return ret;
}

/* The message of a failure: ours (the sink's), the library's, the
 * connection's or the listener's; with the default --max-total explained. */
const char *recv_failure_message(struct recv_state *s, int ret, char *buf, size_t len)
{
	char note[400];
	const char *msg = s->dest ? rdmig_images_dest_errmsg(s->dest)
				  : recv_errmsg(s->err, NULL, s->conn, s->l, ret);

	snprintf(buf, len, "%s%s", msg,
		 s->ist.refused_total ? recv_limit_note(&s->a, note, sizeof(note)) : "");
	return buf;
}

static void cleanup(struct recv_state *s)
{
	mig_progress_end(&s->prog);
	rdmig_images_dest_destroy(s->dest); /* before the connection, which it serves */
	rdmig_conn_destroy(s->conn);
	rdmig_listener_destroy(s->l);
	recv_dir_free(&s->out);
	out_dir_close(&s->a.dir); /* the outputs were committed or discarded */
}

/* SIGINT or SIGTERM: tell the source (if one is connected), remove what
 * this run wrote, and exit with 128 + the signal. */
static int recv_cancelled(struct recv_state *s)
{
	char msg[200];
	bool told;

	mig_progress_end(&s->prog);
	told = cli_cancel_tell_peer(s->conn);
	recv_dir_discard(&s->out);
	snprintf(msg, sizeof(msg), "interrupted by %s %s%s; partial outputs removed",
		 cli_cancel_name(), s->conn ? "during the migration" : "while waiting for a source",
		 told ? ", the source was told" : "");
	cli_fail_code("recv", "interrupted", msg);
	return cli_cancel_status();
}

/* A failed migration: the library discarded the outputs (the sink's abort). */
static int recv_failed(struct recv_state *s, int ret)
{
	char msg[1024];

	if (cli_cancelled())
		return recv_cancelled(s);
	if (s->ist.blocks_mismatched) {
		cli_phase("verify");
		return report_mismatches(s);
	}
	recv_dir_discard(&s->out); /* when the failure came before the library's handle */
	if (s->err[0])
		return cli_fail("recv", s->err);
	if (recv_dir_failed(&s->out))
		return cli_fail("recv", recv_failure_message(s, ret, msg, sizeof(msg)));
	return cli_fail_lib("recv", ret, recv_failure_message(s, ret, msg, sizeof(msg)));
}

/*
 * On iWARP our side of a connection is established once our accept went
 * out: the handshake has no third message.  So a requester that went away
 * right after its request (a scan, a source killed at once) is handed out
 * as a connection that ends before its first message.  That is no source
 * at all: accept again, a bounded number of times.
 */
#define RECV_VANISHED_MAX 16

static bool vanished_before_a_word(const struct recv_state *s, int ret)
{
	return ret == RDMIG_EDISCONNECTED && !cli_cancelled() && !s->ist.blocks &&
	       !s->st.stream_bytes && !s->st.register_requests && !s->st.iterations;
}

/* Forget the connection that ended, make --out again (its abort removed
 * what this run had made), and wait for the next source. */
static int accept_again(struct recv_state *s)
{
	static const char *const fixed[] = {"stream.bin", NULL};
	int ret;

	if (s->a.m.verbose)
		fprintf(stderr, "recv: a connection ended before its first message "
				"(its requester went away); waiting for the next source\n");
	rdmig_images_dest_destroy(s->dest);
	s->dest = NULL;
	rdmig_conn_destroy(s->conn);
	s->conn = NULL;
	memset(&s->ist, 0, sizeof(s->ist));
	memset(&s->st, 0, sizeof(s->st));
	out_dir_close(&s->a.dir);
	if (recv_open_out(&s->a, fixed, s->err, sizeof(s->err)))
		return -1;
	cli_phase("accept");
	if ((ret = rdmig_accept(s->l, &s->conn)))
		return ret;
	s->t_accepted = rdmig_monotonic_seconds();
	return 0;
}

int cmd_recv(int argc, char **argv)
{
	struct recv_state s;
	struct json_object *o = NULL;
	struct cli_budget b;
	int ret;

	static const char *const fixed[] = {"stream.bin", NULL};

	cli_run_begin("recv", "files", "recv", argc, argv);
	memset(&s, 0, sizeof(s));
	recv_outputs_init(&s);
	if ((ret = parse_recv_args(argc, argv, &s.a, &s.verify_off)))
		return ret == 1 ? 0 : ret;
	if ((ret = cli_env_check()))
		return ret;
	cli_phase("setup");
	if (recv_prepare(&s.a.m.opts, s.err, sizeof(s.err)) ||
	    recv_open_out(&s.a, fixed, s.err, sizeof(s.err))) {
		ret = cli_fail("recv", s.err);
		out_dir_remove_made(&s.a.dir);
		cleanup(&s);
		return ret;
	}
	cli_phase("accept");
	if (!(ret = recv_accept(&s.a, &s.l, &s.conn))) {
		s.t_accepted = rdmig_monotonic_seconds();
		cli_phase("migrate");
		ret = recv_receive(&s);
		for (unsigned again = 0; ret && vanished_before_a_word(&s, ret) &&
					 again < RECV_VANISHED_MAX; again++) {
			if ((ret = accept_again(&s)))
				break;
			cli_phase("migrate");
			ret = recv_receive(&s);
		}
	}
	mig_progress_end(&s.prog);
	if (ret)
		ret = recv_failed(&s, ret);
	/* an interrupted run's object is the short one (cli_run_end) */
	/* the summary is built while the handles exist; the budget ends
	 * after their teardown */
	if (s.a.m.json && !cli_cancelled() && (!ret || s.ist.blocks_mismatched))
		o = recv_json(&s);
	else if (!ret)
		print_human(&s);
	cleanup(&s);
	recv_budget(&s, rdmig_monotonic_seconds(), &b);
	if (o) {
		cj_add(o, "budget", cj_budget(&b, true));
		cj_summary_print(o);
	} else if (!ret && s.a.m.verbose) {
		cli_budget_print(stdout, "recv", &b, true);
	}
	return ret;
}
