/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv_common.c - what `rdmig recv` (cli_recv.c) and `rdmig recv --qemu`
 * (cli_recv_qemu.c) share: their common options, the setup before a source
 * connects, accepting it, and the output files in DIR.  cli.h declares it.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "source_admission.h"

/* ------------------------------------------------------------ options -- */

/* A request --allow refused: said, as the library allocated nothing. */
static void say_not_allowed(void *ctx, const struct sockaddr *source)
{
	char who[INET6_ADDRSTRLEN + 32];

	(void)ctx;
	sockaddr_text(source, who, sizeof(who));
	fprintf(stderr, "recv: rejected a connection from %s: not allowed by --allow (nothing was "
		"allocated or registered for it)\n", who);
}

void recv_args_init(struct recv_args *a)
{
	memset(a, 0, sizeof(*a));
	mig_common_init(&a->m);
	a->dir.fd = -1;
	allow_list_init(&a->allow, "--allow");
	a->allow.on_refused = say_not_allowed;
	a->m.opts.idle_timeout_ms = RECV_DEFAULT_IDLE_TIMEOUT_S * 1000;
}

int recv_args_option(struct recv_args *a, int c, const char *arg, char **argv,
		     void (*usage)(FILE *f))
{
	char err[300];

	if (c == 'A') {
		if (allow_list_add(&a->allow, arg, err, sizeof(err)))
			return cli_usage("%s", err);
	} else if (c == 'l') {
		a->listen = arg;
	} else if (c == 'o') {
		a->out = arg;
	} else if (c == 'F') {
		a->force = true;
	} else if (c == 'Y') {
		a->no_sync = true;
	} else if (c == 'I') {
		long v;
		if (cli_parse_long(arg, 0, 86400, &v))
			return cli_usage("--idle-timeout '%s': takes whole seconds from 0 (never) "
					 "to 86400", arg);
		a->m.opts.idle_timeout_ms = (int)v * 1000;
	} else if (c == 'M') {
		a->max_total_given = true;
		if (cli_parse_size(arg, &a->max_total) || (a->max_total_nonzero && a->max_total == 0))
			return cli_usage("--max-total '%s': takes bytes, optionally with K, M, G "
					 "or T%s", arg, a->max_total_nonzero ? ", not 0" : "");
	} else {
		return mig_other_option(&a->m, c, arg, argv, usage);
	}
	return 0;
}

int recv_args_finish(struct recv_args *a, int argc, char **argv)
{
	char err[300];

	if (optind != argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (!a->listen)
		return cli_usage("--listen ADDR:PORT is required");
	if (!a->out || !a->out[0])
		return cli_usage("--out DIR is required");
	if (cli_split_addr(a->listen, a->host, sizeof(a->host), a->port, sizeof(a->port), err,
			   sizeof(err)))
		return cli_usage("--listen %s", err);
	if (a->m.timeout_given)
		a->m.opts.accept_timeout_ms = a->m.opts.timeout_ms;
	return 0;
}

/* ---------------------------------------------------- the connection -- */

int recv_prepare(struct rdmig_opts *opts, char *err, size_t errlen)
{
	struct rdmig_pin_need need;

	if (cli_cancel_install(opts)) {
		snprintf(err, errlen, "cannot catch SIGINT and SIGTERM");
		return -1;
	}
	if (cli_memlock_need(NULL, false, 0, NULL, 0, &need, err, errlen))
		return -1;
	return cli_memlock_check("recv", &need, err, errlen) < 0 ? -1 : 0;
}

/* Every connection request passes here first: its time ends the wait for
 * a source (the budget's idle), then --allow has its say. */
static bool note_request(void *ctx, const struct sockaddr *source)
{
	struct recv_args *a = ctx;

	a->t_request = rdmig_monotonic_seconds();
	return allow_list_filter(&a->allow, source);
}

int recv_accept(struct recv_args *a, struct rdmig_listener **l, struct rdmig_conn **conn)
{
	int ret;

	if ((ret = rdmig_listener_create(&a->m.opts, l)) || (ret = rdmig_listen(*l, a->host, a->port)))
		return ret;
	a->t_listening = rdmig_monotonic_seconds();
	rdmig_listener_set_filter(*l, note_request, a);
	if (a->m.verbose || isatty(STDERR_FILENO))
		fprintf(stderr, "recv: listening on %s%s%s:%u\n", strchr(a->host, ':') ? "[" : "",
			a->host, strchr(a->host, ':') ? "]" : "", rdmig_listener_port(*l));
	cli_notify("READY=1\nSTATUS=waiting for a source");
	return rdmig_accept(*l, conn);
}

const char *recv_errmsg(const char *err, const struct rdmig_dest *dest,
			const struct rdmig_conn *conn, const struct rdmig_listener *l, int ret)
{
	if (err[0])
		return err;
	if (dest)
		return rdmig_dest_errmsg(dest);
	if (conn)
		return rdmig_conn_errmsg(conn);
	if (l)
		return rdmig_listener_errmsg(l);
	return rdmig_strerror(ret);
}

/* ------------------------------------------------------ output files -- */

/* Temporaries of an earlier recv that was killed: removed, and said. */
static int sweep_leftovers(struct recv_args *a, char *err, size_t errlen)
{
	char first[OUT_NAME];
	unsigned n;

	if (out_dir_sweep(&a->dir, &n, first, sizeof(first), err, errlen))
		return -1;
	if (n)
		fprintf(stderr, "recv: removed %u temporary file%s that an earlier recv "
			"left in %s when it was stopped (%s%s)\n", n, n == 1 ? "" : "s", a->out,
			first, n > 1 ? ", ..." : "");
	return 0;
}

int recv_open_out(struct recv_args *a, const char *const *names, char *err, size_t errlen)
{
	if (out_dir_open(&a->dir, a->out, a->force, err, errlen))
		return -1;
	a->dir.sync = !a->no_sync;
	if (sweep_leftovers(a, err, errlen))
		return -1;
	if (!a->max_total_given) {
		/* what we can hold while the source writes, and write afterwards
		 * (images are sparse, but the bound must not trust the source) */
		a->mem_available = machine_available_memory();
		a->disk_free = out_dir_free(&a->dir);
		a->max_total = a->mem_available < a->disk_free ? a->mem_available : a->disk_free;
	}
	for (; names && *names; names++)
		if (out_check_new(&a->dir, *names, err, errlen))
			return -1;
	return 0;
}

const char *recv_limit_note(const struct recv_args *a, char *buf, size_t len)
{
	char m[32], d[32];

	if (a->max_total_given) {
		snprintf(buf, len, " (--max-total)");
		return buf;
	}
	if (a->disk_free == UINT64_MAX)
		snprintf(d, sizeof(d), "unknown");
	else
		size_text(a->disk_free, d, sizeof(d));
	snprintf(buf, len, " (the default --max-total: the smaller of the available memory, %s, "
		 "and the free space in %.300s, %s; give --max-total to choose another)",
		 size_text(a->mem_available, m, sizeof(m)), a->out, d);
	return buf;
}
