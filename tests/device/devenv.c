/* SPDX-License-Identifier: BSD-2-Clause */
/* devenv.c - device lookup and the two-process harness of device tests. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "devenv.h"

int dev_lookup(const char *kind, struct dev *d)
{
	const char *ip = getenv(strcmp(kind, "rxe") ? "RDMAVM_SIW_IP" : "RDMAVM_RXE_IP");
	const char *name = getenv(strcmp(kind, "rxe") ? "RDMAVM_SIW_DEV" : "RDMAVM_RXE_DEV");

	if (!ip || !name) {
		fprintf(stderr, "FAIL: no %s device: device tests run inside the guest "
				"(scripts/rdma-vm -- ctest -L device)\n", kind);
		check_failed = 1;
		return -1;
	}
	*d = (struct dev){.name = name, .ip = ip, .kind = kind};
	return 0;
}

static void log_stderr(void *ctx, int level, const char *msg)
{
	fprintf(stderr, "[%d] %s: %s\n", (int)getpid(), ctx ? (const char *)ctx : "", msg);
}

void test_opts(struct rdmig_opts *o)
{
	rdmig_opts_init(o);
	o->timeout_ms = 20000;
	o->accept_timeout_ms = 30000;
	if (getenv("RDMIG_TEST_DEBUG")) {
		o->log = log_stderr;
		o->log_level = RDMIG_LOG_DEBUG;
	}
}

void fill_pattern(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static void child_main(struct pair *p, int wfd)
{
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	char port[8] = "";
	int ret;

	alarm(120); /* a hung child must not hang the suite */
	check_failed = 0;
	ret = rdmig_listener_create(&p->dest_opts, &l);
	if (!ret)
		ret = rdmig_listen(l, p->dev->ip, "0");
	if (!ret)
		snprintf(port, sizeof(port), "%u", rdmig_listener_port(l));
	if (write(wfd, port, sizeof(port)) != (ssize_t)sizeof(port) || ret) {
		fprintf(stderr, "dest: listen failed: %s\n", rdmig_listener_errmsg(l));
		_exit(3);
	}
	close(wfd);
	if (p->dest_listener) {
		p->dest_listener(l, p->arg);
		rdmig_listener_destroy(l);
		fflush(NULL);
		_exit(check_failed ? 1 : 0);
	}
	ret = rdmig_accept(l, &c);
	if (ret && p->dest_accept_failed)
		p->dest_accept_failed(l, ret, p->arg);
	else if (ret) {
		fprintf(stderr, "dest: accept failed: %s\n", rdmig_listener_errmsg(l));
		check_failed = 1;
	} else
		p->dest(c, p->arg);
	if (check_failed && c)
		fprintf(stderr, "dest: last error: %s\n", rdmig_conn_errmsg(c));
	rdmig_conn_destroy(c);
	rdmig_listener_destroy(l);
	fflush(NULL);
	_exit(check_failed ? 1 : 0);
}

int pair_start(struct pair *p)
{
	int fds[2];

	if (pipe(fds))
		return -1;
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		close(fds[0]);
		child_main(p, fds[1]);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], p->port, sizeof(p->port));
	close(fds[0]);
	if (n != (ssize_t)sizeof(p->port) || !p->port[0]) {
		fprintf(stderr, "the destination child did not start listening\n");
		pair_finish(p, 5);
		return -1;
	}
	return 0;
}

int pair_finish(struct pair *p, int timeout_s)
{
	struct timespec pause = {0, 20 * 1000 * 1000};
	int status = 0;

	for (int waited = 0; waited < timeout_s * 50; waited++) {
		pid_t r = waitpid(p->pid, &status, WNOHANG);
		if (r == p->pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
		if (r < 0)
			return -1;
		nanosleep(&pause, NULL);
	}
	fprintf(stderr, "the destination child hung: killed\n");
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &status, 0);
	return -1;
}

int test_connect(const struct pair *p, const struct rdmig_opts *o, struct rdmig_conn **c)
{
	int ret = rdmig_conn_create(o, c);

	if (!ret)
		ret = rdmig_connect(*c, p->dev->ip, p->port);
	if (ret)
		fprintf(stderr, "source: connect to %s:%s failed: %s\n", p->dev->ip, p->port,
			*c ? rdmig_conn_errmsg(*c) : rdmig_strerror(ret));
	return ret;
}
