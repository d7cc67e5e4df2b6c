/* SPDX-License-Identifier: BSD-2-Clause */
/* check_skips.c - a pass, a skip and a failure, for test_check_runner.sh. */
#include "check.h"

TEST(passes)
{
	CHECK_EQ(1 + 1, 2);
}

TEST(skips)
{
	CHECK_SKIP("nothing to run on (%s)", "on purpose");
	CHECK(0); /* not reached */
}

TEST(fails)
{
	CHECK_EQ(1 + 1, 3);
}

CHECK_MAIN()
