/* SPDX-License-Identifier: BSD-2-Clause */
/* cli_json.c - JSON summaries through json-c (see cli_json.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "cli_json.h"

/* Set when a json-c call ran out of memory since the last cj_print: the
 * object is then incomplete and is not printed.  Summaries are built and
 * printed by the main thread only. */
static bool cj_oom;

struct json_object *cj_object(void)
{
	struct json_object *o = json_object_new_object();

	cj_oom |= !o;
	return o;
}

struct json_object *cj_array(void)
{
	struct json_object *a = json_object_new_array();

	cj_oom |= !a;
	return a;
}

void cj_push(struct json_object *arr, struct json_object *v)
{
	if (!arr || json_object_array_add(arr, v)) {
		json_object_put(v);
		cj_oom = true;
	}
}

void cj_add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!o || json_object_object_add(o, key, v)) {
		json_object_put(v);
		cj_oom = true;
	}
}

/* Add a value that a json-c constructor returned: NULL means no memory. */
static void cj_new(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		cj_oom = true;
	cj_add(o, key, v);
}

void cj_str(struct json_object *o, const char *key, const char *val)
{
	if (val)
		cj_new(o, key, json_object_new_string(val));
	else
		cj_null(o, key);
}

void cj_u64(struct json_object *o, const char *key, uint64_t v)
{
	cj_new(o, key, json_object_new_uint64(v));
}

void cj_i64(struct json_object *o, const char *key, int64_t v)
{
	cj_new(o, key, json_object_new_int64(v));
}

void cj_bool(struct json_object *o, const char *key, bool v)
{
	cj_new(o, key, json_object_new_boolean(v));
}

void cj_null(struct json_object *o, const char *key)
{
	cj_add(o, key, NULL); /* json-c's null is the NULL object */
}

void cj_fixed(struct json_object *o, const char *key, double v, int decimals)
{
	char text[64];

	if (!isfinite(v)) {
		cj_null(o, key);
		return;
	}
	/* json-c would print %.17g; keep the summaries' fixed digits */
	snprintf(text, sizeof(text), "%.*f", decimals, v);
	cj_new(o, key, json_object_new_double_s(v, text));
}

/* "name": {"TYPE": count, ...} over the real message types. */
static void cj_by_type(struct json_object *o, const char *name, const uint64_t *counts)
{
	struct json_object *t = cj_object();

	for (int i = 1; i < RDMIG_MSG_TYPE_COUNT; i++)
		cj_u64(t, rdmig_msg_type_name((uint32_t)i), counts[i]);
	cj_add(o, name, t);
}

void mig_json_conn(struct json_object *o, const struct rdmig_conn *c)
{
	struct rdmig_inline_info inl;
	struct rdmig_counters k = {.size = sizeof(k)};
	const char *dev = rdmig_conn_device(c);

	rdmig_conn_inline(c, &inl);
	rdmig_conn_counters(c, &k);
	cj_str(o, "device", dev ? dev : "");
	cj_u64(o, "inline_asked", inl.asked);
	cj_u64(o, "inline_granted", inl.granted);
	cj_u64(o, "inline_tries", inl.tries);
	cj_u64(o, "inline_messages", mig_msg_sum(k.sent_inline));
	cj_u64(o, "inline_bytes", k.bytes_inline);
	cj_u64(o, "copied_messages", mig_msg_sum(k.sent_copied));
	cj_u64(o, "copied_bytes", k.bytes_copied);
	cj_u64(o, "received_bytes", k.bytes_received);
	cj_by_type(o, "messages_sent", k.sent);
	cj_by_type(o, "messages_sent_inline", k.sent_inline);
	cj_by_type(o, "messages_sent_copied", k.sent_copied);
	cj_by_type(o, "messages_received", k.received);
}

void mig_json_destination(struct json_object *o, const char *host, const char *port,
			  const struct rdmig_conn *c)
{
	struct rdmig_caps caps;

	rdmig_conn_caps(c, &caps);
	cj_str(o, "to", host);
	cj_i64(o, "port", strtol(port, NULL, 10));
	cj_bool(o, "pin_all", caps.flags & RDMIG_CAP_PIN_ALL);
}

void mig_json_register(struct json_object *o, const struct rdmig_engine_stats *st)
{
	cj_u64(o, "register_requests", st->register_requests);
	cj_u64(o, "register_ahead", st->register_ahead);
	cj_fixed(o, "register_rtt_p50_us", st->register_rtt_p50_us, 1);
	cj_fixed(o, "register_rtt_p99_us", st->register_rtt_p99_us, 1);
	cj_fixed(o, "register_wait_seconds", st->register_wait_seconds, 6);
	cj_fixed(o, "register_seconds", st->register_seconds, 6);
	cj_u64(o, "register_threads", st->register_threads);
}

const char *cj_text(struct json_object *v)
{
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_SPACED |
						 JSON_C_TO_STRING_NOSLASHESCAPE);
}

void cj_u64_or_null(struct json_object *o, const char *key, uint64_t v)
{
	if (v == UINT64_MAX)
		cj_null(o, key);
	else
		cj_u64(o, key, v);
}

void cj_free(struct json_object *v)
{
	json_object_put(v);
}

int cj_print(struct json_object *v)
{
	const char *text = v && !cj_oom ? cj_text(v) : NULL;
	int ret = 0;

	if (!text || printf("%s\n", text) < 0) {
		fprintf(stderr, "rdmig: cannot write the JSON summary%s\n",
			text ? "" : ": out of memory");
		ret = -1;
	}
	cj_oom = false;
	json_object_put(v);
	return ret;
}

struct json_object *cj_summary(void)
{
	struct json_object *o = cj_object();

	cj_i64(o, "schema", CJ_SCHEMA);
	cj_str(o, "command", cli_run.command);
	if (cli_run.mode)
		cj_str(o, "mode", cli_run.mode);
	cj_str(o, "rdmig_version", RDMIG_VERSION_STRING);
	return o;
}

int cj_summary_print(struct json_object *o)
{
	cj_bool(o, "ok", !cli_run.failed);
	if (cli_run.failed) {
		struct json_object *e = cj_object();

		cj_str(o, "phase", cli_run.phase);
		cj_str(e, "code", cli_run.code);
		cj_str(e, "message", cli_run.message);
		cj_add(o, "error", e);
	}
	cli_run.printed = true;
	return cj_print(o);
}
