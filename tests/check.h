/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * check.h - a minimal test runner for rdmig's tests.
 *
 * A test file defines cases with TEST(name) { ... } and ends with
 * CHECK_MAIN().  Run without arguments it runs every case; with a case name
 * it runs that one (ctest registers each case separately, see
 * tests/CMakeLists.txt).  A failed CHECK prints both values and the place,
 * and ends the case.  CHECK_SKIP(reason) ends a case that cannot run here
 * as a skip: counted as one, never as a pass, and the runner exits with
 * CHECK_SKIP_STATUS when every case it ran was skipped (ctest's
 * SKIP_RETURN_CODE).  A case that must run fails instead of skipping.
 */
#ifndef RDMIG_CHECK_H
#define RDMIG_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*check_case_fn)(void);
struct check_case {
	const char *name;
	check_case_fn fn;
};

#define CHECK_MAX_CASES 256
/* The exit status of a skipped case (automake's, ctest's SKIP_RETURN_CODE). */
#define CHECK_SKIP_STATUS 77
extern struct check_case check_cases[CHECK_MAX_CASES];
extern int check_case_count;
extern int check_failed;
extern int check_skipped;
/* cases that did not fit in check_cases: the runner fails on any */
extern int check_cases_dropped;

#define TEST(name)                                                                                 \
	static void test_##name(void);                                                             \
	__attribute__((constructor)) static void register_##name(void)                             \
	{                                                                                          \
		if (check_case_count < CHECK_MAX_CASES)                                            \
			check_cases[check_case_count++] = (struct check_case){#name, test_##name}; \
		else                                                                               \
			check_cases_dropped++;                                                     \
	}                                                                                          \
	static void test_##name(void)

/* End the case as skipped, saying why (printf-style). */
#define CHECK_SKIP(...)                                                                            \
	do {                                                                                       \
		fprintf(stderr, "%s:%d: skip: ", __FILE__, __LINE__);                              \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		check_skipped = 1;                                                                 \
		return;                                                                            \
	} while (0)

#define CHECK_FAIL_AT(...)                                                                         \
	do {                                                                                       \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                    \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		check_failed = 1;                                                                  \
		return;                                                                            \
	} while (0)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			CHECK_FAIL_AT("CHECK(%s) failed", #cond);                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b);                    \
		if (check_a_ != check_b_)                                                          \
			CHECK_FAIL_AT("%s == %s failed: %lld != %lld", #a, #b, check_a_, check_b_); \
	} while (0)

#define CHECK_OK(expr)                                                                             \
	do {                                                                                       \
		long long check_r_ = (long long)(expr);                                            \
		if (check_r_ != 0)                                                                 \
			CHECK_FAIL_AT("%s returned %lld", #expr, check_r_);                        \
	} while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                            \
	do {                                                                                       \
		const char *check_h_ = (hay), *check_n_ = (needle);                                \
		if (!check_h_ || !strstr(check_h_, check_n_))                                      \
			CHECK_FAIL_AT("\"%s\" does not contain \"%s\"", check_h_ ? check_h_ : "(null)", \
				      check_n_);                                                   \
	} while (0)

#define CHECK_MEM_EQ(a, b, n)                                                                      \
	do {                                                                                       \
		const unsigned char *check_x_ = (const void *)(a), *check_y_ = (const void *)(b);  \
		size_t check_n_ = (n);                                                             \
		for (size_t check_i_ = 0; check_i_ < check_n_; check_i_++)                         \
			if (check_x_[check_i_] != check_y_[check_i_])                              \
				CHECK_FAIL_AT("%s and %s differ at byte %zu: 0x%02x != 0x%02x", #a, \
					      #b, check_i_, check_x_[check_i_], check_y_[check_i_]); \
	} while (0)

int check_run(int argc, char **argv);

#define CHECK_MAIN()                                                                               \
	struct check_case check_cases[CHECK_MAX_CASES];                                            \
	int check_case_count;                                                                      \
	int check_failed;                                                                          \
	int check_skipped;                                                                         \
	int check_cases_dropped;                                                                   \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		return check_run(argc, argv);                                                      \
	}

#endif
