/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_ladder.c - the inline ladder against fake providers.
 *
 * The fake create models what ../shared/docs/inline.md reports: providers
 * that fail above a limit (rxe, siw, mlx5), that clamp silently (hns, mana),
 * that over-report, and that fail for reasons unrelated to inline.  It also
 * scribbles over the attributes on failure, as rdma_create_qp does, to prove
 * that every try starts from fresh attributes.
 */
#include <errno.h>
#include "check.h"
#include "inline_ladder.h"

enum fake_mode { FAIL_ABOVE, CLAMP_POW2, WRITE_BACK_FIXED, FAIL_ALWAYS };

struct fake {
	enum fake_mode mode;
	uint32_t limit;      /* FAIL_ABOVE / CLAMP_POW2: the device maximum */
	uint32_t fixed;      /* WRITE_BACK_FIXED: value written back */
	int err;             /* errno of a failure */
	uint32_t asked[64];  /* max_inline_data of each call */
	uint32_t send_wr[64];
	int calls, live, destroys;
};

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

static int fake_create(void *ctx, struct ibv_qp_init_attr *attr)
{
	struct fake *f = ctx;
	uint32_t want = attr->cap.max_inline_data;
	int fail = 0;

	if (f->calls < 64) {
		f->asked[f->calls] = want;
		f->send_wr[f->calls] = attr->cap.max_send_wr;
	}
	f->calls++;
	switch (f->mode) {
	case FAIL_ABOVE:
		fail = want > f->limit;
		break;
	case CLAMP_POW2: /* hns: min(pow2(asked), max) */
		attr->cap.max_inline_data = want ? pow2_at_least(want) : 0;
		if (attr->cap.max_inline_data > f->limit)
			attr->cap.max_inline_data = f->limit;
		break;
	case WRITE_BACK_FIXED:
		attr->cap.max_inline_data = f->fixed;
		break;
	case FAIL_ALWAYS:
		fail = 1;
		break;
	}
	if (fail) {
		/* rdma_create_qp writes back even on failure */
		attr->cap.max_send_wr = 1;
		attr->cap.max_send_sge = 99;
		attr->cap.max_inline_data = 12345;
		return f->err ? f->err : EINVAL;
	}
	f->live++;
	return 0;
}

static void fake_destroy(void *ctx)
{
	struct fake *f = ctx;
	f->live--;
	f->destroys++;
}

static int run(struct fake *f, int request, struct ladder_result *res)
{
	struct ibv_qp_init_attr base = {.qp_type = IBV_QPT_RC};
	struct ladder_ops ops = {fake_create, fake_destroy, f};
	struct rdmig_opts opts;

	rdmig_opts_init(&opts);
	base.cap.max_send_wr = 512;
	base.cap.max_send_sge = 2;
	return rdmig__inline_ladder_run(request, &base, &ops, &opts, res);
}

TEST(auto_first_rung_fits)
{
	struct fake f = {.mode = FAIL_ABOVE, .limit = 512};
	struct ladder_result r;

	CHECK_OK(run(&f, RDMIG_INLINE_AUTO, &r));
	CHECK_EQ(r.info.asked, 40);
	CHECK_EQ(r.info.granted, 40);
	CHECK_EQ(r.info.tries, 1);
	CHECK_EQ(f.live, 1);
}

TEST(auto_fails_at_40_and_32_succeeds_at_16)
{
	struct fake f = {.mode = FAIL_ABOVE, .limit = 16};
	struct ladder_result r;

	CHECK_OK(run(&f, RDMIG_INLINE_AUTO, &r));
	CHECK_EQ(r.info.granted, 16);
	CHECK_EQ(r.info.tries, 3);
	CHECK_EQ(f.asked[0], 40);
	CHECK_EQ(f.asked[1], 32);
	CHECK_EQ(f.asked[2], 16);
	CHECK_EQ(f.live, 1);
}

TEST(attributes_rebuilt_after_failed_create)
{
	struct fake f = {.mode = FAIL_ABOVE, .limit = 0};
	struct ladder_result r;

	CHECK_OK(run(&f, RDMIG_INLINE_AUTO, &r));
	CHECK_EQ(f.calls, 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(f.send_wr[i], 512);
	CHECK_EQ(f.asked[3], 0);
	CHECK_EQ(r.info.granted, 0);
}

TEST(provider_clamping_to_zero_never_goes_inline)
{
	struct fake f = {.mode = WRITE_BACK_FIXED, .fixed = 0}; /* mana */
	struct ladder_result r;

	CHECK_OK(run(&f, RDMIG_INLINE_AUTO, &r));
	CHECK_EQ(r.info.tries, 1);
	CHECK_EQ(r.info.written_back, 0);
	CHECK_EQ(r.info.granted, 0);
}

TEST(provider_clamping_below_request)
{
	struct fake f = {.mode = CLAMP_POW2, .limit = 32}; /* hns with a 32-byte limit */
	struct ladder_result r;

	CHECK_OK(run(&f, RDMIG_INLINE_AUTO, &r));
	CHECK_EQ(r.info.written_back, 32);
	CHECK_EQ(r.info.granted, 32);
}

TEST(over_reporting_provider_keeps_the_request)
{
	struct fake f = {.mode = WRITE_BACK_FIXED, .fixed = 828}; /* mlx5 rounds up */
	struct ladder_result r;

	CHECK_OK(run(&f, RDMIG_INLINE_AUTO, &r));
	CHECK_EQ(r.info.written_back, 828);
	CHECK_EQ(r.info.granted, 40);
}

TEST(inline_zero_ignores_what_is_written_back)
{
	struct fake f = {.mode = WRITE_BACK_FIXED, .fixed = 32}; /* rxe: 16 x sge */
	struct ladder_result r;

	CHECK_OK(run(&f, 0, &r));
	CHECK_EQ(r.info.asked, 0);
	CHECK_EQ(r.info.tries, 1);
	CHECK_EQ(f.asked[0], 0);
	CHECK_EQ(r.info.granted, 0);
}

TEST(explicit_request_falls_back_to_the_device_limit)
{
	struct fake f = {.mode = FAIL_ABOVE, .limit = 80}; /* siw */
	struct ladder_result r;

	CHECK_OK(run(&f, 512, &r));
	CHECK_EQ(r.info.asked, 512);
	CHECK_EQ(r.info.granted, 80);
	CHECK_EQ(f.live, 1);
	CHECK_EQ(f.asked[f.calls - 1] <= 80 ? 1 : 0, 1);
	CHECK(r.info.tries <= 16);
}

TEST(explicit_request_above_rxe_limit)
{
	struct fake f = {.mode = FAIL_ABOVE, .limit = 512};
	struct ladder_result r;

	CHECK_OK(run(&f, 1024, &r));
	CHECK_EQ(r.info.granted, 512);
	CHECK_EQ(f.live, 1);
}

TEST(explicit_request_that_fits_takes_one_try)
{
	struct fake f = {.mode = FAIL_ABOVE, .limit = 80};
	struct ladder_result r;

	CHECK_OK(run(&f, 64, &r));
	CHECK_EQ(r.info.granted, 64);
	CHECK_EQ(r.info.tries, 1);
}

TEST(non_inline_error_stops_the_ladder)
{
	struct fake f = {.mode = FAIL_ALWAYS, .err = EPERM};
	struct ladder_result r;

	CHECK_EQ(run(&f, RDMIG_INLINE_AUTO, &r), -EPERM);
	CHECK_EQ(r.info.tries, 1);
	CHECK_EQ(r.last_errno, EPERM);
	CHECK_EQ(f.live, 0);
}

TEST(failure_at_every_rung_reports_the_last_caps)
{
	struct fake f = {.mode = FAIL_ALWAYS, .err = EINVAL};
	struct ladder_result r;

	CHECK_EQ(run(&f, RDMIG_INLINE_AUTO, &r), -EINVAL);
	CHECK_EQ(r.info.tries, 4);
	CHECK_EQ(r.last_errno, EINVAL);
	CHECK_EQ(r.asked.max_inline_data, 0);
	CHECK_EQ(r.asked.max_send_wr, 512);
	CHECK_EQ(f.live, 0);
}

TEST(explicit_request_failing_everywhere_leaves_no_qp)
{
	struct fake f = {.mode = FAIL_ALWAYS, .err = ENOMEM};
	struct ladder_result r;

	CHECK_EQ(run(&f, 300, &r), -ENOMEM);
	CHECK_EQ(f.live, 0);
	CHECK_EQ(f.asked[f.calls - 1], 0);
}

CHECK_MAIN()
