/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * channel.c - control messages and the READY credit flow.
 *
 * The send path is the reason rdmig exists: a message whose header plus
 * payload fits the QP's granted inline size is assembled on the stack (the
 * network-order header, then the payload: 40 bytes at most with the auto
 * ladder) and posted with IBV_SEND_INLINE from that one SGE.  The provider
 * copies it at post time, so there is no registered memory, no lkey and no
 * DMA read of a buffer.  One SGE, not header and payload as two: some
 * providers send only sg_list[0] of an inline send and say nothing (irdma
 * before rdma-core v44).  Anything larger is copied into SLOT_SEND and
 * posted from there; so is a message whose inline post the provider
 * refuses as such (EINVAL, ENOMEM, EMSGSIZE...: inline_ladder.c), and every
 * later message of its size or more.  The receiver sees the same bytes
 * either way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "completion.h"
#include "conn_engine.h"
#include "inline_ladder.h"
#include "opts.h"
#include "testhooks.h"
#include "wrid.h"

/* The send side's state, edited here alone: the copied send's buffer,
 * the next send's signal, and what became of inline posts.  The receive
 * side (slots, READY credits) is credits.c's. */
struct rdmig_channel {
	bool signal_next;  /* the next control send is signaled, due or not */
	uint64_t send_buf_seq; /* sequence of the last copied control send */
	/* The most an inline send may carry (header + payload): what the
	 * QP was granted (rdmig__channel_set_inline), lowered below a message
	 * the provider refused to post inline, so that such messages go
	 * copied from then on.  Kept here, not asked of the verbs resources
	 * at every send: it is read on every control message. */
	uint32_t inline_max;
	uint32_t inline_refusals; /* inline posts refused, then copied */
	/* tests (testhooks.h): the next refuse_left inline posts return
	 * refuse_ret, as a provider's post_send would, without posting */
	int refuse_ret;
	uint32_t refuse_left;
};

struct rdmig_channel *rdmig__channel_create(void)
{
	return calloc(1, sizeof(struct rdmig_channel));
}

void rdmig__channel_destroy(struct rdmig_channel *ch)
{
	free(ch);
}

static bool recv_done(const struct rdmig_conn *c, const void *arg)
{
	const enum conn_slot *slot = arg;
	return rdmig__rx_done(c->rx, *slot);
}

int rdmig__conn_reply_signaled(struct rdmig_conn *c, const struct rdmig_msg *msg)
{
	c->ch->signal_next = true;
	return rdmig_reply(c, msg);
}

static bool send_buf_free(const struct rdmig_conn *c, const void *arg)
{
	return rdmig__sq_completed(c->sq) >= c->ch->send_buf_seq;
}

int rdmig__conn_post_recv(struct rdmig_conn *c, enum conn_slot slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)conn_slot_buf(c, slot),
		.length = RDMIG_CONTROL_BUFFER,
		.lkey = rdmig__vres_buf_mr(c->res)->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wrid_make(slot == SLOT_READY ? WRID_RECV_READY : WRID_RECV_DATA, 0, 0),
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;
	int err;

	if (rdmig__rx_posted(c->rx, slot))
		return 0;
	err = verbs_errno(ibv_post_recv(rdmig__cml_qp(c->cm), &wr, &bad));
	if (err)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(err),
				   "ibv_post_recv (%s slot): %s%s", slot == SLOT_READY ? "READY" : "DATA",
				   strerror(err), rdmig__cml_qp_error_hint(c->cm, err));
	rdmig__rx_posted_now(c->rx, slot);
	return 0;
}

static int check_outgoing(struct rdmig_conn *c, const struct rdmig_msg *m)
{
	if (!m || m->type == RDMIG_MSG_NONE || m->type >= RDMIG_MSG_TYPE_COUNT)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EINVAL,
				   "cannot send message type %u", m ? m->type : 0);
	if (m->len > RDMIG_MAX_LEN)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_ETOOBIG,
				   "%s payload of %u bytes exceeds the protocol limit of %u",
				   rdmig_msg_type_name(m->type), m->len, RDMIG_MAX_LEN);
	if (m->len && !m->payload)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EINVAL,
				   "%s with len %u but no payload", rdmig_msg_type_name(m->type),
				   m->len);
	/* the same words as a wait that sees the disconnect, and its reason */
	if (rdmig__cml_ended(c->cm))
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EDISCONNECTED,
				   "cannot send %s: the peer disconnected (%s)",
				   rdmig_msg_type_name(m->type),
				   rdmig__cml_end_reason(c->cm)[0] ? rdmig__cml_end_reason(c->cm) : "no reason given");
	if (!rdmig__cml_established(c->cm))
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_ESTATE,
				   "cannot send %s: the connection is not established",
				   rdmig_msg_type_name(m->type));
	return 0;
}

/* Assemble an inline send in buf, which holds the encoded header and has
 * room for 16 + m->len bytes: the payload goes right after the header, so
 * the send is one SGE.  Some providers copy only sg_list[0] of an inline
 * send (irdma before rdma-core v44) and the post still succeeds; with one
 * SGE there is nothing they can leave out.  buf is on the caller's stack:
 * an inline SGE is copied at post time, needs no lkey and no registered
 * memory, and the device never reads it with DMA. */
static void inline_sge(struct ibv_sge *sge, uint8_t *buf, const struct rdmig_msg *m)
{
	if (m->len)
		memcpy(buf + RDMIG_HEADER_SIZE, m->payload, m->len);
	*sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = RDMIG_HEADER_SIZE + m->len};
}

/* Copy header + payload into SLOT_SEND, once its previous send completed. */
static int copy_sge(struct rdmig_conn *c, struct ibv_sge *sge, const uint8_t *hdr,
		    const struct rdmig_msg *m)
{
	uint8_t *buf = conn_slot_buf(c, SLOT_SEND);
	int ret = send_buf_free(c, NULL) ? 0 : rdmig__conn_wait(c, send_buf_free, NULL, "the send buffer");

	if (ret)
		return ret;
	memcpy(buf, hdr, RDMIG_HEADER_SIZE);
	if (m->len)
		memcpy(buf + RDMIG_HEADER_SIZE, m->payload, m->len);
	*sge = (struct ibv_sge){
		.addr = (uintptr_t)buf,
		.length = RDMIG_HEADER_SIZE + m->len,
		.lkey = rdmig__vres_buf_mr(c->res)->lkey,
	};
	return 0;
}

static void count_sent(struct rdmig_conn *c, uint32_t type, bool inl, uint32_t bytes)
{
	c->counters.sent[type]++;
	if (inl) {
		c->counters.sent_inline[type]++;
		c->counters.bytes_inline += bytes;
	} else {
		c->counters.sent_copied[type]++;
		c->counters.bytes_copied += bytes;
	}
}

/* ibv_post_send, its return normalised to 0 or a positive errno (some
 * providers return -errno), and the tests' refusal of inline posts.
 * Inlined in both of post_control's calls: as a call it cost 11
 * instructions a message (callgrind, test_post_inline bench). */
__attribute__((always_inline))
static inline int post_send_wr(struct rdmig_conn *c, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	if (c->ch->refuse_left && (wr->send_flags & IBV_SEND_INLINE)) {
		c->ch->refuse_left--;
		return verbs_errno(c->ch->refuse_ret);
	}
	return verbs_errno(ibv_post_send(rdmig__cml_qp(c->cm), wr, &bad));
}

/* The provider would not post an inline send of `bytes` (err says why):
 * from now on such messages go copied, and the first refusal is logged.
 * False when err is not about inline: the post failed. */
static bool inline_refused(struct rdmig_conn *c, const struct rdmig_msg *m, uint32_t bytes, int err)
{
	if (!rdmig__inline_post_refused(err))
		return false;
	if (!c->ch->inline_refusals++)
		rdmig__log(&c->opts, RDMIG_LOG_INFO,
			   "%s refused an inline send of %u bytes (%s, granted %u): "
			   "messages of %u bytes and more go copied",
			   rdmig__cml_device(c->cm), bytes, strerror(err),
			   rdmig__vres_inline(c->res)->granted, bytes);
	c->ch->inline_max = bytes - 1;
	rdmig__log(&c->opts, RDMIG_LOG_DEBUG, "inline %s of %u bytes refused (%s): copied",
		   rdmig_msg_type_name(m->type), bytes, strerror(err));
	return true;
}

void rdmig__conn_refuse_inline(struct rdmig_conn *c, int ret, uint32_t count)
{
	c->ch->refuse_ret = ret;
	c->ch->refuse_left = count;
}

uint32_t rdmig__conn_inline_refusals(const struct rdmig_conn *c)
{
	return c->ch->inline_refusals;
}

uint32_t rdmig__conn_inline_max(const struct rdmig_conn *c)
{
	return c->ch->inline_max;
}

void rdmig__channel_set_inline(struct rdmig_channel *ch, uint32_t granted)
{
	ch->inline_max = granted;
}

/* Post one control message (no credit logic).  A copied send is signaled:
 * its completion frees the send buffer.  An inline send leaves nothing to
 * reclaim, so it goes unsignaled (no completion to generate and reap)
 * unless the queue is due a signaled WR; QEMU signals and waits for every
 * control send.  An inline post the provider refuses as such goes copied. */
__attribute__((noinline)) /* kept whole: scripts/bench counts its instructions */
static int post_control(struct rdmig_conn *c, const struct rdmig_msg *m)
{
	/* the header, then (inline) the payload */
	uint8_t buf[RDMIG_INLINE_REQUEST_MAX];
	struct rdmig_header h = {.len = m->len, .type = m->type, .repeat = m->repeat};
	uint32_t bytes = RDMIG_HEADER_SIZE + m->len;
	bool inl = bytes <= c->ch->inline_max && bytes <= sizeof(buf);
	struct ibv_sge sge;
	struct ibv_send_wr wr = {.opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1};
	bool signaled = true;
	uint64_t seq;
	int ret = check_outgoing(c, m);

	if (!ret)
		ret = rdmig__conn_sq_wait_room(c);
	if (ret)
		return ret;
	rdmig_encode_header(&h, buf);
	if (inl) {
		signaled = c->ch->signal_next || rdmig__sq_signal_due(c->sq);
		inline_sge(&sge, buf, m);
		wr.send_flags = IBV_SEND_INLINE | (signaled ? IBV_SEND_SIGNALED : 0);
		wr.wr_id = wrid_make(WRID_SEND_INLINE, 0, 0);
		ret = post_send_wr(c, &wr);
		if (ret && inline_refused(c, m, bytes, ret))
			inl = false;
	}
	if (!inl) {
		ret = copy_sge(c, &sge, buf, m);
		if (ret)
			return ret;
		signaled = true;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr_id = wrid_make(WRID_SEND_COPY, 0, 0);
		ret = post_send_wr(c, &wr);
	}
	if (ret)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(ret), "ibv_post_send (%s, %u bytes, %s): %s%s",
				   rdmig_msg_type_name(m->type), bytes, inl ? "inline" : "copied",
				   strerror(ret), rdmig__cml_qp_error_hint(c->cm, ret));
	seq = rdmig__sq_record(c->sq, signaled, 0);
	c->ch->signal_next = false;
	if (!inl)
		c->ch->send_buf_seq = seq;
	count_sent(c, m->type, inl, bytes);
	return 0;
}

/* Wait for the message in slot, validate it and describe it in *out. */
static int take_message(struct rdmig_conn *c, enum conn_slot slot, uint32_t expect,
			struct rdmig_msg *out, const char *what)
{
	char why[256];
	struct rdmig_msg m;
	int ret = rdmig__conn_wait(c, recv_done, &slot, what);
	uint32_t len;

	if (ret)
		return ret;
	len = rdmig__rx_take(c->rx, slot);
	c->counters.bytes_received += len;
	ret = rdmig_msg_parse(conn_slot_buf(c, slot), len, expect, &m, why,
			      sizeof(why));
	if (slot == SLOT_READY)
		rdmig__rx_owe_message(c->rx, false);
	if (ret == RDMIG_EPEER) {
		c->counters.received[RDMIG_MSG_ERROR]++;
		return rdmig__fail(&c->opts, c->errmsg, ret,
				   "the peer sent ERROR while we waited for %s", what);
	}
	if (ret)
		return rdmig__fail(&c->opts, c->errmsg, ret, "bad message while waiting for %s: %s",
				   what, why);
	c->counters.received[m.type]++;
	if (out)
		*out = m;
	return 0;
}

/* QEMU's exchange_send: consume the owed READY, post the receives the
 * peer's next messages need (the DATA slot first: RC consumes receives in
 * posting order, and the reply comes before the next READY), and send. */
static int exchange_send(struct rdmig_conn *c, const struct rdmig_msg *m, bool want_reply)
{
	int ret = check_outgoing(c, m);

	if (!ret && rdmig__rx_ready_owed(c->rx))
		ret = take_message(c, SLOT_READY, RDMIG_MSG_READY, NULL, "the peer's READY");
	if (!ret && want_reply)
		ret = rdmig__conn_post_recv(c, SLOT_DATA);
	if (!ret)
		ret = rdmig__conn_post_recv(c, SLOT_READY);
	if (!ret)
		ret = post_control(c, m);
	if (!ret)
		rdmig__rx_owe_ready(c->rx, true);
	return ret;
}

int rdmig__conn_request_send(struct rdmig_conn *c, const struct rdmig_msg *msg)
{
	return exchange_send(c, msg, true);
}

int rdmig__conn_request_reply(struct rdmig_conn *c, uint32_t reply_type, struct rdmig_msg *reply)
{
	return take_message(c, SLOT_DATA, reply_type, reply, rdmig_msg_type_name(reply_type));
}

int rdmig_send(struct rdmig_conn *c, const struct rdmig_msg *msg)
{
	if (!c)
		return RDMIG_EINVAL;
	return exchange_send(c, msg, false);
}

int rdmig_request(struct rdmig_conn *c, const struct rdmig_msg *msg, uint32_t reply_type,
		  struct rdmig_msg *reply)
{
	if (!c)
		return RDMIG_EINVAL;
	if (!reply || reply_type == RDMIG_MSG_NONE || reply_type >= RDMIG_MSG_TYPE_COUNT)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EINVAL,
				   "a request needs a reply type and a place for the reply");
	int ret = exchange_send(c, msg, true);
	return ret ? ret : rdmig__conn_request_reply(c, reply_type, reply);
}

/* QEMU's exchange_recv, first half: give the peer its credit for the next
 * message, unless it has it already (a call that gave it then did not
 * take the message: a timeout, a cancel, rdmig__conn_try_recv finding
 * nothing yet).  A second READY would let the peer send twice.  The
 * receive goes back only now, just before the READY: the previous message
 * (out->payload points into the slot) was the caller's until then.
 * Posting it at once would let a source that sends without waiting for
 * READY have the device overwrite the payload while it is being handled;
 * now such a send finds no receive (an RNR retry on RoCE, the end of the
 * connection on iWARP) and the payload stays intact. */
static int give_ready(struct rdmig_conn *c)
{
	static const struct rdmig_msg ready = {.type = RDMIG_MSG_READY, .repeat = 1};
	int ret;

	if (rdmig__rx_message_owed(c->rx))
		return 0;
	ret = rdmig__conn_post_recv(c, SLOT_READY);
	if (!ret)
		ret = post_control(c, &ready);
	if (!ret)
		rdmig__rx_owe_message(c->rx, true);
	return ret;
}

static int check_expect(struct rdmig_conn *c, uint32_t expect)
{
	if (expect >= RDMIG_MSG_TYPE_COUNT)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EINVAL, "cannot expect type %u",
				   expect);
	return 0;
}

/* ... and the second: take its message. */
int rdmig_recv(struct rdmig_conn *c, uint32_t expect, struct rdmig_msg *out)
{
	if (!c)
		return RDMIG_EINVAL;
	int ret = check_expect(c, expect);

	if (!ret)
		ret = give_ready(c);
	if (!ret)
		ret = take_message(c, SLOT_READY, expect, out,
				   expect ? rdmig_msg_type_name(expect) : "the next message");
	return ret;
}

int rdmig__conn_recv_within(struct rdmig_conn *c, uint32_t expect, int timeout_ms,
			    struct rdmig_msg *out)
{
	int saved_timeout = c->opts.timeout_ms;
	int ret;

	/* a shorter bound only: <= 0 or a longer one keeps the connection's */
	if (timeout_ms > 0 && (saved_timeout <= 0 || timeout_ms < saved_timeout))
		c->opts.timeout_ms = timeout_ms;
	ret = rdmig_recv(c, expect, out);
	c->opts.timeout_ms = saved_timeout;
	return ret;
}

int rdmig__conn_take_unasked(struct rdmig_conn *c, uint32_t expect, int timeout_ms,
			     struct rdmig_msg *out)
{
	const char *what = expect ? rdmig_msg_type_name(expect) : "the next message";
	int saved_timeout = c->opts.timeout_ms;
	int ret = check_expect(c, expect);

	if (ret)
		return ret;
	if (!rdmig__rx_posted(c->rx, SLOT_READY) && !rdmig__rx_done(c->rx, SLOT_READY))
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_ESTATE,
				   "no receive is posted for %s", what);
	c->opts.timeout_ms = timeout_ms;
	ret = take_message(c, SLOT_READY, expect, out, what);
	c->opts.timeout_ms = saved_timeout;
	return ret;
}

int rdmig__conn_try_recv(struct rdmig_conn *c, uint32_t expect, struct rdmig_msg *out)
{
	const char *what = expect ? rdmig_msg_type_name(expect) : "the next message";
	enum conn_slot slot = SLOT_READY;
	int ret = check_expect(c, expect);

	if (!ret)
		ret = give_ready(c);
	if (!ret)
		ret = rdmig__conn_check(c, recv_done, &slot, what);
	/* there: take_message's wait ends at its first look */
	if (!ret)
		ret = take_message(c, SLOT_READY, expect, out, what);
	return ret;
}

int rdmig_reply(struct rdmig_conn *c, const struct rdmig_msg *msg)
{
	if (!c)
		return RDMIG_EINVAL;
	return post_control(c, msg);
}

/* How long an aborting side waits for its owed READY (or message), and
 * then for its ERROR to leave.  The READY can be queued behind a whole
 * chunk of writes and a registration (with 32 MiB chunks on rxe in the
 * test guest, over a second); an interrupted rdmig still exits well
 * inside the peer's default 10 s timeout. */
#define ABORT_WAIT_MS 3000

/* Wait at most timeout_ms for the owed READY; false when it did not come. */
static bool take_owed_ready(struct rdmig_conn *c, int timeout_ms)
{
	int saved_timeout = c->opts.timeout_ms;
	int ret;

	c->opts.timeout_ms = timeout_ms;
	ret = take_message(c, SLOT_READY, RDMIG_MSG_READY, NULL, "the peer's READY");
	c->opts.timeout_ms = saved_timeout;
	if (!ret)
		rdmig__rx_owe_ready(c->rx, false);
	return ret == 0;
}

/* We gave the peer a READY and wait for its message: take it (whatever it
 * is: we are aborting) if it comes within timeout_ms. */
static void take_owed_message(struct rdmig_conn *c, int timeout_ms)
{
	int saved_timeout = c->opts.timeout_ms;

	c->opts.timeout_ms = timeout_ms;
	take_message(c, SLOT_READY, RDMIG_MSG_NONE, NULL, "the peer's message");
	c->opts.timeout_ms = saved_timeout;
}

int rdmig_send_error(struct rdmig_conn *c)
{
	if (!c)
		return RDMIG_EINVAL;
	static const struct rdmig_msg error = {.type = RDMIG_MSG_ERROR, .repeat = 1};
	char saved[RDMIG_ERRMSG_SIZE];
	int ret;

	/* Best effort, and it must not replace the error that made us abort.
	 * The peer must have a receive posted: an ERROR arriving with none is
	 * fatal to the connection on iWARP (and an RNR error on RoCE), and the
	 * peer would see a flush or a disconnect instead of the ERROR.  A READY
	 * we are owed proves it has (the peer posts before it sends), and so
	 * does the message we are owed for our READY (a source posts its
	 * receives before every send; between them it has none, for example
	 * while it writes data): take either first if it comes soon. */
	memcpy(saved, c->errmsg, sizeof(saved));
	if (rdmig__rx_ready_owed(c->rx) && !rdmig__cml_ended(c->cm))
		take_owed_ready(c, ABORT_WAIT_MS);
	else if (rdmig__rx_message_owed(c->rx) && !rdmig__cml_ended(c->cm))
		take_owed_message(c, ABORT_WAIT_MS);
	ret = post_control(c, &error);
	/* Give it a moment to leave before a disconnect could flush it; the
	 * peer may well hang up as soon as it has read it, which is fine. */
	if (!ret)
		rdmig__conn_flush_sends(c, ABORT_WAIT_MS);
	memcpy(c->errmsg, saved, sizeof(saved));
	return ret;
}
