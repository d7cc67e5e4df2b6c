/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fake_io.h - a fake of the engine's seam (src/engine/engine_io.h) for the
 * destination engine (src/engine/dest.c): fuzz_dest.c, unit_dest_bounds,
 * unit_chunk_size, unit_dest_events and unit_dest_try_next.  Only the
 * destination's ops are served (recv, try_recv, reply, send_error, reg,
 * dereg, established); any other aborts.
 *
 * No device, no queue pair, no completion queue, no libibverbs: a received
 * message is the next frame the test hands out, parsed by the real
 * rdmig_msg_parse as channel.c does; every READY, reply, ERROR and
 * registration is recorded so the test can check it.  Registered regions
 * get fake keys from a table that remembers what each key covered and
 * whether it is still registered, so a reply that names a stale or
 * too-small region is caught.
 */
#ifndef RDMIG_FAKE_IO_H
#define RDMIG_FAKE_IO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "engine_io.h"
#include "log.h"

/* What a connection would hold for the engine: the engine_io's opts,
 * errmsg and caps point here. */
struct fake_conn {
	struct rdmig_opts opts;
	char errmsg[RDMIG_ERRMSG_SIZE];
	struct rdmig_caps caps;
	bool established;
	atomic_bool cancelled; /* rdmig_conn_cancel's flag (engine_io.cancel) */
};

#define FAKE_MAX_REPLIES 8

/* What the test plugs in.  Every hook gets ctx. */
struct fake_hooks {
	/* The next message as its receive completion would deliver it (the
	 * bytes and the completion's byte count); false: the peer is gone. */
	bool (*next_frame)(void *ctx, const uint8_t **buf, size_t *len);
	/* The destination asks for another message: the previous one is done. */
	void (*before_recv)(void *ctx);
	/* A frame was parsed (rc) and is about to be handed over (m when rc == 0);
	 * rc is RDMIG_EDISCONNECTED when next_frame had nothing left. */
	void (*delivered)(void *ctx, int rc, const struct rdmig_msg *m);
	/* Registration of [addr, addr + len) is about to succeed (abort if it
	 * must not), and a region is about to be deregistered. */
	void (*check_reg)(void *ctx, const uint8_t *addr, size_t len, enum engine_access access);
	void (*check_dereg)(void *ctx, const uint8_t *addr, size_t len);
	void *ctx;
	/* try_recv only (NULL: always): whether the message asked for has
	 * arrived; false makes try_recv return RDMIG_EAGAIN.  Asked once per
	 * try_recv, after the READY went out. */
	bool (*arrived)(void *ctx);
};

/* A reply the destination sent, as it would travel (header + payload). */
struct fake_reply {
	uint32_t type, repeat, len;
	uint8_t *wire;          /* RDMIG_HEADER_SIZE + len bytes */
	const uint8_t *payload; /* wire + RDMIG_HEADER_SIZE */
};

/* What a registered key covers. */
struct fake_region {
	const uint8_t *addr;
	size_t len;
	bool live;
};

struct fake_io {
	struct fake_conn *conn; /* the only connection the fakes accept */
	struct engine_io io;    /* over conn: what the test hands the engine */
	struct fake_hooks hooks;
	unsigned fail_reg_at; /* fail the Nth registration of the run (0: never) */

	unsigned recvs;       /* READYs sent: one per message asked for, by recv or try_recv */
	bool ready_out;       /* a READY went out, its message is not taken yet */
	unsigned try_recvs;   /* try_recv calls */
	unsigned eagains;     /* ... that found nothing yet */
	bool disconnected;    /* recv reported RDMIG_EDISCONNECTED */
	unsigned errors_sent; /* send_error calls */
	bool reg_failed;      /* the injected registration failure happened */
	unsigned regs, live_regions;
	struct fake_reply replies[FAKE_MAX_REPLIES];
	unsigned nreplies;

	uint8_t *rx; /* the received message (exactly its size, for ASan) */
	struct fake_region *regions; /* index = rkey - FAKE_RKEY_BASE */
	size_t nregions, regions_cap;
};

#define FAKE_RKEY_BASE 0x1000u

extern struct fake_io fake;

/* An engine_io over conn (for a destination that never receives). */
struct engine_io fake_io_of(struct fake_conn *conn);
/* Start a run on conn with hooks (fake.io is then the seam to create the
 * destination on); fail_reg_at as above. */
void fake_begin(struct fake_conn *conn, const struct fake_hooks *hooks, unsigned fail_reg_at);
/* Forget the recorded replies (the test has checked them). */
void fake_clear_replies(void);
/* End a run: every region must have been deregistered. */
void fake_end(void);
/* The region behind an rkey the destination handed out; NULL if none. */
const struct fake_region *fake_region_of(uint32_t rkey);

/* Frames for a test's next_frame hook: each a header and its payload,
 * handed out in order, one per rdmig_recv. */
#define FAKE_MAX_FRAMES 32 /* unit_dest_bounds fills 65,536 regions: 19 */
struct fake_frames {
	uint8_t *frame[FAKE_MAX_FRAMES];
	size_t len[FAKE_MAX_FRAMES];
	size_t n, next;
};
void fake_frames_add(struct fake_frames *q, uint32_t type, uint32_t repeat, const void *payload,
		     uint32_t len);
bool fake_frames_next(struct fake_frames *q, const uint8_t **buf, size_t *len);
void fake_frames_free(struct fake_frames *q);

/* Abort with a message: libFuzzer reports it as a crash. */
void fake_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
