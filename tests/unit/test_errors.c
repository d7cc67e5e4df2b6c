/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_errors.c - the one error convention: 0, -errno for system failures
 * (and the codes that are -EINVAL, -ENOMEM, ...), rdmig's own codes below
 * -RDMIG_ELIB_BASE; every code has its own name and description, any
 * -errno is described, and unknown codes are reported as unknown.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "check.h"
#include "rdmig.h"

/* Every code of enum rdmig_error, in the order of the header. */
static const struct {
	int code;
	const char *name;
} codes[] = {
	{RDMIG_OK, "RDMIG_OK"},
	{RDMIG_EINVAL, "RDMIG_EINVAL"},
	{RDMIG_ENOMEM, "RDMIG_ENOMEM"},
	{RDMIG_ENODEV, "RDMIG_ENODEV"},
	{RDMIG_ETIMEDOUT, "RDMIG_ETIMEDOUT"},
	{RDMIG_ECANCELED, "RDMIG_ECANCELED"},
	{RDMIG_EDISCONNECTED, "RDMIG_EDISCONNECTED"},
	{RDMIG_EPEER, "RDMIG_EPEER"},
	{RDMIG_EREJECTED, "RDMIG_EREJECTED"},
	{RDMIG_EVERSION, "RDMIG_EVERSION"},
	{RDMIG_EMSG_SHORT, "RDMIG_EMSG_SHORT"},
	{RDMIG_EMSG_LEN, "RDMIG_EMSG_LEN"},
	{RDMIG_EMSG_SIZE, "RDMIG_EMSG_SIZE"},
	{RDMIG_EMSG_REPEAT, "RDMIG_EMSG_REPEAT"},
	{RDMIG_EMSG_REPEAT_LEN, "RDMIG_EMSG_REPEAT_LEN"},
	{RDMIG_EMSG_TYPE, "RDMIG_EMSG_TYPE"},
	{RDMIG_EMSG_UNEXPECTED, "RDMIG_EMSG_UNEXPECTED"},
	{RDMIG_ECOMPLETION, "RDMIG_ECOMPLETION"},
	{RDMIG_ERANGE, "RDMIG_ERANGE"},
	{RDMIG_EADDR, "RDMIG_EADDR"},
	{RDMIG_ESTATE, "RDMIG_ESTATE"},
	{RDMIG_ETOOBIG, "RDMIG_ETOOBIG"},
	{RDMIG_EPROTO, "RDMIG_EPROTO"},
	{RDMIG_EAGAIN, "RDMIG_EAGAIN"},
};
#define NCODES (sizeof(codes) / sizeof(codes[0]))

TEST(the_errno_codes_are_minus_errno)
{
	CHECK_EQ(RDMIG_EINVAL, -EINVAL);
	CHECK_EQ(RDMIG_ENOMEM, -ENOMEM);
	CHECK_EQ(RDMIG_ENODEV, -ENODEV);
	CHECK_EQ(RDMIG_ETIMEDOUT, -ETIMEDOUT);
	CHECK_EQ(RDMIG_ECANCELED, -ECANCELED);
	for (size_t i = 1; i <= 5; i++)
		CHECK(RDMIG_IS_ERRNO(codes[i].code));
}

TEST(rdmig_codes_cannot_collide_with_errno)
{
	/* 1 .. 5 above are errno; 6 .. are rdmig's own, a contiguous range
	 * from -(RDMIG_ELIB_BASE + 1) down to RDMIG_ERROR_MIN. */
	for (size_t i = 6; i < NCODES; i++) {
		CHECK_EQ(codes[i].code, -(RDMIG_ELIB_BASE + (int)i - 5));
		CHECK(!RDMIG_IS_ERRNO(codes[i].code));
		if (strerrordesc_np(-codes[i].code) != NULL)
			CHECK_FAIL_AT("%s (%d) is an errno", codes[i].name, codes[i].code);
	}
	CHECK_EQ(RDMIG_ERROR_MIN, codes[NCODES - 1].code);
	CHECK(!RDMIG_IS_ERRNO(0));
	CHECK(!RDMIG_IS_ERRNO(-RDMIG_ELIB_BASE));
	CHECK(RDMIG_IS_ERRNO(-1));
	CHECK(RDMIG_IS_ERRNO(-EHWPOISON));
}

TEST(names_match_the_enum)
{
	for (size_t i = 0; i < NCODES; i++)
		if (strcmp(rdmig_err_name(codes[i].code), codes[i].name) != 0)
			CHECK_FAIL_AT("rdmig_err_name(%d) = %s, want %s", codes[i].code,
				      rdmig_err_name(codes[i].code), codes[i].name);
}

TEST(every_code_has_a_description)
{
	for (size_t i = 0; i < NCODES; i++) {
		const char *text = rdmig_strerror(codes[i].code);

		CHECK(text != NULL);
		CHECK(text[0] != '\0');
		if (strcmp(text, "unknown error") == 0)
			CHECK_FAIL_AT("code %d has no description", codes[i].code);
	}
}

TEST(names_and_descriptions_are_distinct)
{
	for (size_t a = 0; a < NCODES; a++) {
		for (size_t b = a + 1; b < NCODES; b++) {
			if (strcmp(rdmig_err_name(codes[a].code), rdmig_err_name(codes[b].code)) == 0)
				CHECK_FAIL_AT("codes %d and %d share a name", codes[a].code,
					      codes[b].code);
			if (strcmp(rdmig_strerror(codes[a].code), rdmig_strerror(codes[b].code)) == 0)
				CHECK_FAIL_AT("codes %d and %d share a text", codes[a].code,
					      codes[b].code);
		}
	}
}

TEST(any_minus_errno_is_described_and_named)
{
	CHECK(strcmp(rdmig_strerror(-EADDRINUSE), strerror(EADDRINUSE)) == 0);
	CHECK(strcmp(rdmig_err_name(-EADDRINUSE), "EADDRINUSE") == 0);
	CHECK(strcmp(rdmig_err_name(-EPERM), "EPERM") == 0);
	CHECK(strcmp(rdmig_strerror(-EPERM), "Operation not permitted") == 0);
	for (int e = 1; e < 200; e++) {
		const char *want = strerrordesc_np(e);
		if (!want)
			continue;
		if (strcmp(rdmig_strerror(-e), "unknown error") == 0)
			CHECK_FAIL_AT("-%d (%s) is not described", e, want);
		if (strcmp(rdmig_err_name(-e), "RDMIG_E?") == 0)
			CHECK_FAIL_AT("-%d (%s) has no name", e, want);
	}
}

TEST(unknown_codes)
{
	const int unknown[] = {1, 2, EINVAL, -999, -RDMIG_ELIB_BASE, RDMIG_ERROR_MIN - 1,
			       -100000, INT_MIN, INT_MAX};

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		if (strcmp(rdmig_strerror(unknown[i]), "unknown error") != 0)
			CHECK_FAIL_AT("rdmig_strerror(%d) = %s", unknown[i],
				      rdmig_strerror(unknown[i]));
		CHECK(strcmp(rdmig_err_name(unknown[i]), "RDMIG_E?") == 0);
	}
}

CHECK_MAIN()
