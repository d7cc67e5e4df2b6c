/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_bulk.c - the migration engine alone, on one RAM block.
 *
 *   rdmig-bench bulk-recv --listen ADDR:PORT --file F [--pin-all] [--json OUT]
 *   rdmig-bench bulk-send --to ADDR:PORT --file F [--pin-all] [--json OUT]
 *                         [--hash none|inline|thread]
 *
 * The sender hands the library the same ranges as `rdmig send` does (an
 * all-zero 1 MiB chunk as one write, which becomes COMPRESS; any other
 * chunk as one write per run of non-zero 4 KiB pages) and is timed the
 * same way (connect .. end of the iteration), but it hashes nothing and
 * sends no stream: what is left is the engine and the device.  Set next to
 * `rdmig send`, the difference is the tool's own work (its digests, its
 * stream, the receiver's image files).  --hash inline adds the default
 * digest (XXH64, stream/digest.c) of each chunk after its writes were
 * handed over; --hash thread computes the digest of the whole block on a second
 * thread while the main one sends, and the clock stops when both are
 * done: what hashing beside the transfer costs.
 *
 * Both sides run in one guest and read the same file: the receiver learns
 * the block's length from it and, after its clock stopped, compares what
 * arrived with it (memcmp), so a fast wrong answer cannot pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bench.h"
#include <rdmig/imgstream.h>

#define PAGE 4096u

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

static void json_conn(FILE *f, const struct rdmig_conn *c)
{
	struct rdmig_inline_info inl;
	struct rdmig_caps caps;

	rdmig_conn_inline(c, &inl);
	rdmig_conn_caps(c, &caps);
	fprintf(f, "\"device\": \"%s\", \"pin_all\": %s, \"inline_granted\": %u",
		rdmig_conn_device(c), caps.flags & RDMIG_CAP_PIN_ALL ? "true" : "false",
		inl.granted);
}

/* ------------------------------------------------------------ sender -- */

/* One chunk, cut as `rdmig send` cuts it. */
static int write_chunk(struct rdmig_source *s, const uint8_t *base, uint64_t off, uint64_t n)
{
	uint64_t run = 0, run_len = 0;

	if (rdmig_is_zero(base + off, (size_t)n))
		return rdmig_source_write(s, 0, off, n);
	for (uint64_t pg = 0; pg < n; pg += PAGE) {
		uint64_t len = n - pg < PAGE ? n - pg : PAGE;
		if (!rdmig_is_zero(base + off + pg, (size_t)len)) {
			if (!run_len)
				run = pg;
			run_len += len;
			continue;
		}
		if (run_len && rdmig_source_write(s, 0, off + run, run_len))
			return -1;
		run_len = 0;
	}
	return run_len ? rdmig_source_write(s, 0, off + run, run_len) : 0;
}

/* The digest of a whole file, on its own thread (--hash thread). */
struct hasher {
	pthread_t thread;
	const struct mapped_file *file;
	uint8_t digest[RDMIG_DIGEST_MAX];
	double seconds;
};

static void *hash_file(void *arg)
{
	struct hasher *h = arg;
	double t0 = bench_now_us();

	rdmig_digest_compute(RDMIG_DIGEST_DEFAULT, h->file->p, (size_t)h->file->len, h->digest);
	h->seconds = (bench_now_us() - t0) / 1e6;
	return NULL;
}

struct send_times {
	double setup_us, total_us, hash_seconds;
};

static void print_send_json(FILE *f, const struct bench_args *a, const struct rdmig_conn *c,
			    const struct rdmig_engine_stats *st, uint64_t total,
			    const struct send_times *t, const uint8_t digest[RDMIG_DIGEST_MAX])
{
	static const char *hash_name[] = {"none", "inline", "thread"};
	char hex[RDMIG_DIGEST_HEX_MAX];

	rdmig_digest_hex(digest, rdmig_digest_size(RDMIG_DIGEST_DEFAULT), hex);
	fprintf(f, "{\"command\": \"bulk-send\", \"file\": \"%s\", \"bytes_total\": %llu, "
		   "\"seconds\": %.6f, \"setup_seconds\": %.6f, \"throughput_MBps\": %.2f, "
		   "\"hash\": \"%s\", \"hash_seconds\": %.6f, \"digest\": \"%s\", "
		   "\"bytes_written\": %llu, \"bytes_compressed\": %llu, \"writes_posted\": %llu, "
		   "\"writes_signaled\": %llu, \"register_requests\": %llu, "
		   "\"register_ahead\": %llu, \"register_rtt_p50_us\": %.1f, \"register_rtt_p99_us\": %.1f, "
		   "\"chunks_registered\": %llu, \"register_wait_seconds\": %.6f, "
		   "\"register_seconds\": %.6f, \"register_threads\": %llu, ",
		a->file, (unsigned long long)total, t->total_us / 1e6, t->setup_us / 1e6,
		(double)total / t->total_us, hash_name[a->hash], t->hash_seconds,
		a->hash ? hex : "", (unsigned long long)st->bytes_written,
		(unsigned long long)st->bytes_compressed, (unsigned long long)st->writes_posted,
		(unsigned long long)st->writes_signaled, (unsigned long long)st->register_requests,
		(unsigned long long)st->register_ahead, st->register_rtt_p50_us, st->register_rtt_p99_us,
		(unsigned long long)st->chunks_registered, st->register_wait_seconds,
		st->register_seconds, (unsigned long long)st->register_threads);
	json_conn(f, c);
	fprintf(f, "}\n");
}

/* Hand every chunk to the library; with --hash inline, hash each chunk
 * after its writes, as `rdmig send` does. */
static int send_chunks(struct rdmig_source *s, const struct bench_args *a,
		       const struct mapped_file *file, uint8_t *h, double *hash_us)
{
	for (uint64_t off = 0; off < file->len; off += RDMIG_CHUNK_SIZE) {
		uint64_t n = file->len - off < RDMIG_CHUNK_SIZE ? file->len - off : RDMIG_CHUNK_SIZE;
		if (write_chunk(s, file->p, off, n))
			return -1;
		if (a->hash == BENCH_HASH_INLINE) {
			double t0 = bench_now_us();
			rdmig_digest_compute(RDMIG_DIGEST_DEFAULT, file->p + off, (size_t)n, h);
			*hash_us += bench_now_us() - t0;
		}
	}
	return 0;
}

int bench_bulk_send(const struct bench_args *a)
{
	struct mapped_file file = {0};
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct rdmig_opts o;
	struct hasher hasher = {.file = &file};
	struct send_times t = {0};
	uint8_t digest[RDMIG_DIGEST_MAX] = {0};
	double t0, hash_us = 0;
	int ret = 1, hashing = 0;
	FILE *json;

	if (map_file(a->file, &file))
		return 1;
	bench_opts(a, &o);
	o.pin_all = a->pin_all;
	if (a->chunk_size)
		o.chunk_size = a->chunk_size;
	t0 = bench_now_us(); /* as `rdmig send`: connect .. end of the iteration */
	if (a->hash == BENCH_HASH_THREAD) {
		if (pthread_create(&hasher.thread, NULL, hash_file, &hasher)) {
			bench_die("bulk-send", "cannot start the hashing thread");
			goto out;
		}
		hashing = 1;
	}
	if (bench_connect(a, &o, &c))
		goto out;
	if (rdmig_source_create(c, &(struct rdmig_block){"bulk", (void *)(uintptr_t)file.p,
							 file.len, 0}, 1, &s) ||
	    rdmig_source_set_lookahead(s, a->send_settings) ||
	    rdmig_source_set_pin_local(s, a->send_settings) ||
	    rdmig_source_set_register_threads(s, a->send_settings ? 0 : 1) /* as send: per CPU */ ||
	    rdmig_source_setup(s)) {
		bench_die("bulk-send", rdmig_conn_errmsg(c));
		goto out;
	}
	t.setup_us = bench_now_us() - t0;
	if (send_chunks(s, a, &file, digest, &hash_us) || rdmig_source_end_iteration(s)) {
		bench_die("bulk-send", rdmig_source_errmsg(s));
		goto out;
	}
	if (hashing) { /* the digest is due with the end of the migration */
		pthread_join(hasher.thread, NULL);
		hashing = 0;
		memcpy(digest, hasher.digest, sizeof(digest));
		hash_us = hasher.seconds * 1e6;
	}
	t.total_us = bench_now_us() - t0;
	t.hash_seconds = hash_us / 1e6;
	rdmig_source_stats(s, &st);
	json = open_json(a);
	if (json) {
		print_send_json(json, a, c, &st, file.len, &t, digest);
		close_json(a, json);
		ret = 0;
	}
out:
	if (hashing)
		pthread_join(hasher.thread, NULL);
	rdmig_source_destroy(s);
	rdmig_conn_destroy(c); /* the disconnect ends the receiver's loop */
	unmap_file(&file);
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

int bench_bulk_recv(const struct bench_args *a)
{
	struct mapped_file file = {0};
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	struct rdmig_dest *d = NULL;
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct rdmig_opts o;
	uint8_t *mem = MAP_FAILED;
	double t0, t_end;
	FILE *json;
	int ret = 1, same;

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
	if (rdmig_dest_create(c, &d) ||
	    (a->chunk_size && rdmig_dest_set_chunk_size(d, a->chunk_size)) ||
	    rdmig_dest_set_blocks(d, &(struct rdmig_block){"bulk", mem, file.len, 0}, 1) ||
	    receive_all(d)) {
		bench_die("bulk-recv", d ? rdmig_dest_errmsg(d) : rdmig_conn_errmsg(c));
		goto out;
	}
	t_end = bench_now_us();
	rdmig_dest_stats(d, &st);
	same = memcmp(mem, file.p, (size_t)file.len) == 0;
	json = open_json(a);
	if (json) {
		fprintf(json, "{\"command\": \"bulk-recv\", \"file\": \"%s\", \"bytes_total\": %llu, "
			      "\"seconds\": %.6f, \"verified\": %s, \"register_requests\": %llu, "
			      "\"bytes_compressed\": %llu, \"chunks_registered\": %llu, "
			      "\"register_seconds\": %.6f, ",
			a->file, (unsigned long long)file.len, (t_end - t0) / 1e6,
			same ? "true" : "false", (unsigned long long)st.register_requests,
			(unsigned long long)st.bytes_compressed,
			(unsigned long long)st.chunks_registered, st.register_seconds);
		json_conn(json, c);
		fprintf(json, "}\n");
		close_json(a, json);
		ret = same ? 0 : bench_die("bulk-recv", "the received block differs from the file");
	}
out:
	rdmig_dest_destroy(d);
	rdmig_conn_destroy(c);
	rdmig_listener_destroy(l);
	if (mem != MAP_FAILED)
		munmap(mem, (size_t)file.len);
	unmap_file(&file);
	return ret;
}
