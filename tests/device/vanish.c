/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vanish.c - N connection requesters that send a valid rdmig connection
 * request and go away before the connection is established (rawpeer.h),
 * for the shell tests of `rdmig recv` (test_guards.sh, case vanished).
 *
 *   vanish IP PORT N    exit 0 once all N came and went, 1 otherwise
 */
#include <stdio.h>
#include <stdlib.h>
#include "rawpeer.h"

/* rawpeer and devenv report through the check harness's state */
struct check_case check_cases[CHECK_MAX_CASES];
int check_case_count;
int check_failed;
int check_skipped;
int check_cases_dropped;

int main(int argc, char **argv)
{
	struct rdmig_caps caps = {RDMIG_CAP_VERSION, 0};
	uint8_t pdata[RDMIG_CAPS_SIZE];
	int n = argc == 4 ? atoi(argv[3]) : 0;

	if (n <= 0) {
		fprintf(stderr, "usage: vanish IP PORT N\n");
		return 2;
	}
	rdmig_encode_caps(&caps, pdata);
	for (int i = 0; i < n; i++)
		if (raw_cm_vanish(argv[1], argv[2], pdata, sizeof(pdata), RAW_VANISH_AT_ONCE)) {
			fprintf(stderr, "vanish: requester %d of %d failed\n", i + 1, n);
			return 1;
		}
	return 0;
}
