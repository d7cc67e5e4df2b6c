/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_qemu_record.c - record.txt of `rdmig recv --qemu`: the control
 * phases of the migration as the command sees them (when, at which stream
 * offset, the connection's counters for each pass), the chunks each pass
 * touched from the library's destination events, and the file itself in
 * --out.  What the record holds and how it is written is librdmig-stream's
 * recorder (rdmig/qemu.h, stream/qemu_record.c); the format is in
 * docs/qemu-stream.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "recv_qemu.h"

int rq_add_phase(struct rq_state *s, int kind)
{
	struct rdmig_counters k = {.size = sizeof(k)};
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct rdmig_qrec_phase *p;

	if (s->nph >= RQ_MAX_PHASES) {
		snprintf(s->err, sizeof(s->err), "the source ended more than %u registration passes "
			 "(REGISTER_FINISHED); QEMU sends one per iteration: refused", RQ_MAX_PHASES);
		return -1;
	}
	if (s->nph == s->phcap) {
		size_t cap = s->phcap ? s->phcap * 2 : 16;
		struct rdmig_qrec_phase *n = realloc(s->ph, cap * sizeof(*n));
		if (!n) {
			snprintf(s->err, sizeof(s->err), "out of memory for the record");
			return -1;
		}
		s->ph = n;
		s->phcap = cap;
	}
	rdmig_conn_counters(s->conn, &k);
	rdmig_dest_stats(s->dest, &st);
	p = &s->ph[s->nph++];
	*p = (struct rdmig_qrec_phase){
		.kind = kind,
		.t = rdmig_monotonic_seconds() - s->t_start,
		.offset = s->stream_bytes,
		.hook = s->qs.hooks ? s->qs.last_hook_end : 0,
		.register_requests = k.received[RDMIG_MSG_REGISTER_REQUEST] -
				     s->k_prev.received[RDMIG_MSG_REGISTER_REQUEST],
		.compress = k.received[RDMIG_MSG_COMPRESS] - s->k_prev.received[RDMIG_MSG_COMPRESS],
		.unregister = k.received[RDMIG_MSG_UNREGISTER_REQUEST] -
			      s->k_prev.received[RDMIG_MSG_UNREGISTER_REQUEST],
		.chunks_registered = st.chunks_registered - s->st_prev.chunks_registered,
		.bytes_compressed = st.bytes_compressed - s->st_prev.bytes_compressed,
	};
	s->k_prev = k;
	s->st_prev = st;
	return 0;
}

/* A destination event: the recorder marks the chunks (rdmig_qrec_note), in
 * the pass under way; the end of a pass then costs no look at RAM. */
int rq_note_range(struct rq_state *s, int type, const struct rdmig_dest_range *r)
{
	if (!s->rec || r->block >= s->qs.count) {
		snprintf(s->err, sizeof(s->err), "the library reported block %u of %u", r->block,
			 s->rec ? s->qs.count : 0);
		return -1;
	}
	if (rdmig_qrec_note(&s->rec[r->block].ch, (uint32_t)s->nph, type == RDMIG_EV_REGISTERED,
			    r->offset, r->len))
		s->pass_touched = 1;
	return 0;
}

/* REGISTER_FINISHED closes the pass; its touched chunks are in the record
 * already (rq_note_range). */
int rq_end_pass(struct rq_state *s)
{
	if (rq_add_phase(s, RDMIG_QREC_REGISTRATION))
		return -1;
	s->ph[s->nph - 1].touched = s->pass_touched;
	s->pass_touched = 0;
	return 0;
}

/* Whether SIGINT or SIGTERM came (cli_cancel.c: a byte in the pipe that is
 * the library's cancel_fd, or the flag without one) since the record
 * began: writing a long record stops then. */
static bool record_interrupted(void *ctx)
{
	const struct rdmig_opts *o = ctx;
	struct pollfd pfd = {.fd = o->cancel_fd, .events = POLLIN};

	return (o->cancel && *o->cancel) ||
	       (o->cancel_fd >= 0 && poll(&pfd, 1, 0) > 0 && pfd.revents);
}

/* DIR/record.txt, written on failure too, as far as the migration got.
 * Interrupted by SIGINT or SIGTERM, it is kept as far as it got, ending
 * with a line that says so.  After a signal (the failure being the
 * signal), only a further one interrupts it. */
int rq_write_record(struct rq_state *s, const char *failure)
{
	struct rdmig_qrec rec = {
		.qs = &s->qs,
		.pin_all = s->pin_all,
		.blocks = s->rec,
		.phases = s->ph,
		.nphases = (uint32_t)s->nph,
		.stream_bytes = s->stream_bytes,
		.seconds = s->t_end - s->t_start,
		.stop = record_interrupted,
		.stop_ctx = &s->a.m.opts,
	};
	struct out_file out;
	char err[sizeof(s->err)];
	FILE *f;
	int bad, stopped;

	if (cli_cancelled())
		cli_cancel_rearm();
	if (out_create(&s->a.dir, &out, RQ_RECORD, err, sizeof(err)))
		goto fail;
	if (!(f = fdopen(out.fd, "w"))) {
		snprintf(err, sizeof(err), "cannot write %.600s/" RQ_RECORD ": %s", s->a.out,
			 strerror(errno));
		out_discard(&s->a.dir, &out);
		goto fail;
	}
	stopped = rdmig_qrec_write(f, &rec, failure);
	bad = ferror(f);
	out.fd = -1; /* fclose closes it */
	if (fclose(f) || bad) {
		snprintf(err, sizeof(err), "cannot write %.600s/" RQ_RECORD ": %s", s->a.out,
			 strerror(errno));
		out_discard(&s->a.dir, &out);
		goto fail;
	}
	if (out_commit(&s->a.dir, &out, err, sizeof(err)) ||
	    out_dir_sync(&s->a.dir, err, sizeof(err))) {
		out_discard(&s->a.dir, &out);
		goto fail;
	}
	if (stopped) {
		snprintf(err, sizeof(err), "writing %.600s/" RQ_RECORD " was interrupted (it "
			 "ends there)", s->a.out);
		goto fail;
	}
	return 0;
fail:
	/* a failure's own message is already in s->err: keep it */
	if (!failure)
		snprintf(s->err, sizeof(s->err), "%s", err);
	else
		fprintf(stderr, "recv: %s\n", err);
	return -1;
}
