/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv_serve_report.c - what `rdmig recv --serve` prints: a JSON line
 * or a human line per source as it ends, and the summary at the end, with
 * the peak memory sampled from /proc.  The callers hold sv->lock, which
 * serializes all printing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_json.h"
#include "recv_serve.h"

/* /proc/self/status: VmHWM (peak resident) and the memory pinned now
 * (VmPin: the device's registrations; VmLck: mlock). */
void sample_memory(struct serve *sv)
{
	unsigned long long kib, pin = 0, lck = 0, hwm = 0;
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmPin: %llu kB", &kib) == 1)
			pin = kib;
		else if (sscanf(line, "VmLck: %llu kB", &kib) == 1)
			lck = kib;
		else if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
			hwm = kib;
	}
	if (f)
		fclose(f);
	pthread_mutex_lock(&sv->lock);
	if ((pin + lck) << 10 > sv->peak_pinned)
		sv->peak_pinned = (pin + lck) << 10;
	if (hwm << 10 > sv->peak_rss)
		sv->peak_rss = hwm << 10;
	pthread_mutex_unlock(&sv->lock);
}

/* The code of a source's failure, as rdmig-json(7) names them. */
static const char *failure_code(const struct source *src)
{
	if (src->s.ist.blocks_mismatched)
		return "verify_mismatch";
	if (src->s.err[0] || recv_dir_failed(&src->s.out) || src->ret == -1)
		return "failed";
	return rdmig_err_name(src->ret);
}

void failure_text(struct source *src, char *msg, size_t len)
{
	if (src->s.ist.blocks_mismatched)
		snprintf(msg, len, "%u of %u blocks differ from what the source sent; no image "
			 "was kept", src->s.ist.blocks_mismatched, src->s.ist.blocks);
	else if (src->s.err[0])
		snprintf(msg, len, "%s", src->s.err);
	else
		recv_failure_message(&src->s, src->ret, msg, len);
}

static double source_seconds(const struct source *src)
{
	return src->s.ist.header_seconds + src->s.ist.transfer_seconds;
}

static void print_source_json(struct source *src, const char *msg)
{
	struct json_object *o = cj_object();
	double secs = source_seconds(src);

	serve_json_head(o, "source");
	cj_i64(o, "seq", src->seq);
	cj_str(o, "peer", src->peer);
	cj_str(o, "out", src->path);
	cj_bool(o, "ok", src->ret == 0);
	cj_u64(o, "blocks", src->s.ist.blocks);
	cj_u64(o, "bytes_total", src->s.ist.bytes_total);
	cj_bool(o, "verified", src->s.ist.verified);
	cj_str(o, "verify", rdmig_digest_name(src->s.ist.digest));
	cj_fixed(o, "seconds", secs, 6);
	cj_fixed(o, "throughput_MBps",
		 secs > 0 && !src->ret ? (double)src->s.ist.bytes_total / secs / 1e6 : 0.0, 2);
	cj_u64(o, "register_requests", src->s.st.register_requests);
	if (src->ret) {
		struct json_object *e = cj_object();

		cj_str(o, "phase", "migrate");
		cj_str(e, "code", failure_code(src));
		cj_str(e, "message", msg);
		cj_add(o, "error", e);
	}
	mig_json_conn(o, src->s.conn);
	cj_print(o);
	fflush(stdout);
}

/* A source's thread ended: its line (under the lock). */
void report_source(struct source *src)
{
	const char *msg = src->msg;
	char a[32];
	double secs = source_seconds(src);

	if (src->sv->a.m.json) {
		print_source_json(src, msg);
		if (!src->ret)
			return;
	} else if (!src->ret) {
		printf("recv: source %u (%s): %u block%s, %s in %.2f s (%.1f MB/s), %s%s into %s/\n",
		       src->seq, src->peer, src->s.ist.blocks, src->s.ist.blocks == 1 ? "" : "s",
		       size_text(src->s.ist.bytes_total, a, sizeof(a)), secs,
		       secs > 0 ? (double)src->s.ist.bytes_total / secs / 1e6 : 0.0,
		       src->s.ist.verified ? "verified" : "not verified",
		       src->s.ist.verified ? "" : " (--verify off)", src->path);
		fflush(stdout);
		return;
	}
	fprintf(stderr, "rdmig: recv: source %u (%s): %s; its outputs were removed\n", src->seq,
		src->peer, msg);
}

void serve_json_head(struct json_object *o, const char *event)
{
	cj_i64(o, "schema", CJ_SCHEMA);
	cj_str(o, "command", "recv");
	cj_str(o, "mode", "serve");
	cj_str(o, "event", event);
	cj_str(o, "rdmig_version", RDMIG_VERSION_STRING);
}

void serve_json_server(struct json_object *o, const struct serve *sv)
{
	struct source_limits lim;

	source_admission_limits(sv->adm, &lim);
	cj_str(o, "listen", sv->a.host);
	cj_i64(o, "port", sv->port);
	cj_str(o, "out", sv->a.out);
	cj_u64(o, "sources_ok", sv->ok);
	cj_u64(o, "sources_failed", sv->failed);
	cj_u64(o, "sources_rejected", sv->rejected);
	cj_u64(o, "max_sources", lim.slots);
	cj_u64_or_null(o, "serve_max_total", lim.bytes);
	cj_u64_or_null(o, "serve_max_pinned", lim.pinned);
	cj_u64_or_null(o, "serve_max_files", lim.files);
}

/* The end: one summary (the run's object under --json). */
int print_summary(struct serve *sv, int status)
{
	struct rdmig_admission_usage u = {.size = sizeof(u)};
	char a[32], b[32], c[32];

	source_admission_usage(sv->adm, &u); /* nothing when it was never made */
	if (!sv->a.m.json) {
		printf("recv: served %u source%s: %u ok, %u failed, %u rejected (busy); at most %u at "
		       "once, %s reserved of --serve-max-total, peak resident %s, peak pinned %s\n",
		       sv->ok + sv->failed, sv->ok + sv->failed == 1 ? "" : "s", sv->ok, sv->failed,
		       sv->rejected, sv->peak_running, size_text(u.peak_bytes, a, sizeof(a)),
		       size_text(sv->peak_rss, b, sizeof(b)), size_text(sv->peak_pinned, c, sizeof(c)));
		return status;
	}
	struct json_object *o = cj_summary();

	cj_str(o, "event", "summary");
	serve_json_server(o, sv);
	cj_u64(o, "peak_sources", sv->peak_running);
	cj_u64(o, "peak_reserved_total", u.peak_bytes);
	cj_u64(o, "peak_reserved_pinned", u.peak_pinned);
	cj_u64(o, "peak_reserved_files", u.peak_files);
	cj_u64(o, "peak_rss_bytes", sv->peak_rss);
	cj_u64(o, "peak_pinned_bytes", sv->peak_pinned);
	cj_summary_print(o);
	return status;
}
