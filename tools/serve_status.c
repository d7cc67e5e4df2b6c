/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * serve_status.c - what a running `rdmig recv --serve` says about itself
 * while it runs: a status socket (--status PATH) that answers every
 * client with one JSON object (rdmig-json(7), "recv serve status"; `rdmig
 * status` is its client), and what it tells systemd (READY=1, STATUS=...,
 * STOPPING=1; cli_notify).
 *
 * The socket is a UNIX stream socket of mode 0600 in a directory the
 * operator chooses: who may connect may read the sources' addresses and
 * directories, nothing more; a client sends nothing.  The main thread
 * answers in its poll loop, so an answer never blocks it: it is written
 * without waiting (a client that does not read gets what fits in the
 * socket's buffer, far more than an answer of 64 sources), and the
 * connection is closed.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"
#include "recv_serve.h"

static const char *const phase_names[] = {
	[SERVE_PHASE_HEADER] = "header",
	[SERVE_PHASE_RECEIVING] = "receiving",
	[SERVE_PHASE_COMMITTING] = "committing",
};

/* ------------------------------------------------------------ the answer -- */

/* One running source: where it is, how far, how fast. */
static struct json_object *running_json(const struct source *src, double now)
{
	struct json_object *o = cj_object();
	int phase = atomic_load(&src->hooks.phase);
	uint64_t total = atomic_load(&src->hooks.bytes_total);
	uint64_t done = atomic_load(&src->hooks.bytes_done);
	double secs = now - src->s.t_accepted;
	double rate = secs > 0 ? (double)done / secs : 0;

	cj_i64(o, "seq", src->seq);
	cj_str(o, "peer", src->peer);
	cj_str(o, "dir", src->dir);
	cj_str(o, "phase", src->done ? "ending"
			   : phase >= 0 && phase <= SERVE_PHASE_COMMITTING ? phase_names[phase]
									    : "?");
	cj_u64(o, "bytes_total", total);
	cj_u64(o, "bytes_done", done);
	cj_fixed(o, "seconds", secs, 3);
	cj_fixed(o, "rate_MBps", rate / 1e6, 2);
	if (rate > 0 && total >= done)
		cj_fixed(o, "eta_seconds", (double)(total - done) / rate, 1);
	else
		cj_null(o, "eta_seconds");
	return o;
}

static struct json_object *ended_json(const struct serve_ended *e)
{
	struct json_object *o = cj_object();

	cj_i64(o, "seq", e->seq);
	cj_str(o, "peer", e->peer);
	cj_str(o, "dir", e->dir);
	cj_bool(o, "verified", e->ok);
	cj_u64(o, "bytes_total", e->bytes);
	cj_fixed(o, "seconds", e->seconds, 3);
	if (!e->ok)
		cj_str(o, "message", e->msg);
	return o;
}

/* The whole answer, under sv->lock. */
static struct json_object *status_json(struct serve *sv)
{
	struct json_object *o = cj_object(), *run = cj_array(), *ended = cj_array();
	struct rdmig_admission_usage u = {.size = sizeof(u)};
	double now = rdmig_monotonic_seconds();
	unsigned kept = sv->nended < SERVE_ENDED_KEPT ? sv->nended : SERVE_ENDED_KEPT;

	source_admission_usage(sv->adm, &u);
	serve_json_head(o, "status");
	cj_bool(o, "ok", true);
	cj_i64(o, "pid", (int64_t)getpid());
	serve_json_server(o, sv);
	cj_bool(o, "draining", sv->l == NULL);
	cj_fixed(o, "uptime_seconds", now - sv->t_start, 3);
	cj_u64(o, "sources_running", sv->running);
	cj_u64(o, "reserved_total", u.bytes);
	cj_u64(o, "reserved_pinned", u.pinned);
	cj_u64(o, "reserved_files", u.files);
	cj_u64(o, "peak_rss_bytes", sv->peak_rss);
	cj_u64(o, "peak_pinned_bytes", sv->peak_pinned);
	for (const struct source *src = sv->sources; src; src = src->next)
		cj_push(run, running_json(src, now));
	cj_add(o, "sources", run);
	/* newest first */
	for (unsigned i = 0; i < kept; i++)
		cj_push(ended, ended_json(&sv->ended[(sv->nended - 1 - i) % SERVE_ENDED_KEPT]));
	cj_add(o, "ended", ended);
	return o;
}

void remember_ended(struct source *src)
{
	struct serve *sv = src->sv;
	struct serve_ended *e = &sv->ended[sv->nended++ % SERVE_ENDED_KEPT];

	e->seq = src->seq;
	snprintf(e->peer, sizeof(e->peer), "%s", src->peer);
	snprintf(e->dir, sizeof(e->dir), "%s", src->dir);
	e->ok = src->ret == 0;
	e->bytes = atomic_load(&src->hooks.bytes_total);
	e->seconds = rdmig_monotonic_seconds() - src->s.t_accepted;
	/* the message's head: a status answer stays small */
	snprintf(e->msg, sizeof(e->msg), "%.*s", (int)sizeof(e->msg) - 1, src->ret ? src->msg : "");
}

/* ------------------------------------------------------------ the socket -- */

static int fill_addr(const char *path, struct sockaddr_un *sun, char *err, size_t errlen)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path)) {
		snprintf(err, errlen, "--status '%s': a socket's path has at most %zu bytes", path,
			 sizeof(sun->sun_path) - 1);
		return -1;
	}
	memcpy(sun->sun_path, path, strlen(path));
	return 0;
}

/* PATH exists: a socket nobody listens on is stale (a server that was
 * killed) and goes; a live one, or anything else, is refused. */
static int clear_stale(const char *path, const struct sockaddr_un *sun, char *err, size_t errlen)
{
	struct stat st;
	int fd, live;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "--status '%s' exists and is not a socket", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	live = fd >= 0 && !connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	if (fd >= 0)
		close(fd);
	if (live) {
		snprintf(err, errlen, "--status '%s': another server answers there", path);
		return -1;
	}
	if (unlink(path) && errno != ENOENT) {
		snprintf(err, errlen, "--status '%s': cannot remove the stale socket: %s", path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

int status_open(struct serve *sv, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd, r;

	sv->status_fd = -1;
	if (!sv->status_path)
		return 0;
	if (fill_addr(sv->status_path, &sun, err, errlen) ||
	    clear_stale(sv->status_path, &sun, err, errlen))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "--status: cannot make a socket: %s", strerror(errno));
		return -1;
	}
	/* the mode comes from the umask at bind: only the owner may connect
	 * (no source thread runs yet: the umask is this thread's alone) */
	old = umask(0177);
	r = bind(fd, (const struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (r || listen(fd, 16)) {
		snprintf(err, errlen, "--status '%s': %s", sv->status_path, strerror(errno));
		close(fd);
		return -1;
	}
	sv->status_fd = fd;
	return 0;
}

void status_answer(struct serve *sv)
{
	int c;

	while (sv->status_fd >= 0 &&
	       (c = accept4(sv->status_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct json_object *o;
		const char *text;
		size_t len;

		pthread_mutex_lock(&sv->lock);
		o = status_json(sv);
		pthread_mutex_unlock(&sv->lock);
		text = cj_text(o); /* NULL out of memory: the client gets nothing */
		len = text ? strlen(text) : 0;
		/* what fits now, then the line's end; never a wait */
		if (text && send(c, text, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len)
			(void)send(c, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		cj_free(o);
		close(c);
	}
}

void status_close(struct serve *sv)
{
	if (sv->status_fd < 0)
		return;
	close(sv->status_fd);
	sv->status_fd = -1;
	(void)unlink(sv->status_path);
}

/* ------------------------------------------------------------- systemd -- */

void serve_notify(struct serve *sv, const char *state)
{
	char msg[256];

	pthread_mutex_lock(&sv->lock);
	snprintf(msg, sizeof(msg), "%sSTATUS=%s: %u running, %u ok, %u failed, %u rejected",
		 state, sv->l ? "serving" : "draining", sv->running, sv->ok, sv->failed,
		 sv->rejected);
	pthread_mutex_unlock(&sv->lock);
	cli_notify(msg);
}
