/* SPDX-License-Identifier: BSD-2-Clause */
/* check_overflow.c - one case more than CHECK_MAX_CASES, for
 * test_check_runner.sh: the runner must refuse to run rather than drop one. */
#include "check.h"

#define CASE(n) \
	TEST(c##n) \
	{ \
		CHECK(1); \
	}
#define CASE4(n) CASE(n##0) CASE(n##1) CASE(n##2) CASE(n##3)
#define CASE16(n) CASE4(n##0) CASE4(n##1) CASE4(n##2) CASE4(n##3)
#define CASE64(n) CASE16(n##0) CASE16(n##1) CASE16(n##2) CASE16(n##3)

CASE64(0)
CASE64(1)
CASE64(2)
CASE64(3)
CASE(4) /* the 257th */

CHECK_MAIN()
