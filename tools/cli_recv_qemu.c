/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv_qemu.c - `rdmig recv --qemu`: the destination of a real QEMU's
 * RDMA migration (`migrate rdma:HOST:PORT` on the source).
 *
 *   QEMU_FILE ... (stream head: the RAM blocks)   -> allocate them
 *   RAM_BLOCKS_REQUEST (BLOCKS_NEEDED)            -> hand them over
 *   REGISTER / COMPRESS ... REGISTER_FINISHED     -> served by the library,
 *                                                    which reports them (record)
 *   QEMU_FILE ... (the next iteration, device state, QEMU_VM_EOF, vmdesc)
 *   disconnect                                    -> the end, if EOF came
 *
 * Afterwards every block goes to DIR/<safe name>.img, the stream to
 * DIR/stream.bin and what happened when to DIR/record.txt (the format is in
 * docs/qemu-stream.md), enough to replay the migration later.  A migration
 * that fails or is interrupted (SIGINT, SIGTERM) leaves only record.txt,
 * whose last line says why ("end failed ...").
 *
 * QEMU's source addresses REGISTER_REQUEST and COMPRESS by its own RAM
 * offsets (ram_addr_t), which its stream does not carry: with dynamic
 * registration they come from the source's `info ramblock`, pasted into a
 * file (--ramblocks) or asked over its QMP socket (--source-qmp, which
 * also gives QEMU's downtime after the end).  With rdma-pin-all they are
 * never used.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "recv_qemu.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmig recv --qemu --listen ADDR:PORT --out DIR\n"
		   "                  [--ramblocks FILE | --source-qmp SOCKET]\n"
		   "                  [--pin-all] [--inline auto|0|N] [--json] [--timeout S]\n"
		   "                  [--max-total SIZE] [--allow ADDR[/N]] [--force] [--no-sync]\n"
		   "                  [--chunk-size SIZE] [--progress auto|human|json|none] [-v]\n"
		   "Be the destination of a QEMU RDMA migration (QMP: migrate rdma:ADDR:PORT).\n"
		   "--ramblocks FILE: the source's 'info ramblock' (HMP); needed unless the source\n"
		   "  uses rdma-pin-all (with --pin-all here) or has a single RAM block, because\n"
		   "  QEMU registers memory by RAM offsets its stream does not carry.\n"
		   "--source-qmp SOCKET: ask the source QEMU's QMP unix socket instead, before\n"
		   "  listening; after the end it also gives QEMU's downtime and total time.\n"
		   "--progress M: on stderr while it runs: human (a line), json (JSON lines:\n"
		   "  the RAM registered or zeroed so far), none; auto (default): human on a\n"
		   "  terminal, none otherwise.\n"
		   "--max-total bounds the RAM the source may announce and the stream.bin it\n"
		   "  sends, together (suffixes K, M, G, T; default: the smaller of MemAvailable\n"
		   "  and DIR's free space).  --force: accept\n"
		   "  a DIR others may write into and replace existing outputs (by rename).\n"
		   "--no-sync: do not flush the outputs to stable storage (scratch use: after a\n"
		   "  power cut a named output may be short, empty or gone).\n"
		   "--timeout S: give up when the source stays silent\n"
		   "  this long (0: never; default %d); given, it also bounds the wait for a source.\n"
		   "--idle-timeout S: end a source that moves no data (stream bytes,\n"
		   "  registrations, COMPRESS) this long (0: never; default %d).\n"
		   "--chunk-size SIZE: QEMU's x-rdma-chunk-size, a power of two from 1M to 1G\n"
		   "  (default 1M, as QEMU's); both sides must use the same.\n"
		   "--allow ADDR[/N]: accept sources from this address or prefix only (repeat for\n"
		   "  more); others are rejected before anything is registered.\n"
		   "DIR receives <block>.img per RAM block, stream.bin and " QEMU_REC_FILE
		   "; after a\n"
		   "  failure or SIGINT/SIGTERM (exit status 128 + signal) only " QEMU_REC_FILE
		   ".\n"
		   "--json: one JSON object on stdout instead of the summary.  -v, --verbose:\n"
		   "  the library's notes on stderr; -vv adds its debug log.  -h, --help: this.\n",
		MIG_DEFAULT_TIMEOUT_S, RECV_DEFAULT_IDLE_TIMEOUT_S);
}

/* ------------------------------------------------------------ options -- */

static int parse_args(int argc, char **argv, struct rq_state *s)
{
	static const struct option longopts[] = {
		{"qemu", no_argument, NULL, 'Q'}, {"ramblocks", required_argument, NULL, 'r'},
		{"source-qmp", required_argument, NULL, 'q'}, MIG_PROGRESS_OPTION,
		RECV_OPTIONS, {NULL, 0, NULL, 0}};
	int c, r;

	recv_args_init(&s->a);
	s->a.max_total_nonzero = true;
	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return 1;
	}
	while ((c = getopt_long(argc, argv, ":Qr:" RECV_SHORT, longopts, NULL)) != -1) {
		if (c == 'Q')
			continue; /* the command table routes on it; nothing to do here */
		if (c == 'r')
			s->ramblocks = optarg;
		else if (c == 'q')
			s->source_qmp = optarg;
		else if ((r = recv_args_option(&s->a, c, optarg, argv, usage)))
			return r;
	}
	if (s->ramblocks && s->source_qmp)
		return cli_usage("--ramblocks and --source-qmp both give the RAM offsets: one of them");
	return recv_args_finish(&s->a, argc, argv);
}

/* ------------------------------------------------------------- files -- */

/* A failed or interrupted migration: remove the stream and the images this
 * run created; record.txt stays and says why. */
static void remove_outputs(struct rq_state *s)
{
	recv_dir_discard_files(&s->out);
}

/* Safe, distinct file names (imgstream's rules), before anything is
 * written; the record names each block's file, even when one is taken. */
static int name_files(struct rq_state *s)
{
	uint32_t n = s->qs.count;
	struct rdmig_imgs_block *tmp = calloc(n, sizeof(*tmp));
	int ret = -1;

	if (tmp) {
		for (uint32_t i = 0; i < n; i++)
			memcpy(tmp[i].name, s->qs.blocks[i].name, sizeof(tmp[i].name));
		ret = recv_dir_name(&s->out, tmp, n, s->err, sizeof(s->err));
	} else {
		snprintf(s->err, sizeof(s->err), "out of memory for %u file names", n);
	}
	free(tmp);
	for (uint32_t i = 0; i < n; i++)
		s->record.blocks[i].file = recv_dir_file(&s->out, i);
	return ret;
}

/* The block list is complete: zeroed memory for every block, in the
 * source's order.  It goes to the library when the source asks for it. */
static int alloc_blocks(struct rq_state *s)
{
	uint32_t n = s->qs.count;

	if (qemu_rec_open_blocks(&s->record, s->err, sizeof(s->err)))
		return -1;
	s->rb = calloc(n, sizeof(*s->rb));
	s->blocks = calloc(n, sizeof(*s->blocks));
	if (!s->rb || !s->blocks) {
		snprintf(s->err, sizeof(s->err), "out of memory for %u blocks", n);
		return -1;
	}
	if (name_files(s))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct rdmig_qs_block *q = &s->qs.blocks[i];
		struct rq_block *b = &s->rb[i];
		void *p = mmap(NULL, (size_t)q->length, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED) {
			snprintf(s->err, sizeof(s->err), "cannot allocate %" PRIu64 " bytes for RAM "
				 "block '%s': %s", q->length, q->name, strerror(errno));
			return -1;
		}
		b->mem = p;
		if (qemu_rec_track_block(&s->record, i, s->err, sizeof(s->err)))
			return -1;
		s->blocks[i] = (struct rdmig_block){.name = q->name, .host = p, .length = q->length};
	}
	if (s->a.m.verbose)
		fprintf(stderr, "recv: QEMU %s: %u RAM blocks, %" PRIu64 " bytes (stream offset %"
			PRIu64 ")\n", s->qs.machine[0] ? s->qs.machine : "(no configuration)", n,
			s->qs.total, s->qs.blocks_end);
	mig_progress_start(&s->prog, s->a.m.progress, "recv", s->qs.total);
	return 0;
}

/* Where each block lies in the source's RAM offset space (the recorder
 * matches the source's rows): the library checks REGISTER_REQUEST
 * addresses and COMPRESS ranges against these. */
static int resolve_offsets(struct rq_state *s)
{
	if (qemu_rec_resolve_offsets(&s->record, s->pin_all, s->err, sizeof(s->err)))
		return -1;
	for (uint32_t i = 0; i < s->qs.count; i++)
		if (s->record.blocks[i].have_offset)
			s->blocks[i].offset = s->record.blocks[i].offset;
	return 0;
}

/* What the recorder reads of the migration, SECONDS after the source
 * connected (now, or at the end). */
static struct qemu_rec_view record_view(const struct rq_state *s, double seconds)
{
	return (struct qemu_rec_view){.conn = s->conn, .dest = s->dest, .seconds = seconds,
				      .stream_bytes = s->stream_bytes, .pin_all = s->pin_all};
}

static struct qemu_rec_view record_view_now(const struct rq_state *s)
{
	return record_view(s, rdmig_monotonic_seconds() - s->t_start);
}

/* ------------------------------------------------------------ events -- */

/* Stream bytes: parsed first, so that only valid ones reach stream.bin. */
static int on_stream(struct rq_state *s, const struct rdmig_event *ev)
{
	char note[400];
	int got;

	if (ev->len > RQ_MAX_STREAM - s->stream_bytes) {
		snprintf(s->err, sizeof(s->err), "the source's stream passed %llu bytes; QEMU's RDMA "
			 "stream carries device state only", (unsigned long long)RQ_MAX_STREAM);
		return -1;
	}
	if ((got = rdmig_qs_feed(&s->qs, ev->data, ev->len)) < 0) {
		snprintf(s->err, sizeof(s->err), "the source's stream: %s%s",
			 rdmig_qs_errmsg(&s->qs),
			 s->qs.over_limit ? recv_limit_note(&s->a, note, sizeof(note)) : "");
		return -1;
	}
	/* stream.bin is written to DIR too: it counts with the RAM (its total
	 * once the stream has listed the blocks) against --max-total, which
	 * by default is at most DIR's free space */
	if (!recv_stream_fits(s->a.max_total, rdmig_qs_blocks_done(&s->qs) ? s->qs.total : 0,
			      s->stream_bytes, ev->len)) {
		snprintf(s->err, sizeof(s->err), "the source's RAM and stream pass %llu bytes%s",
			 (unsigned long long)s->a.max_total,
			 recv_limit_note(&s->a, note, sizeof(note)));
		return -1;
	}
	if (recv_dir_append_stream(&s->out, ev->data, ev->len, s->err, sizeof(s->err)))
		return -1;
	s->stream_bytes += ev->len;
	return (got & RDMIG_QS_EV_BLOCKS) ? alloc_blocks(s) : 0;
}

/* Can we pin the RAM the source announced?  Checked before the blocks go
 * to the library: a refusal reaches QEMU as ERROR before any data moves. */
static int check_memlock(struct rq_state *s)
{
	struct rdmig_pin_need need;

	if (cli_memlock_need(rdmig_conn_device(s->conn), s->pin_all, 0, s->blocks, s->qs.count,
			     &need, s->err, sizeof(s->err)))
		return -1;
	return cli_memlock_check("recv", &need, s->err, sizeof(s->err)) < 0 ? -1 : 0;
}

static int on_blocks_needed(struct rq_state *s)
{
	struct qemu_rec_view v;
	int ret;

	if (!rdmig_qs_blocks_done(&s->qs)) {
		snprintf(s->err, sizeof(s->err), "the source asked for RAM blocks after %" PRIu64
			 " stream bytes, before its stream listed them", s->stream_bytes);
		return -1;
	}
	if (resolve_offsets(s) || check_memlock(s))
		return -1;
	v = record_view_now(s);
	if (qemu_rec_add_phase(&s->record, RDMIG_QREC_RAM_BLOCKS, &v, s->err, sizeof(s->err)))
		return -1;
	if ((ret = rdmig_dest_set_blocks(s->dest, s->blocks, s->qs.count)))
		return ret;
	s->blocks_set = 1;
	if (s->a.m.verbose)
		fprintf(stderr, "recv: RAM_BLOCKS_REQUEST at stream offset %" PRIu64 "\n",
			s->stream_bytes);
	return 0;
}

static int on_iteration(struct rq_state *s)
{
	struct qemu_rec_view v = record_view_now(s);
	const struct rdmig_qrec_phase *pass;

	if (qemu_rec_end_pass(&s->record, &v, s->err, sizeof(s->err)))
		return -1;
	pass = &s->record.phases[s->record.nphases - 1];
	if (s->a.m.verbose)
		fprintf(stderr, "recv: REGISTER_FINISHED at stream offset %" PRIu64 ": %" PRIu64
			" registrations, %" PRIu64 " COMPRESS\n", s->stream_bytes,
			pass->register_requests, pass->compress);
	return 0;
}

/* A registration or COMPRESS: the record's chunks, and the progress, which
 * counts the RAM covered (the writes themselves are invisible to this
 * side, and QEMU registers a chunk before it writes into it). */
static int on_range(struct rq_state *s, const struct rdmig_event *ev)
{
	uint64_t fresh;

	if (qemu_rec_note_range(&s->record, ev->type, ev->data, &fresh, s->err, sizeof(s->err)))
		return -1;
	/* at the total, later passes add nothing: one line there, not one
	 * per event (mig_progress does not hold back a line at the total) */
	if (fresh || s->record.bytes_covered < s->qs.total)
		mig_progress(&s->prog, s->record.bytes_covered);
	return 0;
}

/* Run the destination until the source disconnects. */
static int receive(struct rq_state *s)
{
	struct rdmig_event ev;
	int ret;

	for (;;) {
		if ((ret = rdmig_dest_next(s->dest, &ev)))
			return ret;
		switch (ev.type) {
		case RDMIG_EV_STREAM:
			ret = on_stream(s, &ev);
			break;
		case RDMIG_EV_BLOCKS_NEEDED:
			ret = on_blocks_needed(s);
			break;
		case RDMIG_EV_ITERATION_DONE:
			ret = on_iteration(s);
			break;
		case RDMIG_EV_REGISTERED:
		case RDMIG_EV_COMPRESSED:
			ret = on_range(s, &ev);
			break;
		case RDMIG_EV_END:
			s->t_end = rdmig_monotonic_seconds();
			if (rdmig_qs_finish(&s->qs)) {
				snprintf(s->err, sizeof(s->err),
					 "the source disconnected before the end "
					 "of its stream: %s",
					 rdmig_qs_errmsg(&s->qs));
				return -1;
			}
			if (!s->blocks_set) {
				snprintf(s->err, sizeof(s->err), "the stream ended, but the source never "
					 "asked for the RAM blocks (RAM_BLOCKS_REQUEST)");
				return -1;
			}
			/* a source that completes has sent all of its RAM,
			 * whatever this side could see of it */
			if (s->record.bytes_covered < s->qs.total)
				mig_progress(&s->prog, s->qs.total);
			return 0;
		default:
			snprintf(s->err, sizeof(s->err), "unknown event %d from the library", ev.type);
			return -1;
		}
		if (ret)
			return ret;
	}
}

/* ------------------------------------------------------ after the end -- */

/* One image, sparse (zero chunks are holes), under its temporary name. */
static int write_image(struct rq_state *s, uint32_t i)
{
	const uint8_t *mem = s->rb[i].mem;
	struct out_file *img = recv_dir_output(&s->out, i);
	const char *file = recv_dir_file(&s->out, i);
	struct rdmig_qrec_chunks *ch = &s->record.blocks[i].ch;
	uint64_t len = s->qs.blocks[i].length;

	if (out_create(&s->a.dir, img, file, s->err, sizeof(s->err)))
		return -1;
	/* the record's chunks are RDMIG_CHUNK_SIZE (1 MiB) too */
	for (uint32_t c = 0; c < ch->nchunks; c++) {
		uint64_t off = (uint64_t)c << RDMIG_CHUNK_SHIFT;
		size_t n = (size_t)rdmig_chunk_len(len, c, RDMIG_CHUNK_SIZE);
		if (cli_cancelled()) {
			snprintf(s->err, sizeof(s->err), "interrupted by %s while writing the images",
				 cli_cancel_name());
			return -1;
		}
		ch->nonzero[c] = !rdmig_is_zero(mem + off, n);
		if (ch->nonzero[c] && out_write_chunk(img, off, mem + off, n))
			goto fail;
	}
	/* parked until it is named: 4096 images need no 4096 descriptors */
	if (!out_set_size(img, len) && !out_park(img))
		return 0;
fail:
	snprintf(s->err, sizeof(s->err), "cannot write %.400s/%s: %s", s->a.out, file,
		 strerror(errno));
	return -1;
}

/* The images, then stream.bin and the images under their real names. */
static int write_images(struct rq_state *s)
{
	for (uint32_t i = 0; i < s->qs.count; i++)
		if (write_image(s, i))
			return -1;
	return recv_dir_commit(&s->out, s->err, sizeof(s->err));
}

/* ------------------------------------------------------------- main -- */

static int accept_one(struct rq_state *s)
{
	struct rdmig_caps caps;
	int ret;

	if ((ret = recv_accept(&s->a, &s->l, &s->conn)))
		return ret;
	cli_phase("migrate");
	s->t_start = rdmig_monotonic_seconds();
	rdmig_conn_caps(s->conn, &caps);
	s->pin_all = (caps.flags & RDMIG_CAP_PIN_ALL) != 0;
	if ((ret = rdmig_dest_create(s->conn, &s->dest)))
		return ret;
	/* the record's touched chunks; with PIN_ALL QEMU registers every
	 * block whole at RAM_BLOCKS_REQUEST and no chunk is tracked */
	return s->pin_all ? 0 : rdmig_dest_set_events(s->dest, RDMIG_DEST_REPORT_REGISTER |
							   RDMIG_DEST_REPORT_COMPRESS);
}

static void cleanup(struct rq_state *s)
{
	rdmig_dest_destroy(s->dest); /* deregisters: before the memory goes */
	rdmig_conn_destroy(s->conn);
	rdmig_listener_destroy(s->l);
	for (uint32_t i = 0; s->rb && i < s->qs.count; i++)
		if (s->rb[i].mem)
			munmap(s->rb[i].mem, (size_t)s->qs.blocks[i].length);
	free(s->rb);
	free(s->blocks);
	recv_dir_free(&s->out);
	qemu_rec_free(&s->record);
	rdmig_qs_free(&s->qs); /* after the recorder, which reads it */
	out_dir_close(&s->a.dir); /* the outputs were committed or discarded */
}

/* DIR/record.txt, written on failure too, as far as the migration got.
 * SIGINT or SIGTERM stops a long one, kept as far as it got; after a
 * signal (the failure being the signal) only a further one does: the
 * cancel pipe is emptied first.  A failure's own message is already in
 * s->err: a record that fails then only says so on stderr. */
static int write_record(struct rq_state *s, const char *failure)
{
	struct qemu_rec_view v = record_view(s, s->t_end - s->t_start);
	char err[sizeof(s->err)];

	if (cli_cancelled())
		cli_cancel_rearm();
	if (!qemu_rec_write(&s->record, &v, &s->a.dir, &s->a.m.opts, failure, err, sizeof(err)))
		return 0;
	if (!failure)
		snprintf(s->err, sizeof(s->err), "%s", err);
	else
		fprintf(stderr, "recv: %s\n", err);
	return -1;
}

/* The migration failed or was interrupted: tell QEMU (best effort), record
 * why, remove the stream and images, and say it once. */
static int fail_migration(struct rq_state *s, int ret)
{
	char why[sizeof(s->err) + 96];
	const char *code = "failed";

	if (cli_cancelled()) {
		cli_cancel_tell_peer(s->conn);
		snprintf(why, sizeof(why), "interrupted by %s %s", cli_cancel_name(),
			 s->conn ? "during the migration" : "while waiting for a source");
		code = "interrupted";
	} else {
		snprintf(why, sizeof(why), "%s", recv_errmsg(s->err, s->dest, s->conn, s->l, ret));
		if (!s->err[0] && ret < -1)
			code = rdmig_err_name(ret);
		if (s->conn)
			rdmig_send_error(s->conn);
	}
	write_record(s, why);
	remove_outputs(s);
	cli_fail_code("recv", code, why);
	return cli_cancelled() ? cli_cancel_status() : 1;
}

int cmd_recv_qemu(int argc, char **argv)
{
	struct rq_state s;
	char note[600];
	int ret;

	static const char *const fixed[] = {"stream.bin", QEMU_REC_FILE, NULL};

	cli_run_begin("recv", "qemu", "recv --qemu", argc, argv);
	memset(&s, 0, sizeof(s));
	qemu_rec_init(&s.record, &s.qs);
	recv_dir_init(&s.out, &s.a.dir, &(struct recv_dir_hooks){0}); /* no sink: written here */
	if ((ret = parse_args(argc, argv, &s)))
		return ret == 1 ? 0 : ret;
	cli_phase("setup");
	if (recv_prepare(&s.a.m.opts, s.err, sizeof(s.err)) ||
	    (s.ramblocks &&
	     qemu_rec_load_ramblocks(&s.record, s.ramblocks, s.err, sizeof(s.err))) ||
	    (s.source_qmp &&
	     qemu_rec_qmp_ramblocks(&s.record, s.source_qmp, s.err, sizeof(s.err))) ||
	    recv_open_out(&s.a, fixed, s.err, sizeof(s.err))) {
		ret = cli_fail("recv", s.err);
		out_dir_remove_made(&s.a.dir);
		cleanup(&s);
		return ret;
	}
	if (s.source_qmp && s.a.m.verbose)
		fprintf(stderr, "recv: the source's 'info ramblock' (QMP %s): %zu RAM blocks\n",
			s.source_qmp, s.record.nrows);
	rdmig_qs_init(&s.qs, s.a.max_total);
	cli_phase("accept");
	if ((ret = accept_one(&s)) || (ret = receive(&s))) {
		mig_progress_end(&s.prog);
		ret = fail_migration(&s, ret);
		cleanup(&s);
		return ret;
	}
	mig_progress_end(&s.prog);
	qemu_rec_final_stats(&s.record, s.dest);
	if (s.source_qmp && qemu_rec_qmp_times(&s.record, s.source_qmp, note, sizeof(note)))
		fprintf(stderr, "rdmig: recv: note: %s\n", note);
	ret = 0;
	cli_phase("write");
	if (write_images(&s) || write_record(&s, NULL)) {
		write_record(&s, s.err);
		remove_outputs(&s);
		ret = cli_fail_code("recv", cli_cancelled() ? "interrupted" : "failed", s.err);
		if (cli_cancelled())
			ret = cli_cancel_status();
	} else {
		if (s.a.m.json)
			rq_print_json(&s);
		else
			rq_print_human(&s);
	}
	cleanup(&s);
	return ret;
}
