/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv.c - `rdmig recv`: accept one migration from `rdmig send`, like
 * QEMU's destination: the stream header says which blocks to allocate, the
 * source writes into them with RDMA, and digest records say which spans
 * have landed and what they hold: each is checked on a pool of threads
 * while the rest arrives (rdmig/imgstream.h).  Once the source is done and every
 * block verified, the blocks are written to DIR/<name>.img; the
 * raw stream is kept in DIR/stream.bin.  A migration that fails or is
 * interrupted (SIGINT, SIGTERM) leaves none of these files behind.
 */
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"
#include "cli_qemu.h"
#include <rdmig/imgstream.h>

#include "recv_files.h"

static void recv_usage(FILE *f)
{
	fprintf(f, "usage: rdmig recv --listen ADDR:PORT --out DIR [--pin-all] [--inline auto|0|N]\n"
		   "                  [--json] [--timeout S] [--max-total SIZE] [--allow ADDR[/N]]\n"
		   "                  [--force] [--verify on|off] [--chunk-size SIZE]\n"
		   "                  [--progress auto|human|json|none] [-v]\n"
		   "ADDR: a name, an IPv4 address, [IPv6] or empty for any ([::]:4444, :4444).\n"
		   "Writes DIR/<block>.img per block and the raw stream to DIR/stream.bin, after\n"
		   "a verified migration only: a failed or interrupted one leaves neither.\n"
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

/* A failed or interrupted migration: remove every file this run created
 * (what was in DIR before stays untouched). */
static void remove_outputs(struct recv_state *s)
{
	rdmig_verify_stop(&s->vf); /* its threads write into the images */
	out_discard(&s->a.dir, &s->stream);
	for (uint32_t i = 0; s->rb && i < s->ps.count; i++)
		out_discard(&s->a.dir, &s->rb[i].img);
	out_dir_remove_made(&s->a.dir);
}

/* ------------------------------------------------------------ events -- */

/* Choose every block's output file name now, before anything is written. */
static int name_files(struct recv_state *s)
{
	char (*names)[RDMIG_IMGS_FILE_NAME] = calloc(s->ps.count, sizeof(*names));

	if (!names || rdmig_imgs_file_names(s->ps.blocks, s->ps.count, ".img", names)) {
		free(names);
		snprintf(s->err, sizeof(s->err), "out of memory for %u file names", s->ps.count);
		return -1;
	}
	for (uint32_t i = 0; i < s->ps.count; i++)
		memcpy(s->rb[i].file, names[i], sizeof(names[i]));
	free(names);
	/* a name taken in DIR fails now, before any data moves */
	for (uint32_t i = 0; i < s->ps.count; i++)
		if (out_check_new(&s->a.dir, s->rb[i].file, s->err, sizeof(s->err)))
			return -1;
	return 0;
}

/* Can we pin what the source announced?  Checked before the blocks go to
 * the library (and the source learns them): a refusal reaches the source
 * as ERROR before any data moves. */
static int check_memlock(struct recv_state *s)
{
	struct cli_memlock_need need;
	struct rdmig_caps caps;

	rdmig_conn_caps(s->conn, &caps);
	/* a dynamic registration pins the source's chunk, not QEMU's 1 MiB */
	cli_memlock_need_chunk(caps.flags & RDMIG_CAP_PIN_ALL, s->ps.chunk_size, s->blocks,
			       s->ps.count, &need);
	return cli_memlock_check("recv", rdmig_conn_device(s->conn), &need, s->err,
				 sizeof(s->err)) < 0 ? -1 : 0;
}

/* The header is complete: allocate zeroed memory for every block, in the
 * source's order, and hand it to the library. */
/* Images are written 1 MiB at a time: a MiB of zeros stays a hole. */
#define IMAGE_PIECE (1u << 20)

/* On a pool thread, once a span is hashed: into its image file (a
 * temporary one until the run is verified), while the rest arrives. */
static void span_landed(void *ctx, const struct rdmig_hash_job *j)
{
	struct recv_state *s = ctx;
	int none = 0;

	for (uint64_t off = 0; off < j->len; off += IMAGE_PIECE) {
		uint64_t n = j->len - off < IMAGE_PIECE ? j->len - off : IMAGE_PIECE;
		if (out_write_chunk(&s->rb[j->block].img, j->offset + off, j->p + off, (size_t)n)) {
			atomic_compare_exchange_strong(&s->write_errno, &none, errno ? errno : EIO);
			return;
		}
	}
}

/* Create the image files, and hash the spans as their records arrive
 * (the pool waits for them), writing each to its file. */
static int start_verify(struct recv_state *s)
{
	const uint8_t **mems = calloc(s->ps.count, sizeof(*mems));
	int ret;

	s->res = calloc(s->ps.count, sizeof(*s->res));
	if (!mems || !s->res) {
		free(mems);
		snprintf(s->err, sizeof(s->err), "out of memory for %u blocks", s->ps.count);
		return -1;
	}
	for (uint32_t i = 0; i < s->ps.count; i++) {
		mems[i] = s->rb[i].mem;
		/* parked: written through a descriptor of its own per span, so
		 * that 4096 blocks need no 4096 descriptors */
		if (out_create(&s->a.dir, &s->rb[i].img, s->rb[i].file, s->err, sizeof(s->err))) {
			free(mems);
			return -1;
		}
		if (out_park(&s->rb[i].img)) {
			snprintf(s->err, sizeof(s->err), "cannot close %s/%s: %s", s->a.out,
				 s->rb[i].file, strerror(errno));
			free(mems);
			return -1;
		}
	}
	ret = rdmig_verify_start(&s->vf, s->verify_off ? RDMIG_DIGEST_OFF : s->ps.prm.digest,
				 cli_hash_threads(), s->ps.blocks, s->ps.count,
				 s->ps.prm.span_shift, mems, false,
				 span_landed, s, s->err, sizeof(s->err));
	free(mems);
	return ret;
}

/* The source's registration chunk, from its stream header: a --chunk-size
 * given here must agree with it. */
static int take_chunk_size(struct recv_state *s)
{
	uint64_t given = s->a.m.opts.chunk_size;

	if (s->a.m.chunk_given && given != s->ps.chunk_size) {
		snprintf(s->err, sizeof(s->err), "chunk-size mismatch: --chunk-size %llu here, but "
			 "the source registers in chunks of %u bytes", (unsigned long long)given,
			 s->ps.chunk_size);
		return -1;
	}
	return rdmig_dest_set_chunk_size(s->dest, s->ps.chunk_size);
}

static int alloc_blocks(struct recv_state *s)
{
	static uint8_t empty_block; /* a valid address for length-0 blocks */
	uint32_t n = s->ps.count;
	int ret = 0;

	s->rb = calloc(n, sizeof(*s->rb));
	s->blocks = calloc(n, sizeof(*s->blocks));
	if (!s->rb || !s->blocks) {
		snprintf(s->err, sizeof(s->err), "out of memory for %u blocks", n);
		return -1;
	}
	if (name_files(s))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct rdmig_imgs_block *d = &s->ps.blocks[i];
		if (d->length) {
			void *p = mmap(NULL, (size_t)d->length, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED) {
				snprintf(s->err, sizeof(s->err), "cannot allocate %llu bytes for block "
					 "'%s': %s", (unsigned long long)d->length, d->name,
					 strerror(errno));
				return -1;
			}
			s->rb[i].mem = p;
		}
		s->blocks[i] = (struct rdmig_block){
			.name = d->name,
			.host = s->rb[i].mem ? (void *)s->rb[i].mem : (void *)&empty_block,
			.length = d->length,
		};
	}
	if (check_memlock(s) || (ret = take_chunk_size(s)))
		return ret ? ret : -1;
	if ((ret = rdmig_dest_set_blocks(s->dest, s->blocks, n)))
		return ret;
	s->blocks_set = 1;
	mig_progress_start(&s->prog, s->a.m.progress, "recv", s->ps.total);
	return start_verify(s);
}

/* Stream bytes: parsed first, so that only valid ones reach stream.bin. */
static int on_stream(struct recv_state *s, const struct rdmig_event *ev)
{
	char note[400];
	int got;

	if ((got = rdmig_imgs_feed(&s->ps, ev->data, ev->len)) < 0) {
		snprintf(s->err, sizeof(s->err), "the source's stream is not an rdmig image stream: "
			 "%s%s", rdmig_imgs_errmsg(&s->ps), s->ps.over_limit ?
			 recv_limit_note(&s->a, note, sizeof(note)) : "");
		return -1;
	}
	if (s->stream.state == OUT_NONE &&
	    out_create(&s->a.dir, &s->stream, "stream.bin", s->err, sizeof(s->err)))
		return -1;
	if (recv_write_all(s->stream.fd, ev->data, ev->len)) {
		snprintf(s->err, sizeof(s->err), "cannot write %s/stream.bin: %s", s->a.out,
			 strerror(errno));
		return -1;
	}
	/* the receiver decides whether the images may go unverified */
	if ((got & RDMIG_IMGS_EV_HEADER) &&
	    (recv_verify_policy(s->verify_off, s->ps.prm.digest == RDMIG_DIGEST_OFF, s->err,
				sizeof(s->err)) || alloc_blocks(s)))
		return -1;
	if (got & RDMIG_IMGS_EV_SPANS) { /* their data has landed: check it now */
		rdmig_verify_release(&s->vf, s->ps.spans_known);
		mig_progress(&s->prog, rdmig_imgs_landed_bytes(&s->ps));
	}
	return 0;
}

/* Run the destination until the source disconnects. */
static int receive(struct recv_state *s)
{
	struct rdmig_event ev;
	int ret;

	for (;;) {
		if ((ret = rdmig_dest_next(s->dest, &ev)))
			return ret;
		switch (ev.type) {
		case RDMIG_EV_STREAM:
			if ((ret = on_stream(s, &ev)))
				return ret;
			break;
		case RDMIG_EV_BLOCKS_NEEDED:
			if (!rdmig_imgs_header_done(&s->ps)) {
				snprintf(s->err, sizeof(s->err), "the source asked for RAM blocks before "
					 "describing them");
				return -1;
			}
			break; /* already given when the header completed */
		case RDMIG_EV_ITERATION_DONE:
			break; /* counted by the library (stats.iterations) */
		case RDMIG_EV_END:
			s->t_end = rdmig_monotonic_seconds();
			if (rdmig_imgs_finish(&s->ps)) {
				snprintf(s->err, sizeof(s->err), "the source disconnected before the end "
					 "of its stream (%s)", rdmig_imgs_errmsg(&s->ps));
				return -1;
			}
			return 0;
		default:
			snprintf(s->err, sizeof(s->err), "unknown event %d from the library", ev.type);
			return -1;
		}
	}
}

/* ------------------------------------------------------ after the end -- */

static int verify_tick(void *ctx)
{
	(void)ctx;
	return cli_cancelled();
}

/* Wait for the last spans' digests and compare; a run without digests
 * (--verify off on either side) is not verified, and not a failure. */
static void verify(struct recv_state *s)
{
	s->verified = rdmig_verify_recv_finish(&s->vf, &s->ps, s->res, verify_tick, s) == 0 &&
		      s->vf.alg != RDMIG_DIGEST_OFF;
	for (uint32_t i = 0; s->verified && i < s->ps.count; i++)
		s->verified = s->res[i].ok;
}

/* The images were written span by span as they were checked: give them
 * their lengths (zero spans are holes), then every output its real name. */
static int write_images(struct recv_state *s)
{
	double t0 = rdmig_monotonic_seconds();
	int err = atomic_load(&s->write_errno);

	for (uint32_t i = 0; !err && i < s->ps.count; i++)
		if (out_set_size(&s->rb[i].img, s->ps.blocks[i].length))
			err = errno;
	if (err) {
		snprintf(s->err, sizeof(s->err), "cannot write the images into %s: %s", s->a.out,
			 strerror(err));
		return -1;
	}
	if (out_commit(&s->a.dir, &s->stream, s->err, sizeof(s->err)))
		return -1;
	for (uint32_t i = 0; i < s->ps.count; i++)
		if (out_commit(&s->a.dir, &s->rb[i].img, s->err, sizeof(s->err)))
			return -1;
	s->write_seconds = rdmig_monotonic_seconds() - t0;
	return 0;
}

static int accept_one(struct recv_state *s)
{
	int ret;

	if ((ret = recv_accept(&s->a, &s->l, &s->conn)))
		return ret;
	cli_phase("migrate");
	s->t_start = rdmig_monotonic_seconds();
	return rdmig_dest_create(s->conn, &s->dest);
}

static void cleanup(struct recv_state *s)
{
	mig_progress_end(&s->prog);
	rdmig_verify_free(&s->vf); /* its threads read the blocks */
	free(s->res);
	rdmig_dest_destroy(s->dest); /* deregisters: before the memory goes */
	rdmig_conn_destroy(s->conn);
	rdmig_listener_destroy(s->l);
	for (uint32_t i = 0; s->rb && i < s->ps.count; i++)
		if (s->rb[i].mem)
			munmap(s->rb[i].mem, (size_t)s->ps.blocks[i].length);
	free(s->rb);
	free(s->blocks);
	rdmig_imgs_parser_free(&s->ps);
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
	remove_outputs(s);
	snprintf(msg, sizeof(msg), "interrupted by %s %s%s; partial outputs removed",
		 cli_cancel_name(), s->conn ? "during the migration" : "while waiting for a source",
		 told ? ", the source was told" : "");
	cli_fail_code("recv", "interrupted", msg);
	return cli_cancel_status();
}

int cmd_recv(int argc, char **argv)
{
	/* `rdmig recv --qemu ...`: the destination of a real QEMU source
	 * (tools/cli_recv_qemu.c), which learns its blocks from QEMU's stream */
	for (int a = 1; a < argc; a++)
		if (!strcmp(argv[a], "--qemu"))
			return cmd_recv_qemu(argc, argv);

	struct recv_state s;
	int ret;

	static const char *const fixed[] = {"stream.bin", NULL};

	cli_run_begin("recv", "files", "recv", argc, argv);
	memset(&s, 0, sizeof(s));
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
	rdmig_imgs_parser_init(&s.ps, s.a.max_total);
	cli_phase("accept");
	if ((ret = accept_one(&s)) || (ret = receive(&s))) {
		mig_progress_end(&s.prog);
		if (cli_cancelled()) {
			ret = recv_cancelled(&s);
			cleanup(&s);
			return ret;
		}
		/* the library tells the peer about its own failures; ours we
		 * report here (best effort) */
		if (s.err[0] && s.conn)
			rdmig_send_error(s.conn);
		remove_outputs(&s);
		if (s.err[0])
			ret = cli_fail("recv", s.err);
		else
			ret = cli_fail_lib("recv", ret, recv_errmsg(s.err, s.dest, s.conn, s.l, ret));
		cleanup(&s);
		return ret;
	}
	mig_progress_end(&s.prog);
	s.st.size = sizeof(s.st);
	rdmig_dest_stats(s.dest, &s.st);
	cli_phase("verify");
	verify(&s);
	ret = 0;
	if (cli_cancelled())
		ret = recv_cancelled(&s);
	else if (!s.verified && s.vf.alg != RDMIG_DIGEST_OFF)
		ret = report_mismatches(&s);
	else {
		cli_phase("write");
		if (write_images(&s))
			ret = cli_cancelled() ? recv_cancelled(&s) : cli_fail("recv", s.err);
	}
	if (ret)
		remove_outputs(&s);
	/* an interrupted run's object is the short one (cli_run_end) */
	if (s.a.m.json && !cli_cancelled())
		print_json(&s);
	else if (!ret)
		print_human(&s);
	cleanup(&s);
	return ret;
}
