/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv_serve.c - `rdmig recv --serve`: keep listening, and receive
 * source after source, several at once, each into a directory of its own
 * under --out (DIR/<seq>-<UTC time>-<address>, named here, never by the
 * source).
 *
 * The design: one thread per source, the accept loop in the main thread
 * (the options are serve_options.c's).
 * The library's handles are independent (a connection, its image-set
 * destination and that destination's hashing threads belong to the thread
 * that drives them), so a source's thread runs the very migration plain
 * `rdmig recv` runs (cli_recv.c: recv_receive, its checks, and the sink of
 * src/sessions/recv_dir.c), and one source's failure - garbage, a
 * disconnect, a refusal - ends that
 * thread only: its outputs are removed as plain recv removes them, and
 * the others go on.  A blocking design per source keeps the sink, the
 * hashing and the image writes exactly those of plain recv; an event loop
 * over rdmig_images_dest_step would have to re-create them around one
 * thread that also hashes.  The main thread sleeps in poll(2) on the
 * listener's fd, the signals' self-pipe and a pipe the sources' threads
 * write to when they end, and accepts with rdmig_try_accept.
 *
 * What the sources may take, together: --max-sources running at once (a
 * request beyond them is rejected at once, before anything is allocated
 * for it: the source's connect fails, and this recv says why); the bytes
 * of all their blocks (--serve-max-total, which bounds the memory they
 * hold while they run and what they write to --out; the free space of
 * --out is checked again at each header); and the memory they may pin
 * (--serve-max-pinned, by default RLIMIT_MEMLOCK, which the kernel counts
 * for the whole process).  A source is admitted when its header comes,
 * against what the running sources reserved (the limits, their defaults
 * and the decision are src/sessions/source_admission.c's); one that does
 * not fit is refused (the library tells it, with the message) and the
 * others go on.
 *
 * SIGTERM or SIGINT drains: the listener closes (no new source), the
 * running ones finish, each bounded by --timeout and --idle-timeout; a
 * second signal aborts
 * them.  Exit status: 0 when every accepted source succeeded, 1 when one
 * failed or was refused, 128 + the signal when a second signal cut the
 * drain short.
 *
 * All printing happens here, under one mutex: a line per source (human or
 * a JSON line, rdmig-json(7)) as it ends, and a summary at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"
#include "recv_serve.h"

/* --------------------------------------------------------- a source -- */

/* Its directory: DIR/<seq>-<UTC time>-<address> (':' of IPv6 as '_'),
 * made here with mkdirat (never one that exists), then opened as
 * plain recv opens --out.  -1 with src->s.err. */
static int make_source_dir(struct source *src)
{
	struct serve *sv = src->sv;
	char when[32], peer[64];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(peer, sizeof(peer), "%s", src->peer);
	for (char *p = peer; *p; p++)
		if (*p == ':')
			*p = '_';
	for (int tries = 0;; tries++) {
		snprintf(src->dir, sizeof(src->dir), "%04u-%s-%s", src->seq, when, peer);
		if (!mkdirat(sv->a.dir.fd, src->dir, 0700))
			break;
		if (errno != EEXIST || tries > 1000) {
			snprintf(src->s.err, sizeof(src->s.err), "cannot make %s/%s: %s", sv->a.out,
				 src->dir, strerror(errno));
			src->dir[0] = '\0';
			return -1;
		}
		pthread_mutex_lock(&sv->lock); /* a name left by an earlier run */
		src->seq = ++sv->seq;
		pthread_mutex_unlock(&sv->lock);
	}
	snprintf(src->path, sizeof(src->path), "%s/%s", sv->a.out, src->dir);
	src->s.a.out = src->path;
	if (out_dir_open(&src->s.a.dir, src->path, false, src->s.err, sizeof(src->s.err)))
		return -1;
	/* the source's directory is new in --out: its name is flushed too */
	src->s.a.dir.sync = !sv->a.no_sync;
	src->s.a.dir.parent_fd = sv->a.dir.fd;
	return 0;
}

static void *source_thread(void *arg)
{
	struct source *src = arg;
	struct serve *sv = src->sv;
	struct rdmig_conn *conn;
	char one = 1;

	src->ret = make_source_dir(src) ? -1 : recv_receive(&src->s);
	if (src->ret) {
		failure_text(src, src->msg, sizeof(src->msg)); /* while the handles say why */
		if (!src->s.dest)
			recv_dir_discard(&src->s.out); /* the library's abort did it otherwise */
	}
	/* what the library holds goes before the reservation is given back */
	rdmig_images_dest_destroy(src->s.dest);
	src->s.dest = NULL;
	/* a failed source's directory goes too (not when someone else wrote
	 * into it: rmdir leaves a directory that is not empty) */
	if (src->ret && src->dir[0])
		(void)unlinkat(sv->a.dir.fd, src->dir, AT_REMOVEDIR);
	/* its migration is over: room for the next source (the connection
	 * goes next, while that one may already connect) */
	pthread_mutex_lock(&sv->lock);
	report_source(src);
	remember_ended(src);
	if (src->ret)
		sv->failed++;
	else
		sv->ok++;
	sv->running--; /* its slot and reservation go with its connection */
	conn = src->s.conn; /* under the lock: stop_sources may cancel it */
	src->s.conn = NULL;
	pthread_mutex_unlock(&sv->lock);
	rdmig_conn_destroy(conn);
	pthread_mutex_lock(&sv->lock);
	src->done = true;
	pthread_mutex_unlock(&sv->lock);
	if (write(sv->wake[1], &one, 1) < 0) {
		/* the pipe is full: the main thread wakes anyway */
	}
	return NULL;
}

/* The source's address, from its own connection: the filter saw every
 * request, and up to 8 handshakes may be in flight at once. */
static void source_peer(const struct rdmig_conn *conn, char *buf, size_t len)
{
	struct sockaddr_storage ss;

	if (rdmig_conn_peer_addr(conn, &ss))
		snprintf(buf, len, "?");
	else
		sockaddr_text((const struct sockaddr *)&ss, buf, len);
}

/* recv_serve_hooks.admit, on the source's thread once its header came:
 * the server's admission reserves what the source asks for on its
 * connection, or says which limit refuses it. */
static int admit_source(void *ctx, uint64_t total, uint64_t copies, uint64_t files,
			const struct rdmig_pin_need *pins, char *err, size_t errlen)
{
	struct source *src = ctx;

	return source_admission_admit(src->sv->adm, src->s.conn, total, copies, files, pins, err,
				      errlen);
}

/* A source was accepted: its state, and its thread (with the signals
 * blocked: they are the main thread's). */
static void start_source(struct serve *sv, struct rdmig_conn *conn)
{
	struct source *src = calloc(1, sizeof(*src));
	sigset_t old;
	int err;

	if (!src) {
		rdmig_send_error(conn);
		rdmig_conn_destroy(conn);
		fprintf(stderr, "rdmig: recv: out of memory for a source; it was told\n");
		return;
	}
	src->sv = sv;
	source_peer(conn, src->peer, sizeof(src->peer));
	src->s.a = sv->a;
	src->s.a.dir.fd = -1;
	src->s.a.dir.made = 0;
	src->s.a.m.progress = MIG_PROGRESS_NONE;
	src->s.verify_off = sv->verify_off;
	src->s.conn = conn;
	src->s.serve = &src->hooks;
	recv_outputs_init(&src->s); /* into its own directory, once made */
	src->hooks.ctx = src;
	src->hooks.admit = admit_source;
	atomic_init(&src->hooks.stop, false);
	atomic_init(&src->hooks.phase, SERVE_PHASE_HEADER);
	atomic_init(&src->hooks.bytes_total, 0);
	atomic_init(&src->hooks.bytes_done, 0);
	src->s.t_accepted = rdmig_monotonic_seconds(); /* as plain recv marks it */
	pthread_mutex_lock(&sv->lock);
	src->seq = ++sv->seq;
	src->next = sv->sources;
	sv->sources = src;
	if (++sv->running > sv->peak_running)
		sv->peak_running = sv->running;
	pthread_mutex_unlock(&sv->lock);
	cli_cancel_mask(SIG_BLOCK, &old);
	err = pthread_create(&src->thread, NULL, source_thread, src);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		return;
	snprintf(src->msg, sizeof(src->msg), "cannot start a thread: %s", strerror(err));
	src->ret = -1;
	rdmig_send_error(conn);
	pthread_mutex_lock(&sv->lock);
	report_source(src);
	remember_ended(src);
	sv->running--;
	sv->failed++;
	sv->sources = src->next;
	pthread_mutex_unlock(&sv->lock);
	rdmig_conn_destroy(conn);
	free(src);
}

/* Join and free the sources whose threads ended. */
static void reap_sources(struct serve *sv)
{
	struct source **pp = &sv->sources;

	pthread_mutex_lock(&sv->lock);
	while (*pp) {
		struct source *src = *pp;

		if (!src->done) {
			pp = &src->next;
			continue;
		}
		*pp = src->next;
		pthread_mutex_unlock(&sv->lock);
		pthread_join(src->thread, NULL);
		recv_dir_free(&src->s.out);
		out_dir_close(&src->s.a.dir);
		free(src);
		pthread_mutex_lock(&sv->lock);
	}
	pthread_mutex_unlock(&sv->lock);
}

/* The second signal: every source ends now.  The connection's cancel
 * reaches the engine, which serves REGISTER, COMPRESS and UNREGISTER in
 * its own loop without a step returning (where the flag is seen). */
static void stop_sources(struct serve *sv)
{
	pthread_mutex_lock(&sv->lock);
	for (struct source *src = sv->sources; src; src = src->next) {
		atomic_store(&src->hooks.stop, true);
		rdmig_conn_cancel(src->s.conn); /* NULL once its thread let it go */
	}
	pthread_mutex_unlock(&sv->lock);
}

/* ------------------------------------------------------ the listener -- */

/* The admission's rdmig_busy_fn: a request found every slot taken (the
 * running sources and the handshakes in flight) and was rejected before
 * anything was allocated for it; said on stderr and as a JSON line. */
static void serve_busy(void *ctx, const struct sockaddr *sa, unsigned slots)
{
	struct serve *sv = ctx;
	struct source_limits lim;
	char who[64];

	sockaddr_text(sa, who, sizeof(who));
	source_admission_limits(sv->adm, &lim);
	pthread_mutex_lock(&sv->lock);
	sv->rejected++;
	if (sv->a.m.json) {
		struct json_object *o = cj_object();
		struct json_object *e = cj_object();

		serve_json_head(o, "rejected");
		cj_str(o, "peer", who);
		cj_bool(o, "ok", false);
		cj_str(o, "phase", "accept");
		cj_str(e, "code", "busy");
		cj_str(e, "message", "--max-sources sources are running");
		cj_add(o, "error", e);
		cj_print(o);
		fflush(stdout);
	}
	fprintf(stderr, "recv: rejected a source from %s: %u sources are running or "
		"connecting (--max-sources %u)\n", who, slots, lim.slots);
	pthread_mutex_unlock(&sv->lock);
}

static int serve_listen(struct serve *sv, const struct rdmig_opts *opts)
{
	struct source_limits lim;
	int ret;

	if ((ret = rdmig_listener_create(opts, &sv->l)) ||
	    (ret = rdmig_listen(sv->l, sv->a.host, sv->a.port)))
		return ret;
	rdmig_listener_set_filter(sv->l, allow_list_filter, &sv->a.allow); /* --allow */
	source_admission_listen(sv->adm, sv->l, serve_busy, sv);
	sv->port = rdmig_listener_port(sv->l);
	source_admission_limits(sv->adm, &lim);
	fprintf(stderr, "recv: listening on %s%s%s:%u, serving up to %u sources at once\n",
		strchr(sv->a.host, ':') ? "[" : "", sv->a.host, strchr(sv->a.host, ':') ? "]" : "",
		rdmig_listener_port(sv->l), lim.slots);
	return 0;
}

/* Take every request queued on the listener. */
static void accept_sources(struct serve *sv)
{
	struct rdmig_conn *conn = NULL;
	int ret;

	while ((ret = rdmig_try_accept(sv->l, &conn)) == 0 && conn) {
		start_source(sv, conn);
		conn = NULL;
		serve_notify(sv, "");
	}
	if (ret && ret != RDMIG_EAGAIN) /* one source's handshake: the others go on */
		fprintf(stderr, "rdmig: recv: a source could not connect: %s\n",
			rdmig_listener_errmsg(sv->l));
}

/* Any source whose thread has not been joined yet? */
static bool sources_left(struct serve *sv)
{
	bool any;

	pthread_mutex_lock(&sv->lock);
	any = sv->sources != NULL;
	pthread_mutex_unlock(&sv->lock);
	return any;
}

static int drain_pipe(int fd)
{
	char buf[64];
	ssize_t n;
	int got = 0;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		got += (int)n;
	return got;
}

/* The loop: accept while not draining; after the first signal close the
 * listener and wait for the running sources; a second one stops them. */
static int serve_loop(struct serve *sv, int signal_fd)
{
	int signals = 0;

	for (;;) {
		struct pollfd p[4] = {
			{.fd = sv->wake[0], .events = POLLIN},
			{.fd = signal_fd, .events = POLLIN},
			{.fd = sv->l ? rdmig_listener_fd(sv->l) : -1, .events = POLLIN},
			{.fd = sv->status_fd, .events = POLLIN},
		};

		if (poll(p, 4, 100) < 0 && errno != EINTR)
			return -1;
		sample_memory(sv);
		if (p[0].revents) {
			drain_pipe(sv->wake[0]);
			serve_notify(sv, "");
		}
		reap_sources(sv);
		if (p[3].revents)
			status_answer(sv);
		if (cli_cancelled()) {
			int got = signal_fd >= 0 ? drain_pipe(signal_fd) : 0;

			signals += got ? got : !signals;
			if (sv->l) {
				/* stop accepting: new requests are refused by the kernel's CM */
				pthread_mutex_lock(&sv->lock);
				fprintf(stderr, "recv: %s: no new source; draining %u running\n",
					cli_cancel_name(), sv->running);
				pthread_mutex_unlock(&sv->lock);
				rdmig_listener_destroy(sv->l);
				sv->l = NULL;
				serve_notify(sv, "STOPPING=1\n");
			}
			if (signals > 1)
				stop_sources(sv);
		}
		if (!sv->l && !sources_left(sv))
			return signals > 1;
		if (sv->l && p[2].revents)
			accept_sources(sv);
	}
}

int cmd_recv_serve(int argc, char **argv)
{
	struct serve sv;
	struct rdmig_opts lopts;
	char err[768] = "";
	int ret, signal_fd;

	cli_run_begin("recv", "serve", "recv --serve", argc, argv);
	memset(&sv, 0, sizeof(sv));
	sv.wake[0] = sv.wake[1] = -1;
	sv.status_fd = -1;
	if ((ret = serve_parse_args(argc, argv, &sv)))
		return ret == 1 ? 0 : ret;
	if ((ret = cli_env_check()))
		return ret;
	cli_phase("setup");
	/* the signals are the loop's (their pipe), not every wait's: a
	 * signal drains the sources rather than cancel them */
	lopts = sv.a.m.opts;
	if (recv_prepare(&sv.a.m.opts, err, sizeof(err)) ||
	    recv_open_out(&sv.a, NULL, err, sizeof(err)) || /* and each source's --max-total */
	    pipe2(sv.wake, O_NONBLOCK | O_CLOEXEC)) {
		if (!err[0])
			snprintf(err, sizeof(err), "cannot make a pipe: %s", strerror(errno));
		ret = cli_fail("recv", err);
		out_dir_remove_made(&sv.a.dir);
		out_dir_close(&sv.a.dir);
		return ret;
	}
	signal_fd = sv.a.m.opts.cancel_fd;
	pthread_mutex_init(&sv.lock, NULL);
	cli_phase("accept");
	/* the defaults of the limits come from --out, now open */
	if ((ret = source_admission_create(&sv.given, &sv.a.dir, &sv.adm))) {
		ret = cli_fail_lib("recv", ret, "cannot make the admission");
	} else if ((ret = serve_listen(&sv, &lopts))) {
		ret = cli_fail_lib("recv", ret, recv_errmsg("", NULL, NULL, sv.l, ret));
		if (sv.a.m.json) /* the summary, as rdmig-json(7) says, with the failure */
			print_summary(&sv, ret);
	} else if (status_open(&sv, err, sizeof(err))) {
		ret = cli_fail_code("recv", "failed", err);
		if (sv.a.m.json)
			print_summary(&sv, ret);
	} else {
		sv.t_start = rdmig_monotonic_seconds();
		serve_notify(&sv, "READY=1\n");
		ret = serve_loop(&sv, signal_fd);
		ret = ret < 0 ? cli_fail("recv", "poll failed") : ret ? cli_cancel_status()
								    : sv.failed ? 1 : 0;
		if (ret == 1 && !cli_run.failed)
			cli_fail_code("recv", "source_failed", "a source failed or was refused");
		print_summary(&sv, ret);
	}
	rdmig_listener_destroy(sv.l);
	source_admission_destroy(sv.adm); /* last: every source's connection is gone */
	status_close(&sv);
	out_dir_remove_made(&sv.a.dir); /* when no source's directory is in it */
	close(sv.wake[0]);
	close(sv.wake[1]);
	out_dir_close(&sv.a.dir);
	pthread_mutex_destroy(&sv.lock);
	return ret;
}
