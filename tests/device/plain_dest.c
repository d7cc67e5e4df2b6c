/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * plain_dest.c - an image-set destination that does not give a verdict
 * (rdmig_opts.verdict left false), as an rdmig older than 0.3 or any
 * library caller who does not ask for one: what `rdmig send` meets when
 * the destination cannot say whether it committed (test_verdict.sh).
 * It keeps nothing: its sink accepts every image and drops the bytes.
 *
 *   plain_dest IP PORT    print "listening" once it listens, receive one
 *                         image set; exit 0 when the library says DONE
 */
#include <rdmig.h>
#include <rdmig/images.h>
#include <stdio.h>

static int create(void *ctx, uint32_t i, const struct rdmig_imgs_block *b, char *err, size_t n)
{
	(void)ctx, (void)i, (void)b, (void)err, (void)n;
	return 0;
}

static int write_bytes(void *ctx, uint32_t i, uint64_t off, const void *data, size_t len)
{
	(void)ctx, (void)i, (void)off, (void)data, (void)len;
	return 0;
}

static int set_size(void *ctx, uint32_t i, uint64_t length, char *err, size_t n)
{
	(void)ctx, (void)i, (void)length, (void)err, (void)n;
	return 0;
}

static int commit(void *ctx, char *err, size_t n)
{
	(void)ctx, (void)err, (void)n;
	return 0;
}

static void drop(void *ctx)
{
	(void)ctx;
}

static int receive(struct rdmig_conn *c)
{
	struct rdmig_images_sink sink = {.create = create, .write = write_bytes,
					 .set_size = set_size, .commit = commit, .abort = drop};
	struct rdmig_images_dest_opts o;
	struct rdmig_images_dest *d;
	int ret;

	rdmig_images_dest_opts_init(&o);
	o.max_total = 1ull << 32;
	if ((ret = rdmig_images_dest_create(c, &o, &sink, &d)))
		return ret;
	ret = rdmig_images_dest_run(d, NULL, NULL);
	if (ret)
		fprintf(stderr, "plain_dest: %s\n", rdmig_images_dest_errmsg(d));
	rdmig_images_dest_destroy(d);
	return ret;
}

int main(int argc, char **argv)
{
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	struct rdmig_opts opts;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: plain_dest IP PORT\n");
		return 2;
	}
	rdmig_opts_init(&opts);
	opts.timeout_ms = 20000;
	opts.accept_timeout_ms = 60000;
	if (!(ret = rdmig_listener_create(&opts, &l)) && !(ret = rdmig_listen(l, argv[1], argv[2]))) {
		printf("listening\n");
		fflush(stdout);
		if (!(ret = rdmig_accept(l, &c)))
			ret = receive(c);
	}
	if (ret && !c)
		fprintf(stderr, "plain_dest: %s\n", l ? rdmig_listener_errmsg(l) : rdmig_strerror(ret));
	rdmig_conn_destroy(c);
	rdmig_listener_destroy(l);
	return ret ? 1 : 0;
}
