/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv_serve.c - `rdmig recv --serve`: keep listening, and receive
 * source after source, several at once, each into a directory of its own
 * under --out (DIR/<seq>-<UTC time>-<address>, named here, never by the
 * source).
 *
 * The design: one thread per source, the accept loop in the main thread.
 * The library's handles are independent (a connection, its image-set
 * destination and that destination's hashing threads belong to the thread
 * that drives them), so a source's thread runs the very migration plain
 * `rdmig recv` runs (cli_recv.c: recv_receive, its sink, its checks), and
 * one source's failure - garbage, a disconnect, a refusal - ends that
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
 * against what the running sources reserved; one that does not fit is
 * refused (the library tells it, with the message) and the others go on.
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
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"
#include "recv_serve.h"

#define SERVE_DEFAULT_SOURCES 4
/* The longest one source may hold its slot, whatever it moves (one
 * stream byte per idle period keeps --idle-timeout away): a day, far
 * beyond any real migration's, and a week at most (an int of ms). */
#define SERVE_DEFAULT_DEADLINE_S 86400
#define SERVE_MAX_DEADLINE_S (7 * 86400)
#define SERVE_MAX_SOURCES 64
#define SERVE_MAX_FILES 2000000000L

/* ------------------------------------------------------------ options -- */

static void serve_usage(FILE *f)
{
	fprintf(f, "usage: rdmig recv --serve --listen ADDR:PORT --out DIR [--max-sources N]\n"
		   "                  [--serve-max-total SIZE] [--serve-max-pinned SIZE]\n"
		   "                  [--serve-max-files N] [--source-deadline S] [--status PATH]\n"
		   "                  [--pin-all] [--inline auto|0|N] [--json] [--timeout S]\n"
		   "                  [--max-total SIZE] [--allow ADDR[/N]] [--force] [--no-sync]\n"
		   "                  [--verify on|off] [--chunk-size SIZE] [-v]\n"
		   "Keeps listening: each source goes into DIR/<seq>-<UTC time>-<address>/ (its\n"
		   "images and stream.bin, as plain recv writes them); a failed one leaves nothing.\n"
		   "  --serve         serve source after source, several at once\n"
		   "  --max-sources N at most N sources at once (1..%d, default %d); a source\n"
		   "                  beyond them is rejected when it connects\n"
		   "  --serve-max-total SIZE  most bytes of blocks the running sources may hold\n"
		   "                  together (in memory while they run, then in DIR); default:\n"
		   "                  the smaller of MemAvailable and DIR's free space at start\n"
		   "  --serve-max-pinned SIZE  most bytes the running sources may pin together\n"
		   "                  (default: RLIMIT_MEMLOCK, none when unlimited)\n"
		   "  --serve-max-files N  most files the running sources may make together in\n"
		   "                  DIR (each: its images, stream.bin, its directory);\n"
		   "                  default: DIR's free inodes at start\n"
		   "  --max-total N   most bytes one source may ask for (as plain recv)\n"
		   "  --timeout S     give up on a source that stays silent this long (default %d)\n"
		   "  --idle-timeout S  end a source that moves no data this long (as plain recv)\n"
		   "  --source-deadline S  end a source served this long, whatever it moves\n"
		   "                  (0: never; default %d, a day)\n"
		   "  --status PATH   answer 'rdmig status --socket PATH' on this UNIX socket\n"
		   "                  (made with mode 0600; a stale one is replaced; default:\n"
		   "                  $RDMIG_STATUS_SOCKET, none when unset)\n"
		   "  --pin-all, --inline, --chunk-size, --allow A[/N], --force, --no-sync,\n"
		   "  --verify on|off:\n"
		   "                  per source, as plain recv (rdmig recv --help)\n"
		   "  --progress M    accepted (auto|human|json|none), shows nothing: each\n"
		   "                  source gets its line when it ends\n"
		   "  --json          a JSON line per source as it ends, and a summary at the end\n"
		   "  -v, --verbose   the library's notes on stderr; -vv adds its debug log\n"
		   "  -h, --help      this help\n"
		   "SIGINT or SIGTERM drains: no new source, the running ones finish; a second\n"
		   "signal aborts them.  Exit status: 0 when every accepted source succeeded, 1\n"
		   "when one failed or was refused, 128 + the signal after a second signal.\n",
		SERVE_MAX_SOURCES, SERVE_DEFAULT_SOURCES, MIG_DEFAULT_TIMEOUT_S,
		SERVE_DEFAULT_DEADLINE_S);
}

enum { OPT_SERVE = 0x100, OPT_MAX_SOURCES, OPT_SERVE_TOTAL, OPT_SERVE_PINNED, OPT_DEADLINE,
       OPT_SERVE_FILES, OPT_STATUS };

static int serve_option(struct serve *sv, int c, const char *arg)
{
	long n;

	switch (c) {
	case OPT_SERVE:
		return 0;
	case OPT_MAX_SOURCES:
		if (cli_parse_long(arg, 1, SERVE_MAX_SOURCES, &n))
			return cli_usage("--max-sources '%s': takes a number from 1 to %d", arg,
					 SERVE_MAX_SOURCES);
		sv->max_sources = (unsigned)n;
		return 0;
	case OPT_STATUS:
		if (!arg[0])
			return cli_usage("--status: takes the path of a socket to make");
		sv->status_path = arg;
		return 0;
	case OPT_SERVE_FILES:
		if (cli_parse_long(arg, 1, SERVE_MAX_FILES, &n))
			return cli_usage("--serve-max-files '%s': takes a number from 1 to %ld", arg,
					 SERVE_MAX_FILES);
		sv->max_files = (uint64_t)n;
		sv->max_files_given = true;
		return 0;
	case OPT_DEADLINE:
		if (cli_parse_long(arg, 0, SERVE_MAX_DEADLINE_S, &n))
			return cli_usage("--source-deadline '%s': takes whole seconds from 0 (never) "
					 "to %d", arg, SERVE_MAX_DEADLINE_S);
		sv->a.m.opts.deadline_ms = (int)n * 1000;
		return 0;
	case OPT_SERVE_TOTAL:
	case OPT_SERVE_PINNED: {
		uint64_t v;

		if (cli_parse_size(arg, &v) || v == 0)
			return cli_usage("--serve-max-%s '%s': takes bytes, optionally with K, M, G "
					 "or T, not 0", c == OPT_SERVE_TOTAL ? "total" : "pinned",
					 arg);
		if (c == OPT_SERVE_TOTAL) {
			sv->max_total = v;
			sv->max_total_given = true;
		} else {
			sv->max_pinned = v;
			sv->max_pinned_given = true;
		}
		return 0;
	}
	}
	return -1;
}

static int parse_serve_args(int argc, char **argv, struct serve *sv)
{
	static const struct option longopts[] = {
		RECV_OPTIONS,
		{"verify", required_argument, NULL, 'V'},
		{"serve", no_argument, NULL, OPT_SERVE},
		{"max-sources", required_argument, NULL, OPT_MAX_SOURCES},
		{"serve-max-total", required_argument, NULL, OPT_SERVE_TOTAL},
		{"serve-max-pinned", required_argument, NULL, OPT_SERVE_PINNED},
		{"source-deadline", required_argument, NULL, OPT_DEADLINE},
		{"serve-max-files", required_argument, NULL, OPT_SERVE_FILES},
		{"status", required_argument, NULL, OPT_STATUS},
		MIG_PROGRESS_OPTION,
		{NULL, 0, NULL, 0}};
	int c, r = 0;

	recv_args_init(&sv->a);
	sv->a.m.opts.verdict = true; /* each source hears whether we committed */
	sv->a.m.opts.deadline_ms = SERVE_DEFAULT_DEADLINE_S * 1000;
	if (cli_wants_help(argc, argv)) {
		serve_usage(stdout);
		return 1;
	}
	while ((c = getopt_long(argc, argv, ":" RECV_SHORT "V:", longopts, NULL)) != -1) {
		if (c == 'V' && strcmp(optarg, "off") && strcmp(optarg, "on"))
			return cli_usage("--verify '%s': takes on or off", optarg);
		if (c == 'V')
			sv->verify_off = !strcmp(optarg, "off");
		else if (c >= OPT_SERVE)
			r = serve_option(sv, c, optarg);
		else
			r = recv_args_option(&sv->a, c, optarg, argv, serve_usage);
		if (c != 'V' && r)
			return r;
	}
	if ((r = recv_args_finish(&sv->a, argc, argv)))
		return r;
	/* the systemd unit's way to give the socket: --status wins */
	if (!sv->status_path && getenv("RDMIG_STATUS_SOCKET") && getenv("RDMIG_STATUS_SOCKET")[0])
		sv->status_path = getenv("RDMIG_STATUS_SOCKET");
	/* accepted, so that one set of options (the systemd unit's) serves
	 * both modes, but said: it would be a surprise that it shows nothing */
	if (sv->a.m.progress == MIG_PROGRESS_HUMAN || sv->a.m.progress == MIG_PROGRESS_JSON)
		fprintf(stderr, "rdmig: recv --serve: note: --progress %s shows nothing in serve "
				"mode; each source gets its line when it ends\n",
			sv->a.m.progress == MIG_PROGRESS_JSON ? "json" : "human");
	return 0;
}

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
			recv_remove_outputs(&src->s); /* the library's abort did it otherwise */
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
		cli_format_sockaddr((const struct sockaddr *)&ss, buf, len);
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
	src->hooks.ctx = src;
	src->hooks.admit = serve_admit;
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
		free(src->s.rb);
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

/* The listener's filter: --allow. */
static bool serve_filter(void *ctx, const struct sockaddr *sa)
{
	struct serve *sv = ctx;

	return !sv->a.allow.n || cli_allow_filter(&sv->a.allow, sa);
}

/* The admission's rdmig_busy_fn: a request found every slot taken (the
 * running sources and the handshakes in flight) and was rejected before
 * anything was allocated for it; said on stderr and as a JSON line. */
static void serve_busy(void *ctx, const struct sockaddr *sa, unsigned slots)
{
	struct serve *sv = ctx;
	char who[64];

	cli_format_sockaddr(sa, who, sizeof(who));
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
		"connecting (--max-sources %u)\n", who, slots, sv->max_sources);
	pthread_mutex_unlock(&sv->lock);
}

static int serve_listen(struct serve *sv, const struct rdmig_opts *opts)
{
	int ret;

	if ((ret = rdmig_listener_create(opts, &sv->l)) ||
	    (ret = rdmig_listen(sv->l, sv->a.host, sv->a.port)))
		return ret;
	rdmig_listener_set_filter(sv->l, serve_filter, sv);
	rdmig_listener_set_admission(sv->l, sv->adm, serve_busy, sv);
	sv->port = rdmig_listener_port(sv->l);
	fprintf(stderr, "recv: listening on %s%s%s:%u, serving up to %u sources at once\n",
		strchr(sv->a.host, ':') ? "[" : "", sv->a.host, strchr(sv->a.host, ':') ? "]" : "",
		rdmig_listener_port(sv->l), sv->max_sources);
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
	sv.max_sources = SERVE_DEFAULT_SOURCES;
	sv.wake[0] = sv.wake[1] = -1;
	sv.status_fd = -1;
	if ((ret = parse_serve_args(argc, argv, &sv)))
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
	serve_limits(&sv);
	pthread_mutex_init(&sv.lock, NULL);
	cli_phase("accept");
	if ((ret = serve_admission(&sv))) {
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
	rdmig_admission_destroy(sv.adm); /* last: every source's connection is gone */
	status_close(&sv);
	out_dir_remove_made(&sv.a.dir); /* when no source's directory is in it */
	close(sv.wake[0]);
	close(sv.wake[1]);
	out_dir_close(&sv.a.dir);
	pthread_mutex_destroy(&sv.lock);
	return ret;
}
