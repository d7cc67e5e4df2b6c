/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_post_inline.c - how channel.c posts a control message, against a
 * fake provider.
 *
 * ibv_post_send is an inline function that calls
 * qp->context->ops.post_send, so a connection whose cm_id points at a fake
 * QP and context posts into fake_post_send below, which gathers the SGEs
 * as a provider that copies all of them would.  The tests look at the work
 * request itself: one SGE for an inline send, assembled outside the
 * registered buffer; the same bytes as the copied send; and what happens
 * when the provider (or the test hook) refuses an inline post.
 *
 * Run alone, "bench N" posts N 40-byte messages: callgrind counts the
 * instructions of post_control per message on the host.
 */
#include <errno.h>
#include <stdlib.h>
#include "check.h"
#include "conn.h"
#include "inline_ladder.h"
#include "testhooks.h"
#include "wire.h"

/* What the fake provider saw, and what it answers. */
static struct {
	int calls;
	int num_sge;
	unsigned int send_flags;
	uint64_t addr;   /* sg_list[0] */
	uint32_t lkey;   /* sg_list[0] */
	uint8_t wire[2048];
	uint32_t len;    /* bytes gathered from every SGE */
	int inline_ret;  /* returned for inline WRs (0: post them) */
	int any_ret;     /* returned for every WR */
} fake;

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	fake.calls++;
	fake.num_sge = wr->num_sge;
	fake.send_flags = wr->send_flags;
	fake.addr = wr->num_sge ? wr->sg_list[0].addr : 0;
	fake.lkey = wr->num_sge ? wr->sg_list[0].lkey : 0;
	if (fake.any_ret || (fake.inline_ret && (wr->send_flags & IBV_SEND_INLINE))) {
		*bad = wr;
		return fake.any_ret ? fake.any_ret : fake.inline_ret;
	}
	fake.len = 0;
	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *s = &wr->sg_list[i];

		if (fake.len + s->length > sizeof(fake.wire))
			abort();
		memcpy(fake.wire + fake.len, (const void *)(uintptr_t)s->addr, s->length);
		fake.len += s->length;
	}
	return 0;
}

/* A failed post asks for the QP's state: this fake QP is always ready. */
int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	attr->qp_state = IBV_QPS_RTS;
	return 0;
}

static struct {
	struct ibv_device dev;
	struct ibv_context ctx;
	struct ibv_qp qp;
	struct rdma_cm_id id;
	struct ibv_mr mr;
} env;

/* A connected connection over the fake QP, inline size `granted`. */
static struct rdmig_conn *fake_conn(uint32_t granted)
{
	struct rdmig_conn *c;

	memset(&fake, 0, sizeof(fake));
	memset(&env, 0, sizeof(env));
	strcpy(env.dev.name, "fake0");
	env.ctx.device = &env.dev;
	env.ctx.ops.post_send = fake_post_send;
	env.qp.context = &env.ctx;
	env.id.verbs = &env.ctx;
	env.id.qp = &env.qp;
	env.mr.lkey = 0x5eed;
	if (rdmig__conn_alloc(NULL, ROLE_DEST, &c, NULL))
		abort();
	rdmig__cml_set_id(c->cm, &env.id);
	rdmig__cml_establish(c->cm);
	c->sq = rdmig__sq_create(c->opts.max_send_wr);
	c->res = rdmig__vres_fake(calloc(SLOT_COUNT, RDMIG_CONTROL_BUFFER), &env.mr, granted);
	rdmig__channel_set_inline(c->ch, granted);
	if (!c->sq || !c->res || !conn_slot_buf(c, SLOT_READY))
		abort();
	return c;
}

static void free_conn(struct rdmig_conn *c)
{
	free(conn_slot_buf(c, SLOT_READY)); /* the region's start */
	rdmig__vres_free_fake(c->res);
	rdmig__sq_destroy(c->sq);
	rdmig__channel_destroy(c->ch);
	rdmig__rx_destroy(c->rx);
	rdmig__cml_set_id(c->cm, NULL); /* the fake id is not rdma_cm's */
	rdmig__cml_destroy(c->cm);
	free(c);
}

/* Post m as a reply (no credits), then play its completion. */
static int post(struct rdmig_conn *c, const struct rdmig_msg *m)
{
	int ret = rdmig_reply(c, m);

	/* every signaled WR completes, and with it all before it */
	for (uint32_t i = 0; i < c->opts.max_send_wr; i++)
		rdmig__sq_signaled_done(c->sq);
	return ret;
}

static uint8_t payload[RDMIG_CONTROL_BUFFER];

static struct rdmig_msg msg(uint32_t type, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		payload[i] = (uint8_t)(i * 7 + len);
	return (struct rdmig_msg){.type = type, .len = len, .repeat = 1, .payload = len ? payload : NULL};
}

/* The bytes the receiver must see for m. */
static void expect_wire(const struct rdmig_msg *m, uint8_t *out)
{
	struct rdmig_header h = {.len = m->len, .type = m->type, .repeat = m->repeat};

	rdmig_encode_header(&h, out);
	if (m->len)
		memcpy(out + RDMIG_HEADER_SIZE, m->payload, m->len);
}

static bool in_registered(const struct rdmig_conn *c, uint64_t addr)
{
	uintptr_t lo = (uintptr_t)conn_slot_buf(c, SLOT_READY);
	return addr >= lo && addr < lo + (uintptr_t)SLOT_COUNT * RDMIG_CONTROL_BUFFER;
}

/* A REGISTER_REQUEST (header + 24) goes as one inline SGE of 40 bytes,
 * outside the registered buffer, with the bytes the receiver expects. */
TEST(register_request_one_sge)
{
	struct rdmig_conn *c = fake_conn(RDMIG_INLINE_WANTED);
	struct rdmig_msg m = msg(RDMIG_MSG_REGISTER_REQUEST, RDMIG_REGISTER_SIZE);
	uint8_t want[64];

	CHECK_OK(post(c, &m));
	CHECK_EQ(fake.calls, 1);
	CHECK_EQ(fake.num_sge, 1);
	CHECK(fake.send_flags & IBV_SEND_INLINE);
	CHECK_EQ(fake.len, 40);
	CHECK(!in_registered(c, fake.addr));
	expect_wire(&m, want);
	CHECK_MEM_EQ(fake.wire, want, 40);
	CHECK_EQ(c->counters.sent_inline[RDMIG_MSG_REGISTER_REQUEST], 1);
	CHECK_EQ(c->counters.bytes_inline, 40);
	free_conn(c);
}

/* Every size up to the largest inline request (1024) is one inline SGE
 * with the right bytes; one byte more goes copied from the send slot,
 * with the same layout. */
TEST(every_inline_size_then_copied)
{
	struct rdmig_conn *c = fake_conn(1024);
	uint8_t want[2048];

	for (uint32_t len = 0; len <= 1024 - RDMIG_HEADER_SIZE; len++) {
		struct rdmig_msg m = msg(RDMIG_MSG_COMPRESS, len);

		fake.calls = 0;
		CHECK_OK(post(c, &m));
		CHECK_EQ(fake.calls, 1);
		CHECK_EQ(fake.num_sge, 1);
		CHECK(fake.send_flags & IBV_SEND_INLINE);
		CHECK_EQ(fake.len, RDMIG_HEADER_SIZE + len);
		CHECK(!in_registered(c, fake.addr));
		expect_wire(&m, want);
		CHECK_MEM_EQ(fake.wire, want, RDMIG_HEADER_SIZE + len);
	}
	struct rdmig_msg big = msg(RDMIG_MSG_COMPRESS, 1024 - RDMIG_HEADER_SIZE + 1);

	CHECK_OK(post(c, &big));
	CHECK_EQ(fake.num_sge, 1);
	CHECK(!(fake.send_flags & IBV_SEND_INLINE));
	CHECK(fake.send_flags & IBV_SEND_SIGNALED);
	CHECK_EQ(fake.lkey, env.mr.lkey);
	CHECK_EQ(fake.addr, (uintptr_t)conn_slot_buf(c, SLOT_SEND));
	expect_wire(&big, want);
	CHECK_MEM_EQ(fake.wire, want, RDMIG_HEADER_SIZE + big.len);
	CHECK_EQ(c->counters.sent_copied[RDMIG_MSG_COMPRESS], 1);
	free_conn(c);
}

/* Inline or copied, the receiver gets the same bytes. */
TEST(inline_and_copied_are_the_same_bytes)
{
	struct rdmig_msg m = msg(RDMIG_MSG_REGISTER_REQUEST, RDMIG_REGISTER_SIZE);
	uint8_t inl[64], copied[64];
	struct rdmig_conn *c = fake_conn(RDMIG_INLINE_WANTED);

	CHECK_OK(post(c, &m));
	CHECK(fake.send_flags & IBV_SEND_INLINE);
	memcpy(inl, fake.wire, 40);
	free_conn(c);
	c = fake_conn(0);
	CHECK_OK(post(c, &m));
	CHECK(!(fake.send_flags & IBV_SEND_INLINE));
	CHECK_EQ(fake.len, 40);
	memcpy(copied, fake.wire, 40);
	CHECK_MEM_EQ(inl, copied, 40);
	free_conn(c);
}

/* The errors that mean "not as inline", positive or negative (cxgb4
 * returns -EINVAL), send the message copied; from then on messages of
 * that size go copied at once, smaller ones still inline. */
TEST(refused_inline_goes_copied)
{
	static const int refusals[] = {EINVAL, -EINVAL, ENOMEM, -ENOMEM, EMSGSIZE, E2BIG,
				       EOPNOTSUPP};

	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		struct rdmig_conn *c = fake_conn(RDMIG_INLINE_WANTED);
		struct rdmig_msg reg = msg(RDMIG_MSG_REGISTER_REQUEST, RDMIG_REGISTER_SIZE);
		struct rdmig_msg ready = msg(RDMIG_MSG_READY, 0);
		uint8_t want[64];

		rdmig__conn_refuse_inline(c, refusals[i], 1);
		CHECK_OK(post(c, &reg));
		CHECK_EQ(fake.calls, 1); /* the hook took the inline post */
		CHECK(!(fake.send_flags & IBV_SEND_INLINE));
		CHECK_EQ(fake.lkey, env.mr.lkey);
		expect_wire(&reg, want);
		CHECK_MEM_EQ(fake.wire, want, 40);
		CHECK_EQ(rdmig__conn_inline_refusals(c), 1);
		CHECK_EQ(rdmig__conn_inline_max(c), 39);
		CHECK_EQ(c->counters.sent_copied[RDMIG_MSG_REGISTER_REQUEST], 1);
		CHECK_EQ(c->counters.sent_inline[RDMIG_MSG_REGISTER_REQUEST], 0);
		/* the next 40 bytes go copied without asking; 16 still inline */
		rdmig__conn_refuse_inline(c, EINVAL, 1);
		CHECK_OK(post(c, &reg));
		CHECK(!(fake.send_flags & IBV_SEND_INLINE));
		CHECK_EQ(rdmig__conn_inline_refusals(c), 1);
		rdmig__conn_refuse_inline(c, 0, 0);
		CHECK_OK(post(c, &ready));
		CHECK(fake.send_flags & IBV_SEND_INLINE);
		CHECK_EQ(fake.len, RDMIG_HEADER_SIZE);
		free_conn(c);
	}
}

/* The same when the provider itself refuses (two posts reach it). */
TEST(provider_refusal_goes_copied)
{
	struct rdmig_conn *c = fake_conn(RDMIG_INLINE_WANTED);
	struct rdmig_msg m = msg(RDMIG_MSG_REGISTER_RESULT, 16);
	uint8_t want[64];

	fake.inline_ret = EINVAL;
	CHECK_OK(post(c, &m));
	CHECK_EQ(fake.calls, 2);
	CHECK(!(fake.send_flags & IBV_SEND_INLINE));
	expect_wire(&m, want);
	CHECK_EQ(fake.len, 32);
	CHECK_MEM_EQ(fake.wire, want, 32);
	CHECK_EQ(rdmig__conn_inline_max(c), 31);
	free_conn(c);
}

/* Other errors stay errors: nothing is copied, nothing counted. */
TEST(other_errors_stay_fatal)
{
	static const int errs[] = {EIO, -EIO, ENOTCONN, EFAULT};

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		struct rdmig_conn *c = fake_conn(RDMIG_INLINE_WANTED);
		struct rdmig_msg m = msg(RDMIG_MSG_REGISTER_REQUEST, RDMIG_REGISTER_SIZE);
		int ret;

		rdmig__conn_refuse_inline(c, errs[i], 1);
		ret = post(c, &m);
		CHECK(ret < 0);
		CHECK_EQ(fake.calls, 0);
		CHECK_STR_CONTAINS(c->errmsg, "inline");
		CHECK_EQ(rdmig__conn_inline_refusals(c), 0);
		CHECK_EQ(rdmig__conn_inline_max(c), RDMIG_INLINE_WANTED);
		CHECK_EQ(c->counters.sent[RDMIG_MSG_REGISTER_REQUEST], 0);
		free_conn(c);
	}
}

/* A QP that refuses everything (in error on rxe: EINVAL): the copied
 * post's failure is the one reported. */
TEST(copied_fallback_failure_is_reported)
{
	struct rdmig_conn *c = fake_conn(RDMIG_INLINE_WANTED);
	struct rdmig_msg m = msg(RDMIG_MSG_REGISTER_REQUEST, RDMIG_REGISTER_SIZE);

	fake.any_ret = EINVAL;
	CHECK(post(c, &m) < 0);
	CHECK_EQ(fake.calls, 2);
	CHECK_STR_CONTAINS(c->errmsg, "copied");
	CHECK_EQ(c->counters.sent[RDMIG_MSG_REGISTER_REQUEST], 0);
	free_conn(c);
}

TEST(post_refusal_errnos)
{
	CHECK(rdmig__inline_post_refused(EINVAL));
	CHECK(rdmig__inline_post_refused(ENOMEM));
	CHECK(rdmig__inline_post_refused(EMSGSIZE));
	CHECK(rdmig__inline_post_refused(EOPNOTSUPP));
	CHECK(!rdmig__inline_post_refused(0));
	CHECK(!rdmig__inline_post_refused(EIO));
	CHECK(!rdmig__inline_post_refused(ENOTCONN));
	CHECK(!rdmig__inline_post_refused(EAGAIN));
}

/* The QP asks for the one send SGE every post uses: a device with one
 * still gets inline. */
TEST(qp_asks_one_send_sge)
{
	struct ibv_qp_init_attr attr;

	rdmig__conn_qp_base_attr(&attr, 512, NULL, NULL);
	CHECK_EQ(attr.cap.max_send_sge, 1);
	CHECK_EQ(attr.cap.max_send_wr, 512);
}

/* Not a check: N posts of a 40-byte message, for callgrind
 * (--toggle-collect=post_control; divide by N). */
static int bench(int n)
{
	struct rdmig_conn *c = fake_conn(RDMIG_INLINE_WANTED);
	struct rdmig_msg m = msg(RDMIG_MSG_REGISTER_REQUEST, RDMIG_REGISTER_SIZE);

	for (int i = 0; i < n; i++)
		if (post(c, &m))
			return 1;
	printf("%d posts, %s\n", n, fake.send_flags & IBV_SEND_INLINE ? "inline" : "copied");
	free_conn(c);
	return 0;
}

struct check_case check_cases[CHECK_MAX_CASES];
int check_case_count;
int check_failed;
int check_skipped;
int check_cases_dropped;

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "bench"))
		return bench(atoi(argv[2]));
	return check_run(argc, argv);
}
