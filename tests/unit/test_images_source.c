/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_images_source.c - what the image-set source (rdmig/images.h,
 * src/images/images_source.c) refuses before anything goes on the wire, and a
 * cancel before the first step.  No device: the connection is a zeroed
 * handle with options, which create reads (its chunk size) and nothing
 * else touches before a step.  And when the records go (images_records.h).
 */
#include <signal.h>
#include <stdlib.h>
#include "check.h"
#include "conn.h"
#include "images_records.h"
#include "rdmig/images.h"

static struct rdmig_conn *fake_conn(void)
{
	struct rdmig_conn *c = calloc(1, sizeof(*c));

	if (!c)
		abort();
	rdmig_opts_init(&c->opts);
	c->opts.chunk_size = 32u << 20;
	return c;
}

static uint8_t mem[8192];

TEST(blocks_and_options_are_checked_at_create)
{
	struct rdmig_conn *c = fake_conn();
	struct rdmig_images_item ok = {"disk", mem, sizeof(mem)};
	struct rdmig_images_item bad_name = {"a/b\n", mem, sizeof(mem)};
	struct rdmig_images_item no_mem = {"disk", NULL, sizeof(mem)};
	struct rdmig_images_source_opts o;
	struct rdmig_images_source *s = (void *)1;

	CHECK_EQ(rdmig_images_source_create(c, &ok, 0, NULL, &s), RDMIG_EINVAL);
	CHECK(s == NULL);
	CHECK_EQ(rdmig_images_source_create(c, &ok, RDMIG_IMGS_MAX_BLOCKS + 1, NULL, &s),
		 RDMIG_EINVAL);
	CHECK_EQ(rdmig_images_source_create(c, &bad_name, 1, NULL, &s), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), "block");
	CHECK_EQ(rdmig_images_source_create(c, &no_mem, 1, NULL, &s), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), "no memory");
	rdmig_images_source_opts_init(&o);
	o.span_shift = 12;
	CHECK_EQ(rdmig_images_source_create(c, &ok, 1, &o, &s), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), "span shift 12");
	o.span_shift = 22;
	o.digest = 99;
	CHECK_EQ(rdmig_images_source_create(c, &ok, 1, &o, &s), RDMIG_EINVAL);
	o.size = 3;
	o.digest = RDMIG_DIGEST_XXH64;
	CHECK_EQ(rdmig_images_source_create(c, &ok, 1, &o, &s), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), "rdmig_images_source_opts_init");
	free(c);
}

TEST(a_cancel_before_the_first_step_sends_nothing)
{
	struct rdmig_conn *c = fake_conn();
	struct rdmig_images_item two[2] = {{"a", mem, sizeof(mem)}, {"b", NULL, 0}};
	struct rdmig_images_stats st = {.size = sizeof(st)};
	struct rdmig_images_source *s;
	struct rdmig_images_event ev;

	CHECK_OK(rdmig_images_source_create(c, two, 2, NULL, &s));
	CHECK_STR_CONTAINS(rdmig_images_source_blocks(s)[1].name, "b");
	rdmig_images_source_stats(s, &st);
	CHECK_EQ(st.bytes_total, sizeof(mem));
	CHECK_EQ(st.blocks, 2);
	CHECK_EQ(st.digest, RDMIG_DIGEST_DEFAULT);
	rdmig_images_source_cancel(s);
	CHECK_EQ(rdmig_images_source_step(s, &ev), RDMIG_ECANCELED);
	CHECK_EQ(rdmig_images_source_step(s, &ev), RDMIG_ECANCELED); /* sticky */
	CHECK_STR_CONTAINS(rdmig_images_source_errmsg(s), "cancelled");
	rdmig_images_source_destroy(s);
	free(c);
}

/* The connection's opts.cancel (a signal handler's flag) cancels too. */
TEST(the_connections_cancel_flag_cancels)
{
	static volatile sig_atomic_t flag;
	struct rdmig_conn *c = fake_conn();
	struct rdmig_images_item one = {"a", mem, sizeof(mem)};
	struct rdmig_images_source *s;
	struct rdmig_images_event ev;

	c->opts.cancel = &flag;
	flag = 1;
	CHECK_OK(rdmig_images_source_create(c, &one, 1, NULL, &s));
	CHECK_EQ(rdmig_images_source_run(s, NULL, NULL), RDMIG_ECANCELED);
	CHECK_EQ(rdmig_images_source_step(s, &ev), RDMIG_ECANCELED);
	rdmig_images_source_destroy(s);
	free(c);
}

/* Dynamic registration: records every 32 MiB, except in a block's last
 * chunk (nothing is registered ahead there), where they go per span as
 * with PIN_ALL; the last spans are then checked while the data arrives. */
TEST(records_go_per_span_where_no_registration_can_be_out)
{
	const uint64_t mib = 1u << 20;

	CHECK(!imgs_records_after_span(false, false, 4 * mib));
	CHECK(!imgs_records_after_span(false, false, 36 * mib));
	CHECK(imgs_records_after_span(false, false, 32 * mib));
	CHECK(imgs_records_after_span(false, false, 64 * mib));
	CHECK(imgs_records_after_span(false, true, 228 * mib));
	CHECK(imgs_records_after_span(false, true, 4 * mib));
	CHECK(imgs_records_after_span(true, false, 4 * mib));
	CHECK(imgs_records_after_span(true, false, 36 * mib));
}

CHECK_MAIN()
