/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_bulk.c - the migration engine alone, on one RAM block.
 *
 *   rdmig-bench bulk-recv --listen ADDR:PORT --file F [--pin-all] [--json OUT]
 *   rdmig-bench bulk-send --to ADDR:PORT --file F [--pin-all] [--json OUT]
 *                         [--hash none|inline|thread]
 *
 * The sender is the image-set source of `rdmig send` (rdmig/images.h: the
 * same cutting, records and keep-alives; 32 MiB chunks unless
 * --chunk-size) and is timed the same way (connect .. end of the
 * iteration and of the digests).  With --hash none it sends no digests:
 * what is left is the engine, the device and a few stream messages; the
 * receiver is the bare engine (it ignores the stream and writes no file).
 * Set next to `rdmig send`, the difference is the tool's own work (the
 * receiver's verification and image files).  --hash thread (or inline,
 * the same now) adds XXH64 span digests on one hashing thread beside the
 * transfer: what hashing costs the sender.
 *
 * Both sides print a "budget" as rdmig send and recv do (rdmig-json(7)):
 * seconds per phase from main()'s entry, the teardown included, so that
 * the engine, the tool and QEMU line up phase by phase in the bench's
 * report.  The receiver's phases are the bare engine's: no header, no
 * hashing, no files; its "compare" is the bench's check below.
 *
 * Both sides run in one guest and read the same file: the receiver learns
 * the block's length from it and, after its clock stopped, compares what
 * arrived with it (memcmp), so a fast wrong answer cannot pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bench.h"
#include <rdmig/images.h>

/* The chunk size of `rdmig send` (tools/cli_send.c), unless --chunk-size. */
#define BENCH_DEFAULT_CHUNK (32ull << 20)

struct send_times {
	double setup_us, total_us, hash_seconds;
	/* from the end of the setup to the end of the iteration: the
	 * registration round trips and the writes, what ib_write_bw's
	 * steady-state figure is set against (no connect, no setup) */
	double transfer_seconds;
	/* the budget's marks (rdmig_monotonic_seconds): connect begins, the
	 * connection is up, the header and setup are done, the run returned */
	double connect, connected, set_up, run_end;
};

/* The file both sides read, mapped read-only. */
struct mapped_file {
	const uint8_t *p;
	uint64_t len;
};

static int map_file(const char *path, struct mapped_file *f)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
		fprintf(stderr, "rdmig-bench: %s: %s\n", path,
			fd < 0 ? strerror(errno) : "empty or unreadable");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "rdmig-bench: mmap %s: %s\n", path, strerror(errno));
		return -1;
	}
	madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
	f->p = p;
	f->len = (uint64_t)st.st_size;
	return 0;
}

static void unmap_file(struct mapped_file *f)
{
	if (f->p)
		munmap((void *)(uintptr_t)f->p, (size_t)f->len);
}

static FILE *open_json(const struct bench_args *a)
{
	FILE *f = a->json ? fopen(a->json, "w") : stdout;

	if (!f)
		fprintf(stderr, "rdmig-bench: %s: %s\n", a->json, strerror(errno));
	return f;
}

static void close_json(const struct bench_args *a, FILE *f)
{
	if (f && a->json)
		fclose(f);
}

/* The connection's members of both sides' objects. */
static void json_conn(struct json_object *o, const struct rdmig_conn *c)
{
	struct rdmig_inline_info inl;
	struct rdmig_caps caps;

	rdmig_conn_inline(c, &inl);
	rdmig_conn_caps(c, &caps);
	bj_add_str(o, "device", rdmig_conn_device(c));
	json_object_object_add(o, "pin_all",
			       json_object_new_boolean(caps.flags & RDMIG_CAP_PIN_ALL));
	bj_add_int(o, "inline_granted", inl.granted);
}

/* ------------------------------------------------------------ sender -- */

static const char *const hash_name[] = {"none", "inline", "thread"};

/* The sender's budget, as rdmig send's (tools/cli_send.c), once the
 * handles are gone (t_cleaned). */
static struct json_object *send_budget(const struct send_times *t,
				       const struct rdmig_images_stats *ist,
				       const struct rdmig_engine_stats *st, double t_cleaned)
{
	struct bench_budget b = {0};

	bb_add(&b, "start", t->connect - bench_t_main);
	bb_add(&b, "connect", t->connected - t->connect);
	bb_add(&b, "setup", t->set_up - t->connected);
	bb_add(&b, "register_wait", st->register_wait_seconds);
	bb_add(&b, "writes", ist->transfer_seconds - st->register_wait_seconds);
	bb_add(&b, "hash_wait", ist->hash_wait_seconds);
	bb_add(&b, "commit", ist->commit_seconds);
	bb_add(&b, "teardown", ist->teardown_seconds + t_cleaned - t->run_end);
	return bj_budget(&b, t_cleaned, -1);
}

/* The summary, without its budget (added after the teardown). */
static struct json_object *send_json(const struct bench_args *a, const struct rdmig_conn *c,
				     const struct rdmig_engine_stats *st, uint64_t total,
				     const struct send_times *t,
				     const uint8_t digest[RDMIG_DIGEST_MAX])
{
	struct json_object *o = json_object_new_object();
	char hex[RDMIG_DIGEST_HEX_MAX];

	rdmig_digest_hex(digest, rdmig_digest_size(RDMIG_DIGEST_DEFAULT), hex);
	bj_add_str(o, "command", "bulk-send");
	bj_add_str(o, "file", a->file);
	bj_add_int(o, "bytes_total", (int64_t)total);
	bj_add_fixed(o, "seconds", t->total_us / 1e6, 6);
	bj_add_fixed(o, "setup_seconds", t->setup_us / 1e6, 6);
	bj_add_fixed(o, "throughput_MBps", (double)total / t->total_us, 2);
	bj_add_fixed(o, "transfer_seconds", t->transfer_seconds, 6);
	bj_add_fixed(o, "transfer_MBps",
		     t->transfer_seconds > 0 ? (double)total / t->transfer_seconds / 1e6 : 0, 2);
	bj_add_str(o, "hash", hash_name[a->hash]);
	bj_add_fixed(o, "hash_seconds", t->hash_seconds, 6);
	bj_add_str(o, "digest", a->hash ? hex : "");
	bj_add_int(o, "bytes_written", (int64_t)st->bytes_written);
	bj_add_int(o, "bytes_compressed", (int64_t)st->bytes_compressed);
	bj_add_int(o, "writes_posted", (int64_t)st->writes_posted);
	bj_add_int(o, "writes_signaled", (int64_t)st->writes_signaled);
	bj_add_int(o, "register_requests", (int64_t)st->register_requests);
	bj_add_int(o, "register_ahead", (int64_t)st->register_ahead);
	bj_add_fixed(o, "register_rtt_p50_us", st->register_rtt_p50_us, 1);
	bj_add_fixed(o, "register_rtt_p99_us", st->register_rtt_p99_us, 1);
	bj_add_int(o, "chunks_registered", (int64_t)st->chunks_registered);
	bj_add_fixed(o, "register_wait_seconds", st->register_wait_seconds, 6);
	bj_add_fixed(o, "register_seconds", st->register_seconds, 6);
	bj_add_int(o, "register_threads", (int64_t)st->register_threads);
	json_conn(o, c);
	return o;
}

/* The image-set source (rdmig/images.h) as rdmig send sets it up, with
 * the digest --hash asks for: none sends no digests; thread (and inline,
 * kept for old scripts: the API hashes on its pool, not in line) XXH64
 * span digests on one hashing thread beside the transfer. */
static void source_opts(const struct bench_args *a, struct rdmig_images_source_opts *so)
{
	rdmig_images_source_opts_init(so);
	so->digest = a->hash == BENCH_HASH_NONE ? RDMIG_DIGEST_OFF : RDMIG_DIGEST_DEFAULT;
	so->hash_threads = 1;
	so->pin_local = a->send_settings;
	so->register_threads = a->send_settings ? 0 : 1; /* as send: per CPU */
}

int bench_bulk_send(const struct bench_args *a)
{
	struct mapped_file file = {0};
	struct rdmig_conn *c = NULL;
	struct rdmig_images_source *s = NULL;
	struct rdmig_images_source_opts so;
	struct rdmig_images_stats ist = {.size = sizeof(ist)};
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct rdmig_images_event ev;
	struct rdmig_opts o;
	struct send_times t = {0};
	struct json_object *out = NULL;
	double t0;
	int ret = 1;
	FILE *json;

	if (map_file(a->file, &file))
		return 1;
	bench_opts(a, &o);
	o.pin_all = a->pin_all;
	o.chunk_size = a->chunk_size ? a->chunk_size : BENCH_DEFAULT_CHUNK;
	source_opts(a, &so);
	t0 = bench_now_us(); /* as `rdmig send`: connect .. end of the iteration */
	t.connect = t0 / 1e6;
	if (bench_connect(a, &o, &c))
		goto out;
	t.connected = rdmig_monotonic_seconds();
	if (rdmig_images_source_create(c, &(struct rdmig_images_item){"bulk", file.p, file.len}, 1,
				       &so, &s) ||
	    rdmig_images_source_step(s, &ev)) {
		bench_die("bulk-send", s ? rdmig_images_source_errmsg(s) : rdmig_conn_errmsg(c));
		goto out;
	}
	t.setup_us = bench_now_us() - t0;
	t.set_up = rdmig_monotonic_seconds();
	if (rdmig_images_source_run(s, NULL, NULL)) {
		bench_die("bulk-send", rdmig_images_source_errmsg(s));
		goto out;
	}
	t.run_end = rdmig_monotonic_seconds();
	rdmig_images_source_stats(s, &ist);
	/* the digests are due with the end of the migration: before the
	 * trailer and the teardown */
	t.total_us = bench_now_us() - t0 - (ist.commit_seconds + ist.teardown_seconds) * 1e6;
	t.hash_seconds = ist.hash_seconds;
	t.transfer_seconds = ist.transfer_seconds;
	rdmig_images_source_engine_stats(s, &st);
	out = send_json(a, c, &st, file.len, &t, rdmig_images_source_blocks(s)[0].digest);
out:
	rdmig_images_source_destroy(s);
	rdmig_conn_destroy(c); /* the disconnect ends the receiver's loop */
	unmap_file(&file);
	if (out && (json = open_json(a))) {
		/* the teardown is in the budget: the object goes out after it */
		json_object_object_add(out, "budget",
				       send_budget(&t, &ist, &st, rdmig_monotonic_seconds()));
		ret = bj_write(json, out) ? 1 : 0;
		close_json(a, json);
	} else {
		json_object_put(out);
	}
	return ret;
}

/* ---------------------------------------------------------- receiver -- */

/* Serve the source until it disconnects. */
static int receive_all(struct rdmig_dest *d)
{
	for (;;) {
		struct rdmig_event ev;
		int ret = rdmig_dest_next(d, &ev);

		if (ret)
			return ret;
		if (ev.type == RDMIG_EV_END)
			return 0;
	}
}

/* The receiver's summary, without its budget (added after the teardown). */
static struct json_object *recv_json(const struct bench_args *a, const struct rdmig_conn *c,
				     const struct rdmig_engine_stats *st, uint64_t total,
				     double seconds, bool same)
{
	struct json_object *out = json_object_new_object();

	bj_add_str(out, "command", "bulk-recv");
	bj_add_str(out, "file", a->file);
	bj_add_int(out, "bytes_total", (int64_t)total);
	bj_add_fixed(out, "seconds", seconds, 6);
	json_object_object_add(out, "verified", json_object_new_boolean(same));
	bj_add_int(out, "register_requests", (int64_t)st->register_requests);
	bj_add_int(out, "bytes_compressed", (int64_t)st->bytes_compressed);
	bj_add_int(out, "chunks_registered", (int64_t)st->chunks_registered);
	bj_add_fixed(out, "register_seconds", st->register_seconds, 6);
	json_conn(out, c);
	return out;
}

int bench_bulk_recv(const struct bench_args *a)
{
	struct mapped_file file = {0};
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	struct rdmig_dest *d = NULL;
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct rdmig_opts o;
	uint8_t *mem = MAP_FAILED;
	double t0, t_end, t_accepted, t_set_up = 0, t_compared = 0;
	struct json_object *out = NULL;
	struct bench_budget b = {0};
	FILE *json;
	int ret = 1, same = 0;

	if (map_file(a->file, &file))
		return 1;
	mem = mmap(NULL, (size_t)file.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		bench_die("bulk-recv", strerror(errno));
		goto out;
	}
	bench_opts(a, &o);
	o.pin_all = a->pin_all;
	o.timeout_ms = 600000; /* a slow guest is not a dead source */
	if (bench_accept(a, &o, &l, &c))
		goto out;
	t0 = bench_now_us();
	t_accepted = t0 / 1e6;
	if (rdmig_dest_create(c, &d) ||
	    rdmig_dest_set_chunk_size(d, a->chunk_size ? a->chunk_size : BENCH_DEFAULT_CHUNK) ||
	    rdmig_dest_set_blocks(d, &(struct rdmig_block){"bulk", mem, file.len, 0}, 1) ||
	    (t_set_up = rdmig_monotonic_seconds(), receive_all(d))) {
		bench_die("bulk-recv", d ? rdmig_dest_errmsg(d) : rdmig_conn_errmsg(c));
		goto out;
	}
	t_end = bench_now_us();
	rdmig_dest_stats(d, &st);
	same = memcmp(mem, file.p, (size_t)file.len) == 0;
	t_compared = rdmig_monotonic_seconds();
	/* the receiver's budget, as rdmig recv's (tools/cli_recv_report.c);
	 * the bench's own check of the block (compare) is in it */
	bb_add(&b, "start", bench_t_listening - bench_t_main);
	bb_add(&b, "connect", t_accepted - bench_t_request);
	bb_add(&b, "setup", t_set_up - t_accepted);
	bb_add(&b, "register", st.register_seconds);
	bb_add(&b, "transfer", t_end / 1e6 - t_set_up - st.register_seconds);
	bb_add(&b, "compare", t_compared - t_end / 1e6);
	out = recv_json(a, c, &st, file.len, (t_end - t0) / 1e6, same);
out:
	rdmig_dest_destroy(d);
	rdmig_conn_destroy(c);
	rdmig_listener_destroy(l);
	if (mem != MAP_FAILED)
		munmap(mem, (size_t)file.len);
	unmap_file(&file);
	if (out && (json = open_json(a))) {
		double now = rdmig_monotonic_seconds();

		/* the teardown is in the budget: the object goes out after it */
		bb_add(&b, "teardown", now - t_compared);
		json_object_object_add(out, "budget",
				       bj_budget(&b, now, bench_t_request - bench_t_listening));
		if (!bj_write(json, out))
			ret = same ? 0 : bench_die("bulk-recv", "the received block differs from "
						   "the file");
		close_json(a, json);
	} else {
		json_object_put(out);
	}
	return ret;
}
