/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_admission.c - a server's admission (src/transport/admission.c) without a
 * device: its limits, the slots, reservations that fit or name the limit
 * that refuses them, what a connection gives back when it goes, and many
 * threads reserving at once.  The listener's use of the slots runs on the
 * devices (serve.slots_*, serve.sources_*).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "conn.h"

static struct rdmig_admission *make(unsigned slots, uint64_t bytes, uint64_t pinned,
				    uint64_t files)
{
	struct rdmig_admission_limits lim = {
		.size = sizeof(lim), .slots = slots, .bytes = bytes, .pinned = pinned, .files = files,
	};
	struct rdmig_admission *a = NULL;

	if (rdmig_admission_create(&lim, &a))
		abort(); /* the limits above are valid: a harness error */
	return a;
}

static struct rdmig_admission_usage usage(struct rdmig_admission *a)
{
	struct rdmig_admission_usage u = {.size = sizeof(u)};

	rdmig_admission_usage(a, &u);
	return u;
}

/* A connection as the listener hands it out: holding a slot of a. */
static struct rdmig_conn *conn_with_slot(struct rdmig_admission *a)
{
	struct rdmig_conn *c = calloc(1, sizeof(*c));

	if (!c)
		abort();
	if (rdmig__admission_take_slot(a))
		c->admission.adm = a; /* else: no slot, and the test's counts say so */
	return c;
}

static void conn_gone(struct rdmig_conn *c)
{
	rdmig__admission_leave(&c->admission); /* what rdmig_conn_destroy does last */
	free(c);
}

TEST(limits_are_checked_and_missing_ones_are_none)
{
	struct rdmig_admission_limits lim = {.size = sizeof(lim), .slots = 0};
	struct rdmig_admission *a = (void *)1;

	CHECK_EQ(rdmig_admission_create(&lim, &a), RDMIG_EINVAL);
	CHECK(a == NULL);
	lim.slots = 2;
	lim.size = sizeof(lim) + 8; /* a newer caller's struct */
	CHECK_EQ(rdmig_admission_create(&lim, &a), RDMIG_EINVAL);
	CHECK_EQ(rdmig_admission_create(NULL, &a), RDMIG_EINVAL);
	CHECK_EQ(rdmig_admission_create(&lim, NULL), RDMIG_EINVAL);
	/* an older caller's struct that ends after slots: no totals */
	lim.size = offsetof(struct rdmig_admission_limits, bytes);
	CHECK_EQ(rdmig_admission_create(&lim, &a), 0);
	struct rdmig_conn *c = conn_with_slot(a);
	struct rdmig_admission_ask big = {.size = sizeof(big), .bytes = UINT64_MAX - 1,
					  .pinned = 1ull << 60, .files = 1ull << 40};
	CHECK_EQ(rdmig_conn_reserve(c, &big, NULL, 0), 0);
	conn_gone(c);
	rdmig_admission_destroy(a);
	rdmig_admission_destroy(NULL);
}

TEST(slots_run_out_and_come_back_and_busy_is_counted)
{
	struct rdmig_admission *a = make(2, UINT64_MAX, UINT64_MAX, UINT64_MAX);
	struct rdmig_conn *c1 = conn_with_slot(a), *c2 = conn_with_slot(a);

	CHECK(!rdmig__admission_take_slot(a));
	CHECK(!rdmig__admission_take_slot(a));
	CHECK_EQ(usage(a).slots, 2);
	CHECK_EQ(usage(a).busy, 2);
	conn_gone(c1);
	CHECK_EQ(usage(a).slots, 1);
	CHECK(rdmig__admission_take_slot(a)); /* a handshake's */
	rdmig__admission_give_slot(a);        /* that went away */
	conn_gone(c2);
	CHECK_EQ(usage(a).slots, 0);
	CHECK_EQ(usage(a).peak_slots, 2);
	CHECK_EQ(rdmig__admission_slots(a), 2);
	rdmig_admission_destroy(a);
}

TEST(a_reservation_fits_or_names_the_limit_and_what_is_left)
{
	struct rdmig_admission *a = make(4, 100, 50, 10);
	struct rdmig_conn *c1 = conn_with_slot(a), *c2 = conn_with_slot(a);
	struct rdmig_admission_ask ask = {.size = sizeof(ask), .bytes = 60, .pinned = 20, .files = 4};
	char why[128];

	CHECK_EQ(rdmig_conn_reserve(c1, &ask, why, sizeof(why)), 0);
	CHECK(why[0] == '\0');
	CHECK_EQ(rdmig_conn_reserve(c2, &ask, why, sizeof(why)), RDMIG_EAGAIN);
	CHECK_STR_CONTAINS(why, "memory: 60 asked, 40 left of 100");
	ask.bytes = 40;
	ask.pinned = 31;
	CHECK_EQ(rdmig_conn_reserve(c2, &ask, why, sizeof(why)), RDMIG_EAGAIN);
	CHECK_STR_CONTAINS(why, "pinned memory: 31 asked, 30 left of 50");
	ask.pinned = 30;
	ask.files = 7;
	CHECK_EQ(rdmig_conn_reserve(c2, &ask, why, sizeof(why)), RDMIG_EAGAIN);
	CHECK_STR_CONTAINS(why, "files: 7 asked, 6 left of 10");
	/* a refusal takes nothing */
	CHECK_EQ(usage(a).bytes, 60);
	CHECK_EQ(usage(a).pinned, 20);
	CHECK_EQ(usage(a).files, 4);
	ask.files = 6; /* exactly what is left */
	CHECK_EQ(rdmig_conn_reserve(c2, &ask, why, sizeof(why)), 0);
	CHECK_EQ(usage(a).bytes, 100);
	CHECK_EQ(usage(a).files, 10);
	conn_gone(c1); /* its 60, 20 and 4 come back */
	CHECK_EQ(usage(a).bytes, 40);
	CHECK_EQ(usage(a).pinned, 30);
	CHECK_EQ(usage(a).files, 6);
	CHECK_EQ(usage(a).peak_bytes, 100);
	conn_gone(c2);
	CHECK_EQ(usage(a).bytes, 0);
	rdmig_admission_destroy(a);
}

TEST(a_connection_reserves_again_and_gives_back_the_sum)
{
	struct rdmig_admission *a = make(1, 1000, UINT64_MAX, UINT64_MAX);
	struct rdmig_conn *c = conn_with_slot(a);
	struct rdmig_admission_ask ask = {.size = sizeof(ask), .bytes = 300};

	CHECK_EQ(rdmig_conn_reserve(c, &ask, NULL, 0), 0);
	CHECK_EQ(rdmig_conn_reserve(c, &ask, NULL, 0), 0);
	CHECK_EQ(usage(a).bytes, 600);
	conn_gone(c);
	CHECK_EQ(usage(a).bytes, 0);
	CHECK_EQ(usage(a).slots, 0);
	rdmig_admission_destroy(a);
}

TEST(a_connection_without_an_admission_cannot_reserve)
{
	struct rdmig_conn c;
	struct rdmig_admission_ask ask = {.size = sizeof(ask), .bytes = 1};
	char why[64];

	memset(&c, 0, sizeof(c));
	CHECK_EQ(rdmig_conn_reserve(&c, &ask, why, sizeof(why)), RDMIG_ESTATE);
	CHECK_STR_CONTAINS(why, "the connection has no admission");
	CHECK_EQ(rdmig_conn_reserve(NULL, &ask, why, sizeof(why)), RDMIG_EINVAL);
	CHECK_EQ(rdmig_conn_reserve(&c, NULL, why, sizeof(why)), RDMIG_EINVAL);
	ask.size = 0;
	CHECK_EQ(rdmig_conn_reserve(&c, &ask, why, sizeof(why)), RDMIG_EINVAL);
	rdmig__admission_leave(&c.admission); /* nothing to give back: nothing happens */
}

/* Many connections on threads of their own reserve and go at once: the
 * totals never pass the limit and come back to 0. */
#define RACERS 8
#define ROUNDS 2000
static struct rdmig_admission *race_adm;

static void *racer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		struct rdmig_conn *c = calloc(1, sizeof(*c));
		struct rdmig_admission_ask ask = {.size = sizeof(ask), .bytes = 10, .files = 1};

		if (!c)
			return (void *)1;
		if (rdmig__admission_take_slot(race_adm)) {
			c->admission.adm = race_adm;
			(void)rdmig_conn_reserve(c, &ask, NULL, 0);
			rdmig__admission_leave(&c->admission);
		}
		free(c);
	}
	return NULL;
}

TEST(threads_reserving_at_once_stay_within_the_limits)
{
	pthread_t t[RACERS];

	race_adm = make(4, 25, UINT64_MAX, 3);
	for (int i = 0; i < RACERS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, racer, NULL), 0);
	for (int i = 0; i < RACERS; i++) {
		void *r;

		pthread_join(t[i], &r);
		CHECK(r == NULL);
	}
	CHECK_EQ(usage(race_adm).slots, 0);
	CHECK_EQ(usage(race_adm).bytes, 0);
	CHECK_EQ(usage(race_adm).files, 0);
	CHECK(usage(race_adm).peak_slots <= 4);
	CHECK(usage(race_adm).peak_bytes <= 25);
	CHECK(usage(race_adm).peak_files <= 3);
	rdmig_admission_destroy(race_adm);
}

CHECK_MAIN()
