/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * listen.c - the destination side: listen on every address, accept one
 * source at a time.
 *
 * Every address the listen string resolves to gets its own cm_id (all on
 * the listener's event channel) with REUSEADDR.  An established id is moved to
 * a channel of its own (rdma_migrate_id), so the connection's waits see
 * only its events and the listener can go on accepting.
 *
 * A connection request passes two gates before anything is allocated for
 * it, and is rejected at the first it fails:
 *
 *   CONNECT_REQUEST -> the caller's filter (source address) -> capabilities
 *                   -> PD, CQs, control buffers, QP, READY receive -> accept
 *                   -> (in flight) ... ESTABLISHED -> the caller's
 *
 * A request refused at either gate is forgotten and the listener waits on
 * for a valid source until its accept timeout: anyone who can reach the
 * port could otherwise end a destination before its real source arrives
 * with one malformed request.  So is a request whose requester goes away
 * before ESTABLISHED (its handshake ends with REJECTED, CONNECT_ERROR,
 * DISCONNECTED..., or its QP cannot be made because its cm_id is gone, or
 * nothing comes before the handshake's deadline): only this side's own
 * failures (no memory, no locked memory) end rdmig_accept.
 *
 * The accepted id stays on the listener's channel until its ESTABLISHED
 * (accept_pending.h keeps the handshakes in flight), so one fd drives
 * every handshake and nothing waits for one: an event loop sleeps on
 * rdmig_listener_fd and calls rdmig_try_accept, which takes only the
 * events already queued and returns a connection once its ESTABLISHED was
 * among them.  Once established, the id moves to a channel of its own.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "accept_pending.h"
#include "cm_event.h"
#include "conn.h"
#include "opts.h"
#include "qp_transport.h"

#define LISTENER_MAX_IDS 16

/* rdmig.h promises what verbs_res.c registers per connection. */
_Static_assert((size_t)SLOT_COUNT * RDMIG_CONTROL_BUFFER == RDMIG_CONTROL_REGISTERED,
	       "RDMIG_CONTROL_REGISTERED must match the control buffers");

struct rdmig_listener {
	struct rdmig_opts opts;
	char errmsg[RDMIG_ERRMSG_SIZE];
	struct rdma_event_channel *ec;
	struct rdma_cm_id *ids[LISTENER_MAX_IDS];
	int nids;
	uint16_t port;
	rdmig_accept_filter_fn filter;
	void *filter_ctx;
	struct rdmig_admission *adm; /* slots for the requests; NULL: none */
	rdmig_busy_fn on_busy;
	void *busy_ctx;
	unsigned refused;                /* requests refused by rdmig_accept so far */
	char last_refusal[RDMIG_ERRMSG_SIZE];
	struct accept_pending pending; /* handshakes in flight */
};

int rdmig_listener_create(const struct rdmig_opts *opts, struct rdmig_listener **out)
{
	struct rdmig_listener *l;
	int ret;

	if (!out)
		return RDMIG_EINVAL;
	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return RDMIG_ENOMEM;
	/* No handle on failure; the reason went to the log callback. */
	ret = rdmig__opts_copy(&l->opts, opts, l->errmsg);
	if (ret) {
		free(l);
		return ret;
	}
	*out = l;
	return 0;
}

static void set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)(void *)sa)->sin_port = htons(port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)sa)->sin6_port = htons(port);
}

static bool is_ipv6_any(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
}

/* Bind and listen on one address; returns 0 or a positive errno.  The
 * IPv6 wildcard is made IPv6-only (and 0.0.0.0 is bound beside it, see
 * rdmig_listen): iWARP devices (siw) do not take IPv4 connections on an
 * IPv6 listener. */
static int listen_one(struct rdmig_listener *l, struct sockaddr *addr, const char **step)
{
	struct rdma_cm_id *id;
	int one = 1;

	*step = "rdma_create_id";
	if (rdma_create_id(l->ec, &id, l, RDMA_PS_TCP))
		return errno;
	*step = "rdma_set_option(REUSEADDR)";
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)))
		goto fail;
	*step = "rdma_set_option(AFONLY)";
	if (is_ipv6_any(addr) &&
	    rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one)))
		goto fail;
	/* With port 0, every address shares the port the first bind got. */
	if (l->port)
		set_port(addr, l->port);
	*step = "rdma_bind_addr";
	if (rdma_bind_addr(id, addr))
		goto fail;
	*step = "rdma_listen";
	if (rdma_listen(id, l->opts.backlog))
		goto fail;
	l->port = ntohs(rdma_get_src_port(id));
	l->ids[l->nids++] = id;
	return 0;
fail:;
	int err = errno;
	rdma_destroy_id(id);
	return err;
}

/* Beside an IPv6-only wildcard, the IPv4 wildcard on the same port. */
static void listen_ipv4_any(struct rdmig_listener *l)
{
	struct sockaddr_in any4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
	const char *step;
	int e = listen_one(l, (struct sockaddr *)&any4, &step);

	rdmig__log(&l->opts, RDMIG_LOG_DEBUG, "listen on 0.0.0.0 beside [::]: %s",
		   e ? strerror(e) : "ok");
}

int rdmig_listen(struct rdmig_listener *l, const char *host, const char *port)
{
	struct rdma_addrinfo hints = {.ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP};
	struct rdma_addrinfo *res, *ai;
	const char *node = host && *host ? host : NULL, *step = "";
	int err = 0;

	if (!l)
		return RDMIG_EINVAL;
	if (!port || l->ec)
		return rdmig__fail(&l->opts, l->errmsg, port ? RDMIG_ESTATE : RDMIG_EINVAL,
				   port ? "this listener is already listening" : "listen needs a port");
	l->ec = rdmig__cm_channel_create();
	if (!l->ec)
		return rdmig__fail(&l->opts, l->errmsg, rdmig__syserr(errno),
				   "rdma_create_event_channel: %s (is rdma_ucm loaded?)",
				   strerror(errno));
	if (rdma_getaddrinfo(node, port, &hints, &res))
		return rdmig__fail(&l->opts, l->errmsg, RDMIG_EADDR, "cannot resolve %s port %s: %s",
				   node ? node : "(any)", port, strerror(errno ? errno : ENOENT));
	for (ai = res; ai && l->nids < LISTENER_MAX_IDS; ai = ai->ai_next) {
		int e;
		if (!ai->ai_src_addr)
			continue;
		e = listen_one(l, ai->ai_src_addr, &step);
		rdmig__log(&l->opts, RDMIG_LOG_DEBUG, "listen on address %d of %s: %s", l->nids,
			   node ? node : "(any)", e ? strerror(e) : "ok");
		if (e)
			err = e;
		if (!e && is_ipv6_any(ai->ai_src_addr) && l->nids < LISTENER_MAX_IDS)
			listen_ipv4_any(l);
	}
	rdma_freeaddrinfo(res);
	if (!l->nids)
		return rdmig__fail(&l->opts, l->errmsg, RDMIG_EADDR, "cannot listen on %s port %s: "
				   "%s: %s", node ? node : "(any)", port, step, strerror(err));
	return 0;
}

/* Handshakes accepted and not yet established: the requests a server
 * has let in that rdmig_try_accept has not returned yet. */
int rdmig_listener_handshakes(const struct rdmig_listener *l)
{
	return l ? l->pending.n : 0;
}

uint16_t rdmig_listener_port(const struct rdmig_listener *l)
{
	return l ? l->port : 0;
}

/* Reject a request with our capability record as the private data, so
 * that the source can tell which version we speak.  (InfiniBand and RoCE
 * always deliver a REJ's 148 bytes of private data: without a record the
 * source would read version 0 from the zeros.) */
static void reject_with_our_caps(struct rdma_cm_id *id)
{
	struct rdmig_caps ours = {RDMIG_CAP_VERSION, 0};
	uint8_t reply[RDMIG_CAPS_SIZE];

	rdmig_encode_caps(&ours, reply);
	rdma_reject(id, reply, sizeof(reply));
}

/* Check the source's capability record; reject when we cannot serve it. */
static int check_caps(struct rdmig_listener *l, struct rdma_cm_id *id, const uint8_t *pdata,
		      size_t plen, struct rdmig_caps *caps)
{
	int ret = 0;

	if (plen < RDMIG_CAPS_SIZE)
		ret = rdmig__fail(&l->opts, l->errmsg, RDMIG_EPROTO,
				  "the source sent %zu bytes of private data; a capability record "
				  "needs %u", plen, RDMIG_CAPS_SIZE);
	else {
		rdmig_decode_caps(pdata, caps);
		if (caps->version != RDMIG_CAP_VERSION)
			ret = rdmig__fail(&l->opts, l->errmsg, RDMIG_EVERSION,
					  "the source asked for capability version %u; rdmig speaks "
					  "version %u: connection rejected", caps->version,
					  RDMIG_CAP_VERSION);
	}
	if (ret)
		reject_with_our_caps(id);
	/* Unknown bits are cleared; PIN_ALL and VERDICT only if this side
	 * allows them. */
	caps->flags &= RDMIG_CAP_KNOWN_FLAGS & (l->opts.pin_all ? ~0u : ~RDMIG_CAP_PIN_ALL) &
		       (l->opts.verdict ? ~0u : ~RDMIG_CAP_VERDICT);
	return ret;
}

/* How long a handshake may wait for its ESTABLISHED when the options set
 * no timeout: a requester that never answers must not hold resources for
 * ever. */
#define HANDSHAKE_DEFAULT_MS 60000

static long long handshake_ms(const struct rdmig_listener *l)
{
	return l->opts.timeout_ms > 0 ? l->opts.timeout_ms : HANDSHAKE_DEFAULT_MS;
}

/* A request was rejected or a handshake dropped: log it, keep its reason
 * for the timeout's message, and forget it. */
static void note_refusal(struct rdmig_listener *l, const char *why)
{
	rdmig__log(&l->opts, RDMIG_LOG_INFO, "dropped a connection request: %s; waiting on "
		   "for a valid source", why);
	snprintf(l->last_refusal, sizeof(l->last_refusal), "%s", why);
	l->refused++;
}

static void forget_request(struct rdmig_listener *l, struct rdma_cm_id *id, const char *why)
{
	note_refusal(l, why);
	rdma_destroy_id(id);
}

/* A handshake that will not complete: its connection goes (every event of
 * its cm_id was acked, so rdma_destroy_id does not wait). */
static void drop_handshake(struct rdmig_listener *l, struct rdmig_conn *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void drop_handshake(struct rdmig_listener *l, struct rdmig_conn *c, const char *fmt, ...)
{
	char why[RDMIG_ERRMSG_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	note_refusal(l, why);
	rdmig_conn_destroy(c);
}

static void expire_handshakes(struct rdmig_listener *l)
{
	struct rdmig_conn *c;

	while ((c = accept_pending_expired(&l->pending, rdmig__now_ms())))
		drop_handshake(l, c, "no ESTABLISHED within %lld ms of our accept: the requester "
			       "went away or never completed the handshake", handshake_ms(l));
}

/* Answer a request: accept with the echo of its capabilities.  Returns
 * without waiting; the ESTABLISHED comes on the listener's channel. */
static int send_accept(struct rdmig_conn *c)
{
	uint8_t echo[RDMIG_CAPS_SIZE];
	struct rdma_conn_param param = {
		.private_data = echo,
		.private_data_len = sizeof(echo),
		.responder_resources = 2, /* as QEMU */
		.initiator_depth = 2,
		.retry_count = RDMIG_QP_RETRY_COUNT,
	};

	rdmig_encode_caps(&c->caps, echo);
	rdmig__qp_transport_set(rdmig__cml_id(c->cm), &c->opts); /* on the request's id: rdma_accept moves its QP to RTS */
	if (rdma_accept(rdmig__cml_id(c->cm), &param))
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EDISCONNECTED,
				   "rdma_accept: %s (the requester went away?)", strerror(errno));
	return 0;
}

/* Build a connection for a request that passed both gates (resources,
 * READY receive before the source can be told anything), accept it, and
 * put it in flight.  Failures that are the request's own (its requester
 * went away: RDMIG_EDISCONNECTED) drop it and return 0; this side's own
 * (no memory, no locked memory) end the accept. */
static int start_handshake(struct rdmig_listener *l, struct rdma_cm_id *id,
			   const struct rdmig_caps *caps)
{
	struct rdmig_conn *c, *evicted;
	int ret = rdmig__conn_alloc(&l->opts, ROLE_DEST, &c, NULL);
	bool accepted = false;

	if (ret) {
		reject_with_our_caps(id);
		rdma_destroy_id(id);
		if (l->adm)
			rdmig__admission_give_slot(l->adm);
		return rdmig__fail(&l->opts, l->errmsg, ret, "cannot allocate a connection");
	}
	rdmig__admission_hold_slot(&c->admission, l->adm); /* the connection's from here */
	c->caps = *caps;
	rdmig__cml_set_id(c->cm, id); /* on the listener's channel until ESTABLISHED */
	id->context = c;
	ret = rdmig__cml_open_channel(c->cm);
	if (ret)
		ret = rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(ret),
				  "creating the connection's event channel: %s", strerror(ret));
	if (!ret)
		ret = rdmig__conn_fd_watch(c, rdmig__cml_channel_fd(c->cm), "rdma_cm");
	if (!ret)
		ret = rdmig__conn_res_create(c);
	if (!ret)
		ret = rdmig__conn_post_recv(c, SLOT_READY);
	if (!ret) {
		ret = send_accept(c);
		accepted = true;
	}
	if (ret == RDMIG_EDISCONNECTED) {
		drop_handshake(l, c, "%s", c->errmsg);
		return 0;
	}
	if (ret) {
		if (!accepted)
			reject_with_our_caps(id);
		memcpy(l->errmsg, c->errmsg, sizeof(l->errmsg));
		rdmig_conn_destroy(c);
		return ret;
	}
	evicted = accept_pending_add(&l->pending, id, c, rdmig__now_ms() + handshake_ms(l));
	if (evicted)
		drop_handshake(l, evicted, "%d handshakes in flight: the oldest made room for a "
			       "new request", ACCEPT_PENDING_MAX);
	return 0;
}

/* A handshake completed: the connection gets its own event channel, so
 * that its waits see only its events, and is the caller's. */
static int establish(struct rdmig_listener *l, struct rdmig_conn *c, struct rdmig_conn **out)
{
	if (rdma_migrate_id(rdmig__cml_id(c->cm), rdmig__cml_channel(c->cm))) {
		int ret = rdmig__fail(&l->opts, l->errmsg, rdmig__syserr(errno),
				      "giving the connection its own event channel: %s",
				      strerror(errno));
		rdmig_conn_destroy(c);
		return ret;
	}
	rdmig__cml_establish(c->cm);
	*out = c;
	return 0;
}

/* Why waiting for a request failed (err: a positive errno). */
static int request_wait_failed(struct rdmig_listener *l, int err)
{
	if (l->refused)
		return rdmig__fail(&l->opts, l->errmsg, wait_errcode(err),
				   "waiting for a source to connect: %s (%u connection "
				   "request%s refused meanwhile, the last: %s)", strerror(err),
				   l->refused, l->refused == 1 ? "" : "s", l->last_refusal);
	return rdmig__fail(&l->opts, l->errmsg, wait_errcode(err),
			   "waiting for a source to connect: %s", strerror(err));
}

/* The next event of the listener's channel.  Without wait, only one
 * already queued (else RDMIG_EAGAIN); with wait, until the deadline (0:
 * none), waking at the handshakes' deadlines to drop what expired. */
static int next_listener_event(struct rdmig_listener *l, long long deadline, bool wait,
			       struct rdma_cm_event **ev)
{
	for (;;) {
		long long now = rdmig__now_ms(), until = deadline;
		long long handshake = accept_pending_next_deadline(&l->pending);
		int err;

		if (!wait) {
			err = rdma_get_cm_event(l->ec, ev) ? (errno ? errno : EIO) : 0;
			if (err == EAGAIN)
				return RDMIG_EAGAIN;
			return err ? request_wait_failed(l, err) : 0;
		}
		if (deadline && now >= deadline)
			return request_wait_failed(l, ETIMEDOUT);
		if (handshake && (!until || handshake < until))
			until = handshake;
		err = rdmig__cm_event_wait_cancellable(
			l->ec, until ? (int)(until > now ? until - now : 1) : 0, &l->opts, ev);
		if (err == ETIMEDOUT && (!deadline || rdmig__now_ms() < deadline)) {
			expire_handshakes(l);
			continue;
		}
		return err ? request_wait_failed(l, err) : 0;
	}
}

/* The first gate: the caller's filter sees the source's address before
 * anything else happens.  A refused request is rejected and forgotten. */
static bool source_allowed(struct rdmig_listener *l, struct rdma_cm_id *id)
{
	if (!l->filter || l->filter(l->filter_ctx, rdma_get_peer_addr(id)))
		return true;
	reject_with_our_caps(id);
	forget_request(l, id, "the accept filter refused the source's address");
	return false;
}

/* The third gate, with an admission: a slot, held from here by the
 * handshake and then by its connection until rdmig_conn_destroy.  A
 * request that finds none is rejected, and the caller told. */
static bool slot_taken(struct rdmig_listener *l, struct rdma_cm_id *id)
{
	if (!l->adm || rdmig__admission_take_slot(l->adm))
		return true;
	if (l->on_busy)
		l->on_busy(l->busy_ctx, rdma_get_peer_addr(id), rdmig__admission_slots(l->adm));
	reject_with_our_caps(id);
	forget_request(l, id, "every slot of the admission is taken");
	return false;
}

/* A connection request: the gates, then its handshake starts. */
static int take_request(struct rdmig_listener *l, struct rdma_cm_event *ev)
{
	struct rdmig_caps caps = {0, 0};
	uint8_t pdata[RDMIG_CAPS_SIZE];
	size_t plen = ev->param.conn.private_data ? ev->param.conn.private_data_len : 0;
	struct rdma_cm_id *id = ev->id;

	if (plen > sizeof(pdata))
		plen = sizeof(pdata);
	if (plen)
		memcpy(pdata, ev->param.conn.private_data, plen);
	rdma_ack_cm_event(ev); /* rdma_migrate_id needs every event acked */
	if (!source_allowed(l, id))
		return 0;
	if (check_caps(l, id, pdata, plen, &caps)) {
		/* check_caps rejected it; its reason is in errmsg */
		forget_request(l, id, l->errmsg);
		return 0;
	}
	if (!slot_taken(l, id))
		return 0;
	return start_handshake(l, id, &caps);
}

/* One event of the listener's channel: a request starts a handshake, a
 * handshake's event moves it on; anything else is logged and dropped. */
static int listener_event(struct rdmig_listener *l, struct rdma_cm_event *ev,
			  struct rdmig_conn **out)
{
	enum rdma_cm_event_type type = ev->event;
	int status = ev->status;
	int i;

	if (type == RDMA_CM_EVENT_CONNECT_REQUEST)
		return take_request(l, ev);
	i = accept_pending_find(&l->pending, ev->id);
	rdma_ack_cm_event(ev);
	if (i < 0 || accept_pending_verdict(type) == PENDING_IGNORE) {
		rdmig__log(&l->opts, RDMIG_LOG_DEBUG, "listener ignored %s", rdma_event_str(type));
		return 0;
	}
	if (accept_pending_verdict(type) == PENDING_ESTABLISHED)
		return establish(l, accept_pending_take(&l->pending, i), out);
	drop_handshake(l, accept_pending_take(&l->pending, i),
		       "the requester went away before the connection was established (%s, "
		       "status %d)", rdma_event_str(type), status);
	return 0;
}

/* How many events one rdmig_try_accept takes before it returns to the
 * caller's loop (the fd stays readable for the rest): a stream of bad
 * requests must not keep an event loop here. */
#define TRY_ACCEPT_MAX_EVENTS 16

/* Take events until a handshake completes.  With wait, until the
 * deadline (0: none); without, only those already queued. */
static int accept_next(struct rdmig_listener *l, long long deadline, bool wait,
		       struct rdmig_conn **out)
{
	for (unsigned taken = 0; wait || taken < TRY_ACCEPT_MAX_EVENTS; taken++) {
		struct rdma_cm_event *ev;
		int ret;

		expire_handshakes(l);
		ret = next_listener_event(l, deadline, wait, &ev);
		if (!ret)
			ret = listener_event(l, ev, out);
		if (ret || *out)
			return ret;
	}
	return RDMIG_EAGAIN;
}

/* The accept functions' common checks; 0 when they may go on. */
static int accept_start(struct rdmig_listener *l, struct rdmig_conn **out)
{
	if (!l || !out)
		return RDMIG_EINVAL;
	*out = NULL;
	if (!l->ec)
		return rdmig__fail(&l->opts, l->errmsg, RDMIG_ESTATE, "accept before listen");
	return 0;
}

int rdmig_accept(struct rdmig_listener *l, struct rdmig_conn **out)
{
	long long deadline = l && l->opts.accept_timeout_ms > 0
				     ? rdmig__now_ms() + l->opts.accept_timeout_ms
				     : 0;
	int ret = accept_start(l, out);

	if (ret)
		return ret;
	l->refused = 0;
	return accept_next(l, deadline, true, out);
}

int rdmig_try_accept(struct rdmig_listener *l, struct rdmig_conn **out)
{
	int ret = accept_start(l, out);

	return ret ? ret : accept_next(l, 0, false, out);
}

int rdmig_listener_fd(struct rdmig_listener *l)
{
	/* the channel is non-blocking (rdmig__cm_channel_create) */
	return l && l->ec ? l->ec->fd : -1;
}

void rdmig_listener_set_admission(struct rdmig_listener *l, struct rdmig_admission *a,
				  rdmig_busy_fn on_busy, void *ctx)
{
	if (!l)
		return;
	l->adm = a;
	l->on_busy = on_busy;
	l->busy_ctx = ctx;
}

void rdmig_listener_set_filter(struct rdmig_listener *l, rdmig_accept_filter_fn fn, void *ctx)
{
	if (!l)
		return;
	l->filter = fn;
	l->filter_ctx = ctx;
}

const char *rdmig_listener_errmsg(const struct rdmig_listener *l)
{
	return l ? l->errmsg : "no listener";
}

void rdmig_listener_destroy(struct rdmig_listener *l)
{
	if (!l)
		return;
	while (l->pending.n) /* their ids are on l->ec: before it goes */
		rdmig_conn_destroy(accept_pending_take(&l->pending, 0));
	for (int i = 0; i < l->nids; i++)
		rdma_destroy_id(l->ids[i]);
	if (l->ec)
		rdma_destroy_event_channel(l->ec);
	free(l);
}
