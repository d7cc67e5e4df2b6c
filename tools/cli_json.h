/* SPDX-License-Identifier: BSD-2-Clause */
/* cli_json.h - the tool's JSON output, built with json-c.
 *
 * A summary is one json-c object: members are added in the order they are
 * to be printed (json-c keeps insertion order), then cj_print writes it as
 * one line and frees it.  json-c does the escaping of strings. */
#ifndef RDMIG_CLI_JSON_H
#define RDMIG_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include <rdmig.h>

/* A new empty object or array (NULL when out of memory, which cj_print
 * then reports: the functions below take a NULL o or arr). */
struct json_object *cj_object(void);
struct json_object *cj_array(void);
/* Append v to array arr; arr takes the reference. */
void cj_push(struct json_object *arr, struct json_object *v);

/* Add one member at the end of object o.  A NULL string is added as null. */
void cj_str(struct json_object *o, const char *key, const char *val);
void cj_u64(struct json_object *o, const char *key, uint64_t v);
void cj_i64(struct json_object *o, const char *key, int64_t v);
void cj_bool(struct json_object *o, const char *key, bool v);
void cj_null(struct json_object *o, const char *key);
/* v, or null for UINT64_MAX (a limit that is none) */
void cj_u64_or_null(struct json_object *o, const char *key, uint64_t v);
/* A number with this many digits after the point ("%.*f": 1.500000 for
 * 1.5 and 6); null when v is not finite (JSON has no inf or nan). */
void cj_fixed(struct json_object *o, const char *key, double v, int decimals);
/* Add v (any json-c value, e.g. an array or object) as member key of o;
 * o takes the reference. */
void cj_add(struct json_object *o, const char *key, struct json_object *v);

/* The version of the objects' schema, rdmig-json(7): "schema" in every
 * object.  It goes up when a member changes meaning or goes away, not
 * when one is added. */
#define CJ_SCHEMA 1

/* The head of a command's one object: schema, command, mode (when the
 * command has modes) and rdmig_version, from cli_run. */
struct json_object *cj_summary(void);
/* Finish it with the outcome: "ok", and after a failure "phase" and
 * "error": {"code", "message"} (cli_run's first failure); print it as
 * cj_print does and note that the run's object went out. */
int cj_summary_print(struct json_object *o);

/* The connection's members shared by every summary: device,
 * the inline settlement, bytes and messages inline and copied, and the
 * messages_* objects (count per message type).  c may be NULL (zeros). */
void mig_json_conn(struct json_object *o, const struct rdmig_conn *c);
/* The members both source summaries (send, send --qemu-replay) share, in
 * the order both print them; the rest of the two differs in keys and order
 * (the tests and scripts read both), so only these runs are common.
 * to, port and pin_all (as the destination granted it): */
void mig_json_destination(struct json_object *o, const char *host, const char *port,
			  const struct rdmig_conn *c);
/* register_requests (round trips), register_ahead, register_rtt_p50_us and
 * _p99_us, the seconds waited and registering, register_threads: */
void mig_json_register(struct json_object *o, const struct rdmig_engine_stats *st);

/* The text of v: one line, ", " between members and ": " after keys, '/'
 * not escaped; NULL when out of memory.  v owns it. */
const char *cj_text(struct json_object *v);
/* Print cj_text(v) and a newline on stdout and free v (even on failure).
 * 0, or -1 after a note on stderr. */
int cj_print(struct json_object *v);
/* Free v (an object not printed). */
void cj_free(struct json_object *v);

#endif
