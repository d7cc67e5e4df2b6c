/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_abi.c - what keeps programs built against another version of
 * rdmig.h working: options of an older (smaller) or newer (larger) struct,
 * output structs written up to the caller's size, one create convention
 * (0 and a handle, or a code and NULL), and getters that take NULL.
 */
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "conn.h"
#include "opts.h"
#include "rdmig.h"

#define GUARD 0xab

/* rdmig_opts as a program built against an older header saw it: it ends
 * after timeout_ms, and the caller's memory continues with other things. */
struct opts_old {
	size_t size;
	int inline_request;
	bool pin_all;
	int backlog;
	int timeout_ms;
};
struct old_in_memory {
	struct opts_old o;
	unsigned char after[256];
};

/* ... and as a newer header will: more fields after ours. */
struct opts_new {
	struct rdmig_opts o;
	uint64_t future[4];
};

static bool all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

TEST(opts_init_sets_the_callers_size_and_the_defaults)
{
	struct rdmig_opts o;

	memset(&o, 0xff, sizeof(o));
	rdmig_opts_init(&o);
	CHECK_EQ(o.size, sizeof(o));
	CHECK_EQ(o.inline_request, RDMIG_INLINE_AUTO);
	CHECK_EQ(o.timeout_ms, 60000);
	CHECK_EQ(o.max_send_wr, 512);
	CHECK_EQ(o.backlog, 128);
	CHECK(o.log == NULL && o.cancel == NULL);
}

TEST(older_smaller_opts_init_writes_only_its_size)
{
	struct old_in_memory m;

	memset(&m, GUARD, sizeof(m));
	rdmig_opts_init_sized((struct rdmig_opts *)(void *)&m.o, sizeof(m.o));
	CHECK_EQ(m.o.size, sizeof(m.o));
	CHECK_EQ(m.o.inline_request, RDMIG_INLINE_AUTO);
	CHECK_EQ(m.o.backlog, 128);
	CHECK_EQ(m.o.timeout_ms, 60000);
	CHECK(all_bytes(m.after, sizeof(m.after), GUARD)); /* no overrun */
}

TEST(older_smaller_opts_take_defaults_for_the_missing_fields)
{
	struct old_in_memory m;
	struct rdmig_opts got;
	char err[RDMIG_ERRMSG_SIZE] = "";

	memset(&m, GUARD, sizeof(m));
	rdmig_opts_init_sized((struct rdmig_opts *)(void *)&m.o, sizeof(m.o));
	m.o.timeout_ms = 1234;
	m.o.inline_request = 0;
	/* the bytes after the old struct are 0xab: read, they would make
	 * max_send_wr and spin_us invalid */
	CHECK_OK(rdmig__opts_copy(&got, (const struct rdmig_opts *)(const void *)&m.o, err));
	CHECK_EQ(got.size, sizeof(got));
	CHECK_EQ(got.timeout_ms, 1234);
	CHECK_EQ(got.inline_request, 0);
	CHECK_EQ(got.max_send_wr, 512);
	CHECK_EQ(got.spin_us, 50);
	CHECK_EQ(got.log_level, RDMIG_LOG_INFO);
	CHECK(got.log == NULL && got.cancel == NULL);
}

TEST(older_smaller_opts_make_a_connection)
{
	struct old_in_memory m;
	struct rdmig_conn *c = NULL;

	memset(&m, GUARD, sizeof(m));
	rdmig_opts_init_sized((struct rdmig_opts *)(void *)&m.o, sizeof(m.o));
	m.o.timeout_ms = 777;
	CHECK_OK(rdmig_conn_create((const struct rdmig_opts *)(const void *)&m.o, &c));
	CHECK(c != NULL);
	CHECK_EQ(c->opts.timeout_ms, 777);
	CHECK_EQ(c->opts.max_send_wr, 512);
	rdmig_conn_destroy(c);
}

TEST(newer_bigger_opts_with_a_zero_tail_are_taken)
{
	struct opts_new n;
	struct rdmig_opts got;
	char err[RDMIG_ERRMSG_SIZE] = "";

	memset(&n, 0xff, sizeof(n));
	rdmig_opts_init_sized(&n.o, sizeof(n));
	CHECK_EQ(n.o.size, sizeof(n));
	CHECK(all_bytes((const unsigned char *)n.future, sizeof(n.future), 0));
	n.o.backlog = 9;
	CHECK_OK(rdmig__opts_copy(&got, &n.o, err));
	CHECK_EQ(got.size, sizeof(got));
	CHECK_EQ(got.backlog, 9);
}

static char logged[RDMIG_ERRMSG_SIZE];
static void keep_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	if (level == RDMIG_LOG_ERROR)
		snprintf(logged, sizeof(logged), "%s", msg);
}

TEST(newer_bigger_opts_with_unknown_fields_set_are_refused)
{
	struct opts_new n;
	struct rdmig_opts got;
	struct rdmig_conn *c = (struct rdmig_conn *)&n; /* must become NULL */
	char err[RDMIG_ERRMSG_SIZE] = "";

	rdmig_opts_init_sized(&n.o, sizeof(n));
	n.future[2] = 1;
	n.o.log = keep_log;
	CHECK_EQ(rdmig__opts_copy(&got, &n.o, err), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(err, "knows only");
	logged[0] = '\0';
	CHECK_EQ(rdmig_conn_create(&n.o, &c), RDMIG_EINVAL);
	CHECK(c == NULL);
	CHECK_STR_CONTAINS(logged, "knows only");
}

TEST(opts_without_a_size_are_refused)
{
	struct rdmig_opts o;
	struct rdmig_opts got;
	char err[RDMIG_ERRMSG_SIZE] = "";

	memset(&o, 0, sizeof(o));
	CHECK_EQ(rdmig__opts_copy(&got, &o, err), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(err, "rdmig_opts_init");
	CHECK_OK(rdmig__opts_copy(&got, NULL, err)); /* NULL: the defaults */
	CHECK_EQ(got.timeout_ms, 60000);
}

/* --------------------------------------------------- create convention -- */

TEST(every_create_returns_a_code_and_null_on_failure)
{
	struct rdmig_opts o;
	struct rdmig_conn *c = (struct rdmig_conn *)&o;
	struct rdmig_listener *l = (struct rdmig_listener *)&o;
	struct rdmig_source *s = (struct rdmig_source *)&o;
	struct rdmig_dest *d = (struct rdmig_dest *)&o;

	rdmig_opts_init(&o);
	o.max_send_wr = 1;
	o.log = keep_log;
	logged[0] = '\0';
	CHECK_EQ(rdmig_conn_create(&o, &c), RDMIG_EINVAL);
	CHECK(c == NULL);
	CHECK_STR_CONTAINS(logged, "max_send_wr 1 out of range");
	logged[0] = '\0';
	CHECK_EQ(rdmig_listener_create(&o, &l), RDMIG_EINVAL);
	CHECK(l == NULL);
	CHECK_STR_CONTAINS(logged, "max_send_wr 1 out of range");
	CHECK_EQ(rdmig_source_create(NULL, NULL, 0, &s), RDMIG_EINVAL);
	CHECK(s == NULL);
	CHECK_EQ(rdmig_dest_create(NULL, &d), RDMIG_EINVAL);
	CHECK(d == NULL);
	CHECK_EQ(rdmig_conn_create(NULL, NULL), RDMIG_EINVAL);
	CHECK_EQ(rdmig_listener_create(NULL, NULL), RDMIG_EINVAL);
}

TEST(source_create_failure_says_why_in_the_connection)
{
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = (struct rdmig_source *)&c;
	struct rdmig_block b = {.name = "ram", .host = NULL, .length = 4096};

	CHECK_OK(rdmig_conn_create(NULL, &c));
	CHECK(rdmig_source_create(c, &b, 1, &s) < 0);
	CHECK(s == NULL);
	CHECK(rdmig_conn_errmsg(c)[0] != '\0');
	rdmig_conn_destroy(c);
}

TEST(create_and_destroy_succeed_without_a_device)
{
	struct rdmig_conn *c = NULL;
	struct rdmig_listener *l = NULL;
	struct rdmig_dest *d = NULL;

	CHECK_OK(rdmig_conn_create(NULL, &c));
	CHECK_OK(rdmig_listener_create(NULL, &l));
	CHECK_OK(rdmig_dest_create(c, &d));
	CHECK(c && l && d);
	rdmig_dest_destroy(d);
	rdmig_listener_destroy(l);
	rdmig_conn_destroy(c);
}

/* ------------------------------------------------------------ NULL-safe -- */

TEST(getters_take_null)
{
	struct rdmig_caps caps = {7, 7};
	struct rdmig_inline_info inl = {7, 7, 7, 7};
	struct rdmig_counters k;
	struct rdmig_engine_stats st;

	CHECK(rdmig_conn_errmsg(NULL) && rdmig_conn_errmsg(NULL)[0]);
	CHECK(rdmig_listener_errmsg(NULL) && rdmig_listener_errmsg(NULL)[0]);
	CHECK(rdmig_source_errmsg(NULL) && rdmig_source_errmsg(NULL)[0]);
	CHECK(rdmig_dest_errmsg(NULL) && rdmig_dest_errmsg(NULL)[0]);
	CHECK(strcmp(rdmig_conn_device(NULL), "") == 0);
	CHECK_EQ(rdmig_listener_port(NULL), 0);
	rdmig_conn_caps(NULL, &caps);
	CHECK(caps.version == 0 && caps.flags == 0);
	rdmig_conn_inline(NULL, &inl);
	CHECK(inl.asked == 0 && inl.granted == 0 && inl.tries == 0);
	memset(&k, 0xff, sizeof(k));
	k.size = sizeof(k);
	rdmig_conn_counters(NULL, &k);
	CHECK_EQ(k.size, sizeof(k));
	CHECK(all_bytes((const unsigned char *)&k + sizeof(size_t), sizeof(k) - sizeof(size_t), 0));
	memset(&st, 0xff, sizeof(st));
	st.size = sizeof(st);
	rdmig_source_stats(NULL, &st);
	CHECK_EQ(st.bytes_written, 0);
	st.iterations = 5;
	rdmig_dest_stats(NULL, &st);
	CHECK_EQ(st.iterations, 0);
	rdmig_conn_counters(NULL, NULL);
	rdmig_conn_caps(NULL, NULL);
	rdmig_listener_set_filter(NULL, NULL, NULL);
}

TEST(calls_on_a_null_handle_return_einval)
{
	struct rdmig_msg m = {.type = RDMIG_MSG_READY, .repeat = 1};
	struct rdmig_event ev;
	struct rdmig_conn *c = NULL;

	CHECK_EQ(rdmig_connect(NULL, "h", "1"), RDMIG_EINVAL);
	CHECK_EQ(rdmig_listen(NULL, NULL, "1"), RDMIG_EINVAL);
	CHECK_EQ(rdmig_accept(NULL, &c), RDMIG_EINVAL);
	CHECK_EQ(rdmig_send(NULL, &m), RDMIG_EINVAL);
	CHECK_EQ(rdmig_reply(NULL, &m), RDMIG_EINVAL);
	CHECK_EQ(rdmig_recv(NULL, 0, &m), RDMIG_EINVAL);
	CHECK_EQ(rdmig_request(NULL, &m, RDMIG_MSG_READY, &m), RDMIG_EINVAL);
	CHECK_EQ(rdmig_send_error(NULL), RDMIG_EINVAL);
	CHECK_EQ(rdmig_source_setup(NULL), RDMIG_EINVAL);
	CHECK_EQ(rdmig_source_write(NULL, 0, 0, 1), RDMIG_EINVAL);
	CHECK_EQ(rdmig_source_write_stream(NULL, "x", 1), RDMIG_EINVAL);
	CHECK_EQ(rdmig_source_end_iteration(NULL), RDMIG_EINVAL);
	CHECK_EQ(rdmig_dest_set_blocks(NULL, NULL, 0), RDMIG_EINVAL);
	CHECK_EQ(rdmig_dest_next(NULL, &ev), RDMIG_EINVAL);
	CHECK_EQ(rdmig_dest_set_events(NULL, RDMIG_DEST_REPORT_REGISTER), RDMIG_EINVAL);
	rdmig_conn_destroy(NULL);
	rdmig_listener_destroy(NULL);
	rdmig_source_destroy(NULL);
	rdmig_dest_destroy(NULL);
}

/* ------------------------------------------------------ output structs -- */

/* rdmig_counters of an older header: only the first array. */
struct counters_old {
	size_t size;
	uint64_t sent[RDMIG_MSG_TYPE_COUNT];
};
struct counters_old_in_memory {
	struct counters_old k;
	unsigned char after[256];
};
struct counters_new {
	struct rdmig_counters k;
	uint64_t future[3];
};

TEST(older_smaller_output_struct_gets_only_its_size)
{
	struct rdmig_conn *c = NULL;
	struct counters_old_in_memory m;

	CHECK_OK(rdmig_conn_create(NULL, &c));
	c->counters.sent[RDMIG_MSG_READY] = 7;
	c->counters.bytes_received = 9;
	memset(&m, GUARD, sizeof(m));
	m.k.size = sizeof(m.k);
	rdmig_conn_counters(c, (struct rdmig_counters *)(void *)&m.k);
	CHECK_EQ(m.k.size, sizeof(m.k));
	CHECK_EQ(m.k.sent[RDMIG_MSG_READY], 7);
	CHECK_EQ(m.k.sent[RDMIG_MSG_ERROR], 0);
	CHECK(all_bytes(m.after, sizeof(m.after), GUARD)); /* no overrun */
	rdmig_conn_destroy(c);
}

TEST(newer_bigger_output_struct_gets_ours_and_zeroes)
{
	struct rdmig_conn *c = NULL;
	struct counters_new n;

	CHECK_OK(rdmig_conn_create(NULL, &c));
	c->counters.sent[RDMIG_MSG_READY] = 7;
	c->counters.bytes_received = 9;
	memset(&n, 0xff, sizeof(n));
	n.k.size = sizeof(n);
	rdmig_conn_counters(c, &n.k);
	CHECK_EQ(n.k.size, sizeof(n));
	CHECK_EQ(n.k.sent[RDMIG_MSG_READY], 7);
	CHECK_EQ(n.k.bytes_received, 9);
	CHECK(all_bytes((const unsigned char *)n.future, sizeof(n.future), 0));
	rdmig_conn_destroy(c);
}

TEST(output_struct_without_a_size_is_left_alone)
{
	struct rdmig_conn *c = NULL;
	struct rdmig_counters k;

	CHECK_OK(rdmig_conn_create(NULL, &c));
	c->counters.bytes_received = 9;
	memset(&k, GUARD, sizeof(k));
	k.size = 0;
	rdmig_conn_counters(c, &k);
	CHECK(all_bytes((const unsigned char *)&k + sizeof(size_t), sizeof(k) - sizeof(size_t),
			GUARD));
	rdmig_conn_destroy(c);
}

CHECK_MAIN()
