/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * copy_images.c - migrate a set of named images from one process to
 * another with rdmig/images.h, verified as they land: what `rdmig send`
 * and `rdmig recv` do, in a program of its own.  The destination keeps
 * the images in memory (its sink) instead of writing files.
 *
 *   copy_images recv HOST PORT    listen on HOST:PORT (PORT 0: any) and
 *                                 print the port, then receive the images
 *   copy_images send HOST PORT    connect and send them
 *
 * Both exit 0 when every image arrived verified and equal to what was
 * sent, 1 on any failure (with the library's message on stderr).  Build:
 * cc copy_images.c $(pkg-config --cflags --libs rdmig rdmig-stream).
 */
#include <rdmig.h>
#include <rdmig/images.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Three images: one with data, one empty, one mostly zero (its zero pages
 * never cross the wire: the destination's memory is zero already). */
#define NIMAGES 3
static const char *const names[NIMAGES] = {"kernel", "empty", "disk"};
static const uint64_t lengths[NIMAGES] = {5u << 20, 0, 9u << 20};

/* Image i's byte at offset: the destination checks it without the source. */
static uint8_t byte_at(uint32_t i, uint64_t offset)
{
	if (i == 2 && offset < (8u << 20))
		return 0; /* the disk's first 8 MiB are zero */
	return (uint8_t)(offset * 31 + i * 7 + 1);
}

/* Every librdmig function returns 0 or a negative RDMIG_E* code; the
 * handle's errmsg says what failed in words. */
static int fail(const char *what, int code, const char *msg)
{
	fprintf(stderr, "copy_images: %s: %s (%s)\n", what, msg, rdmig_strerror(code));
	return 1;
}

/* ------------------------------------------------------------ source -- */

/* The source's memory must stay mapped and unchanged until the source is
 * destroyed; malloc'd memory is fine (the library registers it). */
static int send_images(struct rdmig_conn *conn)
{
	struct rdmig_images_item items[NIMAGES];
	struct rdmig_images_source_opts o;
	struct rdmig_images_source *src;
	uint8_t *mem[NIMAGES] = {0};
	int ret = 1;

	for (uint32_t i = 0; i < NIMAGES; i++) {
		if (lengths[i] && !(mem[i] = malloc(lengths[i]))) {
			perror("copy_images: malloc");
			goto out;
		}
		for (uint64_t off = 0; off < lengths[i]; off++)
			mem[i][off] = byte_at(i, off);
		items[i] = (struct rdmig_images_item){names[i], mem[i], lengths[i]};
	}
	rdmig_images_source_opts_init(&o); /* default digest, 4 MiB spans */
	ret = rdmig_images_source_create(conn, items, NIMAGES, &o, &src);
	if (ret) {
		ret = fail("rdmig_images_source_create", ret, rdmig_conn_errmsg(conn));
		goto out;
	}
	/* no event loop here: run to the end (header, chunks, trailer) */
	ret = rdmig_images_source_run(src, NULL, NULL);
	if (ret)
		ret = fail("sending the images", ret, rdmig_images_source_errmsg(src));
	else
		printf("sent %u images\n", NIMAGES);
	rdmig_images_source_destroy(src);
out:
	for (uint32_t i = 0; i < NIMAGES; i++)
		free(mem[i]);
	return ret ? 1 : 0;
}

static int run_source(const char *host, const char *port)
{
	struct rdmig_opts opts;
	struct rdmig_conn *conn;
	int ret;

	rdmig_opts_init(&opts);
	ret = rdmig_conn_create(&opts, &conn);
	if (ret)
		return fail("rdmig_conn_create", ret, "cannot create a connection");
	ret = rdmig_connect(conn, host, port);
	ret = ret ? fail("rdmig_connect", ret, rdmig_conn_errmsg(conn)) : send_images(conn);
	rdmig_conn_destroy(conn); /* disconnects: the destination sees the end */
	return ret;
}

/* ------------------------------------------------------- destination -- */

/* The sink: images kept in memory.  Only write runs on the hashing
 * threads, each time for other bytes, so it needs no lock. */
struct memory_sink {
	uint8_t *image[NIMAGES];
	uint32_t count;
	bool committed;
};

static int sink_create(void *ctx, uint32_t index, const struct rdmig_imgs_block *block,
		       char *err, size_t errlen)
{
	struct memory_sink *m = ctx;

	if (index >= NIMAGES) {
		snprintf(err, errlen, "more images than the %u expected", NIMAGES);
		return -1;
	}
	/* calloc: the source sends no zero pages, so they must start zero */
	if (block->length && !(m->image[index] = calloc(1, block->length)))
		return -12; /* -ENOMEM */
	m->count = index + 1;
	return 0;
}

static int sink_write(void *ctx, uint32_t index, uint64_t offset, const void *data, size_t len)
{
	struct memory_sink *m = ctx;

	memcpy(m->image[index] + offset, data, len); /* the bytes that were checked */
	return 0;
}

static int sink_set_size(void *ctx, uint32_t index, uint64_t length, char *err, size_t errlen)
{
	(void)ctx;
	if (index >= NIMAGES || length != lengths[index]) {
		snprintf(err, errlen, "image %u has %llu bytes, not the expected size", index,
			 (unsigned long long)length);
		return -1;
	}
	return 0;
}

static int sink_commit(void *ctx, char *err, size_t errlen)
{
	struct memory_sink *m = ctx;

	(void)err;
	(void)errlen;
	m->committed = true;
	return 0;
}

static void sink_abort(void *ctx)
{
	struct memory_sink *m = ctx;

	m->committed = false;
}

/* Every byte as the source made it: the program's own check, beside the
 * library's digests. */
static int check_images(const struct memory_sink *m)
{
	if (!m->committed || m->count != NIMAGES) {
		fprintf(stderr, "copy_images: %u of %u images, %s\n", m->count, NIMAGES,
			m->committed ? "committed" : "not committed");
		return 1;
	}
	for (uint32_t i = 0; i < NIMAGES; i++)
		for (uint64_t off = 0; off < lengths[i]; off++)
			if (m->image[i][off] != byte_at(i, off)) {
				fprintf(stderr, "copy_images: %s byte %llu differs\n", names[i],
					(unsigned long long)off);
				return 1;
			}
	return 0;
}

static int receive_images(struct rdmig_conn *conn)
{
	struct memory_sink m = {0};
	struct rdmig_images_sink sink = {
		.ctx = &m, .create = sink_create, .write = sink_write,
		.set_size = sink_set_size, .commit = sink_commit, .abort = sink_abort,
	};
	struct rdmig_images_dest_opts o;
	struct rdmig_images_stats st;
	struct rdmig_images_dest *dest;
	int ret;

	rdmig_images_dest_opts_init(&o); /* verify: a source without digests is refused */
	o.max_total = 64u << 20;         /* what this program accepts at most */
	ret = rdmig_images_dest_create(conn, &o, &sink, &dest);
	if (ret)
		return fail("rdmig_images_dest_create", ret, rdmig_conn_errmsg(conn));
	ret = rdmig_images_dest_run(dest, NULL, NULL);
	if (ret)
		ret = fail("receiving the images", ret, rdmig_images_dest_errmsg(dest));
	st.size = sizeof(st);
	rdmig_images_dest_stats(dest, &st);
	rdmig_images_dest_destroy(dest);
	if (!ret && !(ret = check_images(&m)))
		printf("received %u images, %llu bytes, %s\n", st.blocks,
		       (unsigned long long)st.bytes_total, st.verified ? "verified" : "NOT verified");
	ret = ret || !st.verified;
	for (uint32_t i = 0; i < NIMAGES; i++)
		free(m.image[i]);
	return ret;
}

static int run_destination(const char *host, const char *port)
{
	struct rdmig_opts opts;
	struct rdmig_listener *lis;
	struct rdmig_conn *conn = NULL;
	int ret;

	rdmig_opts_init(&opts);
	ret = rdmig_listener_create(&opts, &lis);
	if (ret)
		return fail("rdmig_listener_create", ret, "cannot create a listener");
	ret = rdmig_listen(lis, host, port);
	if (!ret) {
		/* port 0 let the system choose: say which, for the source */
		printf("listening on port %u\n", rdmig_listener_port(lis));
		fflush(stdout);
		ret = rdmig_accept(lis, &conn);
	}
	ret = ret ? fail("listening", ret, rdmig_listener_errmsg(lis)) : receive_images(conn);
	rdmig_conn_destroy(conn);
	rdmig_listener_destroy(lis);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "send"))
		return run_source(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return run_destination(argv[2], argv[3]);
	fprintf(stderr, "usage: copy_images send|recv HOST PORT\n");
	return 2;
}
