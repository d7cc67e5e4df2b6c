/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_outdir.c - recv's output files (src/sessions/outdir.c, and
 * its sparse images): what someone who can write into --out
 * plants there (a symlink, a FIFO, a file) is never followed, opened or
 * truncated; outputs appear only when committed; who may own --out; a
 * parked output (no descriptor held: 4096 images need none) is written
 * by opening it again, and only if it is still the file created.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "outdir.h"

static char dir[64];
static char err[1024];

static void fresh_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-outdir.XXXXXX");
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
	static char p[2][512]; /* DIR and a temporary name (out_file.tmp) */
	static int k;
	k ^= 1;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* The bytes of a small file, NUL-terminated, or "" */
static const char *slurp(const char *p)
{
	static char buf[256];
	int fd = open(p, O_RDONLY | O_NONBLOCK);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int write_output(struct out_dir *d, const char *name, const char *text)
{
	struct out_file f;
	if (out_create(d, &f, name, err, sizeof(err)))
		return -1;
	if (write(f.fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -1;
	if (out_commit(d, &f, err, sizeof(err))) {
		out_discard(d, &f);
		return -1;
	}
	return 0;
}

/* ls -A DIR, one string */
static const char *listing(void)
{
	static char out[512];
	char cmd[128];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | tr '\\n' ' '", dir);
	p = popen(cmd, "r");
	n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
	out[n] = '\0';
	if (p)
		pclose(p);
	return out;
}

TEST(a_planted_symlink_is_refused_and_never_followed)
{
	struct out_dir d;
	int fd;

	fresh_dir();
	fd = open(path("victim"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, "precious", 8) == 8 && !close(fd));
	CHECK_EQ(symlink(path("victim"), path("pc.ram.img")), 0);
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	CHECK_EQ(out_check_new(&d, "pc.ram.img", err, sizeof(err)), -1);
	CHECK(strstr(err, "pc.ram.img exists (a symlink)"));
	/* planted after the check: the commit refuses, the victim is intact */
	CHECK_EQ(write_output(&d, "pc.ram.img", "source's bytes"), -1);
	CHECK(strstr(err, "exists (a symlink)"));
	CHECK(!strcmp(slurp(path("victim")), "precious"));
	CHECK(!strcmp(listing(), "pc.ram.img victim "));
	out_dir_close(&d);
	cleanup_dir();
}

TEST(force_replaces_a_symlink_by_rename_without_following_it)
{
	struct out_dir d;
	struct stat st;
	int fd;

	fresh_dir();
	fd = open(path("victim"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, "precious", 8) == 8 && !close(fd));
	CHECK_EQ(symlink(path("victim"), path("pc.ram.img")), 0);
	CHECK_OK(out_dir_open(&d, dir, true, err, sizeof(err)));
	CHECK_OK(out_check_new(&d, "pc.ram.img", err, sizeof(err)));
	CHECK_OK(write_output(&d, "pc.ram.img", "new"));
	CHECK(!strcmp(slurp(path("victim")), "precious"));
	CHECK(lstat(path("pc.ram.img"), &st) == 0 && S_ISREG(st.st_mode));
	CHECK(!strcmp(slurp(path("pc.ram.img")), "new"));
	out_dir_close(&d);
	cleanup_dir();
}

/* A FIFO under an output's name: no open(2) of it (which would block). */
TEST(a_planted_fifo_is_refused_without_blocking)
{
	struct out_dir d;

	fresh_dir();
	CHECK_EQ(mkfifo(path("stream.bin"), 0666), 0);
	alarm(10); /* the old code blocked here for good */
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	CHECK_EQ(out_check_new(&d, "stream.bin", err, sizeof(err)), -1);
	CHECK(strstr(err, "exists (a FIFO)"));
	CHECK_EQ(write_output(&d, "stream.bin", "x"), -1);
	alarm(0);
	out_dir_close(&d);
	cleanup_dir();
}

TEST(an_existing_file_is_never_truncated)
{
	struct out_dir d;
	int fd;

	fresh_dir();
	fd = open(path("record.txt"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, "earlier run", 11) == 11 && !close(fd));
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	CHECK_EQ(out_check_new(&d, "record.txt", err, sizeof(err)), -1);
	CHECK(strstr(err, "record.txt exists (a file)") && strstr(err, "--force"));
	CHECK_EQ(write_output(&d, "record.txt", "this run"), -1);
	CHECK(!strcmp(slurp(path("record.txt")), "earlier run"));
	/* the temporary file of the refused output is gone with out_discard */
	CHECK(!strcmp(listing(), "record.txt "));
	out_dir_close(&d);
	cleanup_dir();
}

TEST(outputs_appear_only_when_committed_and_discard_removes_only_ours)
{
	struct out_dir d;
	struct out_file a, b;

	fresh_dir();
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	CHECK_OK(out_create(&d, &a, "a.img", err, sizeof(err)));
	CHECK_OK(out_create(&d, &b, "b.img", err, sizeof(err)));
	CHECK(access(path("a.img"), F_OK) != 0 && strstr(listing(), ".rdmig-"));
	CHECK_OK(out_commit(&d, &a, err, sizeof(err)));
	CHECK(access(path("a.img"), F_OK) == 0);
	out_discard(&d, &a); /* new in this run: a failed run takes it back */
	out_discard(&d, &b);
	CHECK(!strcmp(listing(), ""));
	out_dir_close(&d);
	cleanup_dir();
}

TEST(out_owned_by_another_user_or_writable_by_others_is_refused)
{
	struct out_dir d;

	if (geteuid() != 0) {
		fprintf(stderr, "(needs root for chown; the mode checks run anyway)\n");
	} else {
		fresh_dir();
		CHECK_EQ(chown(dir, 65534, 65534), 0);
		CHECK_EQ(out_dir_open(&d, dir, false, err, sizeof(err)), -1);
		CHECK(strstr(err, "is owned by uid 65534"));
		out_dir_close(&d);
		CHECK_OK(out_dir_open(&d, dir, true, err, sizeof(err)));
		out_dir_close(&d);
		cleanup_dir();
	}
	fresh_dir();
	CHECK_EQ(chmod(dir, 0777), 0);
	CHECK_EQ(out_dir_open(&d, dir, false, err, sizeof(err)), -1);
	CHECK(strstr(err, "writable by everyone without the sticky bit"));
	out_dir_close(&d);
	CHECK_EQ(chmod(dir, 0770), 0);
	CHECK_EQ(out_dir_open(&d, dir, false, err, sizeof(err)), -1);
	CHECK(strstr(err, "writable by its group"));
	out_dir_close(&d);
	CHECK_EQ(chmod(dir, 01777), 0); /* like /tmp: others cannot replace ours */
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	out_dir_close(&d);
	cleanup_dir();
}

/* 64 MiB of which 1 MiB holds data: the file is 64 MiB long, reads back the
 * same, and takes about 1 MiB of disk. */
TEST(images_are_sparse)
{
	const size_t chunk = 1 << 20, n = 64;
	unsigned char *mem = calloc(n, chunk), *back = malloc(n * chunk);
	struct out_dir d;
	struct out_file f;
	struct stat st;
	int fd;

	CHECK(mem && back);
	memset(mem + 7 * chunk, 0xab, chunk);
	mem[7 * chunk + 5] = 0;
	fresh_dir();
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	CHECK_OK(out_create(&d, &f, "z.img", err, sizeof(err)));
	for (size_t c = 0; c < n; c++)
		CHECK_OK(out_write_chunk(&f, c * chunk, mem + c * chunk, chunk));
	CHECK_OK(out_set_size(&f, n * chunk));
	CHECK_OK(out_commit(&d, &f, err, sizeof(err)));
	CHECK_EQ(stat(path("z.img"), &st), 0);
	CHECK_EQ(st.st_size, (long long)(n * chunk));
	fprintf(stderr, "64 MiB image, 1 MiB of data: %lld KiB on disk\n",
		(long long)st.st_blocks / 2);
	CHECK(st.st_blocks * 512 <= 2 * (long long)chunk);
	fd = open(path("z.img"), O_RDONLY);
	CHECK(fd >= 0 && read(fd, back, n * chunk) == (ssize_t)(n * chunk) && !close(fd));
	CHECK(!memcmp(mem, back, n * chunk));
	out_dir_close(&d);
	cleanup_dir();
	free(mem);
	free(back);
}

/* 4096 parked outputs under a limit of 64 descriptors: written, sized and
 * named, none held open in between. */
TEST(parked_outputs_need_no_descriptor_each)
{
	static struct out_file f[4096];
	struct out_dir d;
	struct rlimit old, low;
	char name[32], want[32];
	int ok = 1;

	fresh_dir();
	CHECK_OK(out_dir_open(&d, dir, false, err, sizeof(err)));
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &old));
	low = (struct rlimit){64, old.rlim_max};
	CHECK_OK(setrlimit(RLIMIT_NOFILE, &low));
	for (unsigned i = 0; i < 4096 && ok; i++) {
		snprintf(name, sizeof(name), "b%u.img", i);
		snprintf(want, sizeof(want), "block %u", i);
		ok = !out_create(&d, &f[i], name, err, sizeof(err)) && !out_park(&f[i]);
	}
	for (unsigned i = 0; i < 4096 && ok; i++) {
		snprintf(want, sizeof(want), "block %u", i);
		ok = !out_write_chunk(&f[i], 0, want, strlen(want)) &&
		     !out_set_size(&f[i], strlen(want)) && !out_commit(&d, &f[i], err, sizeof(err));
	}
	CHECK_OK(setrlimit(RLIMIT_NOFILE, &old));
	if (!ok)
		CHECK_FAIL_AT("4096 parked outputs under 64 descriptors: %s (%s)", err,
			      strerror(errno));
	CHECK(!strcmp(slurp(path("b4095.img")), "block 4095"));
	CHECK(!strcmp(slurp(path("b0.img")), "block 0"));
	out_dir_close(&d);
	cleanup_dir();
}

/* Someone who can write into DIR replaces a parked temporary file by
 * another file, or by a link: the next write refuses, and writes nothing
 * into either. */
TEST(a_parked_output_replaced_meanwhile_is_not_written)
{
	struct out_dir d;
	struct out_file f;
	int fd;

	fresh_dir();
	CHECK_OK(out_dir_open(&d, dir, true, err, sizeof(err)));
	CHECK_OK(out_create(&d, &f, "pc.ram.img", err, sizeof(err)));
	CHECK_OK(out_park(&f));
	CHECK_OK(out_write_chunk(&f, 0, "ours", 4));
	fd = open(path("planted"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, "theirs", 6) == 6 && !close(fd));
	CHECK_EQ(rename(path("planted"), path(f.tmp)), 0);
	errno = 0;
	CHECK_EQ(out_write_chunk(&f, 0, "data", 4), -1);
	CHECK_EQ(errno, ESTALE);
	CHECK_EQ(out_set_size(&f, 1 << 20), -1);
	CHECK(!strcmp(slurp(path(f.tmp)), "theirs"));
	CHECK_EQ(unlink(path(f.tmp)), 0);
	fd = open(path("victim"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, "precious", 8) == 8 && !close(fd));
	CHECK_EQ(symlink(path("victim"), path(f.tmp)), 0);
	CHECK_EQ(out_write_chunk(&f, 0, "data", 4), -1);
	CHECK(!strcmp(slurp(path("victim")), "precious"));
	out_discard(&d, &f);
	out_dir_close(&d);
	cleanup_dir();
}

CHECK_MAIN()
