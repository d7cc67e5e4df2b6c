/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * engine_io.h - everything the migration engines (source.c, dest.c) ask of
 * the connection beneath them, as one ops table and a few plain fields.
 *
 * The layers:   engine (source.c, dest.c, engine.c)
 *                  -> engine_io (this header)
 *                      -> conn (conn.h: verbs, rdma_cm, channel.c)
 *
 * The engines include this header and never conn.h.  engine_io_conn.c
 * fills a struct engine_io in from a connection (the only engine-side file
 * that knows struct rdmig_conn); the host tests fill one in with fakes
 * that record what the engine does, so neither engine needs a device to
 * be tested.
 */
#ifndef RDMIG_ENGINE_IO_H
#define RDMIG_ENGINE_IO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "rdmig.h"

/* A registered memory region, as the engine sees it: what it covers and
 * its keys.  The transport's own handle hides behind it (the registration
 * is opaque: only the ops that made it may release it). */
struct engine_mr {
	uint8_t *addr;
	uint64_t length;
	uint32_t lkey, rkey;
	size_t slot; /* the engine's: where it keeps this region (dest.c's list) */
};

/* What the peer may do with a registration.  The source's memory is only
 * read by the local HCA (so read-only file mappings register too); the
 * destination's is written by the peer and never read by it. */
enum engine_access {
	ENGINE_ACCESS_LOCAL_READ,
	ENGINE_ACCESS_REMOTE_WRITE,
};

/* One RDMA WRITE of the source: len bytes at local (lkey) to remote (rkey).
 * block and chunk name it should it fail; signal asks for a signaled
 * write (the transport may signal others too, to keep its queue moving). */
struct engine_write {
	const void *local;
	uint32_t len, lkey;
	uint64_t remote;
	uint32_t rkey;
	uint32_t block, chunk;
	bool signal;
};

/*
 * The ops.  Every one gets the engine_io's ctx.  Those returning int return
 * 0 or an RDMIG_E* code with the reason already in the errmsg buffer.
 */
struct engine_io_ops {
	/* Register [addr, addr + len): the region, the caller's until dereg,
	 * or NULL with errno set as ibv_reg_mr leaves it (the engine words
	 * the error: it knows what it was registering). */
	struct engine_mr *(*reg)(void *ctx, void *addr, uint64_t len, enum engine_access access);
	void (*dereg)(void *ctx, struct engine_mr *mr);
	/* Post one RDMA WRITE (once the send queue has room); it completes
	 * in the background. */
	int (*post_write)(void *ctx, const struct engine_write *w);
	/* Wait (at most timeout_ms; <= 0: the connection's timeout) until
	 * every write and control send posted so far completed. */
	int (*flush_sends)(void *ctx, int timeout_ms);
	/* Send one control message (after the peer's READY), no reply. */
	int (*send)(void *ctx, const struct rdmig_msg *msg);
	/* A request in two halves, so the engine can work while the reply
	 * travels; nothing else may be sent in between. */
	int (*request_send)(void *ctx, const struct rdmig_msg *msg);
	int (*request_reply)(void *ctx, uint32_t reply_type, struct rdmig_msg *reply);
	/* Give the peer a READY and take its next message (expect as
	 * rdmig_recv), waiting at most timeout_ms (<= 0: the connection's
	 * timeout); the payload stays valid until the next recv. */
	int (*recv)(void *ctx, uint32_t expect, int timeout_ms, struct rdmig_msg *msg);
	/* recv without the wait: RDMIG_EAGAIN when the message has not come
	 * yet (the READY went out; neither call sends it again). */
	int (*try_recv)(void *ctx, uint32_t expect, struct rdmig_msg *msg);
	/* Answer the message just received (no READY is waited for). */
	int (*reply)(void *ctx, const struct rdmig_msg *msg);
	/* Tell the peer we abort (best effort); keeps the errmsg buffer. */
	int (*send_error)(void *ctx);
	/* Whether the connection is up (the engines refuse to start on one
	 * that is not), and how many writes went signaled (statistics). */
	bool (*established)(void *ctx);
	uint64_t (*writes_signaled)(void *ctx);
};

/*
 * An engine's view of its connection.  opts, errmsg and caps are the
 * connection's own (read when needed: the capabilities are negotiated by
 * the time a message is served); errmsg is RDMIG_ERRMSG_SIZE bytes and is
 * what rdmig_conn_errmsg, rdmig_source_errmsg and rdmig_dest_errmsg show.
 */
struct engine_io {
	const struct engine_io_ops *ops;
	void *ctx;
	const struct rdmig_opts *opts;
	char *errmsg;
	const struct rdmig_caps *caps;
	/* The connection's own cancel (rdmig_conn_cancel), set from any
	 * thread; NULL: none.  The engines look at it between messages and
	 * while zeroing, beside opts->cancel and opts->cancel_fd. */
	const atomic_bool *cancel;
};

/* The engines' constructors over any engine_io (copied: the struct need
 * not outlive the call).  rdmig_source_create and rdmig_dest_create are
 * these over a connection (engine_io_conn.c). */
int rdmig__source_create(const struct engine_io *io, const struct rdmig_block *blocks,
			 size_t nblocks, struct rdmig_source **out);
int rdmig__dest_create(const struct engine_io *io, struct rdmig_dest **out);

#endif
