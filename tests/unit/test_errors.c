/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_errors.c - every code from RDMIG_OK down to RDMIG_ERROR_MIN has its
 * own name and description, and unknown codes are reported as unknown.
 */
#include <limits.h>

#include "check.h"
#include "rdmig.h"

#define CODE_COUNT (1 - RDMIG_ERROR_MIN)

TEST(error_min_is_last_code)
{
	CHECK_EQ(RDMIG_ERROR_MIN, RDMIG_ECANCELED);
	CHECK_EQ(CODE_COUNT, 24);
}

TEST(every_code_has_a_name)
{
	for (int code = RDMIG_OK; code >= RDMIG_ERROR_MIN; code--) {
		const char *name = rdmig_err_name(code);

		CHECK(name != NULL);
		CHECK_STR_CONTAINS(name, "RDMIG_");
		if (strcmp(name, "RDMIG_E?") == 0)
			CHECK_FAIL_AT("code %d has no name", code);
	}
}

TEST(every_code_has_a_description)
{
	for (int code = RDMIG_OK; code >= RDMIG_ERROR_MIN; code--) {
		const char *text = rdmig_strerror(code);

		CHECK(text != NULL);
		CHECK(text[0] != '\0');
		if (strcmp(text, "unknown error") == 0)
			CHECK_FAIL_AT("code %d has no description", code);
	}
}

TEST(names_and_descriptions_are_distinct)
{
	for (int a = RDMIG_OK; a >= RDMIG_ERROR_MIN; a--) {
		for (int b = a - 1; b >= RDMIG_ERROR_MIN; b--) {
			if (strcmp(rdmig_err_name(a), rdmig_err_name(b)) == 0)
				CHECK_FAIL_AT("codes %d and %d share the name %s", a, b,
					      rdmig_err_name(a));
			if (strcmp(rdmig_strerror(a), rdmig_strerror(b)) == 0)
				CHECK_FAIL_AT("codes %d and %d share the text \"%s\"", a, b,
					      rdmig_strerror(a));
		}
	}
}

TEST(names_match_the_enum)
{
	/* The table is built with #code, so a name is the enumerator itself. */
	static const struct {
		int code;
		const char *name;
	} want[] = {
		{RDMIG_OK, "RDMIG_OK"},
		{RDMIG_EINVAL, "RDMIG_EINVAL"},
		{RDMIG_ENOMEM, "RDMIG_ENOMEM"},
		{RDMIG_ESYS, "RDMIG_ESYS"},
		{RDMIG_ETIMEDOUT, "RDMIG_ETIMEDOUT"},
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
		{RDMIG_ENODEV, "RDMIG_ENODEV"},
		{RDMIG_EADDR, "RDMIG_EADDR"},
		{RDMIG_ESTATE, "RDMIG_ESTATE"},
		{RDMIG_ETOOBIG, "RDMIG_ETOOBIG"},
		{RDMIG_EPROTO, "RDMIG_EPROTO"},
		{RDMIG_ECANCELED, "RDMIG_ECANCELED"},
	};

	CHECK_EQ(sizeof(want) / sizeof(want[0]), CODE_COUNT);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strcmp(rdmig_err_name(want[i].code), want[i].name) != 0)
			CHECK_FAIL_AT("rdmig_err_name(%d) = %s, want %s", want[i].code,
				      rdmig_err_name(want[i].code), want[i].name);
}

TEST(unknown_codes)
{
	const int unknown[] = {1, 2, RDMIG_ERROR_MIN - 1, -1000, INT_MIN, INT_MAX};

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		CHECK(strcmp(rdmig_strerror(unknown[i]), "unknown error") == 0);
		CHECK(strcmp(rdmig_err_name(unknown[i]), "RDMIG_E?") == 0);
	}
}

CHECK_MAIN()
