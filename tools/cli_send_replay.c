/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_send_replay.c - `rdmig send --qemu-replay DIR --to ADDR:PORT`: play a
 * migration recorded by `rdmig recv --qemu` into a real QEMU destination
 * (`-incoming rdma:ADDR:PORT`, same machine configuration), which then
 * holds the recorded VM and can resume it.
 *
 * QEMU's destination parses the stream and serves registration only after
 * each RAM_SAVE_FLAG_HOOK it reads, so the replay must cut the stream
 * exactly where the recording saw each control phase:
 *
 *   stream [0, phase 0)      -> RAM_BLOCKS_REQUEST (the destination's
 *                               blocks, offsets and, with pin-all, keys)
 *   stream [phase 0, phase 1) -> registration pass: for every chunk the plan
 *                               gives this pass, a write of the whole chunk
 *                               from DIR/<file> (the library registers it,
 *                               or sends COMPRESS when it is all zero and
 *                               not registered yet), then REGISTER_FINISHED
 *   ...                      -> the rest of the stream, disconnect.
 *
 * REGISTER keys and COMPRESS offsets travel in QEMU's RAM-offset space; the
 * library takes the offsets from the destination's RAM_BLOCKS_RESULT, so
 * the record's offsets are not needed.  Block order and lengths must match
 * the destination's (the library checks them and says which differs).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"
#include "cli_qemu.h"
#include "replay_dir.h"
#include <rdmig/qemu.h>

struct replay_args {
	struct mig_common m;
	const char *dir;
	char host[256], port[16];
};

struct replay_state {
	struct replay_args a;
	struct rdmig_replay_record rec;
	struct replay_dir dir;
	int stream_fd;
	uint8_t *piece;   /* stream bytes on their way, RDMIG_MAX_STREAM_CHUNK at a time */
	uint8_t **img;    /* per block: its image, copied (replay_dir.h) */
	/* the plan by pass: the chunks pass k sends are chunk[first[k] ..
	 * first[k + 1]), numbered across the blocks (block b's chunk c is
	 * base[b] + c) in block and chunk order */
	uint32_t *first, *chunk, *base;
	struct rdmig_block *blocks;
	struct rdmig_conn *conn;
	struct rdmig_source *src;
	struct mig_progress prog;
	uint64_t sent_ram, stream_pos;
	uint32_t phase; /* the phase being replayed, for error messages */
	bool read_failed; /* stream.bin failed the replay: err says how */
	double t_start, t_end;
	char err[10240];
};

static void replay_usage(FILE *f)
{
	fprintf(f, "usage: rdmig send --qemu-replay DIR --to ADDR:PORT [--pin-all]\n"
		   "                  [--inline auto|0|N] [--json] [--timeout S]\n"
		   "                  [--chunk-size SIZE] [--progress auto|human|json|none] [-v]\n"
		   "Replays a migration recorded by 'rdmig recv --qemu --out DIR' into a QEMU\n"
		   "started with the recorded machine configuration and -incoming rdma:ADDR:PORT.\n"
		   "  --pin-all      ask QEMU to register all its memory up front\n"
		   "  --inline       inline size of control messages (default auto)\n"
		   "  --chunk-size SIZE  QEMU's x-rdma-chunk-size (1M..1G, a power of two;\n"
		   "                 default 1M); QEMU must be set to the same\n"
		   "  --timeout S    limit of every wait, in seconds (0: none; default 10)\n"
		   "  --json         one JSON object on stdout instead of the summary\n"
		   "  --progress M   as for send: auto, human, json or none\n"
		   "  -v, --verbose  the library's notes on stderr; -vv adds its debug log\n"
		   "  -h, --help     this help\n");
}

static int parse_replay_args(int argc, char **argv, struct replay_args *a)
{
	static const struct option longopts[] = {
		{"qemu-replay", required_argument, NULL, 'R'},
		{"to", required_argument, NULL, 't'},
		MIG_PROGRESS_OPTION,
		MIG_COMMON_OPTIONS,
		{NULL, 0, NULL, 0}};
	const char *to = NULL;
	int c, r;

	mig_common_init(&a->m);
	if (cli_wants_help(argc, argv)) {
		replay_usage(stdout);
		return 1;
	}
	while ((c = getopt_long(argc, argv, ":t:" MIG_COMMON_SHORT, longopts, NULL)) != -1) {
		if (c == 'R')
			a->dir = optarg;
		else if (c == 't')
			to = optarg;
		else if ((r = mig_other_option(&a->m, c, optarg, argv, replay_usage)))
			return r;
	}
	if (!a->dir || !*a->dir)
		return cli_usage("--qemu-replay needs the record's directory");
	if (!to)
		return cli_usage("--to ADDR:PORT is required");
	if (optind < argc)
		return cli_usage("unexpected argument '%s': the images come from the record's "
				 "directory", argv[optind]);
	return mig_parse_to(to, a->host, sizeof(a->host), a->port, sizeof(a->port));
}

/* ----------------------------------------------------- the record -- */

/* record.txt, each block checked against its image as its line is read. */
static int read_record(struct replay_state *s)
{
	char perr[1024], *text = NULL;
	size_t len = 0;
	int ret;

	if (rd_open(&s->dir, s->a.dir, s->err, sizeof(s->err)) ||
	    rd_read_record(&s->dir, &text, &len, s->err, sizeof(s->err)))
		return -1;
	ret = rdmig_rr_parse_dir(text, len, rd_image_size, &s->dir, &s->rec, perr, sizeof(perr));
	free(text);
	if (ret)
		snprintf(s->err, sizeof(s->err), "%s/record.txt: %s", s->a.dir, perr);
	return ret;
}

/* Order the chunks by the pass that sends them (a counting sort), so that
 * a pass costs its own chunks, not every chunk of every block. */
static int plan_passes(struct replay_state *s)
{
	const struct rdmig_replay_record *r = &s->rec;
	uint64_t total = 0;

	s->base = calloc(r->nblocks, sizeof(*s->base));
	s->first = calloc((size_t)r->nphases + 1, sizeof(*s->first));
	if (!s->base || !s->first)
		return -1;
	for (uint32_t b = 0; b < r->nblocks; b++) {
		s->base[b] = (uint32_t)total; /* 16 TiB in 1 MiB chunks: below 2^32 */
		total += r->blocks[b].nchunks;
		for (uint32_t c = 0; c < r->blocks[b].nchunks; c++)
			s->first[r->blocks[b].send_phase[c] + 1]++;
	}
	for (uint32_t k = 0; k < r->nphases; k++)
		s->first[k + 1] += s->first[k];
	if (!(s->chunk = malloc((total ? (size_t)total : 1) * sizeof(*s->chunk))))
		return -1;
	{
		uint32_t *next = malloc(((size_t)r->nphases + 1) * sizeof(*next));
		if (!next)
			return -1;
		memcpy(next, s->first, ((size_t)r->nphases + 1) * sizeof(*next));
		for (uint32_t b = 0; b < r->nblocks; b++)
			for (uint32_t c = 0; c < r->blocks[b].nchunks; c++)
				s->chunk[next[r->blocks[b].send_phase[c]]++] = s->base[b] + c;
		free(next);
	}
	return 0;
}

/* stream.bin, and a copy of every image, each of the length the record
 * gives: read before the replay connects (replay_dir.h says why). */
static int read_inputs(struct replay_state *s)
{
	uint64_t size;

	s->stream_fd = rd_open_file(&s->dir, "stream.bin", &size, s->err, sizeof(s->err));
	if (s->stream_fd < 0)
		return -1;
	if (size != s->rec.stream_bytes) {
		snprintf(s->err, sizeof(s->err), "'%s/stream.bin' does not have the record's "
			 "bytes=%" PRIu64, s->a.dir, s->rec.stream_bytes);
		return -1;
	}
	s->piece = malloc(RDMIG_MAX_STREAM_CHUNK * 32);
	s->img = calloc(s->rec.nblocks, sizeof(*s->img));
	s->blocks = calloc(s->rec.nblocks, sizeof(*s->blocks));
	if (!s->piece || !s->img || !s->blocks || plan_passes(s)) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < s->rec.nblocks; i++) {
		static uint8_t empty_block; /* a valid address for length-0 blocks */
		const struct rdmig_rr_block *b = &s->rec.blocks[i];
		int ret = rd_read_image(&s->dir, b, &s->img[i], cli_cancelled, s->err,
					sizeof(s->err));
		if (ret)
			return ret;
		/* offset 0: the library takes QEMU's offsets from RAM_BLOCKS_RESULT */
		s->blocks[i] = (struct rdmig_block){b->name, s->img[i] ? s->img[i] : &empty_block,
						    b->length, 0};
	}
	return 0;
}

/* ------------------------------------------------------- the replay -- */

/* Stream bytes up to end, read from stream.bin a piece at a time (a
 * whole number of the library's messages, so the messages are the same
 * as from one buffer). */
static int send_stream_to(struct replay_state *s, uint64_t end)
{
	while (s->stream_pos < end) {
		size_t n = end - s->stream_pos > RDMIG_MAX_STREAM_CHUNK * 32
				   ? RDMIG_MAX_STREAM_CHUNK * 32 : (size_t)(end - s->stream_pos);
		int ret;
		if (rd_pread_all(s->stream_fd, s->piece, n, s->stream_pos)) {
			snprintf(s->err, sizeof(s->err), "cannot read '%s/stream.bin' at %" PRIu64
				 ": %s", s->a.dir, s->stream_pos,
				 errno ? strerror(errno) : "it was cut during the replay");
			s->read_failed = true;
			return -EIO; /* the tool's own: read_failed reports it */
		}
		if ((ret = rdmig_source_write_stream(s->src, s->piece, n)))
			return ret;
		s->stream_pos += n;
	}
	return 0;
}

/* One registration pass: every chunk the plan gives phase k, then
 * REGISTER_FINISHED. */
static int replay_pass(struct replay_state *s, uint32_t k)
{
	uint32_t b = 0;

	for (uint32_t i = s->first[k]; i < s->first[k + 1]; i++) {
		uint32_t c;
		uint64_t off, len;
		int ret;
		while (b + 1 < s->rec.nblocks && s->chunk[i] >= s->base[b + 1])
			b++; /* ascending within a pass */
		c = s->chunk[i] - s->base[b];
		off = (uint64_t)c << RDMIG_CHUNK_SHIFT;
		len = s->rec.blocks[b].length - off < RDMIG_CHUNK_SIZE ? s->rec.blocks[b].length - off
									: RDMIG_CHUNK_SIZE;
		if ((ret = rdmig_source_write(s->src, b, off, len)))
			return ret;
		s->sent_ram += len;
		mig_progress(&s->prog, s->sent_ram);
	}
	return rdmig_source_end_iteration(s->src);
}

static int replay(struct replay_state *s)
{
	int ret;

	cli_phase("connect");
	if ((ret = rdmig_conn_create(&s->a.m.opts, &s->conn)))
		return ret;
	s->t_start = rdmig_monotonic_seconds();
	if ((ret = rdmig_connect(s->conn, s->a.host, s->a.port)))
		return ret;
	cli_phase("migrate");
	if ((ret = rdmig_source_create(s->conn, s->blocks, s->rec.nblocks, &s->src)))
		return ret;
	mig_progress_start(&s->prog, s->a.m.progress, "replay", s->rec.ram_bytes);
	for (s->phase = 0; s->phase < s->rec.nphases; s->phase++) {
		const struct rdmig_rr_phase *ph = &s->rec.phases[s->phase];
		if ((ret = send_stream_to(s, ph->offset)))
			return ret;
		ret = ph->ram_blocks ? rdmig_source_setup(s->src) : replay_pass(s, s->phase);
		if (ret)
			return ret;
	}
	ret = send_stream_to(s, s->rec.stream_bytes);
	s->t_end = rdmig_monotonic_seconds();
	mig_progress_end(&s->prog);
	return ret;
}

/* ------------------------------------------------------------ output -- */

/* The record's blocks, as send and recv list theirs. */
static struct json_object *json_blocks(const struct replay_state *s)
{
	struct json_object *arr = cj_array();

	for (uint32_t i = 0; i < s->rec.nblocks; i++) {
		struct json_object *b = cj_object();

		cj_str(b, "name", s->rec.blocks[i].name);
		cj_str(b, "file", s->rec.blocks[i].file);
		cj_u64(b, "length", s->rec.blocks[i].length);
		cj_push(arr, b);
	}
	return arr;
}

static void print_json(const struct replay_state *s, const struct rdmig_engine_stats *st)
{
	double secs = s->t_end - s->t_start;
	struct json_object *o = cj_summary();

	cj_str(o, "record", s->a.dir);
	cj_str(o, "machine", s->rec.machine);
	mig_json_destination(o, s->a.host, s->a.port, s->conn);
	cj_bool(o, "recorded_pin_all", s->rec.pin_all);
	cj_add(o, "blocks", json_blocks(s));
	cj_u64(o, "phases", s->rec.nphases);
	cj_u64(o, "bytes_total", s->rec.ram_bytes);
	cj_u64(o, "stream_bytes", st->stream_bytes);
	cj_u64(o, "bytes_written", st->bytes_written);
	cj_u64(o, "bytes_compressed", st->bytes_compressed);
	cj_u64(o, "writes_posted", st->writes_posted);
	cj_u64(o, "iterations", st->iterations);
	mig_json_register(o, st);
	cj_fixed(o, "seconds", secs, 6);
	mig_json_conn(o, s->conn);
	cj_summary_print(o);
}

static void print_human(const struct replay_state *s, const struct rdmig_engine_stats *st)
{
	double secs = s->t_end - s->t_start;
	char a[32], b[32], c[32];
	struct rdmig_caps caps;

	rdmig_conn_caps(s->conn, &caps);
	printf("send: replayed %s (%s, %u blocks, %s) into QEMU in %.2f s, %u phases, %s "
	       "registration\n", s->a.dir, s->rec.machine, s->rec.nblocks,
	       size_text(s->rec.ram_bytes, a, sizeof(a)), secs, s->rec.nphases,
	       caps.flags & RDMIG_CAP_PIN_ALL ? "pin-all" : "dynamic");
	printf("send: written %s, compressed %s, stream %s; %" PRIu64 " register round trips "
	       "(%" PRIu64 " ahead of the previous write; p50 %.1f us, p99 %.1f us), %" PRIu64
	       " REGISTER_FINISHED\n",
	       size_text(st->bytes_written, a, sizeof(a)), size_text(st->bytes_compressed, b, sizeof(b)),
	       size_text(st->stream_bytes, c, sizeof(c)), st->register_requests, st->register_ahead,
	       st->register_rtt_p50_us, st->register_rtt_p99_us, st->iterations);
	mig_print_conn("send", s->conn);
}

static void report_failure(struct replay_state *s, int ret)
{
	const char *lib = s->src ? rdmig_source_errmsg(s->src)
			  : s->conn ? rdmig_conn_errmsg(s->conn) : rdmig_strerror(ret);
	char msg[1600];

	if (s->read_failed) {
		cli_fail("send", s->err);
		return;
	}
	if (s->src && s->phase < s->rec.nphases)
		snprintf(msg, sizeof(msg), "phase %u (%s at stream offset %" PRIu64 "): %s", s->phase,
			 s->rec.phases[s->phase].ram_blocks ? "RAM_BLOCKS_REQUEST" : "registration",
			 s->rec.phases[s->phase].offset, lib);
	else
		snprintf(msg, sizeof(msg), "%s", lib);
	/* QEMU aborts with an ERROR, or (a stream it cannot load) by exiting */
	if (ret == RDMIG_EPEER || ret == RDMIG_EDISCONNECTED || ret == RDMIG_ECOMPLETION)
		strncat(msg, " (QEMU gave up on the migration; its own log says why)",
			sizeof(msg) - strlen(msg) - 1);
	cli_fail_lib("send", ret, msg);
}

/* SIGINT or SIGTERM: tell QEMU (it then fails the incoming migration
 * instead of waiting for more), close, exit with 128 + the signal. */
static int replay_cancelled(struct replay_state *s)
{
	char msg[160];
	bool told;

	told = cli_cancel_tell_peer(s->conn);
	snprintf(msg, sizeof(msg), "interrupted by %s in phase %u: replay aborted%s",
		 cli_cancel_name(), s->phase, told ? "; QEMU was told" : "");
	cli_fail_code("send", "interrupted", msg);
	return cli_cancel_status();
}

static void cleanup(struct replay_state *s)
{
	rdmig_source_destroy(s->src);
	rdmig_conn_destroy(s->conn); /* flushes and disconnects: QEMU then finishes */
	for (uint32_t i = 0; s->img && i < s->rec.nblocks; i++)
		rd_free_image(s->img[i], s->rec.blocks[i].length);
	if (s->stream_fd >= 0)
		close(s->stream_fd);
	rd_close(&s->dir);
	free(s->img);
	free(s->blocks);
	free(s->piece);
	free(s->first);
	free(s->chunk);
	free(s->base);
	rdmig_rr_free(&s->rec);
}

int cmd_send_replay(int argc, char **argv)
{
	struct replay_state s;
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	int ret;

	cli_run_begin("send", "qemu-replay", "send --qemu-replay", argc, argv);
	memset(&s, 0, sizeof(s));
	s.dir.fd = s.stream_fd = -1;
	if ((ret = parse_replay_args(argc, argv, &s.a)))
		return ret == 1 ? 0 : ret;
	if (cli_cancel_install(&s.a.m.opts)) {
		cli_fail("send", "cannot catch SIGINT and SIGTERM");
		return 1;
	}
	cli_phase("setup");
	if (read_record(&s) || (ret = read_inputs(&s))) {
		if (ret == -2) {
			cli_fail("send", "interrupted while reading the record's images");
			ret = cli_cancel_status();
		} else {
			cli_fail("send", s.err);
			ret = 1;
		}
		cleanup(&s);
		return ret;
	}
	if (s.rec.pin_all != s.a.m.opts.pin_all)
		fprintf(stderr, "rdmig: send: note: the record used %s registration, this replay "
				"uses %s\n", s.rec.pin_all ? "pin-all" : "dynamic",
			s.a.m.opts.pin_all ? "pin-all" : "dynamic");
	if ((ret = replay(&s))) {
		mig_progress_end(&s.prog);
		ret = cli_cancelled() ? replay_cancelled(&s) : (report_failure(&s, ret), 1);
		cleanup(&s);
		return ret;
	}
	rdmig_source_stats(s.src, &st);
	if (s.a.m.json)
		print_json(&s, &st);
	else
		print_human(&s, &st);
	cleanup(&s);
	return 0;
}
