/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_channel.c - the inline control channel on real devices (rxe0, siw0):
 * every message type in both directions of the protocol, byte-identical
 * whether inline or copied; the inline ladder on the real QP; capability
 * negotiation; peer errors, silence and disconnects.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "testhooks.h"
#include "devenv.h"

/* ------------------------------------------------ the message script -- */

/* One step of the source's script, and the destination's reply if any. */
struct step {
	uint32_t type, repeat, len, seed;
	uint32_t reply_type, reply_repeat, reply_len, reply_seed;
};

static const struct step script[] = {
	{RDMIG_MSG_QEMU_FILE, 1, 20, 11, 0, 0, 0, 0},
	{RDMIG_MSG_QEMU_FILE, 1, RDMIG_MAX_STREAM_CHUNK, 12, 0, 0, 0, 0},
	{RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, 0, 0, RDMIG_MSG_RAM_BLOCKS_RESULT, 3, 96, 13},
	{RDMIG_MSG_COMPRESS, 1, 24, 14, 0, 0, 0, 0},
	{RDMIG_MSG_REGISTER_REQUEST, 1, 24, 15, RDMIG_MSG_REGISTER_RESULT, 1, 16, 16},
	{RDMIG_MSG_REGISTER_REQUEST, 2, 48, 17, RDMIG_MSG_REGISTER_RESULT, 2, 32, 18},
	{RDMIG_MSG_UNREGISTER_REQUEST, 1, 24, 19, RDMIG_MSG_UNREGISTER_FINISHED, 1, 0, 0},
	{RDMIG_MSG_REGISTER_FINISHED, 1, 0, 0, 0, 0, 0, 0},
};
#define SCRIPT_STEPS (sizeof(script) / sizeof(script[0]))

static uint8_t *payload_for(uint32_t len, uint32_t seed)
{
	uint8_t *p = malloc(len ? len : 1);
	fill_pattern(p, len, seed);
	return p;
}

/* The received header and payload must be exactly what was sent. */
static void check_wire_bytes(const struct rdmig_msg *m, uint32_t type, uint32_t repeat,
			     uint32_t len, uint32_t seed)
{
	struct rdmig_header h = {.len = len, .type = type, .repeat = repeat};
	uint8_t want_hdr[RDMIG_HEADER_SIZE];
	uint8_t *want = payload_for(len, seed);

	rdmig_encode_header(&h, want_hdr);
	CHECK_EQ(m->type, type);
	CHECK_EQ(m->repeat, repeat);
	CHECK_EQ(m->len, len);
	/* payload sits right after the header in the receive buffer */
	CHECK_MEM_EQ((const uint8_t *)m->payload - RDMIG_HEADER_SIZE, want_hdr, RDMIG_HEADER_SIZE);
	CHECK_MEM_EQ(m->payload, want, len);
	free(want);
}

static int reply_step(struct rdmig_conn *c, const struct step *s)
{
	uint8_t *p = payload_for(s->reply_len, s->reply_seed);
	int ret = rdmig_reply(c, &(struct rdmig_msg){s->reply_type, s->reply_repeat, s->reply_len, p});
	free(p);
	return ret;
}

struct script_arg {
	int inline_request;
};

static uint64_t total(const uint64_t *v)
{
	uint64_t n = 0;
	for (int t = 0; t < RDMIG_MSG_TYPE_COUNT; t++)
		n += v[t];
	return n;
}

/* Inline counters after the script: by the granted size, or none at all. */
static void check_inline_split(struct rdmig_conn *c, int inline_request)
{
	struct rdmig_counters k = {.size = sizeof(k)};
	struct rdmig_inline_info inl;

	rdmig_conn_counters(c, &k);
	rdmig_conn_inline(c, &inl);
	CHECK_EQ(total(k.sent), total(k.sent_inline) + total(k.sent_copied));
	if (inline_request == 0) {
		CHECK_EQ(inl.granted, 0);
		CHECK_EQ(total(k.sent_inline), 0);
		CHECK_EQ(k.bytes_inline, 0);
	} else {
		CHECK(inl.granted >= RDMIG_INLINE_WANTED);
		CHECK(total(k.sent_inline) > 0);
	}
}

static void dest_script(struct rdmig_conn *c, void *arg)
{
	const struct script_arg *a = arg;
	struct rdmig_counters k = {.size = sizeof(k)};
	struct rdmig_msg m;

	for (size_t i = 0; i < SCRIPT_STEPS; i++) {
		const struct step *s = &script[i];
		CHECK_OK(rdmig_recv(c, RDMIG_MSG_NONE, &m));
		check_wire_bytes(&m, s->type, s->repeat, s->len, s->seed);
		if (check_failed)
			return;
		if (s->reply_type)
			CHECK_OK(reply_step(c, s));
	}
	/* The source aborts last: its ERROR must surface as RDMIG_EPEER. */
	CHECK_EQ(rdmig_recv(c, RDMIG_MSG_NONE, &m), RDMIG_EPEER);
	CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), "ERROR");
	check_inline_split(c, a->inline_request);
	rdmig_conn_counters(c, &k);
	CHECK_EQ(k.sent[RDMIG_MSG_READY], SCRIPT_STEPS + 1);
	CHECK_EQ(k.received[RDMIG_MSG_ERROR], 1);
	if (a->inline_request) {
		/* READY (16 B), REGISTER_RESULT x1 (32 B), UNREGISTER_FINISHED go inline;
		 * RAM_BLOCKS_RESULT (112 B) does not fit 40 or 80 */
		CHECK_EQ(k.sent_inline[RDMIG_MSG_READY], SCRIPT_STEPS + 1);
		CHECK_EQ(k.sent_copied[RDMIG_MSG_RAM_BLOCKS_RESULT], 1);
		CHECK(k.sent_inline[RDMIG_MSG_REGISTER_RESULT] >= 1);
		CHECK_EQ(k.sent_inline[RDMIG_MSG_UNREGISTER_FINISHED], 1);
	}
}

static void run_script(const struct dev *dev, int inline_request)
{
	struct script_arg a = {inline_request};
	struct pair p = {.dev = dev, .dest = dest_script, .arg = &a};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_counters k = {.size = sizeof(k)};

	test_opts(&o);
	o.inline_request = inline_request;
	test_opts(&p.dest_opts);
	p.dest_opts.inline_request = inline_request;
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	for (size_t i = 0; i < SCRIPT_STEPS; i++) {
		const struct step *s = &script[i];
		uint8_t *pl = payload_for(s->len, s->seed);
		struct rdmig_msg msg = {s->type, s->repeat, s->len, pl}, reply;
		int ret = s->reply_type ? rdmig_request(c, &msg, s->reply_type, &reply)
					: rdmig_send(c, &msg);
		free(pl);
		CHECK_OK(ret);
		if (s->reply_type)
			check_wire_bytes(&reply, s->reply_type, s->reply_repeat, s->reply_len,
					 s->reply_seed);
		if (check_failed)
			return;
	}
	CHECK_OK(rdmig_send_error(c));
	check_inline_split(c, inline_request);
	rdmig_conn_counters(c, &k);
	if (inline_request) {
		CHECK_EQ(k.sent_inline[RDMIG_MSG_COMPRESS], 1);
		CHECK_EQ(k.sent_copied[RDMIG_MSG_QEMU_FILE], 1); /* the 32 KiB chunk */
		CHECK_EQ(k.sent_inline[RDMIG_MSG_QEMU_FILE], 1); /* the 20-byte one */
		CHECK_EQ(k.sent_inline[RDMIG_MSG_REGISTER_REQUEST], 1);
		CHECK_EQ(k.sent_copied[RDMIG_MSG_REGISTER_REQUEST], 1); /* repeat 2: 64 B */
	} else {
		CHECK_EQ(k.sent_copied[RDMIG_MSG_COMPRESS], 1);
	}
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

DEVICE_TEST(every_message_type_inline_auto)
{
	run_script(dev, RDMIG_INLINE_AUTO);
}

DEVICE_TEST(every_message_type_inline_off)
{
	run_script(dev, 0);
}

/* ------------------------------- inline posts the provider refuses -- */

/* The destination's first inline post (a READY) is refused as a provider
 * that does not take inline would (EMSGSIZE): it and every later message
 * go copied, and the source sees every byte as sent. */
static void dest_script_refused(struct rdmig_conn *c, void *arg)
{
	struct rdmig_counters k = {.size = sizeof(k)};
	struct rdmig_msg m;

	rdmig__conn_refuse_inline(c, EMSGSIZE, 1);
	for (size_t i = 0; i < SCRIPT_STEPS; i++) {
		const struct step *s = &script[i];
		CHECK_OK(rdmig_recv(c, RDMIG_MSG_NONE, &m));
		check_wire_bytes(&m, s->type, s->repeat, s->len, s->seed);
		if (check_failed)
			return;
		if (s->reply_type)
			CHECK_OK(reply_step(c, s));
	}
	CHECK_EQ(rdmig_recv(c, RDMIG_MSG_NONE, &m), RDMIG_EPEER);
	rdmig_conn_counters(c, &k);
	CHECK_EQ(rdmig__conn_inline_refusals(c), 1);
	CHECK_EQ(rdmig__conn_inline_max(c), RDMIG_HEADER_SIZE - 1);
	CHECK_EQ(total(k.sent_inline), 0);
	CHECK_EQ(k.sent_copied[RDMIG_MSG_READY], SCRIPT_STEPS + 1);
	CHECK_EQ(k.sent_copied[RDMIG_MSG_REGISTER_RESULT], 2);
}

/* The source's first inline post (a 36-byte QEMU_FILE) is refused with
 * -EINVAL, as cxgb4 returns it: that message and the 40-byte ones after
 * it go copied, the 16-byte RAM_BLOCKS_REQUEST still inline, and the
 * destination checks every byte. */
DEVICE_TEST(refused_inline_posts_go_copied)
{
	struct pair p = {.dev = dev, .dest = dest_script_refused};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_counters k = {.size = sizeof(k)};

	test_opts(&o);
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	rdmig__conn_refuse_inline(c, -EINVAL, 1);
	for (size_t i = 0; i < SCRIPT_STEPS; i++) {
		const struct step *s = &script[i];
		uint8_t *pl = payload_for(s->len, s->seed);
		struct rdmig_msg msg = {s->type, s->repeat, s->len, pl}, reply;
		int ret = s->reply_type ? rdmig_request(c, &msg, s->reply_type, &reply)
					: rdmig_send(c, &msg);
		free(pl);
		CHECK_OK(ret);
		if (s->reply_type)
			check_wire_bytes(&reply, s->reply_type, s->reply_repeat, s->reply_len,
					 s->reply_seed);
		if (check_failed)
			return;
	}
	rdmig_conn_counters(c, &k);
	CHECK_EQ(rdmig__conn_inline_refusals(c), 1);
	CHECK_EQ(rdmig__conn_inline_max(c), RDMIG_HEADER_SIZE + 20 - 1);
	CHECK_EQ(k.sent_copied[RDMIG_MSG_QEMU_FILE], 2);
	CHECK_EQ(k.sent_inline[RDMIG_MSG_RAM_BLOCKS_REQUEST], 1);
	CHECK_EQ(k.sent_copied[RDMIG_MSG_COMPRESS], 1);
	CHECK_EQ(k.sent_copied[RDMIG_MSG_REGISTER_REQUEST], 2);
	CHECK_EQ(k.sent_inline[RDMIG_MSG_REGISTER_FINISHED], 1);
	CHECK_OK(rdmig_send_error(c));
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

/* ------------------------------------------------ the ladder, for real -- */

static void dest_two_stream_chunks(struct rdmig_conn *c, void *arg)
{
	struct rdmig_msg m;

	CHECK_OK(rdmig_recv(c, RDMIG_MSG_QEMU_FILE, &m));
	check_wire_bytes(&m, RDMIG_MSG_QEMU_FILE, 1, 64, 21);
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_QEMU_FILE, &m));
	check_wire_bytes(&m, RDMIG_MSG_QEMU_FILE, 1, 96, 22);
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_REGISTER_FINISHED, &m));
}

/* Asking 512 works on rxe at once and falls back to siw's 80; a message of
 * 80 bytes then goes inline on both, one of 112 only on rxe. */
DEVICE_TEST(inline_512_falls_back_to_the_device_limit)
{
	struct pair p = {.dev = dev, .dest = dest_two_stream_chunks};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_inline_info inl;
	struct rdmig_counters k = {.size = sizeof(k)};
	uint8_t *a = payload_for(64, 21), *b = payload_for(96, 22);
	int is_siw = !strcmp(dev->kind, "siw");

	test_opts(&o);
	o.inline_request = 512;
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	rdmig_conn_inline(c, &inl);
	CHECK_EQ(inl.asked, 512);
	CHECK_EQ(inl.granted, is_siw ? 80 : 512);
	CHECK(is_siw ? inl.tries > 1 : inl.tries == 1);
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 64, a}));
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 96, b}));
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL}));
	rdmig_conn_counters(c, &k);
	CHECK_EQ(k.sent_inline[RDMIG_MSG_QEMU_FILE], is_siw ? 1 : 2);
	CHECK_EQ(k.sent_copied[RDMIG_MSG_QEMU_FILE], is_siw ? 1 : 0);
	free(a);
	free(b);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

static const struct rdmig_probe_row *probe_row_for(const struct rdmig_probe_report *r,
						    uint32_t size)
{
	for (int i = 0; i < RDMIG_PROBE_SIZES; i++)
		if (r->rows[i].requested == size)
			return &r->rows[i];
	return NULL;
}

/* The seed's first version asked 512 once, without retry: on siw that QP
 * creation fails.  This is why the ladder exists. */
DEVICE_TEST(asking_512_without_retry)
{
	struct rdmig_probe_report *r = NULL;
	struct rdmig_opts o;
	char err[256];
	size_t n = 0;
	int is_siw = !strcmp(dev->kind, "siw");

	test_opts(&o);
	CHECK_OK(rdmig_probe(dev->name, &o, &r, &n, err, sizeof(err)));
	CHECK_EQ(n, 1);
	CHECK_EQ(probe_row_for(r, 512)->result, is_siw ? -EINVAL : 0);
	CHECK_EQ(probe_row_for(r, 80)->result, 0);
	CHECK_EQ(probe_row_for(r, 1024)->result, -EINVAL);
	CHECK_EQ(r->ladder_result, 0);
	CHECK_EQ(r->ladder.granted, RDMIG_INLINE_WANTED);
	CHECK_EQ(r->ladder.tries, 1);
	rdmig_probe_free(r);
}

/* ------------------------------------------------------ capabilities -- */

static void dest_caps(struct rdmig_conn *c, void *arg)
{
	const uint32_t *want_flags = arg;
	struct rdmig_caps caps;
	struct rdmig_msg m;

	rdmig_conn_caps(c, &caps);
	CHECK_EQ(caps.version, 1);
	CHECK_EQ(caps.flags, *want_flags);
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_REGISTER_FINISHED, &m));
}

static void run_caps(const struct dev *dev, bool dest_allows, uint32_t want_flags)
{
	struct pair p = {.dev = dev, .dest = dest_caps, .arg = &want_flags};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_caps caps;

	test_opts(&o);
	o.pin_all = true;
	test_opts(&p.dest_opts);
	p.dest_opts.pin_all = dest_allows;
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	rdmig_conn_caps(c, &caps);
	CHECK_EQ(caps.version, 1);
	CHECK_EQ(caps.flags, want_flags);
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL}));
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

DEVICE_TEST(pin_all_granted)
{
	run_caps(dev, true, RDMIG_CAP_PIN_ALL);
}

DEVICE_TEST(pin_all_refused_by_destination)
{
	run_caps(dev, false, 0);
}

/* The request is refused and forgotten; accept ends at its timeout. */
static void dest_expects_version_reject(struct rdmig_listener *l, int code, void *arg)
{
	CHECK_EQ(code, RDMIG_ETIMEDOUT);
	CHECK_STR_CONTAINS(rdmig_listener_errmsg(l), "version 2");
}

DEVICE_TEST(version_2_peer_rejected)
{
	struct pair p = {.dev = dev, .dest_accept_failed = dest_expects_version_reject};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;

	test_opts(&o);
	test_opts(&p.dest_opts);
	p.dest_opts.accept_timeout_ms = 3000;
	CHECK_OK(pair_start(&p));
	CHECK_OK(rdmig_conn_create(&o, &c));
	rdmig__conn_set_cap_version(c, 2);
	CHECK_EQ(rdmig_connect(c, dev->ip, p.port), RDMIG_EVERSION);
	CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), "speaks capability version 1");
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

/* ------------------------------------------- errors, silence, departure -- */

static void dest_sends_error(struct rdmig_conn *c, void *arg)
{
	struct rdmig_msg m;

	CHECK_OK(rdmig_recv(c, RDMIG_MSG_REGISTER_REQUEST, &m));
	CHECK_OK(rdmig_send_error(c));
}

DEVICE_TEST(peer_error_ends_a_request)
{
	struct pair p = {.dev = dev, .dest = dest_sends_error};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_msg reply;
	uint8_t reg[RDMIG_REGISTER_SIZE] = {0};

	test_opts(&o);
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	/* The ERROR lands in the DATA slot where the reply was expected. */
	CHECK_EQ(rdmig_request(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_REQUEST, 1, sizeof(reg), reg},
			       RDMIG_MSG_REGISTER_RESULT, &reply),
		 RDMIG_EPEER);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

static void dest_stays_silent(struct rdmig_conn *c, void *arg)
{
	sleep(8); /* connected, but never sends READY */
}

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

DEVICE_TEST(silent_peer_times_out)
{
	struct pair p = {.dev = dev, .dest = dest_stays_silent};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct timespec t0;

	test_opts(&o);
	o.timeout_ms = 1000;
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL}),
		 RDMIG_ETIMEDOUT);
	/* well before the peer leaves (8 s), which would read as a disconnect */
	CHECK(elapsed_s(&t0) < 6.0);
	CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), "READY");
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

static void dest_leaves(struct rdmig_conn *c, void *arg)
{
	/* return at once: the harness destroys the connection */
}

DEVICE_TEST(peer_disconnect_ends_a_wait)
{
	struct pair p = {.dev = dev, .dest = dest_leaves};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct timespec t0;

	test_opts(&o);
	o.timeout_ms = 15000;
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL}),
		 RDMIG_EDISCONNECTED);
	CHECK(elapsed_s(&t0) < 10.0);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

/* The destination gives the READY a second late, takes one message, then
 * leaves (the harness disconnects). */
static void dest_late_ready_then_leaves(struct rdmig_conn *c, void *arg)
{
	struct rdmig_msg m;

	sleep(1);
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_REGISTER_FINISHED, &m));
}

/* Sleep on rdmig_conn_fd until it is readable; seconds slept, or -1. */
static double sleep_on_conn_fd(struct rdmig_conn *c, int timeout_ms)
{
	struct timespec t0;
	struct pollfd pfd = {.events = POLLIN};

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pfd.fd = rdmig_conn_fd(c);
	if (pfd.fd < 0 || poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	return elapsed_s(&t0);
}

/* An event loop sleeping on rdmig_conn_fd wakes for the peer's READY (not
 * before: the peer gives it a second late), the send then needs no wait,
 * and it wakes again as the peer leaves. */
DEVICE_TEST(conn_fd_wakes_for_the_peers_ready_and_its_leaving)
{
	struct pair p = {.dev = dev, .dest = dest_late_ready_then_leaves};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct timespec t0;
	double slept;

	test_opts(&o);
	o.timeout_ms = 15000;
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK(rdmig_conn_fd(c) >= 0);
	CHECK_EQ(rdmig_conn_fd(c), rdmig_conn_fd(c));
	slept = sleep_on_conn_fd(c, 10000);
	CHECK(slept >= 0.5); /* woke for the READY, not at once */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL}));
	CHECK(elapsed_s(&t0) < 0.5); /* the READY was there */
	/* the send's completion or the peer leaving: the fd wakes, and the
	 * connection soon says the peer is gone */
	CHECK(sleep_on_conn_fd(c, 10000) >= 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL}),
		 RDMIG_EDISCONNECTED);
	CHECK(elapsed_s(&t0) < 5.0);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

CHECK_MAIN()
