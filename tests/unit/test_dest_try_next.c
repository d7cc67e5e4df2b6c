/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_dest_try_next.c - the destination step that does not wait
 * (rdmig_dest_try_next): one READY per message however often it
 * is called and however it is mixed with rdmig_dest_next; RDMIG_EAGAIN
 * while the message has not come, never sticky; the same events and the
 * same sticky failures as rdmig_dest_next once it has; a message that
 * yields no event is served and the next one asked for in the same call.
 * No device: the channel is the fake engine_io of tests/fuzz/fake_io.h,
 * whose `arrived` hook says when a message is "there".
 */
#include <string.h>
#include <sys/mman.h>
#include "check.h"
#include "fake_io.h"

#define MIB (1024ull * 1024)
#define LEN (2 * MIB)

struct run {
	struct fake_frames q;
	struct fake_conn conn;
	struct rdmig_dest *d;
	uint8_t *block;
	unsigned late;   /* looks that find nothing before each message arrives */
	const unsigned *lates; /* or per message (index: READYs sent - 1) */
	unsigned looked; /* looks at the message at hand so far */
};

static bool next_frame(void *ctx, const uint8_t **buf, size_t *len)
{
	struct run *r = ctx;

	return fake_frames_next(&r->q, buf, len);
}

static void before_recv(void *ctx)
{
	struct run *r = ctx;

	r->looked = 0; /* a new message is asked for */
}

static bool arrived(void *ctx)
{
	struct run *r = ctx;

	return r->looked++ >= (r->lates ? r->lates[fake.recvs - 1] : r->late);
}

static void delivered(void *ctx, int rc, const struct rdmig_msg *m)
{
	(void)ctx, (void)rc, (void)m;
}

static void check_reg(void *ctx, const uint8_t *addr, size_t len, enum engine_access access)
{
	(void)ctx, (void)addr, (void)len, (void)access;
}

/* A destination over the fake seam with one block of two chunks, its
 * blocks given; each message arrives after `late` empty looks. */
static void start(struct run *r, unsigned late)
{
	struct fake_hooks hooks = {next_frame, before_recv, delivered, check_reg, NULL, r, arrived};
	struct rdmig_block b;

	memset(r, 0, sizeof(*r));
	r->late = late;
	r->block = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(r->block != MAP_FAILED);
	b = (struct rdmig_block){"ram", r->block, LEN, 0};
	rdmig_opts_init(&r->conn.opts);
	r->conn.established = true;
	r->conn.caps = (struct rdmig_caps){RDMIG_CAP_VERSION, 0};
	fake_begin(&r->conn, &hooks, 0);
	CHECK_OK(rdmig__dest_create(&fake.io, &r->d));
	CHECK_OK(rdmig_dest_set_blocks(r->d, &b, 1));
}

static void finish(struct run *r)
{
	rdmig_dest_destroy(r->d);
	fake_end();
	munmap(r->block, LEN);
	fake_frames_free(&r->q);
}

/* Call try_next until it has an event (or fails): its code; *eagains
 * counts the RDMIG_EAGAIN in between. */
static int try_until(struct run *r, struct rdmig_event *ev, unsigned *eagains)
{
	int ret;

	*eagains = 0;
	while ((ret = rdmig_dest_try_next(r->d, ev)) == RDMIG_EAGAIN)
		if (++*eagains > 100)
			fake_fail("try_next never got its message");
	return ret;
}

static void add_register(struct run *r, uint64_t key, uint32_t block)
{
	uint8_t rec[RDMIG_REGISTER_SIZE];

	rdmig_encode_register(&(struct rdmig_register){key, block, 0}, rec);
	fake_frames_add(&r->q, RDMIG_MSG_REGISTER_REQUEST, 1, rec, sizeof(rec));
}

TEST(null_arguments_are_invalid)
{
	struct rdmig_event ev;

	CHECK_EQ(rdmig_dest_try_next(NULL, &ev), RDMIG_EINVAL);
	CHECK_EQ(rdmig_dest_next(NULL, &ev), RDMIG_EINVAL);
}

/* Three looks find nothing: three RDMIG_EAGAIN and still one READY; the
 * fourth serves the message and returns its event. */
TEST(one_ready_while_the_message_is_late)
{
	static struct run r;
	struct rdmig_event ev = {0};
	unsigned eagains;

	start(&r, 3);
	fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, "abc", 3);
	CHECK_OK(try_until(&r, &ev, &eagains));
	CHECK_EQ(eagains, 3);
	CHECK_EQ(fake.recvs, 1);
	CHECK_EQ(fake.try_recvs, 4);
	CHECK_EQ(ev.type, RDMIG_EV_STREAM);
	CHECK_EQ(ev.len, 3);
	CHECK_MEM_EQ(ev.data, "abc", 3);
	/* the source leaves: END, as rdmig_dest_next reports it */
	CHECK_OK(try_until(&r, &ev, &eagains));
	CHECK_EQ(ev.type, RDMIG_EV_END);
	CHECK_EQ(fake.recvs, 2);
	finish(&r);
}

/* Every event of a migration comes as rdmig_dest_next hands it out:
 * blocks (served inside), a registration (no event: the next message is
 * asked for in the same call), COMPRESS, stream, the end of an
 * iteration, the end; one READY per message. */
TEST(a_whole_exchange_gives_rdmig_dest_nexts_events)
{
	static struct run r;
	struct rdmig_event ev = {0};
	uint8_t cp[RDMIG_COMPRESS_SIZE];
	unsigned eagains;

	start(&r, 1);
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	add_register(&r, MIB, 0);
	rdmig_encode_compress(&(struct rdmig_compress){0, 0, 0, 4096}, cp);
	fake_frames_add(&r.q, RDMIG_MSG_COMPRESS, 1, cp, sizeof(cp));
	fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, "x", 1);
	fake_frames_add(&r.q, RDMIG_MSG_REGISTER_FINISHED, 1, NULL, 0);

	/* blocks, registration, COMPRESS: served, no event; each was late */
	CHECK_OK(try_until(&r, &ev, &eagains));
	CHECK_EQ(ev.type, RDMIG_EV_STREAM);
	CHECK_EQ(eagains, 4);
	CHECK_EQ(fake.recvs, 4);
	CHECK_EQ(fake.nreplies, 2); /* RAM_BLOCKS_RESULT, REGISTER_RESULT */
	CHECK_EQ(fake.replies[0].type, RDMIG_MSG_RAM_BLOCKS_RESULT);
	CHECK_EQ(fake.replies[1].type, RDMIG_MSG_REGISTER_RESULT);
	CHECK_OK(try_until(&r, &ev, &eagains));
	CHECK_EQ(ev.type, RDMIG_EV_ITERATION_DONE);
	CHECK_EQ(eagains, 1);
	CHECK_OK(try_until(&r, &ev, &eagains));
	CHECK_EQ(ev.type, RDMIG_EV_END);
	CHECK_EQ(fake.recvs, 6); /* five messages and the look that found the end */
	finish(&r);
}

/* A served message that yields no event is followed in the same call by
 * the READY for the next: RDMIG_EAGAIN comes with that READY out, so the
 * source can send while the caller sleeps. */
TEST(after_a_message_without_event_the_next_ready_is_out)
{
	static struct run r;
	static const unsigned lates[2] = {0, 1}; /* the blocks request at once, then late */
	struct rdmig_event ev = {0};

	start(&r, 0);
	r.lates = lates;
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, "y", 1);
	CHECK_EQ(rdmig_dest_try_next(r.d, &ev), RDMIG_EAGAIN);
	CHECK_EQ(fake.nreplies, 1); /* RAM_BLOCKS_RESULT */
	CHECK_EQ(fake.recvs, 2);    /* and the READY for the next message */
	CHECK_OK(rdmig_dest_try_next(r.d, &ev));
	CHECK_EQ(fake.recvs, 2);
	CHECK_EQ(ev.type, RDMIG_EV_STREAM);
	CHECK_MEM_EQ(ev.data, "y", 1);
	finish(&r);
}

/* rdmig_dest_next after RDMIG_EAGAIN waits for the message the READY
 * already asked for: no second READY; and try_next after next sends the
 * READY for the next message once. */
TEST(mixing_with_rdmig_dest_next_sends_no_second_ready)
{
	static struct run r;
	struct rdmig_event ev = {0};
	unsigned eagains;

	start(&r, 2);
	fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, "one", 3);
	fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, "two", 3);
	fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, "three", 5);
	CHECK_EQ(rdmig_dest_try_next(r.d, &ev), RDMIG_EAGAIN);
	CHECK_EQ(fake.recvs, 1);
	CHECK_OK(rdmig_dest_next(r.d, &ev)); /* waits: the fake's recv always has it */
	CHECK_EQ(fake.recvs, 1);
	CHECK_EQ(ev.type, RDMIG_EV_STREAM);
	CHECK_MEM_EQ(ev.data, "one", 3);
	CHECK_OK(rdmig_dest_next(r.d, &ev));
	CHECK_EQ(fake.recvs, 2);
	CHECK_MEM_EQ(ev.data, "two", 3);
	CHECK_OK(try_until(&r, &ev, &eagains));
	CHECK_EQ(eagains, 2);
	CHECK_EQ(fake.recvs, 3);
	CHECK_MEM_EQ(ev.data, "three", 5);
	finish(&r);
}

/* RDMIG_EAGAIN is not remembered; a failure is, and after it nothing more
 * is asked for or read, whichever call is made. */
TEST(a_failure_is_sticky_and_rdmig_eagain_is_not)
{
	static struct run r;
	struct rdmig_event ev = {0};
	unsigned eagains, readies;

	start(&r, 1);
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	add_register(&r, MIB, 7); /* no block 7 */
	fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, "z", 1);
	CHECK_EQ(try_until(&r, &ev, &eagains), RDMIG_ERANGE);
	CHECK_EQ(eagains, 2);
	CHECK_EQ(fake.errors_sent, 1);
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(r.d), "block index 7");
	readies = fake.recvs;
	CHECK_EQ(rdmig_dest_try_next(r.d, &ev), RDMIG_ERANGE);
	CHECK_EQ(rdmig_dest_next(r.d, &ev), RDMIG_ERANGE);
	CHECK_EQ(fake.recvs, readies);
	CHECK_EQ(r.q.next, 2); /* the stream message stays unread */
	finish(&r);
}

/* Events queued by a served message are handed out without a READY or a
 * look: try_next never returns RDMIG_EAGAIN while it has one. */
TEST(queued_events_need_no_message)
{
	static struct run r;
	struct rdmig_event ev = {0};
	uint8_t recs[2 * RDMIG_REGISTER_SIZE];
	unsigned eagains, looks;

	start(&r, 1);
	CHECK_OK(rdmig_dest_set_events(r.d, RDMIG_DEST_REPORT_REGISTER));
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	rdmig_encode_register(&(struct rdmig_register){0, 0, 0}, recs);
	rdmig_encode_register(&(struct rdmig_register){MIB, 0, 0}, recs + RDMIG_REGISTER_SIZE);
	fake_frames_add(&r.q, RDMIG_MSG_REGISTER_REQUEST, 2, recs, sizeof(recs));
	CHECK_OK(try_until(&r, &ev, &eagains));
	CHECK_EQ(ev.type, RDMIG_EV_REGISTERED);
	looks = fake.try_recvs;
	CHECK_OK(rdmig_dest_try_next(r.d, &ev));
	CHECK_EQ(ev.type, RDMIG_EV_REGISTERED);
	CHECK_EQ(((const struct rdmig_dest_range *)ev.data)->chunk, 1);
	CHECK_EQ(fake.try_recvs, looks);
	CHECK_EQ(fake.recvs, 2);
	finish(&r);
}

CHECK_MAIN()
