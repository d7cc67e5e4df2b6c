/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_recv_dir.c - the files of one received image set
 * (src/sessions/recv_dir.c), its sink driven as the library's image-set
 * destination drives it, without a connection: the caller's hooks are
 * asked in their order (the stream, the names, the blocks), a name taken
 * refuses the header before anything is reserved, a committed set is
 * every image and stream.bin under its name with no temporary left, an
 * abort leaves DIR as it was (the directories it made gone too), and only
 * the sink's own failures count as its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "recv_dir.h"

#define MIB (1024u * 1024)

static char dir[64];
static char err[1024];

/* What the hooks saw, and what they answer. */
struct tool {
	int calls;                 /* in order: 1 params, 2 blocks, 3 committing */
	int params_at, blocks_at, committing_at;
	int refuse_params, refuse_blocks;
	uint32_t nblocks;
};

static int params(void *ctx, const struct rdmig_imgs_params *prm, char *e, size_t len)
{
	struct tool *t = ctx;

	(void)prm;
	t->params_at = ++t->calls;
	if (t->refuse_params)
		snprintf(e, len, "the tool refuses the stream");
	return t->refuse_params ? -1 : 0;
}

static int blocks(void *ctx, const struct rdmig_imgs_block *b, uint32_t n,
		  const struct rdmig_imgs_params *prm, char *e, size_t len)
{
	struct tool *t = ctx;

	(void)b;
	(void)prm;
	t->blocks_at = ++t->calls;
	t->nblocks = n;
	if (t->refuse_blocks)
		snprintf(e, len, "the tool refuses the blocks");
	return t->refuse_blocks ? -1 : 0;
}

static void committing(void *ctx)
{
	struct tool *t = ctx;

	t->committing_at = ++t->calls;
}

static void fresh_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-recv-dir.XXXXXX");
	if (!mkdtemp(dir))
		abort();
}

static void cleanup_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

/* DIR/name, in one of two buffers (a call may take two paths) */
static char *path(const char *name)
{
	static char p[2][512];
	static int k;
	k ^= 1;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* Entries in DIR other than . and .., and how many start with ".rdmig-". */
static int entries(const char *d, int *temporaries)
{
	DIR *h = opendir(d);
	struct dirent *e;
	int n = 0;

	*temporaries = 0;
	while (h && (e = readdir(h)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			n++;
			*temporaries += !strncmp(e->d_name, ".rdmig-", 7);
		}
	if (h)
		closedir(h);
	return n;
}

static void setup(struct recv_dir *rd, struct out_dir *d, struct tool *t,
		  struct rdmig_images_sink *sink)
{
	const struct recv_dir_hooks hooks = {
		.ctx = t, .params = params, .blocks = blocks, .committing = committing,
	};

	memset(t, 0, sizeof(*t));
	recv_dir_init(rd, d, &hooks);
	recv_dir_sink(rd, sink);
}

static const struct rdmig_imgs_params prm = {.span_shift = 22, .chunk_shift = 20};

static void two_blocks(struct rdmig_imgs_block b[2])
{
	memset(b, 0, 2 * sizeof(*b));
	snprintf(b[0].name, sizeof(b[0].name), "pc.ram");
	b[0].length = 3 * MIB;
	snprintf(b[1].name, sizeof(b[1].name), "vga/vram");
	b[1].length = 4096;
}

/* The set as the library hands it over: the header, the images created,
 * their spans (the middle MiB of the first all zeros), their sizes and
 * the stream. */
static int receive(struct rdmig_images_sink *s, const struct rdmig_imgs_block b[2])
{
	uint8_t *data = calloc(1, 3 * MIB);
	int r = -1;

	if (!data)
		return -1;
	memset(data, 0xa5, MIB);
	memset(data + 2 * MIB, 0x5a, MIB);
	if (!s->header(s->ctx, b, 2, &prm, err, sizeof(err)) &&
	    !s->create(s->ctx, 0, &b[0], err, sizeof(err)) &&
	    !s->create(s->ctx, 1, &b[1], err, sizeof(err)) &&
	    !s->stream(s->ctx, "head", 4, err, sizeof(err)) &&
	    !s->write(s->ctx, 0, 0, data, 3 * MIB) &&
	    !s->write(s->ctx, 1, 0, "vram", 4) &&
	    !s->set_size(s->ctx, 0, b[0].length, err, sizeof(err)) &&
	    !s->set_size(s->ctx, 1, b[1].length, err, sizeof(err)) &&
	    !s->stream(s->ctx, "tail", 4, err, sizeof(err)))
		r = 0;
	free(data);
	return r;
}

TEST(a_committed_set_is_every_output_under_its_name)
{
	struct out_dir d;
	struct recv_dir rd;
	struct rdmig_images_sink sink;
	struct rdmig_imgs_block b[2];
	struct tool t;
	struct stat st;
	char buf[16] = {0};
	int fd, tmp;

	fresh_dir();
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	setup(&rd, &d, &t, &sink);
	two_blocks(b);
	CHECK_OK(receive(&sink, b));
	CHECK_EQ(t.params_at, 1);
	CHECK_EQ(t.blocks_at, 2);
	CHECK_EQ(t.nblocks, 2);
	CHECK(!strcmp(recv_dir_file(&rd, 0), "pc.ram.img"));
	/* nothing has its name before the commit */
	CHECK_EQ(entries(dir, &tmp), 3);
	CHECK_EQ(tmp, 3);
	CHECK_OK(sink.commit(sink.ctx, err, sizeof(err)));
	CHECK_EQ(t.committing_at, 3);
	CHECK_EQ(entries(dir, &tmp), 3);
	CHECK_EQ(tmp, 0);
	CHECK(!recv_dir_failed(&rd));
	CHECK(recv_dir_copy_ns(&rd) > 0);
	CHECK_EQ(stat(path("pc.ram.img"), &st), 0);
	CHECK_EQ(st.st_size, 3 * MIB);
	CHECK_EQ(stat(path(recv_dir_file(&rd, 1)), &st), 0);
	CHECK_EQ(st.st_size, 4096);
	fd = open(path("stream.bin"), O_RDONLY);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 8 && !close(fd));
	CHECK(!strcmp(buf, "headtail"));
	fd = open(path("pc.ram.img"), O_RDONLY);
	CHECK(fd >= 0 && pread(fd, buf, 2, MIB + 7) == 2 && pread(fd, buf + 2, 1, 2 * MIB) == 1 &&
	      !close(fd));
	CHECK(buf[0] == 0 && buf[1] == 0 && (uint8_t)buf[2] == 0x5a);
	recv_dir_free(&rd);
	out_dir_close(&d);
	cleanup_dir();
}

/* A name taken in DIR fails the header before the blocks' hook reserves
 * anything for them; the refusal is the sink's own. */
TEST(a_name_taken_refuses_the_header_before_the_blocks_hook)
{
	struct out_dir d;
	struct recv_dir rd;
	struct rdmig_images_sink sink;
	struct rdmig_imgs_block b[2];
	struct tool t;
	int fd;

	fresh_dir();
	fd = open(path("pc.ram.img"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && !close(fd));
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	setup(&rd, &d, &t, &sink);
	two_blocks(b);
	CHECK(sink.header(sink.ctx, b, 2, &prm, err, sizeof(err)) != 0);
	CHECK(strstr(err, "pc.ram.img exists") != NULL);
	CHECK_EQ(t.params_at, 1);
	CHECK_EQ(t.blocks_at, 0);
	CHECK(recv_dir_failed(&rd));
	sink.abort(sink.ctx);
	CHECK_EQ(access(path("pc.ram.img"), F_OK), 0);
	recv_dir_free(&rd);
	out_dir_close(&d);
	cleanup_dir();
}

/* The tool refuses the stream: nothing is named, and the message is the
 * tool's; a refusal of the blocks is the sink's own failure too. */
TEST(the_hooks_refusals_are_the_sinks_failures)
{
	struct out_dir d;
	struct recv_dir rd;
	struct rdmig_images_sink sink;
	struct rdmig_imgs_block b[2];
	struct tool t;

	fresh_dir();
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	setup(&rd, &d, &t, &sink);
	t.refuse_params = 1;
	two_blocks(b);
	CHECK(sink.header(sink.ctx, b, 2, &prm, err, sizeof(err)) != 0);
	CHECK(!strcmp(err, "the tool refuses the stream"));
	CHECK(recv_dir_failed(&rd));
	CHECK_EQ(t.blocks_at, 0);
	recv_dir_free(&rd);
	setup(&rd, &d, &t, &sink);
	t.refuse_blocks = 1;
	CHECK(!recv_dir_failed(&rd));
	CHECK(sink.header(sink.ctx, b, 2, &prm, err, sizeof(err)) != 0);
	CHECK(!strcmp(err, "the tool refuses the blocks"));
	CHECK(recv_dir_failed(&rd));
	recv_dir_free(&rd);
	out_dir_close(&d);
	cleanup_dir();
}

/* An abort, at any point: DIR holds what it held before, and the
 * directories out_dir_open made for --out are gone; once more is
 * harmless. */
TEST(an_abort_leaves_dir_as_it_was)
{
	struct out_dir d;
	struct recv_dir rd;
	struct rdmig_images_sink sink;
	struct rdmig_imgs_block b[2];
	struct tool t;
	char out[128];
	int fd, tmp;

	fresh_dir();
	fd = open(path("theirs"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && !close(fd));
	snprintf(out, sizeof(out), "%s/new/out", dir);
	CHECK_OK(out_dir_open(&d, out, false, err, sizeof(err)));
	setup(&rd, &d, &t, &sink);
	two_blocks(b);
	CHECK_OK(receive(&sink, b));
	CHECK_EQ(entries(out, &tmp), 3);
	sink.abort(sink.ctx);
	recv_dir_discard(&rd);
	CHECK_EQ(access(path("new"), F_OK), -1);
	CHECK_EQ(entries(dir, &tmp), 1);
	CHECK_EQ(access(path("theirs"), F_OK), 0);
	recv_dir_free(&rd);
	out_dir_close(&d);
	cleanup_dir();
}

/* A discard before any header came (an interrupted wait for a source)
 * removes the directories made for --out, and nothing else. */
TEST(a_discard_before_the_header_removes_the_made_directories)
{
	struct out_dir d;
	struct recv_dir rd;
	struct rdmig_images_sink sink;
	struct tool t;
	char out[128];

	fresh_dir();
	snprintf(out, sizeof(out), "%s/made", dir);
	CHECK_OK(out_dir_open(&d, out, false, err, sizeof(err)));
	setup(&rd, &d, &t, &sink);
	recv_dir_discard(&rd);
	CHECK_EQ(access(out, F_OK), -1);
	CHECK_EQ(access(dir, F_OK), 0);
	recv_dir_free(&rd);
	out_dir_close(&d);
	cleanup_dir();
}

/* Without the sink, as recv --qemu writes a set once its migration
 * ended: names (empty before), stream.bin appended, an image written
 * through its output, the commit; and a discard of the files alone keeps
 * what else the run left in the directories it made (its record). */
TEST(a_set_written_by_the_caller_commits_and_discards_alike)
{
	struct out_dir d;
	struct recv_dir rd;
	struct rdmig_imgs_block b[2];
	struct stat st;
	struct out_file *img;
	char out[128];
	int fd, tmp;

	fresh_dir();
	snprintf(out, sizeof(out), "%s/made", dir);
	CHECK_OK(out_dir_open(&d, out, false, err, sizeof(err)));
	recv_dir_init(&rd, &d, &(struct recv_dir_hooks){0});
	two_blocks(b);
	CHECK(!strcmp(recv_dir_file(&rd, 0), ""));
	CHECK_OK(recv_dir_name(&rd, b, 2, err, sizeof(err)));
	CHECK(!strcmp(recv_dir_file(&rd, 0), "pc.ram.img"));
	CHECK_OK(recv_dir_append_stream(&rd, "head", 4, err, sizeof(err)));
	CHECK_OK(recv_dir_append_stream(&rd, "tail", 4, err, sizeof(err)));
	for (uint32_t i = 0; i < 2; i++) {
		img = recv_dir_output(&rd, i);
		CHECK_OK(out_create(&d, img, recv_dir_file(&rd, i), err, sizeof(err)));
		CHECK_OK(out_write_chunk(img, 0, "data", 4));
		CHECK_OK(out_set_size(img, b[i].length));
		CHECK_OK(out_park(img));
	}
	CHECK_EQ(entries(out, &tmp), 3);
	CHECK_EQ(tmp, 3);
	CHECK_OK(recv_dir_commit(&rd, err, sizeof(err)));
	CHECK_EQ(entries(out, &tmp), 3);
	CHECK_EQ(tmp, 0);
	snprintf(err, sizeof(err), "%s/pc.ram.img", out);
	CHECK_EQ(stat(err, &st), 0);
	CHECK_EQ(st.st_size, 3 * MIB);
	recv_dir_free(&rd);

	/* a second set into the same place, abandoned beside a record */
	recv_dir_init(&rd, &d, &(struct recv_dir_hooks){0});
	snprintf(b[0].name, sizeof(b[0].name), "other");
	snprintf(b[1].name, sizeof(b[1].name), "other2");
	CHECK_OK(recv_dir_name(&rd, b, 2, err, sizeof(err)));
	CHECK_OK(recv_dir_append_stream(&rd, "x", 1, err, sizeof(err)));
	CHECK_EQ(entries(out, &tmp), 4); /* the first set and a temporary stream.bin */
	CHECK_EQ(tmp, 1);
	fd = openat(d.fd, "record.txt", O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && !close(fd));
	recv_dir_discard_files(&rd);
	CHECK_EQ(entries(out, &tmp), 4); /* the first set and the record */
	CHECK_EQ(tmp, 0);
	recv_dir_free(&rd);
	out_dir_close(&d);
	cleanup_dir();
}

/* A write that fails on a hashing thread is the library's to report
 * (its errno), not the sink's own failure. */
TEST(a_failed_write_is_the_librarys_to_report)
{
	struct out_dir d;
	struct recv_dir rd;
	struct rdmig_images_sink sink;
	struct rdmig_imgs_block b[2];
	struct tool t;
	int fd;

	fresh_dir();
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	setup(&rd, &d, &t, &sink);
	two_blocks(b);
	CHECK_OK(sink.header(sink.ctx, b, 2, &prm, err, sizeof(err)));
	CHECK_OK(sink.create(sink.ctx, 1, &b[1], err, sizeof(err)));
	/* someone replaced the parked temporary file (a rename: a new file
	 * made after an unlink could get the same inode number) */
	fd = open(path("planted"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && !close(fd));
	CHECK_EQ(rename(path("planted"), path(rd.im[1].img.tmp)), 0);
	CHECK_EQ(sink.write(sink.ctx, 1, 0, "vram", 4), -ESTALE);
	CHECK(!recv_dir_failed(&rd));
	CHECK(sink.set_size(sink.ctx, 1, 4096, err, sizeof(err)) != 0);
	CHECK(strstr(err, "cannot write the images into ") != NULL);
	CHECK(recv_dir_failed(&rd));
	unlink(path(rd.im[1].img.tmp));
	sink.abort(sink.ctx);
	recv_dir_free(&rd);
	out_dir_close(&d);
	cleanup_dir();
}

CHECK_MAIN()
