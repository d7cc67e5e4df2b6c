/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv_report.c - what `rdmig recv` says when it is done: the JSON
 * summary (rdmig-json(7)), the human one, and the blocks whose spans did
 * not match their digests.
 */
#include <stdio.h>
#include <string.h>
#include "cli_json.h"
#include "recv_files.h"

/* Block i's outcome (all false before the digests were compared). */
static struct rdmig_verify_block result(const struct recv_state *s, uint32_t i)
{
	struct rdmig_verify_block r = {.bad_span = -1};

	rdmig_images_dest_result(s->dest, i, &r);
	return r;
}

static struct json_object *json_blocks(const struct recv_state *s)
{
	uint32_t n;
	const struct rdmig_imgs_block *blocks = rdmig_images_dest_blocks(s->dest, &n);
	struct json_object *arr = cj_array();

	for (uint32_t i = 0; i < n; i++) {
		struct json_object *b = cj_object();
		struct rdmig_verify_block r = result(s, i);
		char hex[RDMIG_DIGEST_HEX_MAX];

		rdmig_digest_hex(r.digest, rdmig_digest_size(s->ist.digest), hex);
		cj_str(b, "name", blocks[i].name);
		cj_str(b, "file", recv_dir_file(&s->out, i));
		cj_u64(b, "length", blocks[i].length);
		cj_str(b, "digest", hex);
		cj_bool(b, "verified", r.ok);
		cj_push(arr, b);
	}
	return arr;
}

/* The transfer: from the destination's start to the source's disconnect. */
static double transfer_seconds(const struct recv_state *s)
{
	return s->ist.header_seconds + s->ist.transfer_seconds;
}

/*
 * Where the run's time went (cli_budget.h): the library's phases
 * (rdmig_images_stats) between the tool's marks.  The receiver registers
 * its memory during the transfer (all of it at the source's RAM_BLOCKS
 * request with pin-all, chunk by chunk at its REGISTER_REQUESTs without):
 * the transfer is split into that and the rest.  The copy into the image
 * files happens during the transfer too, span by span on the hashing
 * threads as each span is checked (the sink's write): "copy_busy" says
 * how long, summed over the threads, beside the phases, not in them.
 */
void recv_budget(const struct recv_state *s, double t_cleaned, struct cli_budget *b)
{
	memset(b, 0, sizeof(*b));
	b->idle = s->a.t_request - s->a.t_listening;
	cli_budget_add(b, "start", s->a.t_listening - cli_t_main);
	cli_budget_add(b, "connect", s->t_accepted - s->a.t_request);
	/* the wait for the source's header is in it: the source's setup */
	cli_budget_add(b, "setup", s->t_run - s->t_accepted + s->ist.header_seconds);
	cli_budget_add(b, "register", s->st.register_seconds);
	cli_budget_add(b, "transfer", s->ist.transfer_seconds - s->st.register_seconds);
	cli_budget_add(b, "hash_wait", s->ist.hash_wait_seconds);
	cli_budget_add(b, "commit", s->ist.commit_seconds);
	cli_budget_add(b, "teardown", s->ist.teardown_seconds + t_cleaned - s->t_run_end);
	cli_budget_close(b, t_cleaned);
}

struct json_object *recv_json(const struct recv_state *s)
{
	double secs = transfer_seconds(s);
	struct json_object *o = cj_summary();
	struct rdmig_caps caps;

	rdmig_conn_caps(s->conn, &caps);
	cj_str(o, "listen", s->a.host);
	cj_i64(o, "port", rdmig_listener_port(s->l));
	cj_str(o, "out", s->a.out);
	cj_bool(o, "pin_all", caps.flags & RDMIG_CAP_PIN_ALL);
	cj_add(o, "blocks", json_blocks(s));
	cj_bool(o, "verified", s->ist.verified);
	cj_u64(o, "bytes_total", s->ist.bytes_total);
	cj_u64(o, "bytes_compressed", s->st.bytes_compressed);
	cj_u64(o, "stream_bytes", s->st.stream_bytes);
	cj_fixed(o, "seconds", secs, 6);
	cj_str(o, "verify", rdmig_digest_name(s->ist.digest));
	cj_u64(o, "hash_threads", s->ist.hash_threads);
	cj_fixed(o, "hash_seconds", s->ist.hash_seconds, 6);
	cj_fixed(o, "hash_exposed_seconds", s->ist.hash_wait_seconds, 6);
	cj_fixed(o, "write_seconds", s->ist.commit_seconds, 6);
	cj_fixed(o, "throughput_MBps", secs > 0 ? (double)s->ist.bytes_total / secs / 1e6 : 0.0, 2);
	cj_u64(o, "iterations", s->st.iterations);
	cj_u64(o, "register_requests", s->st.register_requests);
	cj_u64(o, "chunks_registered", s->st.chunks_registered);
	cj_u64(o, "bytes_released", s->ist.bytes_released);
	cj_fixed(o, "register_seconds", s->st.register_seconds, 6);
	cj_fixed(o, "copy_busy_seconds", (double)recv_dir_copy_ns(&s->out) / 1e9, 6);
	mig_json_conn(o, s->conn);
	return o;
}

void print_human(const struct recv_state *s)
{
	double secs = transfer_seconds(s);
	uint32_t n = s->ist.blocks, good = n - s->ist.blocks_mismatched;
	uint64_t total = s->ist.bytes_total;
	char a[32], b[32];

	printf("recv: %u block%s, %s in %.2f s (%.1f MB/s), %llu iteration%s, %llu registrations "
	       "served (%.2f s registering), %s compressed\n", n,
	       n == 1 ? "" : "s", size_text(total, a, sizeof(a)), secs,
	       secs > 0 ? (double)total / secs / 1e6 : 0.0,
	       (unsigned long long)s->st.iterations, s->st.iterations == 1 ? "" : "s",
	       (unsigned long long)s->st.register_requests, s->st.register_seconds,
	       size_text(s->st.bytes_compressed, b, sizeof(b)));
	mig_print_conn("recv", s->conn);
	if (s->ist.digest == RDMIG_DIGEST_OFF)
		printf("recv: not verified (--verify off %s); images in %s/\n",
		       s->verify_off ? "here" : "at the source", s->a.out);
	else
		printf("recv: %s verified %u/%u block%s as they landed (%.2f s on %u thread%s, "
		       "%.2f s after the data)%s%s%s\n",
		       rdmig_digest_name(s->ist.digest), good, n, n == 1 ? "" : "s",
		       s->ist.hash_seconds, s->ist.hash_threads, s->ist.hash_threads == 1 ? "" : "s",
		       s->ist.hash_wait_seconds, s->ist.verified ? "; images in " : "",
		       s->ist.verified ? s->a.out : "", s->ist.verified ? "/" : "");
}

/* ------------------------------------------------------------- main -- */

int report_mismatches(const struct recv_state *s)
{
	uint32_t bad = 0, n;
	const struct rdmig_imgs_block *blocks = rdmig_images_dest_blocks(s->dest, &n);
	size_t dsize = rdmig_digest_size(s->ist.digest);
	char msg[160];

	for (uint32_t i = 0; i < n; i++) {
		struct rdmig_verify_block rr = result(s, i), *r = &rr;
		uint64_t span = 1ull << s->span_shift, at = (uint64_t)r->bad_span * span;
		char got[RDMIG_DIGEST_HEX_MAX], want[RDMIG_DIGEST_HEX_MAX];

		if (r->ok)
			continue;
		bad++;
		if (r->bad_span >= 0) {
			fprintf(stderr,
				"rdmig: recv: block '%s': bytes %llu..%llu differ from what "
				"the source sent (%s of span %lld)\n",
				blocks[i].name, (unsigned long long)at,
				(unsigned long long)(at + span < blocks[i].length
							 ? at + span
							 : blocks[i].length),
				rdmig_digest_name(s->ist.digest), (long long)r->bad_span);
			continue;
		}
		rdmig_digest_hex(r->digest, dsize, got);
		rdmig_digest_hex(blocks[i].digest, dsize, want);
		fprintf(stderr,
			"rdmig: recv: block '%s': %s mismatch: received %s, the source sent "
			"%s\n",
			blocks[i].name, rdmig_digest_name(s->ist.digest), got, want);
	}
	/* the lines above say where; this one says what, once */
	snprintf(msg, sizeof(msg), "%u of %u block%s differ from what the source sent; no "
		 "image was kept", bad, n, n == 1 ? "" : "s");
	return cli_fail_code("recv", "verify_mismatch", msg);
}
