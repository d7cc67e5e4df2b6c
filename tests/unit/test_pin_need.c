/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_pin_need.c - rdmig_pin_need (src/engine/pin_need.c): what a
 * migration pins, by registration and chunk size, its arguments, and the
 * reading of CAP_IPC_LOCK that decides whether the limit applies.
 */
#include <linux/capability.h>
#include <stdint.h>
#include <sys/resource.h>
#include <unistd.h>
#include "check.h"
#include "pin_need.h"
#include "rdmig.h"

TEST(pin_all_is_every_block_plus_control)
{
	long page = sysconf(_SC_PAGESIZE);
	struct rdmig_block b[] = {
		{"a", (void *)4096, 3 * RDMIG_CHUNK_SIZE + 1, 0},
		{"empty", (void *)4096, 0, 0},
		{"small", (void *)4096, 100, 0},
	};
	struct rdmig_pin_need need = {.size = sizeof(need)};
	uint64_t blocks = 3 * RDMIG_CHUNK_SIZE + (uint64_t)page + (uint64_t)page;

	CHECK_EQ(rdmig_pin_need(NULL, 1, 0, b, 3, &need), 0);
	CHECK_EQ(need.least, RDMIG_CONTROL_REGISTERED + blocks);
	CHECK_EQ(need.most, need.least);
	CHECK_EQ(RDMIG_CONTROL_REGISTERED, 3 * 512 * 1024);
}

TEST(dynamic_is_one_chunk_at_least)
{
	long page = sysconf(_SC_PAGESIZE);
	struct rdmig_block big[] = {{"a", (void *)4096, 5 * RDMIG_CHUNK_SIZE, 0},
				    {"b", (void *)4096, 7000, 0}};
	struct rdmig_block small[] = {{"s", (void *)4096, 5000, 0}};
	struct rdmig_pin_need need = {.size = sizeof(need)};

	CHECK_EQ(rdmig_pin_need(NULL, 0, 0, big, 2, &need), 0);
	CHECK_EQ(need.least, RDMIG_CONTROL_REGISTERED + RDMIG_CHUNK_SIZE);
	CHECK_EQ(need.most, RDMIG_CONTROL_REGISTERED + 5 * RDMIG_CHUNK_SIZE + 2 * (uint64_t)page);
	/* a block smaller than a chunk is registered whole */
	CHECK_EQ(rdmig_pin_need(NULL, 0, 0, small, 1, &need), 0);
	CHECK_EQ(need.least, RDMIG_CONTROL_REGISTERED + 2 * (uint64_t)page);
	/* no blocks yet: the control buffers alone */
	CHECK_EQ(rdmig_pin_need(NULL, 0, 0, NULL, 0, &need), 0);
	CHECK_EQ(need.least, RDMIG_CONTROL_REGISTERED);
	CHECK_EQ(need.most, RDMIG_CONTROL_REGISTERED);
}

TEST(capeff_is_read_from_the_status_text)
{
	/* root: every capability; a shell with CAP_IPC_LOCK (bit 14) dropped */
	const char *root = "Name:\tcat\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\n"
			   "CapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n";
	const char *dropped = "Name:\tsh\nCapEff:\t000001ffffffbfff\n";
	const char *user = "Name:\tsh\nCapEff:\t0000000000000000\n";

	CHECK(rdmig__capeff_has(root, CAP_IPC_LOCK));
	CHECK(!rdmig__capeff_has(dropped, CAP_IPC_LOCK));
	CHECK(rdmig__capeff_has(dropped, CAP_IPC_LOCK - 1));
	CHECK(!rdmig__capeff_has(user, CAP_IPC_LOCK));
	CHECK(!rdmig__capeff_has("Name:\tx\n", CAP_IPC_LOCK));
	/* CapPrm alone does not count */
	CHECK(!rdmig__capeff_has("CapPrm:\t000001ffffffffff\nCapEff:\t0\n", CAP_IPC_LOCK));
}

TEST(a_larger_chunk_is_the_least_of_dynamic)
{
	struct rdmig_block b[] = {{"a", (void *)4096, 64 * RDMIG_CHUNK_SIZE, 0}};
	struct rdmig_pin_need need = {.size = sizeof(need)};

	CHECK_EQ(rdmig_pin_need(NULL, 0, 32 * RDMIG_CHUNK_SIZE, b, 1, &need), 0);
	CHECK_EQ(need.least, RDMIG_CONTROL_REGISTERED + 32 * RDMIG_CHUNK_SIZE);
	CHECK_EQ(need.most, RDMIG_CONTROL_REGISTERED + 64 * RDMIG_CHUNK_SIZE);
}

TEST(bad_arguments_are_refused)
{
	struct rdmig_block b[] = {{"a", (void *)4096, 4096, 0}};
	struct rdmig_pin_need need = {.size = sizeof(need)}, unset = {0};

	CHECK_EQ(rdmig_pin_need(NULL, 0, 0, b, 1, NULL), RDMIG_EINVAL);
	CHECK_EQ(rdmig_pin_need(NULL, 0, 0, b, 1, &unset), RDMIG_EINVAL);
	CHECK_EQ(rdmig_pin_need(NULL, 0, 0, NULL, 1, &need), RDMIG_EINVAL);
	CHECK_EQ(rdmig_pin_need(NULL, 0, 3 * RDMIG_CHUNK_SIZE, b, 1, &need), RDMIG_EINVAL);
	CHECK_EQ(rdmig_pin_need(NULL, 0, RDMIG_CHUNK_SIZE / 2, b, 1, &need), RDMIG_EINVAL);
}

/* An older caller's smaller struct gets the fields it knows, no more. */
TEST(an_older_struct_gets_its_own_fields)
{
	struct rdmig_block b[] = {{"a", (void *)4096, 4096, 0}};
	struct {
		struct rdmig_pin_need need;
		uint64_t after;
	} old = {.need = {.size = offsetof(struct rdmig_pin_need, limit), .limit = 7}, .after = 9};

	CHECK_EQ(rdmig_pin_need(NULL, 0, 0, b, 1, &old.need), 0);
	CHECK_EQ(old.need.size, offsetof(struct rdmig_pin_need, limit));
	CHECK_EQ(old.need.most, RDMIG_CONTROL_REGISTERED + 4096);
	CHECK_EQ(old.need.limit, 7);
	CHECK_EQ(old.after, 9);
}

/* The limit is the soft RLIMIT_MEMLOCK, or none when it is unlimited;
 * on siw it applies whatever the capabilities. */
TEST(the_limit_is_rlimit_memlock)
{
	struct rdmig_pin_need need = {.size = sizeof(need)};
	struct rlimit old, low;

	CHECK_EQ(getrlimit(RLIMIT_MEMLOCK, &old), 0);
	low = old;
	low.rlim_cur = 8u << 20;
	if (old.rlim_max != RLIM_INFINITY && old.rlim_max < low.rlim_cur)
		low.rlim_cur = old.rlim_max;
	CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &low), 0);
	CHECK_EQ(rdmig_pin_need("siw0", 0, 0, NULL, 0, &need), 0);
	CHECK_EQ(need.limit, (uint64_t)low.rlim_cur);
	CHECK_EQ(need.least, RDMIG_CONTROL_REGISTERED);
	low.rlim_cur = RLIM_INFINITY;
	if (old.rlim_max == RLIM_INFINITY) {
		CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &low), 0);
		CHECK_EQ(rdmig_pin_need("siw0", 0, 0, NULL, 0, &need), 0);
		CHECK_EQ(need.limit, UINT64_MAX);
	}
	CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &old), 0);
}

CHECK_MAIN()
