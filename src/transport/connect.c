/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * connect.c - the source side of a connection, and what every connection
 * has: destroy and the accessors.
 *
 * Connecting: resolve host:port with rdma_getaddrinfo and try every address
 * (IPv4 and IPv6) until address and route resolve; build the verbs
 * resources and the QP on that device; post the READY-slot receive (the
 * destination's first READY may arrive as soon as it accepts); connect with
 * our capability record in the private data and read the destination's
 * filtered echo.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "clock.h"
#include "cm_event.h"
#include "conn.h"
#include "conn_session.h"
#include "qp_transport.h"
#include "testhooks.h"

#define RESOLVE_TIMEOUT_MS 2000
/* How long a clean end waits for the peer's answer to its disconnect
 * when the connection has no timeout (one DREQ resend and more). */
#define CLOSE_WAIT_UNTIMED_MS 10000

int rdmig_conn_create(const struct rdmig_opts *opts, struct rdmig_conn **out)
{
	if (!out)
		return RDMIG_EINVAL;
	return rdmig__conn_alloc(opts, ROLE_SOURCE, out, NULL);
}

void rdmig__conn_set_cap_version(struct rdmig_conn *c, uint32_t version)
{
	c->cap_version = version;
}

/* Wait for one event of type want on the connection's channel. */
static int expect_event(struct rdmig_conn *c, enum rdma_cm_event_type want, char *detail,
			size_t detail_len)
{
	struct rdma_cm_event *ev;
	int err = rdmig__cm_event_wait_cancellable(rdmig__cml_channel(c->cm), c->opts.timeout_ms, &c->opts, &ev);

	if (err) {
		snprintf(detail, detail_len, "waiting for %s: %s", rdma_event_str(want),
			 strerror(err));
		return wait_errcode(err);
	}
	if (ev->event != want) {
		snprintf(detail, detail_len, "got %s (status %d) instead of %s",
			 rdma_event_str(ev->event), ev->status, rdma_event_str(want));
		rdma_ack_cm_event(ev);
		return RDMIG_EADDR;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

static void format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
	socklen_t sl = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						 : sizeof(struct sockaddr_in);

	getnameinfo(sa, sl, host, sizeof(host), serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, serv);
}

/* Resolve address and route of one candidate; on success rdmig__cml_id(c->cm) is set. */
static int try_address(struct rdmig_conn *c, const struct rdma_addrinfo *ai, char *detail,
		       size_t detail_len)
{
	struct rdma_cm_id *id;
	int ret;

	if (rdma_create_id(rdmig__cml_channel(c->cm), &id, c, RDMA_PS_TCP)) {
		int err = errno;
		snprintf(detail, detail_len, "rdma_create_id: %s", strerror(err));
		return rdmig__syserr(err);
	}
	if (rdma_resolve_addr(id, ai->ai_src_addr, ai->ai_dst_addr, RESOLVE_TIMEOUT_MS)) {
		snprintf(detail, detail_len, "rdma_resolve_addr: %s", strerror(errno));
		ret = RDMIG_EADDR;
	} else {
		rdmig__cml_set_id(c->cm, id); /* expect_event reads events of this id */
		ret = expect_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, detail, detail_len);
		if (!ret && rdma_resolve_route(id, RESOLVE_TIMEOUT_MS)) {
			snprintf(detail, detail_len, "rdma_resolve_route: %s", strerror(errno));
			ret = RDMIG_EADDR;
		}
		if (!ret)
			ret = expect_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, detail, detail_len);
	}
	if (ret) {
		rdma_destroy_id(id);
		rdmig__cml_set_id(c->cm, NULL);
	}
	return ret;
}

static int resolve(struct rdmig_conn *c, const char *host, const char *port)
{
	struct rdma_addrinfo hints = {.ai_port_space = RDMA_PS_TCP}, *res, *ai;
	char detail[256] = "no address to try", where[80];
	int ret = RDMIG_EADDR, tried = 0;

	if (rdma_getaddrinfo(host, port, &hints, &res))
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EADDR, "cannot resolve %s port %s: %s",
				   host, port, strerror(errno ? errno : ENOENT));
	for (ai = res; ai && ret; ai = ai->ai_next) {
		if (!ai->ai_dst_addr)
			continue;
		tried++;
		format_addr(ai->ai_dst_addr, where, sizeof(where));
		ret = try_address(c, ai, detail, sizeof(detail));
		rdmig__log(&c->opts, RDMIG_LOG_DEBUG, "resolving %s: %s", where,
			   ret ? detail : "ok");
	}
	rdma_freeaddrinfo(res);
	if (ret)
		return rdmig__fail(&c->opts, c->errmsg, ret, "cannot reach %s port %s (%d address%s "
				   "tried; last: %s)", host, port, tried, tried == 1 ? "" : "es",
				   detail);
	return 0;
}

static int rejected(struct rdmig_conn *c, const struct rdma_cm_event *ev)
{
	struct rdmig_caps theirs;
	char extra[128] = "";

	if (ev->param.conn.private_data && ev->param.conn.private_data_len >= RDMIG_CAPS_SIZE) {
		rdmig_decode_caps(ev->param.conn.private_data, &theirs);
		if (theirs.version != c->cap_version)
			snprintf(extra, sizeof(extra),
				 ": it speaks capability version %u, we asked for version %u",
				 theirs.version, c->cap_version);
	}
	return rdmig__fail(&c->opts, c->errmsg, extra[0] ? RDMIG_EVERSION : RDMIG_EREJECTED,
			   "the destination rejected the connection (status %d)%s", ev->status,
			   extra);
}

/* Read the destination's filtered echo of our capabilities. */
static int established(struct rdmig_conn *c, const struct rdma_cm_event *ev, uint32_t asked)
{
	struct rdmig_caps echo = {RDMIG_CAP_VERSION, 0};

	if (ev->param.conn.private_data && ev->param.conn.private_data_len >= RDMIG_CAPS_SIZE)
		rdmig_decode_caps(ev->param.conn.private_data, &echo);
	if (echo.version != RDMIG_CAP_VERSION)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EVERSION,
				   "the destination answered with capability version %u; rdmig "
				   "speaks version %u", echo.version, RDMIG_CAP_VERSION);
	c->caps.version = echo.version;
	c->caps.flags = asked & echo.flags & RDMIG_CAP_KNOWN_FLAGS;
	if ((asked & RDMIG_CAP_PIN_ALL) && !(c->caps.flags & RDMIG_CAP_PIN_ALL))
		rdmig__log(&c->opts, RDMIG_LOG_INFO,
			   "the destination refused PIN_ALL: using dynamic registration");
	rdmig__cml_establish(c->cm);
	rdmig__rx_owe_ready(c->rx, true); /* the first send waits for the destination's READY */
	return 0;
}

static int connect_with_caps(struct rdmig_conn *c)
{
	struct rdmig_caps caps = {c->cap_version, (c->opts.pin_all ? RDMIG_CAP_PIN_ALL : 0) |
						  (c->opts.verdict ? RDMIG_CAP_VERDICT : 0)};
	uint8_t pdata[RDMIG_CAPS_SIZE];
	struct rdma_conn_param param = {
		.private_data = pdata,
		.private_data_len = sizeof(pdata),
		.initiator_depth = 2, /* as QEMU */
		.retry_count = RDMIG_QP_RETRY_COUNT,
	};
	struct rdma_cm_event *ev;
	int err, ret;

	rdmig_encode_caps(&caps, pdata);
	rdmig__qp_transport_set(rdmig__cml_id(c->cm), &c->opts);
	if (rdma_connect(rdmig__cml_id(c->cm), &param))
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno), "rdma_connect: %s",
				   strerror(errno));
	err = rdmig__cm_event_wait_cancellable(rdmig__cml_channel(c->cm), c->opts.timeout_ms, &c->opts, &ev);
	if (err)
		return rdmig__fail(&c->opts, c->errmsg, wait_errcode(err),
				   "waiting for the destination to accept: %s", strerror(err));
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = established(c, ev, caps.flags);
		break;
	case RDMA_CM_EVENT_REJECTED:
		ret = rejected(c, ev);
		break;
	default:
		ret = rdmig__fail(&c->opts, c->errmsg, RDMIG_EADDR,
				  "connecting failed: %s (status %d)", rdma_event_str(ev->event),
				  ev->status);
	}
	rdma_ack_cm_event(ev);
	return ret;
}

int rdmig_connect(struct rdmig_conn *c, const char *host, const char *port)
{
	int ret;

	if (!c)
		return RDMIG_EINVAL;
	if (!host || !port)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EINVAL, "connect needs host and port");
	if (rdmig__cml_channel(c->cm) || c->role != ROLE_SOURCE)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_ESTATE,
				   "rdmig_connect: this handle was already used");
	ret = rdmig__cml_open_channel(c->cm);
	if (ret)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(ret),
				   "rdma_create_event_channel: %s (is rdma_ucm loaded?)",
				   strerror(ret));
	ret = rdmig__conn_fd_watch(c, rdmig__cml_channel_fd(c->cm), "rdma_cm");
	if (!ret)
		ret = resolve(c, host, port);
	if (!ret)
		ret = rdmig__conn_res_create(c);
	if (!ret)
		ret = rdmig__conn_post_recv(c, SLOT_READY);
	if (!ret)
		ret = connect_with_caps(c);
	return ret;
}

/* ------------------------------------------------ every connection -- */

int rdmig__conn_alloc(const struct rdmig_opts *opts, enum conn_role role, struct rdmig_conn **out,
	       char *errmsg)
{
	struct rdmig_conn *c;
	int ret;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		if (errmsg)
			snprintf(errmsg, RDMIG_ERRMSG_SIZE, "cannot allocate a connection");
		return RDMIG_ENOMEM;
	}
	c->role = role;
	c->cap_version = RDMIG_CAP_VERSION;
	ret = rdmig__opts_copy(&c->opts, opts, c->errmsg);
	if (!ret && (!(c->cm = rdmig__cml_create()) || !(c->rx = rdmig__rx_create()) ||
		     !(c->ch = rdmig__channel_create())))
		ret = rdmig__fail(&c->opts, c->errmsg, RDMIG_ENOMEM, "cannot allocate a connection");
	if (ret) {
		/* No handle on failure; the reason went to the log callback. */
		if (errmsg)
			memcpy(errmsg, c->errmsg, RDMIG_ERRMSG_SIZE);
		rdmig__cml_destroy(c->cm);
		rdmig__rx_destroy(c->rx);
		free(c);
		return ret;
	}
	rdmig__conn_fd_init(c);
	atomic_init(&c->cancelled, false);
	/* made with the handle: rdmig_conn_cancel may come from another
	 * thread at any time, and must not race to make it */
	c->cancel_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	*out = c;
	return 0;
}

int rdmig__conn_res_create(struct rdmig_conn *c)
{
	int ret;

	c->sq = rdmig__sq_create(c->opts.max_send_wr);
	if (!c->sq)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_ENOMEM,
				   "cannot allocate the send queue's ledger");
	ret = rdmig__vres_create(rdmig__cml_id(c->cm), &c->opts, c->errmsg, &c->res);
	if (!ret)
		rdmig__channel_set_inline(c->ch, rdmig__vres_inline(c->res)->granted);
	if (!ret)
		ret = rdmig__conn_fd_watch(c, rdmig__vres_cc(c->res, VRES_SEND)->fd, "send");
	if (!ret)
		ret = rdmig__conn_fd_watch(c, rdmig__vres_cc(c->res, VRES_RECV)->fd, "recv");
	return ret;
}

void rdmig__conn_res_destroy(struct rdmig_conn *c)
{
	rdmig__vres_destroy(c->res);
	c->res = NULL;
	rdmig__sq_destroy(c->sq);
	c->sq = NULL;
}

/*
 * A clean end: every send done, then the disconnect, kept open until the
 * peer answers it.  On IB and RoCE the disconnect request (DREQ) is a CM
 * datagram: the kernel sends it again after its response timeout (about
 * 5 s with rdma_cm's defaults) while the id lives, and stops when the id
 * is destroyed.  Destroying at once, as rdmig_conn_destroy does, left a
 * destination whose DREQ was lost on a lossy path waiting out its timeout
 * for an end that never came, and failing (seen at 5% loss on rxe).
 */
int rdmig__conn_close_after_end(struct rdmig_conn *c)
{
	int ret;

	if (!rdmig__cml_live(c->cm))
		return 0;
	if ((ret = rdmig__conn_flush_sends(c, 0)))
		return ret;
	return rdmig__conn_disconnect_and_wait(c);
}

int rdmig__conn_disconnect_and_wait(struct rdmig_conn *c)
{
	int wait_ms = c->opts.timeout_ms > 0 ? c->opts.timeout_ms : CLOSE_WAIT_UNTIMED_MS;
	long long deadline;

	if (!rdmig__cml_live(c->cm))
		return 0;
	if (rdma_disconnect(rdmig__cml_id(c->cm)))
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno), "rdma_disconnect: %s",
				   strerror(errno));
	deadline = rdmig__now_ms() + wait_ms;
	while (!rdmig__cml_ended(c->cm)) {
		long long left = deadline - rdmig__now_ms();
		struct rdma_cm_event *ev;
		int err;

		if (left <= 0)
			break;
		err = rdmig__cm_event_wait_cancellable(rdmig__cml_channel(c->cm), (int)left, &c->opts, &ev);
		if (err == ETIMEDOUT)
			break;
		if (err)
			return rdmig__fail(&c->opts, c->errmsg, wait_errcode(err),
					   "%s while waiting for the peer to close",
					   err == ECANCELED ? "cancelled" : strerror(err));
		rdmig__conn_cm_event_ends(c, ev->event);
		rdma_ack_cm_event(ev);
	}
	if (!rdmig__cml_ended(c->cm))
		/* Everything we sent was acknowledged by the peer's device:
		 * what it does with it is its own to report. */
		rdmig__log(&c->opts, RDMIG_LOG_INFO, "the peer did not answer our disconnect "
			   "within %d ms", wait_ms);
	return 0;
}

void rdmig_conn_destroy(struct rdmig_conn *c)
{
	if (!c)
		return;
	if (rdmig__cml_live(c->cm)) {
		rdmig__conn_flush_sends(c, 2000); /* best effort: a clean close */
		rdma_disconnect(rdmig__cml_id(c->cm));
	}
	rdmig__conn_res_destroy(c); /* the QP, before its cm_id */
	rdmig__cml_destroy(c->cm);
	rdmig__rx_destroy(c->rx);
	rdmig__channel_destroy(c->ch);
	rdmig__conn_fd_close(c);
	if (c->cancel_efd >= 0)
		close(c->cancel_efd);
	/* its resources are gone: its slot and reservation may go to another */
	rdmig__admission_leave(&c->admission);
	free(c);
}

int rdmig_conn_reserve(struct rdmig_conn *c, const struct rdmig_admission_ask *ask, char *why,
		       size_t whylen)
{
	return rdmig__admission_reserve(c ? &c->admission : NULL, ask, why, whylen);
}

/* Async-signal-safe and thread-safe: an atomic store and a write(2). */
void rdmig_conn_cancel(struct rdmig_conn *c)
{
	uint64_t one = 1;

	if (!c)
		return;
	atomic_store(&c->cancelled, true);
	if (c->cancel_efd >= 0 && write(c->cancel_efd, &one, sizeof(one)) < 0) {
		/* full (already written many times) or gone: the flag says it */
	}
}

const char *rdmig_conn_errmsg(const struct rdmig_conn *c)
{
	return c ? c->errmsg : "no connection";
}

void rdmig_conn_caps(const struct rdmig_conn *c, struct rdmig_caps *caps)
{
	static const struct rdmig_caps none;

	if (caps)
		*caps = c ? c->caps : none;
}

/* The peer's address, read from the connection's own cm_id: what the
 * accept filter saw belongs to whichever request came last. */
int rdmig_conn_peer_addr(const struct rdmig_conn *c, struct sockaddr_storage *out)
{
	const struct sockaddr *sa;
	size_t len;

	if (!c || !out)
		return RDMIG_EINVAL;
	memset(out, 0, sizeof(*out));
	if (!rdmig__cml_id(c->cm) || !(sa = rdma_get_peer_addr(rdmig__cml_id(c->cm))))
		return RDMIG_ESTATE;
	if (sa->sa_family == AF_INET)
		len = sizeof(struct sockaddr_in);
	else if (sa->sa_family == AF_INET6)
		len = sizeof(struct sockaddr_in6);
	else
		return RDMIG_ESTATE; /* not connected (AF_UNSPEC), or not IP */
	memcpy(out, sa, len);
	return 0;
}

void rdmig_conn_inline(const struct rdmig_conn *c, struct rdmig_inline_info *info)
{
	static const struct rdmig_inline_info none;

	if (info)
		*info = c ? *rdmig__vres_inline(c->res) : none;
}

const char *rdmig_conn_device(const struct rdmig_conn *c)
{
	return c && rdmig__cml_id(c->cm) && rdmig__cml_id(c->cm)->verbs ? rdmig__cml_device(c->cm) : "";
}

void rdmig_conn_counters(const struct rdmig_conn *c, struct rdmig_counters *out)
{
	rdmig__put_sized(out, c ? &c->counters : NULL, sizeof(c->counters));
}
