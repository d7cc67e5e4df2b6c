/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv.c - `rdmig recv`: accept one migration from `rdmig send`, like
 * QEMU's destination: the stream header says which blocks to allocate, the
 * source writes into them with RDMA, the trailer carries their SHA-256.
 * Afterwards every block is verified and written to DIR/<name>.img; the
 * raw stream is kept in DIR/stream.bin.  A migration that fails or is
 * interrupted (SIGINT, SIGTERM) leaves none of these files behind.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"
#include "cli_qemu.h"
#include "imgstream.h"

/* The destination memory of one block and what became of it. */
struct recv_block {
	uint8_t *mem;   /* NULL for an empty block */
	char file[IMGS_FILE_NAME];
	struct out_file img; /* DIR/file while it is written (outdir.h) */
	uint8_t sha256[SHA256_DIGEST_SIZE];
	int ok;
};

/* Progress while the source writes: RDMA writes are invisible to us and
 * rdmig_dest_next blocks, so a thread estimates what has landed from the
 * blocks' resident pages (the destination pins a chunk just before the
 * source writes it).  It only reads our own mappings. */
struct landed_watch {
	pthread_t thread;
	int running;
	atomic_int stop;
	const struct recv_state *s;
	struct mig_progress prog;
};

struct recv_state {
	struct recv_args a;
	struct imgs_parser ps;
	struct recv_block *rb;
	struct rdmig_block *blocks;
	struct out_file stream; /* DIR/stream.bin, from the first valid bytes on */
	struct rdmig_listener *l;
	struct rdmig_conn *conn;
	struct rdmig_dest *dest;
	struct rdmig_engine_stats st;
	struct landed_watch watch;
	int blocks_set, verified;
	double t_start, t_end, verify_seconds, write_seconds;
	char err[768];
};

static void recv_usage(FILE *f)
{
	fprintf(f, "usage: rdmig recv --listen ADDR:PORT --out DIR [--pin-all] [--inline auto|0|N]\n"
		   "                  [--json] [--timeout S] [--max-total SIZE] [--allow ADDR[/N]]\n"
		   "                  [--force] [--chunk-size SIZE] [-v]\n"
		   "ADDR: a name, an IPv4 address, [IPv6] or empty for any ([::]:4444, :4444).\n"
		   "Writes DIR/<block>.img per block and the raw stream to DIR/stream.bin, after\n"
		   "a verified migration only: a failed or interrupted one leaves neither.\n"
		   "  --pin-all       let the source have all memory registered up front\n"
		   "  --inline        inline size of control messages (default auto)\n"
		   "  --chunk-size SIZE  the source's registration chunk (1M..1G, a power of\n"
		   "                  two; default 1M); it must match the source's\n"
		   "  --timeout S     give up when the source stays silent this long (0: never;\n"
		   "                  default %d); given, it also bounds the wait for a source\n"
		   "  --max-total N   most bytes a source may ask for (suffixes K, M, G, T;\n"
		   "                  default: the smaller of MemAvailable and DIR's free space)\n"
		   "  --force         accept a DIR others may write into, and replace outputs that\n"
		   "                  exist (by rename; without it recv refuses to start)\n"
		   "  --allow A[/N]   accept sources from this address or prefix only (repeat for\n"
		   "                  more); others are rejected before anything is registered\n"
		   "  --json          one JSON object on stdout instead of the summary\n"
		   "  -v, -vv         the library's notes / debug log on stderr\n"
		   "SIGINT or SIGTERM aborts the migration: the source is told, and the exit\n"
		   "status is 128 + the signal.\n", MIG_DEFAULT_TIMEOUT_S);
}

static int parse_recv_args(int argc, char **argv, struct recv_args *a)
{
	static const struct option longopts[] = {RECV_OPTIONS, {NULL, 0, NULL, 0}};
	int c, r;

	recv_args_init(a);
	while ((c = getopt_long(argc, argv, RECV_SHORT, longopts, NULL)) != -1)
		if ((r = recv_args_option(a, c, optarg, recv_usage)))
			return r;
	return recv_args_finish(a, argc, argv);
}

/* A failed or interrupted migration: remove every file this run created
 * (what was in DIR before stays untouched). */
static void remove_outputs(struct recv_state *s)
{
	out_discard(&s->a.dir, &s->stream);
	for (uint32_t i = 0; s->rb && i < s->ps.count; i++)
		out_discard(&s->a.dir, &s->rb[i].img);
}

/* --------------------------------------------------- landed estimate -- */

static uint64_t resident_bytes(const struct recv_state *s)
{
	static unsigned char vec[4096];
	uint64_t bytes = 0;
	long page = sysconf(_SC_PAGESIZE);

	for (uint32_t b = 0; b < s->ps.count; b++) {
		uint64_t len = s->ps.blocks[b].length;
		for (uint64_t off = 0; s->rb[b].mem && off < len; off += sizeof(vec) * (uint64_t)page) {
			uint64_t n = len - off < sizeof(vec) * (uint64_t)page ? len - off
									  : sizeof(vec) * (uint64_t)page;
			size_t pages = (size_t)((n + (uint64_t)page - 1) / (uint64_t)page);
			if (mincore(s->rb[b].mem + off, (size_t)n, vec))
				return bytes;
			for (size_t i = 0; i < pages; i++)
				bytes += (vec[i] & 1) ? (uint64_t)page : 0;
		}
	}
	return bytes > s->ps.total ? s->ps.total : bytes;
}

static void *watch_main(void *arg)
{
	struct landed_watch *w = arg;

	while (!atomic_load(&w->stop)) {
		struct timespec ts = {0, 200 * 1000 * 1000};
		mig_progress(&w->prog, resident_bytes(w->s));
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void watch_start(struct recv_state *s)
{
	struct landed_watch *w = &s->watch;
	struct rdmig_caps caps;

	/* with PIN_ALL everything is resident at once: nothing to estimate */
	rdmig_conn_caps(s->conn, &caps);
	if (!isatty(STDERR_FILENO) || (caps.flags & RDMIG_CAP_PIN_ALL))
		return;
	w->s = s;
	atomic_store(&w->stop, 0);
	mig_progress_start(&w->prog, "recv (~landed)", s->ps.total);
	/* the thread starts with SIGINT/SIGTERM blocked: they must interrupt
	 * the main thread's waits, not this one's sleep */
	sigset_t saved;
	cli_cancel_mask(SIG_BLOCK, &saved);
	w->running = pthread_create(&w->thread, NULL, watch_main, w) == 0;
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

static void watch_stop(struct recv_state *s)
{
	struct landed_watch *w = &s->watch;

	if (!w->running)
		return;
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
	w->running = 0;
	mig_progress_end(&w->prog);
}

/* ------------------------------------------------------------ events -- */

/* Choose every block's output file name now, before anything is written. */
static int name_files(struct recv_state *s)
{
	char (*names)[IMGS_FILE_NAME] = calloc(s->ps.count, sizeof(*names));

	if (!names || imgs_file_names(s->ps.blocks, s->ps.count, ".img", names)) {
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
	cli_memlock_need(caps.flags & RDMIG_CAP_PIN_ALL, s->blocks, s->ps.count, &need);
	return cli_memlock_check("recv", rdmig_conn_device(s->conn), &need, s->err,
				 sizeof(s->err)) < 0 ? -1 : 0;
}

/* The header is complete: allocate zeroed memory for every block, in the
 * source's order, and hand it to the library. */
static int alloc_blocks(struct recv_state *s)
{
	static uint8_t empty_block; /* a valid address for length-0 blocks */
	uint32_t n = s->ps.count;
	int ret;

	s->rb = calloc(n, sizeof(*s->rb));
	s->blocks = calloc(n, sizeof(*s->blocks));
	if (!s->rb || !s->blocks) {
		snprintf(s->err, sizeof(s->err), "out of memory for %u blocks", n);
		return -1;
	}
	if (name_files(s))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct imgs_block *d = &s->ps.blocks[i];
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
	if (check_memlock(s))
		return -1;
	if ((ret = rdmig_dest_set_blocks(s->dest, s->blocks, n)))
		return ret;
	s->blocks_set = 1;
	watch_start(s);
	return 0;
}

/* Stream bytes: parsed first, so that only valid ones reach stream.bin. */
static int on_stream(struct recv_state *s, const struct rdmig_event *ev)
{
	char note[400];
	int got;

	if ((got = imgs_feed(&s->ps, ev->data, ev->len)) < 0) {
		snprintf(s->err, sizeof(s->err), "the source's stream is not an rdmig image stream: "
			 "%s%s", imgs_errmsg(&s->ps), s->ps.over_limit ?
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
	return (got & IMGS_EV_HEADER) ? alloc_blocks(s) : 0;
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
			if (!imgs_header_done(&s->ps)) {
				snprintf(s->err, sizeof(s->err), "the source asked for RAM blocks before "
					 "describing them");
				return -1;
			}
			break; /* already given when the header completed */
		case RDMIG_EV_ITERATION_DONE:
			break; /* counted by the library (stats.iterations) */
		case RDMIG_EV_END:
			s->t_end = mig_now();
			if (imgs_finish(&s->ps)) {
				snprintf(s->err, sizeof(s->err), "the source disconnected before the end "
					 "of its stream (%s)", imgs_errmsg(&s->ps));
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

static void verify(struct recv_state *s)
{
	struct mig_progress prog;
	uint64_t done = 0;
	double t0 = mig_now();

	s->verified = 1;
	mig_progress_start(&prog, "verify", s->ps.total);
	for (uint32_t i = 0; i < s->ps.count; i++) {
		uint64_t len = s->ps.blocks[i].length;
		struct sha256 h;

		sha256_init(&h);
		for (uint64_t off = 0; off < len && !cli_cancelled(); off += RDMIG_CHUNK_SIZE) {
			uint64_t n = len - off < RDMIG_CHUNK_SIZE ? len - off : RDMIG_CHUNK_SIZE;
			sha256_update(&h, s->rb[i].mem + off, (size_t)n);
			mig_progress(&prog, done += n);
		}
		sha256_final(&h, s->rb[i].sha256);
		s->rb[i].ok = !memcmp(s->rb[i].sha256, s->ps.blocks[i].sha256, SHA256_DIGEST_SIZE);
		s->verified &= s->rb[i].ok;
	}
	mig_progress_end(&prog);
	s->verify_seconds = mig_now() - t0;
}

/* One image, sparse (zero chunks are holes), under its temporary name. */
static int write_image(struct recv_state *s, uint32_t i, struct mig_progress *prog,
		       uint64_t *done)
{
	struct out_file *f = &s->rb[i].img;
	uint64_t len = s->ps.blocks[i].length;

	if (out_create(&s->a.dir, f, s->rb[i].file, s->err, sizeof(s->err)))
		return -1;
	for (uint64_t off = 0; off < len; off += RDMIG_CHUNK_SIZE) {
		uint64_t n = len - off < RDMIG_CHUNK_SIZE ? len - off : RDMIG_CHUNK_SIZE;
		if (cli_cancelled())
			return -1;
		if (out_write_chunk(f, off, s->rb[i].mem + off, (size_t)n))
			goto fail;
		mig_progress(prog, *done += n);
	}
	if (!out_set_size(f, len))
		return 0;
fail:
	snprintf(s->err, sizeof(s->err), "cannot write %s/%s: %s", s->a.out, s->rb[i].file,
		 strerror(errno));
	return -1;
}

/* The verified images, then every output under its real name. */
static int write_images(struct recv_state *s)
{
	struct mig_progress prog;
	uint64_t done = 0;
	double t0 = mig_now();

	mig_progress_start(&prog, "write", s->ps.total);
	for (uint32_t i = 0; i < s->ps.count; i++)
		if (write_image(s, i, &prog, &done))
			return -1;
	mig_progress_end(&prog);
	if (out_commit(&s->a.dir, &s->stream, s->err, sizeof(s->err)))
		return -1;
	for (uint32_t i = 0; i < s->ps.count; i++)
		if (out_commit(&s->a.dir, &s->rb[i].img, s->err, sizeof(s->err)))
			return -1;
	s->write_seconds = mig_now() - t0;
	return 0;
}

static struct json_object *json_blocks(const struct recv_state *s)
{
	struct json_object *arr = cj_array();

	for (uint32_t i = 0; i < s->ps.count; i++) {
		struct json_object *b = cj_object();
		char hex[65];

		sha256_hex(s->rb[i].sha256, hex);
		cj_str(b, "name", s->ps.blocks[i].name);
		cj_str(b, "file", s->rb[i].file);
		cj_u64(b, "length", s->ps.blocks[i].length);
		cj_str(b, "sha256", hex);
		cj_bool(b, "verified", s->rb[i].ok);
		cj_push(arr, b);
	}
	return arr;
}

static void print_json(const struct recv_state *s)
{
	double secs = s->t_end - s->t_start;
	struct json_object *o = cj_object();
	struct rdmig_caps caps;

	rdmig_conn_caps(s->conn, &caps);
	cj_str(o, "command", "recv");
	cj_str(o, "out", s->a.out);
	cj_bool(o, "pin_all", caps.flags & RDMIG_CAP_PIN_ALL);
	cj_add(o, "blocks", json_blocks(s));
	cj_bool(o, "verified", s->verified);
	cj_u64(o, "bytes_total", s->ps.total);
	cj_u64(o, "bytes_compressed", s->st.bytes_compressed);
	cj_u64(o, "stream_bytes", s->st.stream_bytes);
	cj_fixed(o, "seconds", secs, 6);
	cj_fixed(o, "verify_seconds", s->verify_seconds, 6);
	cj_fixed(o, "write_seconds", s->write_seconds, 6);
	cj_fixed(o, "throughput_MBps", secs > 0 ? (double)s->ps.total / secs / 1e6 : 0.0, 2);
	cj_u64(o, "iterations", s->st.iterations);
	cj_u64(o, "register_requests", s->st.register_requests);
	cj_u64(o, "chunks_registered", s->st.chunks_registered);
	mig_json_conn(o, s->conn);
	cj_print(o);
}

static void print_human(const struct recv_state *s)
{
	double secs = s->t_end - s->t_start;
	uint32_t good = 0;
	char a[32], b[32];

	for (uint32_t i = 0; i < s->ps.count; i++)
		good += (uint32_t)s->rb[i].ok;
	printf("recv: %u block%s, %s in %.2f s (%.1f MB/s), %llu iteration%s, %llu registrations "
	       "served, %s compressed\n", s->ps.count, s->ps.count == 1 ? "" : "s",
	       mig_size(s->ps.total, a, sizeof(a)), secs,
	       secs > 0 ? (double)s->ps.total / secs / 1e6 : 0.0,
	       (unsigned long long)s->st.iterations, s->st.iterations == 1 ? "" : "s",
	       (unsigned long long)s->st.register_requests,
	       mig_size(s->st.bytes_compressed, b, sizeof(b)));
	mig_print_conn("recv", s->conn);
	printf("recv: SHA-256 verified %u/%u block%s (%.2f s)%s%s%s\n", good, s->ps.count,
	       s->ps.count == 1 ? "" : "s", s->verify_seconds, s->verified ? "; images in " : "",
	       s->verified ? s->a.out : "", s->verified ? "/" : "");
}

/* ------------------------------------------------------------- main -- */

static int accept_one(struct recv_state *s)
{
	int ret;

	if ((ret = recv_accept(&s->a, &s->l, &s->conn)))
		return ret;
	s->t_start = mig_now();
	return rdmig_dest_create(s->conn, &s->dest);
}

static void cleanup(struct recv_state *s)
{
	watch_stop(s);
	rdmig_dest_destroy(s->dest); /* deregisters: before the memory goes */
	rdmig_conn_destroy(s->conn);
	rdmig_listener_destroy(s->l);
	for (uint32_t i = 0; s->rb && i < s->ps.count; i++)
		if (s->rb[i].mem)
			munmap(s->rb[i].mem, (size_t)s->ps.blocks[i].length);
	free(s->rb);
	free(s->blocks);
	imgs_parser_free(&s->ps);
	out_dir_close(&s->a.dir); /* the outputs were committed or discarded */
}

static int report_mismatches(const struct recv_state *s)
{
	for (uint32_t i = 0; i < s->ps.count; i++) {
		char got[65], want[65];
		if (s->rb[i].ok)
			continue;
		sha256_hex(s->rb[i].sha256, got);
		sha256_hex(s->ps.blocks[i].sha256, want);
		fprintf(stderr, "rdmig: recv: block '%s': SHA-256 mismatch: received %s, the source "
				"sent %s\n", s->ps.blocks[i].name, got, want);
	}
	return 1;
}

/* SIGINT or SIGTERM: tell the source (if one is connected), remove what
 * this run wrote, and exit with 128 + the signal. */
static int recv_cancelled(struct recv_state *s)
{
	char msg[200];
	bool told;

	watch_stop(s);
	cli_cancel_rearm(); /* a second signal cuts the courtesy short */
	told = s->conn && rdmig_send_error(s->conn) == 0;
	remove_outputs(s);
	snprintf(msg, sizeof(msg), "interrupted by %s %s%s; partial outputs removed",
		 cli_cancel_name(), s->conn ? "during the migration" : "while waiting for a source",
		 told ? ", the source was told" : "");
	cli_fail("recv", msg);
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

	memset(&s, 0, sizeof(s));
	if ((ret = parse_recv_args(argc, argv, &s.a)))
		return ret == 1 ? 0 : ret;
	if (recv_prepare(&s.a.m.opts, s.err, sizeof(s.err)) ||
	    recv_open_out(&s.a, fixed, s.err, sizeof(s.err))) {
		ret = cli_fail("recv", s.err);
		cleanup(&s);
		return ret;
	}
	imgs_parser_init(&s.ps, s.a.max_total);
	if ((ret = accept_one(&s)) || (ret = receive(&s))) {
		watch_stop(&s);
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
		ret = cli_fail("recv", recv_errmsg(s.err, s.dest, s.conn, s.l, ret));
		cleanup(&s);
		return ret;
	}
	watch_stop(&s);
	s.st.size = sizeof(s.st);
	rdmig_dest_stats(s.dest, &s.st);
	verify(&s);
	ret = 0;
	if (cli_cancelled())
		ret = recv_cancelled(&s);
	else if (!s.verified)
		ret = report_mismatches(&s);
	else if (write_images(&s))
		ret = cli_cancelled() ? recv_cancelled(&s) : cli_fail("recv", s.err);
	if (ret)
		remove_outputs(&s);
	if (s.a.m.json && !cli_cancelled())
		print_json(&s);
	else if (!ret)
		print_human(&s);
	cleanup(&s);
	return ret;
}
