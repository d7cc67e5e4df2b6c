/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_mig_report.c - what the migration commands show a person while and
 * after they run: the progress (a line on a terminal, or JSON lines), sizes in binary units,
 * and the line about the connection (device, inline, control messages).
 * The JSON summaries are in cli_json.c; cli.h declares these.
 */
#include <stdio.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"

void mig_progress_start(struct mig_progress *p, int mode, const char *what, uint64_t total)
{
	if (mode == MIG_PROGRESS_AUTO)
		mode = isatty(STDERR_FILENO) ? MIG_PROGRESS_HUMAN : MIG_PROGRESS_NONE;
	p->on = mode;
	p->what = what;
	p->total = total;
	p->start = rdmig_monotonic_seconds();
	p->last = 0;
}

/* One JSON line: what rdmig-json(7) calls a progress object. */
static void progress_json(const struct mig_progress *p, uint64_t done, double secs, double rate)
{
	struct json_object *o = cj_summary();
	const char *text;

	cj_str(o, "phase", cli_run.phase);
	cj_u64(o, "bytes_done", done);
	cj_u64(o, "bytes_total", p->total);
	cj_fixed(o, "seconds", secs, 3);
	cj_fixed(o, "rate_MBps", rate / 1e6, 2);
	if (rate > 0 && done <= p->total)
		cj_fixed(o, "eta_seconds", (double)(p->total - done) / rate, 1);
	else
		cj_null(o, "eta_seconds");
	text = cj_text(o);
	if (text)
		fprintf(stderr, "%s\n", text);
	json_object_put(o);
}

void mig_progress(struct mig_progress *p, uint64_t done)
{
	double now, secs, rate;
	char a[32], b[32], eta[32] = "";

	if (p->on != MIG_PROGRESS_HUMAN && p->on != MIG_PROGRESS_JSON)
		return;
	now = rdmig_monotonic_seconds();
	if (now - p->last < 0.2 && done < p->total)
		return;
	p->last = now;
	secs = now - p->start;
	rate = secs > 0 ? (double)done / secs : 0;
	if (p->on == MIG_PROGRESS_JSON) {
		progress_json(p, done, secs, rate);
		return;
	}
	if (rate > 0 && done < p->total) {
		long left = (long)((double)(p->total - done) / rate);
		snprintf(eta, sizeof(eta), "  ETA %ld:%02ld", left / 60, left % 60);
	}
	fprintf(stderr, "\r%s: %s / %s  %.1f MB/s%s\033[K", p->what, size_text(done, a, sizeof(a)),
		size_text(p->total, b, sizeof(b)), rate / 1e6, eta);
}

void mig_progress_end(struct mig_progress *p)
{
	if (p->on == MIG_PROGRESS_HUMAN && p->last > 0)
		fprintf(stderr, "\r\033[K");
	p->on = MIG_PROGRESS_NONE;
}

void mig_print_conn(const char *cmd, const struct rdmig_conn *c)
{
	struct rdmig_inline_info inl;
	struct rdmig_counters k = {.size = sizeof(k)};

	rdmig_conn_inline(c, &inl);
	rdmig_conn_counters(c, &k);
	printf("%s: device %s, inline asked %u granted %u (tries %u); control messages: %llu sent "
	       "(%llu inline, %llu copied), %llu received\n", cmd, rdmig_conn_device(c), inl.asked,
	       inl.granted, inl.tries, (unsigned long long)mig_msg_sum(k.sent),
	       (unsigned long long)mig_msg_sum(k.sent_inline),
	       (unsigned long long)mig_msg_sum(k.sent_copied),
	       (unsigned long long)mig_msg_sum(k.received));
}
