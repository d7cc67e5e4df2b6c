/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_status.c - `rdmig status --socket PATH`: ask a running `rdmig recv
 * --serve --status PATH` how it stands, and print it as a table, as its
 * JSON object (--json), or as metrics in the Prometheus text format
 * (--metrics, for a textfile collector or a scrape wrapper).
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"

#define STATUS_TIMEOUT_MS 5000
#define STATUS_MAX_BYTES (1 << 20)

enum status_format { FORMAT_TABLE, FORMAT_JSON, FORMAT_METRICS };

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmig status --socket PATH [--json | --metrics]\n"
		   "Ask a running 'rdmig recv --serve --status PATH' how it stands: its sources\n"
		   "(peer, phase, bytes, rate, time left), the last that ended, its totals and\n"
		   "limits.\n"
		   "  -s, --socket PATH  the socket the server answers on (default:\n"
		   "                     $RDMIG_STATUS_SOCKET)\n"
		   "  -j, --json         its JSON object (rdmig-json(7), \"recv serve status\")\n"
		   "  -m, --metrics      metrics in the Prometheus text format\n"
		   "  -h, --help         this help\n");
}

/* ------------------------------------------------------------ the query -- */

/* The server's answer, read whole (it closes when done); NULL with err. */
static char *query(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	size_t len = 0, cap = 4096;
	char *buf = NULL;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "--socket '%s': too long for a socket's path", path);
		return NULL;
	}
	memcpy(sun.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)&sun, sizeof(sun))) {
		snprintf(err, errlen, "cannot reach a server at %s: %s (is 'rdmig recv --serve "
			 "--status %s' running?)", path, strerror(errno), path);
		goto fail;
	}
	if (!(buf = malloc(cap)))
		goto oom;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, STATUS_TIMEOUT_MS) <= 0) {
			snprintf(err, errlen, "the server at %s did not answer within %d s", path,
				 STATUS_TIMEOUT_MS / 1000);
			goto fail;
		}
		if (len + 1 >= cap) {
			char *more = cap < STATUS_MAX_BYTES ? realloc(buf, cap * 2) : NULL;

			if (!more) {
				snprintf(err, errlen, "the server at %s answered more than %d bytes",
					 path, STATUS_MAX_BYTES);
				goto fail;
			}
			buf = more;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "reading from %s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* ------------------------------------------------------------ reading it -- */

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static uint64_t num(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key);

	return v && !json_object_is_type(v, json_type_null) ? (uint64_t)json_object_get_int64(v)
							     : 0;
}

static double real(struct json_object *o, const char *key)
{
	return json_object_get_double(member(o, key));
}

static const char *text(struct json_object *o, const char *key)
{
	const char *s = json_object_get_string(member(o, key));

	return s ? s : "?";
}

static bool is_null(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key);

	return !v || json_object_is_type(v, json_type_null);
}

/* ------------------------------------------------------------ the table -- */

/* "WHAT USED of LIMIT" or "WHAT USED (no limit)"; sizes in bytes, or a
 * count of files. */
static void print_reserved(struct json_object *o, const char *what, const char *used,
			   const char *limit, bool bytes)
{
	char a[32], b[32];
	uint64_t u = num(o, used), l = num(o, limit);

	if (bytes) {
		size_text(u, a, sizeof(a));
		size_text(l, b, sizeof(b));
	} else {
		snprintf(a, sizeof(a), "%llu", (unsigned long long)u);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)l);
	}
	if (is_null(o, limit))
		printf("%s %s (no limit)", what, a);
	else
		printf("%s %s of %s", what, a, b);
}

static void print_running(struct json_object *src)
{
	char a[32], b[32], eta[32] = "-";

	if (!is_null(src, "eta_seconds"))
		snprintf(eta, sizeof(eta), "%.0f s", real(src, "eta_seconds"));
	printf("  %04llu %-22s %-10s %10s of %-10s %9.1f MB/s %8s  %s\n",
	       (unsigned long long)num(src, "seq"), text(src, "peer"), text(src, "phase"),
	       size_text(num(src, "bytes_done"), a, sizeof(a)),
	       size_text(num(src, "bytes_total"), b, sizeof(b)), real(src, "rate_MBps"), eta,
	       text(src, "dir"));
}

static void print_ended(struct json_object *e)
{
	char a[32];
	bool ok = json_object_get_boolean(member(e, "verified"));

	printf("  %04llu %-22s %s %s in %.1f s%s%s\n", (unsigned long long)num(e, "seq"),
	       text(e, "peer"), ok ? "verified" : "FAILED  ", size_text(num(e, "bytes_total"), a,
								      sizeof(a)),
	       real(e, "seconds"), ok ? "" : ": ", ok ? "" : text(e, "message"));
}

static void print_table(struct json_object *o)
{
	struct json_object *run = member(o, "sources"), *ended = member(o, "ended");
	size_t n;

	printf("rdmig recv --serve (pid %llu) on %s:%llu into %s: %s, up %.0f s\n",
	       (unsigned long long)num(o, "pid"), text(o, "listen"),
	       (unsigned long long)num(o, "port"), text(o, "out"),
	       json_object_get_boolean(member(o, "draining")) ? "draining" : "serving",
	       real(o, "uptime_seconds"));
	printf("sources: %llu running (at most %llu), %llu verified, %llu failed, %llu rejected\n",
	       (unsigned long long)num(o, "sources_running"),
	       (unsigned long long)num(o, "max_sources"), (unsigned long long)num(o, "sources_ok"),
	       (unsigned long long)num(o, "sources_failed"),
	       (unsigned long long)num(o, "sources_rejected"));
	print_reserved(o, "reserved: blocks", "reserved_total", "serve_max_total", true);
	print_reserved(o, ", pinned", "reserved_pinned", "serve_max_pinned", true);
	print_reserved(o, ", files", "reserved_files", "serve_max_files", false);
	putchar('\n');
	n = run ? json_object_array_length(run) : 0;
	if (n)
		printf("  %-4s %-22s %-10s %24s %14s %8s  %s\n", "seq", "peer", "phase", "bytes",
		       "rate", "left", "directory");
	for (size_t i = 0; i < n; i++)
		print_running(json_object_array_get_idx(run, i));
	n = ended ? json_object_array_length(ended) : 0;
	if (n)
		printf("last ended (newest first):\n");
	for (size_t i = 0; i < n; i++)
		print_ended(json_object_array_get_idx(ended, i));
}

/* ------------------------------------------------------------ metrics -- */

/* A label value as the text format wants it: \, " and newline escaped. */
static void print_label(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			putchar('\\');
		if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
	}
}

static void metric_head(const char *name, const char *type, const char *help)
{
	printf("# HELP rdmig_serve_%s %s\n# TYPE rdmig_serve_%s %s\n", name, help, name, type);
}

static void metric(const char *name, const char *type, const char *help, double v)
{
	metric_head(name, type, help);
	printf("rdmig_serve_%s %.17g\n", name, v);
}

/* One series of a per-source metric: seq and peer as labels. */
static void source_sample(const char *name, struct json_object *src, double v)
{
	printf("rdmig_serve_%s{seq=\"%llu\",peer=\"", name, (unsigned long long)num(src, "seq"));
	print_label(text(src, "peer"));
	printf("\"} %.17g\n", v);
}

static void print_limits(struct json_object *o)
{
	static const char *const kinds[][3] = {
		{"total", "serve_max_total", "reserved_total"},
		{"pinned", "serve_max_pinned", "reserved_pinned"},
		{"files", "serve_max_files", "reserved_files"},
	};

	metric_head("reserved", "gauge", "What the running sources reserved (bytes; files).");
	for (size_t i = 0; i < 3; i++)
		printf("rdmig_serve_reserved{kind=\"%s\"} %llu\n", kinds[i][0],
		       (unsigned long long)num(o, kinds[i][2]));
	metric_head("limit", "gauge", "The server's limits (bytes; files); absent: none.");
	for (size_t i = 0; i < 3; i++)
		if (!is_null(o, kinds[i][1]))
			printf("rdmig_serve_limit{kind=\"%s\"} %llu\n", kinds[i][0],
			       (unsigned long long)num(o, kinds[i][1]));
}

static void print_metrics(struct json_object *o)
{
	struct json_object *run = member(o, "sources");
	size_t n = run ? json_object_array_length(run) : 0;

	metric("up", "gauge", "1: the server answered.", 1);
	metric("draining", "gauge", "1 after SIGTERM: no new source.",
	       json_object_get_boolean(member(o, "draining")));
	metric("uptime_seconds", "gauge", "Seconds since it listened.", real(o, "uptime_seconds"));
	metric("sources_running", "gauge", "Sources being received now.",
	       (double)num(o, "sources_running"));
	metric("max_sources", "gauge", "--max-sources.", (double)num(o, "max_sources"));
	metric_head("sources_total", "counter", "Sources that ended, by outcome.");
	printf("rdmig_serve_sources_total{outcome=\"verified\"} %llu\n",
	       (unsigned long long)num(o, "sources_ok"));
	printf("rdmig_serve_sources_total{outcome=\"failed\"} %llu\n",
	       (unsigned long long)num(o, "sources_failed"));
	printf("rdmig_serve_sources_total{outcome=\"rejected\"} %llu\n",
	       (unsigned long long)num(o, "sources_rejected"));
	print_limits(o);
	metric("peak_rss_bytes", "gauge", "Peak resident memory (VmHWM).",
	       (double)num(o, "peak_rss_bytes"));
	metric("peak_pinned_bytes", "gauge", "Peak pinned memory (VmPin + VmLck).",
	       (double)num(o, "peak_pinned_bytes"));
	metric_head("source_bytes_done", "gauge", "A running source's bytes landed.");
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(run, i);

		source_sample("source_bytes_done", s, (double)num(s, "bytes_done"));
	}
	metric_head("source_bytes_total", "gauge", "A running source's bytes in all (0: before its header).");
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(run, i);

		source_sample("source_bytes_total", s, (double)num(s, "bytes_total"));
	}
	metric_head("source_rate_bytes_per_second", "gauge", "A running source's mean rate.");
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(run, i);

		source_sample("source_rate_bytes_per_second", s, real(s, "rate_MBps") * 1e6);
	}
}

/* ------------------------------------------------------------ the command -- */

static int parse(int argc, char **argv, const char **path, enum status_format *format)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'}, {"json", no_argument, NULL, 'j'},
		{"metrics", no_argument, NULL, 'm'},      {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int c;

	while ((c = getopt_long(argc, argv, ":s:jmh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': *path = optarg; break;
		case 'j':
			if (*format == FORMAT_METRICS)
				return cli_usage("--json and --metrics: one or the other");
			*format = FORMAT_JSON;
			break;
		case 'm':
			if (*format == FORMAT_JSON)
				return cli_usage("--json and --metrics: one or the other");
			*format = FORMAT_METRICS;
			break;
		case 'h': usage(stdout); return 1;
		default: return cli_bad_option(c, argv);
		}
	}
	if (optind != argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (!*path)
		*path = getenv("RDMIG_STATUS_SOCKET");
	if (!*path || !**path)
		return cli_usage("--socket PATH is required (the server's --status), or "
				 "RDMIG_STATUS_SOCKET");
	return 0;
}

int cmd_status(int argc, char **argv)
{
	enum status_format format = FORMAT_TABLE;
	const char *path = NULL;
	struct json_object *o;
	char err[512], *answer;
	int r;

	cli_run_begin("status", NULL, "status", argc, argv);
	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	if ((r = parse(argc, argv, &path, &format)))
		return r == 1 ? 0 : r;
	cli_phase("query");
	if (!(answer = query(path, err, sizeof(err))))
		return cli_fail("status", err);
	o = json_tokener_parse(answer);
	if (!o || !json_object_is_type(o, json_type_object) ||
	    strcmp(text(o, "event"), "status")) {
		json_object_put(o);
		free(answer);
		return cli_fail("status", "the server's answer is not a status object");
	}
	if (format == FORMAT_JSON) {
		fputs(answer, stdout); /* as the server wrote it: one line */
		cli_run.printed = true;
	} else if (format == FORMAT_METRICS) {
		print_metrics(o);
	} else {
		print_table(o);
	}
	json_object_put(o);
	free(answer);
	return 0;
}
