/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_idle.c - the progress deadline: a source that only sends
 * keep-alives (empty QEMU_FILE messages, which rdmig's own source sends
 * while it is busy) is cut off within the idle timeout, by the library's
 * destination (rdmig_opts.idle_timeout_ms) and by `rdmig recv` and
 * `rdmig recv --qemu` (--idle-timeout).  Before the progress deadline, such a source
 * held the destination for ever: each keep-alive reset the wait.
 *
 * And a stop that reaches the engine: `rdmig recv --serve` without an
 * idle timeout, held by a source of keep-alives (served by the engine in
 * its own loop: no step returns), ends on a second SIGTERM within
 * STOP_BOUND_MS, leaving nothing in --out.  Before rdmig_conn_cancel the
 * second signal set a flag that only a step's progress callback read, and
 * serve ran until the source let go.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "devenv.h"

#define IDLE_S 2
#define KEEP_ALIVE_MS 200
/* The cut-off may come this much after the deadline: the message that
 * finds it passed, and ERROR's way back on an emulated CPU. */
#define SLACK_MS 1500
/* The hostile source gives up after this long (the bug: never cut off). */
#define HOSTILE_MAX_MS 30000
/* serve must end this soon after its second signal (an emulated CPU). */
#define STOP_BOUND_MS 5000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Send keep-alives until the destination ends the connection: how long
 * that took (ms), or -1 when it never did. */
static double keep_alives_until_cut(struct rdmig_conn *c)
{
	struct timespec pace = {0, KEEP_ALIVE_MS * 1000000L};
	double t0 = now_ms();

	while (now_ms() - t0 < HOSTILE_MAX_MS) {
		int ret = rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 0, NULL});
		if (ret) {
			fprintf(stderr, "hostile source: cut off after %.0f ms: %s\n", now_ms() - t0,
				rdmig_conn_errmsg(c));
			return now_ms() - t0;
		}
		nanosleep(&pace, NULL);
	}
	return -1;
}

/* ------------------------------------------------------------ library -- */

static void dest_with_an_idle_timeout(struct rdmig_conn *c, void *arg)
{
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev;
	double t0 = now_ms(), took;
	unsigned events = 0;
	int ret;

	(void)arg;
	CHECK_OK(rdmig_dest_create(c, &d));
	while (!(ret = rdmig_dest_next(d, &ev)) && ev.type != RDMIG_EV_END)
		events++;
	took = now_ms() - t0;
	fprintf(stderr, "destination: ended the source after %.0f ms and %u events: %s\n", took,
		events, rdmig_dest_errmsg(d));
	CHECK_EQ(ret, RDMIG_ETIMEDOUT);
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(d), "moved no data");
	CHECK(took >= IDLE_S * 1000 - 50);
	CHECK(took < IDLE_S * 1000 + SLACK_MS);
	CHECK(events >= 3); /* the keep-alives came, and did not count */
	rdmig_dest_destroy(d);
}

DEVICE_TEST(the_library_ends_a_source_of_keep_alives)
{
	struct pair p = {.dev = dev, .dest = dest_with_an_idle_timeout};
	struct rdmig_conn *c = NULL;
	struct rdmig_opts o;
	double took;

	test_opts(&p.dest_opts);
	p.dest_opts.idle_timeout_ms = IDLE_S * 1000;
	CHECK_OK(pair_start(&p));
	test_opts(&o);
	CHECK_OK(test_connect(&p, &o, &c));
	took = keep_alives_until_cut(c);
	CHECK(took > 0);
	CHECK(took < IDLE_S * 1000 + SLACK_MS + 1000);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

/* ---------------------------------------------------------------- CLI -- */

/* Start `rdmig recv [--qemu] --idle-timeout 2` on dev at port, stderr to
 * errpath: its pid. */
static pid_t start_recv(const struct dev *dev, bool qemu, const char *port, const char *out,
			const char *errpath)
{
	char tool[] = RDMIG_TOOL, recv[] = "recv", qemu_opt[] = "--qemu", listen_opt[] = "--listen",
	     out_opt[] = "--out", idle_opt[] = "--idle-timeout", timeout_opt[] = "--timeout",
	     timeout[] = "20", listen[128], outdir[64], idle[16];
	char *argv[16];
	posix_spawn_file_actions_t fa;
	int n = 0;
	pid_t pid;

	snprintf(listen, sizeof(listen), "%s:%s", dev->ip, port);
	snprintf(outdir, sizeof(outdir), "%s", out);
	snprintf(idle, sizeof(idle), "%d", IDLE_S);
	argv[n++] = tool;
	argv[n++] = recv;
	if (qemu)
		argv[n++] = qemu_opt;
	argv[n++] = listen_opt;
	argv[n++] = listen;
	argv[n++] = out_opt;
	argv[n++] = outdir;
	argv[n++] = idle_opt;
	argv[n++] = idle;
	argv[n++] = timeout_opt;
	argv[n++] = timeout;
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errpath, O_WRONLY | O_CREAT | O_TRUNC,
					 0600);
	if (posix_spawn(&pid, RDMIG_TOOL, &fa, NULL, argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

/* Connect as a source, retrying while recv starts to listen. */
static int connect_when_listening(const struct dev *dev, const char *port, struct rdmig_conn **c)
{
	struct timespec pause = {0, 100 * 1000000L};
	struct rdmig_opts o;

	test_opts(&o);
	for (int i = 0; i < 150; i++) {
		if (!rdmig_conn_create(&o, c) && !rdmig_connect(*c, dev->ip, port))
			return 0;
		rdmig_conn_destroy(*c);
		*c = NULL;
		nanosleep(&pause, NULL);
	}
	return -1;
}

static bool file_says(const char *path, const char *needle)
{
	char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	fprintf(stderr, "--- recv's stderr:\n%s---\n", buf);
	return strstr(buf, needle) != NULL;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void recv_ends_a_source_of_keep_alives(const struct dev *dev, bool qemu)
{
	char dir[] = "/tmp/rdmig-idle-XXXXXX", out[64], errpath[64], port[8];
	struct rdmig_conn *c = NULL;
	int status = 0;
	double took;
	pid_t pid;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	snprintf(port, sizeof(port), "%d",
		 23600 + (strcmp(dev->kind, "siw") ? 0 : 50) + (qemu ? 1 : 0));
	pid = start_recv(dev, qemu, port, out, errpath);
	CHECK(pid > 0);
	if (connect_when_listening(dev, port, &c)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		CHECK_FAIL_AT("recv%s never listened on %s", qemu ? " --qemu" : "", port);
	}
	took = keep_alives_until_cut(c);
	rdmig_conn_destroy(c);
	if (took < 0)
		kill(pid, SIGKILL);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	fprintf(stderr, "%s: recv%s cut the keep-alive source off after %.0f ms (idle timeout "
		"%d s)\n", dev->name, qemu ? " --qemu" : "", took, IDLE_S);
	CHECK(took > 0);
	CHECK(took < IDLE_S * 1000 + SLACK_MS + 1000);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	CHECK(file_says(errpath, "moved no data"));
	nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* Start `rdmig recv --serve --idle-timeout 0` on dev at port. */
static pid_t start_serve(const struct dev *dev, const char *port, const char *out,
			 const char *errpath)
{
	char tool[] = RDMIG_TOOL, recv[] = "recv", serve[] = "--serve", listen_opt[] = "--listen",
	     out_opt[] = "--out", idle_opt[] = "--idle-timeout", idle[] = "0",
	     timeout_opt[] = "--timeout", timeout[] = "20", listen[128], outdir[64];
	char *argv[] = {tool, recv, serve, listen_opt, listen, out_opt, outdir, idle_opt, idle,
			timeout_opt, timeout, NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid;

	snprintf(listen, sizeof(listen), "%s:%s", dev->ip, port);
	snprintf(outdir, sizeof(outdir), "%s", out);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errpath, O_WRONLY | O_CREAT | O_TRUNC,
					 0600);
	if (posix_spawn(&pid, RDMIG_TOOL, &fa, NULL, argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

/* Keep-alives until serve exits: when it did (ms), or -1 when it never
 * did while the source held on; *status its wait status. */
static double keep_alives_until_exit(struct rdmig_conn *c, pid_t pid, int *status)
{
	struct timespec pace = {0, KEEP_ALIVE_MS * 1000000L};
	double t0 = now_ms();

	while (now_ms() - t0 < HOSTILE_MAX_MS) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return now_ms();
		/* once cancelled, serve's end of the connection is gone: the
		 * sends fail, the source only waits */
		(void)rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 0, NULL});
		nanosleep(&pace, NULL);
	}
	return -1;
}

static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0; /* serve removed the --out it made */
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

DEVICE_TEST(serve_stops_a_busy_source_on_a_second_signal)
{
	char dir[] = "/tmp/rdmig-stop-XXXXXX", out[64], errpath[64], port[8];
	struct timespec settle = {1, 0}, between = {0, 300 * 1000000L};
	struct rdmig_conn *c = NULL;
	double sent_second, ended;
	int status = 0;
	pid_t pid;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	snprintf(port, sizeof(port), "%d", 23610 + (strcmp(dev->kind, "siw") ? 0 : 50));
	pid = start_serve(dev, port, out, errpath);
	CHECK(pid > 0);
	if (connect_when_listening(dev, port, &c)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		CHECK_FAIL_AT("recv --serve never listened on %s", port);
	}
	/* the source is being served: keep-alives, then the two signals */
	for (int i = 0; i < 5; i++)
		CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 0, NULL}));
	nanosleep(&settle, NULL);
	CHECK_OK(kill(pid, SIGTERM));
	nanosleep(&between, NULL);
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 0, NULL}));
	CHECK_OK(kill(pid, SIGTERM));
	sent_second = now_ms();
	ended = keep_alives_until_exit(c, pid, &status);
	rdmig_conn_destroy(c);
	if (ended < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	fprintf(stderr, "%s: recv --serve ended %.0f ms after its second SIGTERM (bound %d ms)\n",
		dev->name, ended < 0 ? -1 : ended - sent_second, STOP_BOUND_MS);
	CHECK(ended > 0);
	CHECK(ended - sent_second < STOP_BOUND_MS);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	CHECK(file_says(errpath, "no new source"));
	CHECK_EQ(count_entries(out), 0); /* no source directory, no temporary */
	nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

DEVICE_TEST(recv_ends_a_source_of_keep_alives)
{
	recv_ends_a_source_of_keep_alives(dev, false);
}

DEVICE_TEST(recv_qemu_ends_a_source_of_keep_alives)
{
	recv_ends_a_source_of_keep_alives(dev, true);
}

CHECK_MAIN()
