/* SPDX-License-Identifier: BSD-2-Clause */
/* rawpeer.c - posting what the public API refuses to send (see rawpeer.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cm_event.h"
#include "completion.h"
#include "conn.h"
#include "rawpeer.h"
#include "wrid.h"

#define RAW_CM_TIMEOUT_MS 10000

size_t raw_frame(uint8_t *out, uint32_t type, uint32_t repeat, uint32_t len, const void *payload,
		 size_t payload_len)
{
	struct rdmig_header h = {.len = len, .type = type, .repeat = repeat};

	rdmig_encode_header(&h, out);
	if (payload_len)
		memcpy(out + RDMIG_HEADER_SIZE, payload, payload_len);
	return RDMIG_HEADER_SIZE + payload_len;
}

static bool sent(const struct rdmig_conn *c, const void *arg)
{
	return rdmig__sq_completed(c->sq) >= *(const uint64_t *)arg;
}

/* Post one signaled WR from a buffer of our own (any size, even beyond a
 * control slot) and wait until it completed. */
static int post_and_wait(struct rdmig_conn *c, struct ibv_send_wr *wr, void *buf, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(rdmig__vres_pd(c->res), buf, len ? len : 1, 0);
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = (uint32_t)len};
	struct ibv_send_wr *bad;
	uint64_t seq;
	int ret, err;

	if (!mr)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno), "raw: ibv_reg_mr: %s",
				   strerror(errno));
	sge.lkey = mr->lkey;
	wr->sg_list = &sge;
	wr->num_sge = len ? 1 : 0;
	wr->send_flags = IBV_SEND_SIGNALED;
	ret = rdmig__conn_sq_wait_room(c);
	if (!ret) {
		err = verbs_errno(ibv_post_send(rdmig__cml_qp(c->cm), wr, &bad));
		if (err)
			ret = rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(err), "raw: ibv_post_send: %s",
					  strerror(err));
	}
	if (!ret) {
		seq = rdmig__sq_record(c->sq, true, 0);
		ret = rdmig__conn_wait(c, sent, &seq, "a raw work request");
	}
	ibv_dereg_mr(mr);
	return ret;
}

int raw_post(struct rdmig_conn *c, const void *bytes, size_t len)
{
	struct ibv_send_wr wr = {.wr_id = wrid_make(WRID_SEND_COPY, 0, 0), .opcode = IBV_WR_SEND};
	uint8_t *buf = malloc(len ? len : 1);
	int ret;

	if (!buf)
		return RDMIG_ENOMEM;
	memcpy(buf, bytes, len);
	ret = post_and_wait(c, &wr, buf, len);
	free(buf);
	return ret;
}

static bool ready_slot_done(const struct rdmig_conn *c, const void *arg)
{
	return rdmig__rx_done(c->rx, SLOT_READY);
}

int raw_wait_message(struct rdmig_conn *c)
{
	struct rdmig_msg m;
	char why[256];
	int ret = rdmig__conn_wait(c, ready_slot_done, NULL, "a message (raw)");
	uint32_t len;

	if (ret)
		return ret;
	len = rdmig__rx_take(c->rx, SLOT_READY);
	ret = rdmig_msg_parse(conn_slot_buf(c, SLOT_READY), len, RDMIG_MSG_NONE, &m, why, sizeof(why));
	if (ret)
		snprintf(c->errmsg, sizeof(c->errmsg), "raw: %s", why);
	return ret;
}

int raw_send(struct rdmig_conn *c, const void *bytes, size_t len)
{
	int ret = 0;

	if (rdmig__rx_ready_owed(c->rx)) {
		struct rdmig_msg m;
		char why[256];

		ret = rdmig__conn_wait(c, ready_slot_done, NULL, "the peer's READY (raw)");
		if (ret)
			return ret;
		ret = rdmig_msg_parse(conn_slot_buf(c, SLOT_READY),
				      rdmig__rx_take(c->rx, SLOT_READY), RDMIG_MSG_READY, &m, why, sizeof(why));
		if (ret)
			return rdmig__fail(&c->opts, c->errmsg, ret, "raw: %s", why);
		rdmig__rx_owe_ready(c->rx, false);
	}
	ret = rdmig__conn_post_recv(c, SLOT_READY);
	if (!ret)
		ret = raw_post(c, bytes, len);
	if (!ret)
		rdmig__rx_owe_ready(c->rx, true);
	return ret;
}

static bool never(const struct rdmig_conn *c, const void *arg)
{
	return false;
}

int raw_wait_end(struct rdmig_conn *c)
{
	return rdmig__conn_wait(c, never, NULL, "the end of the connection");
}

int raw_write(struct rdmig_conn *c, uint64_t remote, uint32_t rkey, uint32_t len)
{
	struct ibv_send_wr wr = {
		.wr_id = wrid_make(WRID_WRITE, 0, 0),
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = {.remote_addr = remote, .rkey = rkey},
	};
	uint8_t *buf = malloc(len ? len : 1);
	int ret;

	if (!buf)
		return RDMIG_ENOMEM;
	fill_pattern(buf, len, 0xbad);
	ret = post_and_wait(c, &wr, buf, len);
	free(buf);
	return ret;
}

struct ibv_mr *raw_reg_remote(struct rdmig_conn *c, void *addr, size_t len)
{
	return ibv_reg_mr(rdmig__vres_pd(c->res), addr, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

/* ------------------------------------------------------------ rdma_cm -- */

static int next_event(struct rdma_event_channel *ec, enum rdma_cm_event_type *type,
		      struct rdma_cm_id **id, uint8_t *pdata, size_t *plen)
{
	struct rdma_cm_event *ev;
	int err = rdmig__cm_event_wait(ec, RAW_CM_TIMEOUT_MS, &ev);

	if (err)
		return err;
	*type = ev->event;
	if (id)
		*id = ev->id;
	if (pdata) {
		size_t n = ev->param.conn.private_data ? ev->param.conn.private_data_len : 0;
		*plen = n;
		if (n)
			memcpy(pdata, ev->param.conn.private_data,
			       n < RDMIG_CAPS_SIZE ? n : RDMIG_CAPS_SIZE);
	}
	rdma_ack_cm_event(ev);
	return 0;
}

/* PD, CQ and a small RC QP on the id's device. */
static int raw_qp(struct rdma_cm_id *id, struct ibv_pd **pd, struct ibv_cq **cq)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
	};

	*pd = ibv_alloc_pd(id->verbs);
	*cq = *pd ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) : NULL;
	if (!*cq)
		return -1;
	attr.send_cq = attr.recv_cq = *cq;
	return rdma_create_qp(id, *pd, &attr);
}

static int wait_for(struct rdma_event_channel *ec, enum rdma_cm_event_type want, const char *step)
{
	enum rdma_cm_event_type got;
	int err = next_event(ec, &got, NULL, NULL, NULL);

	if (err || got != want) {
		fprintf(stderr, "raw cm: %s: %s\n", step, err ? strerror(err) : rdma_event_str(got));
		return -1;
	}
	return 0;
}

int raw_cm_connect(struct raw_cm *r, const char *ip, const char *port, const void *pdata,
		   uint8_t plen)
{
	struct rdma_addrinfo hints = {.ai_port_space = RDMA_PS_TCP}, *ai = NULL;
	struct rdma_conn_param param = {
		.private_data = pdata,
		.private_data_len = plen,
		.initiator_depth = 2,
		.retry_count = 5,
	};
	int ret = -1;

	memset(r, 0, sizeof(*r));
	r->ec = rdmig__cm_channel_create();
	if (!r->ec || rdma_getaddrinfo(ip, port, &hints, &ai) ||
	    rdma_create_id(r->ec, &r->id, NULL, RDMA_PS_TCP)) {
		fprintf(stderr, "raw cm: setup for %s:%s: %s\n", ip, port, strerror(errno));
		goto out;
	}
	if (rdma_resolve_addr(r->id, NULL, ai->ai_dst_addr, 2000) ||
	    wait_for(r->ec, RDMA_CM_EVENT_ADDR_RESOLVED, "resolve address") ||
	    rdma_resolve_route(r->id, 2000) ||
	    wait_for(r->ec, RDMA_CM_EVENT_ROUTE_RESOLVED, "resolve route") ||
	    raw_qp(r->id, &r->pd, &r->cq) || rdma_connect(r->id, &param)) {
		fprintf(stderr, "raw cm: connecting to %s:%s failed (%s)\n", ip, port,
			strerror(errno));
		goto out;
	}
	if (next_event(r->ec, &r->event, NULL, r->pdata, &r->plen)) {
		fprintf(stderr, "raw cm: no answer to the connect\n");
		goto out;
	}
	ret = 0;
out:
	if (ai)
		rdma_freeaddrinfo(ai);
	return ret;
}

int raw_cm_vanish(const char *ip, const char *port, const void *pdata, uint8_t plen,
		  enum raw_vanish how)
{
	struct rdma_addrinfo hints = {.ai_port_space = RDMA_PS_TCP}, *ai = NULL;
	struct rdma_conn_param param = {
		.private_data = pdata,
		.private_data_len = plen,
		.initiator_depth = 2,
		.retry_count = 5,
	};
	struct raw_cm r;
	int ret = -1;

	memset(&r, 0, sizeof(r));
	r.ec = rdmig__cm_channel_create();
	if (!r.ec || rdma_getaddrinfo(ip, port, &hints, &ai) ||
	    rdma_create_id(r.ec, &r.id, NULL, RDMA_PS_TCP)) {
		fprintf(stderr, "raw cm: setup for %s:%s: %s\n", ip, port, strerror(errno));
		goto out;
	}
	if (rdma_resolve_addr(r.id, NULL, ai->ai_dst_addr, 2000) ||
	    wait_for(r.ec, RDMA_CM_EVENT_ADDR_RESOLVED, "resolve address") ||
	    rdma_resolve_route(r.id, 2000) ||
	    wait_for(r.ec, RDMA_CM_EVENT_ROUTE_RESOLVED, "resolve route") ||
	    (how == RAW_VANISH_AT_ONCE && raw_qp(r.id, &r.pd, &r.cq)) ||
	    rdma_connect(r.id, &param)) {
		fprintf(stderr, "raw cm: connecting to %s:%s failed (%s)\n", ip, port,
			strerror(errno));
		goto out;
	}
	/* Without a QP, librdmacm does not complete the handshake itself: the
	 * destination's accept arrives as CONNECT_RESPONSE, and we leave. */
	if (how == RAW_VANISH_AFTER_ACCEPT &&
	    wait_for(r.ec, RDMA_CM_EVENT_CONNECT_RESPONSE, "the destination's accept"))
		goto out;
	ret = 0;
out:
	if (ai)
		rdma_freeaddrinfo(ai);
	raw_cm_close(&r); /* never established: no disconnect, just gone */
	return ret;
}

void raw_cm_close(struct raw_cm *r)
{
	if (r->id && r->event == RDMA_CM_EVENT_ESTABLISHED)
		rdma_disconnect(r->id);
	if (r->id && r->id->qp)
		rdma_destroy_qp(r->id);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->id)
		rdma_destroy_id(r->id);
	if (r->ec)
		rdma_destroy_event_channel(r->ec);
	memset(r, 0, sizeof(*r));
}

/* The child of raw_listener_start; never returns. */
static void raw_listener_child(const struct dev *dev, const void *echo, uint8_t echo_len, int wfd)
{
	struct rdma_addrinfo hints = {.ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP}, *ai;
	struct rdma_conn_param param = {
		.private_data = echo,
		.private_data_len = echo_len,
		.responder_resources = 2,
		.initiator_depth = 2,
		.retry_count = 5,
	};
	struct rdma_event_channel *ec = rdmig__cm_channel_create();
	struct rdma_cm_id *lid = NULL, *id = NULL;
	enum rdma_cm_event_type type = RDMA_CM_EVENT_ADDR_ERROR;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	char port[8] = "";

	alarm(60); /* a hung child must not hang the suite */
	if (ec && !rdma_getaddrinfo(dev->ip, "0", &hints, &ai)) {
		if (!rdma_create_id(ec, &lid, NULL, RDMA_PS_TCP) &&
		    !rdma_bind_addr(lid, ai->ai_src_addr) && !rdma_listen(lid, 1))
			snprintf(port, sizeof(port), "%u", ntohs(rdma_get_src_port(lid)));
		rdma_freeaddrinfo(ai);
	}
	if (write(wfd, port, sizeof(port)) != (ssize_t)sizeof(port) || !port[0])
		_exit(3);
	close(wfd);
	if (next_event(ec, &type, &id, NULL, NULL) || type != RDMA_CM_EVENT_CONNECT_REQUEST ||
	    raw_qp(id, &pd, &cq) || rdma_accept(id, &param)) {
		fprintf(stderr, "raw listener: no connection to accept (%s)\n", rdma_event_str(type));
		_exit(1);
	}
	/* Stay until the source leaves (or gives up on us). */
	while (!next_event(ec, &type, NULL, NULL, NULL) && type == RDMA_CM_EVENT_ESTABLISHED)
		;
	rdma_destroy_qp(id);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(id);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ec);
	_exit(0);
}

int raw_listener_start(struct pair *p, const void *echo, uint8_t echo_len)
{
	int fds[2];
	ssize_t n;

	if (pipe(fds))
		return -1;
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		close(fds[0]);
		raw_listener_child(p->dev, echo, echo_len, fds[1]);
	}
	close(fds[1]);
	n = read(fds[0], p->port, sizeof(p->port));
	close(fds[0]);
	if (n != (ssize_t)sizeof(p->port) || !p->port[0]) {
		fprintf(stderr, "the raw listener did not start listening\n");
		pair_finish(p, 5);
		return -1;
	}
	return 0;
}
