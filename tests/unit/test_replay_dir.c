/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_replay_dir.c - the images of `rdmig send --qemu-replay` are read
 * into the replay's own memory (src/sessions/replay_dir.c): a file cut after it
 * was read changes nothing (a mapping of it raised SIGBUS in the sender),
 * a file cut while it is read is an error, holes read as zero, and a file
 * whose size is not the record's is refused without its size being told.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "replay_dir.h"

#define MIB (1ull << 20)
#define LENGTH (200 * MIB)

static char dir_path[64];
static struct replay_dir dir;

/* DIR/a.img of LENGTH bytes: a pattern in its first and last MiB, a hole
 * between. */
static uint8_t pattern(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 12) + 1);
}

static const char *image_path(void)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/a.img", dir_path);
	return path;
}

static int make_image(void)
{
	static uint8_t buf[MIB];
	char err[256];
	int fd;

	strcpy(dir_path, "/tmp/rdmig-replay-dir-XXXXXX");
	if (!mkdtemp(dir_path))
		return -1;
	fd = open(image_path(), O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return -1;
	for (uint64_t i = 0; i < MIB; i++)
		buf[i] = pattern(i);
	if (pwrite(fd, buf, MIB, 0) != (ssize_t)MIB)
		return -1;
	for (uint64_t i = 0; i < MIB; i++)
		buf[i] = pattern(LENGTH - MIB + i);
	if (pwrite(fd, buf, MIB, LENGTH - MIB) != (ssize_t)MIB)
		return -1;
	close(fd);
	return rd_open(&dir, dir_path, err, sizeof(err));
}

static void remove_image(void)
{
	rd_close(&dir);
	unlink(image_path());
	rmdir(dir_path);
}

static int cut_image(uint64_t length)
{
	return truncate(image_path(), (off_t)length);
}

static char block_name[] = "pc.ram", block_file[] = "a.img";
static struct rdmig_rr_block block = {.name = block_name, .file = block_file, .length = LENGTH};

TEST(an_image_cut_after_it_was_read_changes_nothing)
{
	uint8_t *mem = NULL;
	char err[512] = "";
	uint64_t bad = UINT64_MAX;

	CHECK_OK(make_image());
	CHECK_OK(rd_read_image(&dir, &block, &mem, NULL, err, sizeof(err)));
	CHECK(mem != NULL);
	/* a mapping of the file would raise SIGBUS on the reads below */
	CHECK_OK(cut_image(0));
	for (uint64_t i = 0; i < LENGTH && bad == UINT64_MAX; i++) {
		uint8_t want = i < MIB || i >= LENGTH - MIB ? pattern(i) : 0;
		if (mem[i] != want)
			bad = i;
	}
	if (bad != UINT64_MAX)
		CHECK_FAIL_AT("byte %llu differs from the file's", (unsigned long long)bad);
	rd_free_image(mem, LENGTH);
	remove_image();
}

/* Asked before each piece is read: the second time, cut the file. */
static int asked;
static bool cut_on_second_piece(void)
{
	if (++asked == 2 && cut_image(MIB))
		abort();
	return false;
}

TEST(an_image_cut_while_it_is_read_is_an_error)
{
	uint8_t *mem = (uint8_t *)1;
	char err[512] = "";

	CHECK_OK(make_image());
	asked = 0;
	CHECK_EQ(rd_read_image(&dir, &block, &mem, cut_on_second_piece, err, sizeof(err)), -1);
	CHECK(asked >= 2);
	CHECK(mem == NULL);
	if (!strstr(err, "shrank while it was read") && !strstr(err, "changed while it was read"))
		CHECK_FAIL_AT("unexpected message: %s", err);
	CHECK_STR_CONTAINS(err, "block 'pc.ram'");
	remove_image();
}

TEST(an_image_of_another_size_than_the_record_says_is_refused)
{
	uint8_t *mem = (uint8_t *)1;
	char err[512] = "";
	struct rdmig_rr_block longer = block;

	longer.length = LENGTH + 1;
	CHECK_OK(make_image());
	CHECK_EQ(rd_read_image(&dir, &longer, &mem, NULL, err, sizeof(err)), -1);
	CHECK(mem == NULL);
	CHECK_STR_CONTAINS(err, "no longer has the record's length=209715201 bytes");
	CHECK(!strstr(err, "209715200"));
	remove_image();
}

static bool always(void)
{
	return true;
}

TEST(a_signal_while_reading_gives_minus_two)
{
	uint8_t *mem = (uint8_t *)1;
	char err[512] = "";

	CHECK_OK(make_image());
	CHECK_EQ(rd_read_image(&dir, &block, &mem, always, err, sizeof(err)), -2);
	CHECK(mem == NULL);
	remove_image();
}

/* A hard link to an image already named is the same image: 64 links to
 * one file took 64 copies of it.  Refused by its identity (st_dev,
 * st_ino), whatever its name. */
TEST(a_hard_link_to_an_image_already_named_is_refused)
{
	char link_path[160], err[512] = "";
	uint64_t size = 0;

	CHECK_OK(make_image());
	snprintf(link_path, sizeof(link_path), "%s/b.img", dir_path);
	CHECK_OK(link(image_path(), link_path));
	CHECK_OK(rd_image_size(&dir, "a.img", &size, err, sizeof(err)));
	CHECK_EQ(size, LENGTH);
	CHECK_EQ(rd_image_size(&dir, "b.img", &size, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "is an image an earlier block names already");
	unlink(link_path);
	remove_image();
}

CHECK_MAIN()
