/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_accept_pending.c - the listener's handshakes in flight
 * (src/transport/accept_pending.h) without a device: what each rdma_cm
 * event means for a handshake, the table's order, its bound (the oldest
 * makes room) and the deadlines.
 */
#include "accept_pending.h"
#include "check.h"

static int ids[ACCEPT_PENDING_MAX + 2], conns[ACCEPT_PENDING_MAX + 2];

TEST(established_hands_out_and_a_vanished_requester_drops)
{
	CHECK_EQ(accept_pending_verdict(RDMA_CM_EVENT_ESTABLISHED), PENDING_ESTABLISHED);
	CHECK_EQ(accept_pending_verdict(RDMA_CM_EVENT_REJECTED), PENDING_GONE);
	CHECK_EQ(accept_pending_verdict(RDMA_CM_EVENT_CONNECT_ERROR), PENDING_GONE);
	CHECK_EQ(accept_pending_verdict(RDMA_CM_EVENT_UNREACHABLE), PENDING_GONE);
	CHECK_EQ(accept_pending_verdict(RDMA_CM_EVENT_DISCONNECTED), PENDING_GONE);
	CHECK_EQ(accept_pending_verdict(RDMA_CM_EVENT_TIMEWAIT_EXIT), PENDING_GONE);
	CHECK_EQ(accept_pending_verdict(RDMA_CM_EVENT_DEVICE_REMOVAL), PENDING_GONE);
	CHECK_EQ(accept_pending_verdict(RDMA_CM_EVENT_ADDR_CHANGE), PENDING_IGNORE);
}

TEST(handshakes_are_found_by_their_id_and_taken_in_any_order)
{
	struct accept_pending p = {.n = 0};

	for (int i = 0; i < 3; i++)
		CHECK(accept_pending_add(&p, &ids[i], &conns[i], 1000 + i) == NULL);
	CHECK_EQ(p.n, 3);
	CHECK_EQ(accept_pending_find(&p, &ids[1]), 1);
	CHECK_EQ(accept_pending_find(&p, &ids[5]), -1);
	CHECK(accept_pending_take(&p, 1) == &conns[1]);
	CHECK_EQ(accept_pending_find(&p, &ids[2]), 1); /* order kept */
	CHECK_EQ(accept_pending_find(&p, &ids[1]), -1);
	CHECK_EQ(p.n, 2);
}

/* A flood of requests that never complete cannot fill the table against a
 * later real source: the oldest goes, the newest stays. */
TEST(a_full_table_drops_its_oldest_for_a_new_request)
{
	struct accept_pending p = {.n = 0};

	for (int i = 0; i < ACCEPT_PENDING_MAX; i++)
		CHECK(accept_pending_add(&p, &ids[i], &conns[i], 1000) == NULL);
	CHECK(accept_pending_add(&p, &ids[ACCEPT_PENDING_MAX], &conns[ACCEPT_PENDING_MAX],
				 2000) == &conns[0]);
	CHECK_EQ(p.n, ACCEPT_PENDING_MAX);
	CHECK_EQ(accept_pending_find(&p, &ids[0]), -1);
	CHECK_EQ(accept_pending_find(&p, &ids[ACCEPT_PENDING_MAX]), ACCEPT_PENDING_MAX - 1);
}

TEST(deadlines_expire_one_at_a_time_and_the_next_is_the_earliest)
{
	struct accept_pending p = {.n = 0};

	CHECK_EQ(accept_pending_next_deadline(&p), 0);
	CHECK(accept_pending_expired(&p, 1LL << 60) == NULL);
	accept_pending_add(&p, &ids[0], &conns[0], 3000);
	accept_pending_add(&p, &ids[1], &conns[1], 1000);
	accept_pending_add(&p, &ids[2], &conns[2], 2000);
	CHECK_EQ(accept_pending_next_deadline(&p), 1000);
	CHECK(accept_pending_expired(&p, 999) == NULL);
	CHECK(accept_pending_expired(&p, 2000) == &conns[1]);
	CHECK(accept_pending_expired(&p, 2000) == &conns[2]);
	CHECK(accept_pending_expired(&p, 2000) == NULL);
	CHECK_EQ(accept_pending_next_deadline(&p), 3000);
	CHECK_EQ(p.n, 1);
}

CHECK_MAIN()
