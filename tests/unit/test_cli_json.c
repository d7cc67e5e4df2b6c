/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_cli_json.c - the tool's JSON output (tools/cli_json.c over json-c):
 * strings with quotes, backslashes, control characters, '/' and non-ASCII
 * UTF-8 come out escaped as JSON wants and parse back to the same bytes;
 * numbers keep their type and value; members keep their order and the
 * ", " / ": " spacing that the shell tests grep for; the connection's
 * members; one line on stdout; a time budget's phases add up to its total.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli.h"
#include "cli_json.h"
#include "cli_budget.h"

static char text_buf[8192];
static char back_buf[8192];

/* The text of {"s": s} (in text_buf). */
static const char *text_of(const char *s)
{
	struct json_object *o = cj_object();
	const char *t;

	cj_str(o, "s", s);
	t = cj_text(o);
	snprintf(text_buf, sizeof(text_buf), "%s", t ? t : "");
	json_object_put(o);
	return text_buf;
}

/* Member "s" of the JSON text t, parsed with UTF-8 validation (in
 * back_buf; its length in *len): NULL if t does not parse. */
static const char *parse_back(const char *t, size_t *len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o, *s;
	const char *ret = NULL;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, t, (int)strlen(t));
	if (o && json_object_object_get_ex(o, "s", &s) && json_object_is_type(s, json_type_string)) {
		*len = (size_t)json_object_get_string_len(s);
		memcpy(back_buf, json_object_get_string(s), *len + 1);
		ret = back_buf;
	}
	json_object_put(o);
	json_tokener_free(tok);
	return ret;
}

/* No byte below 0x20 may appear raw in JSON text. */
static int has_raw_control(const char *t)
{
	for (; *t; t++)
		if ((unsigned char)*t < 0x20)
			return 1;
	return 0;
}

#define CHECK_ROUND_TRIP(in)                                                                       \
	do {                                                                                       \
		size_t len_ = 0;                                                                   \
		const char *back_ = parse_back(text_of(in), &len_);                                \
		if (!back_)                                                                        \
			CHECK_FAIL_AT("%s does not parse back", text_buf);                         \
		CHECK_EQ(len_, strlen(in));                                                        \
		CHECK_MEM_EQ(back_, (in), len_);                                                   \
		CHECK(!has_raw_control(text_buf));                                                 \
	} while (0)

TEST(quotes_and_backslashes_are_escaped)
{
	const char *in = "say \"hi\" \\ C:\\dir\\\"x\"";

	CHECK_ROUND_TRIP(in);
	CHECK_STR_CONTAINS(text_buf, "\"s\": \"say \\\"hi\\\" \\\\ C:\\\\dir\\\\\\\"x\\\"\"");
}

TEST(control_characters_are_escaped)
{
	const char *in = "a\nb\tc\x01" "d\x1f" "e\r\b\f";

	CHECK_ROUND_TRIP(in);
	CHECK_STR_CONTAINS(text_buf, "a\\nb\\tc\\u0001d\\u001fe\\r\\b\\f");
}

TEST(every_ascii_byte_round_trips)
{
	char in[128];

	for (int i = 1; i < 128; i++)
		in[i - 1] = (char)i;
	in[127] = '\0';
	CHECK_ROUND_TRIP(in);
}

TEST(slash_is_not_escaped)
{
	const char *in = "/tmp/images/ram.img";

	CHECK_ROUND_TRIP(in);
	CHECK_STR_CONTAINS(text_buf, "\"s\": \"/tmp/images/ram.img\"");
	CHECK(!strstr(text_buf, "\\/"));
}

TEST(non_ascii_utf8_is_kept_as_is)
{
	/* "grüße ∑ 日本 😀": 2-, 3- and 4-byte sequences */
	const char *in = "gr\xc3\xbc\xc3\x9f" "e \xe2\x88\x91 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80";

	CHECK_ROUND_TRIP(in);
	CHECK_STR_CONTAINS(text_buf, in);
}

TEST(empty_and_null_strings)
{
	struct json_object *o = cj_object();

	CHECK_ROUND_TRIP("");
	cj_str(o, "a", "");
	cj_str(o, "b", NULL);
	CHECK_STR_CONTAINS(cj_text(o), "\"a\": \"\", \"b\": null");
	json_object_put(o);
}

TEST(keys_are_escaped_too)
{
	struct json_object *o = cj_object(), *p, *v;
	const char *t;

	cj_u64(o, "we\"ird\\key\n", 1);
	t = cj_text(o);
	CHECK_STR_CONTAINS(t, "\"we\\\"ird\\\\key\\n\": 1");
	p = json_tokener_parse(t);
	CHECK(p && json_object_object_get_ex(p, "we\"ird\\key\n", &v));
	json_object_put(p);
	json_object_put(o);
}

TEST(numbers_keep_their_type_and_value)
{
	struct json_object *o = cj_object(), *p, *v;
	const char *t;

	cj_u64(o, "u64", UINT64_MAX);
	cj_i64(o, "i64", -113);
	cj_fixed(o, "secs", 1.5, 6);
	cj_fixed(o, "mbps", 1234.5678, 2);
	cj_fixed(o, "inf", INFINITY, 6);
	cj_fixed(o, "nan", NAN, 1);
	cj_bool(o, "yes", true);
	cj_bool(o, "no", false);
	cj_null(o, "none");
	t = cj_text(o);
	CHECK_STR_CONTAINS(t, "\"u64\": 18446744073709551615, \"i64\": -113, \"secs\": 1.500000, "
			      "\"mbps\": 1234.57, \"inf\": null, \"nan\": null, \"yes\": true, "
			      "\"no\": false, \"none\": null");
	p = json_tokener_parse(t);
	CHECK(p);
	CHECK(json_object_object_get_ex(p, "u64", &v) && json_object_get_uint64(v) == UINT64_MAX);
	CHECK(json_object_object_get_ex(p, "secs", &v) && json_object_is_type(v, json_type_double));
	CHECK(json_object_get_double(v) == 1.5);
	json_object_put(p);
	json_object_put(o);
}

TEST(members_keep_their_order)
{
	struct json_object *o = cj_object(), *a = cj_array(), *b = cj_object();

	cj_str(o, "command", "send");
	cj_bool(o, "pin_all", true);
	cj_u64(b, "length", 4096);
	cj_push(a, b);
	cj_add(o, "blocks", a);
	cj_bool(o, "verified", true);
	CHECK_EQ(strcmp(cj_text(o), "{ \"command\": \"send\", \"pin_all\": true, \"blocks\": "
				    "[ { \"length\": 4096 } ], \"verified\": true }"),
		 0);
	json_object_put(o);
}

TEST(connection_members)
{
	static const char *const keys[] = {
		"device",         "inline_asked",  "inline_granted",
		"inline_tries",    "inline_messages", "inline_bytes", "copied_messages",
		"copied_bytes",    "received_bytes", "messages_sent", "messages_sent_inline",
		"messages_sent_copied", "messages_received"};
	struct json_object *o = cj_object(), *v;
	struct json_object_iterator it, end;
	size_t n = 0;

	mig_json_conn(o, NULL); /* no connection: zeros, no device */
	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it), n++) {
		CHECK(n < sizeof(keys) / sizeof(keys[0]));
		CHECK_EQ(strcmp(json_object_iter_peek_name(&it), keys[n]), 0);
	}
	CHECK_EQ(n, sizeof(keys) / sizeof(keys[0]));
	CHECK(json_object_object_get_ex(o, "messages_sent", &v));
	CHECK_EQ(json_object_object_length(v), RDMIG_MSG_TYPE_COUNT - 1);
	CHECK_STR_CONTAINS(cj_text(o), "\"device\": \"\", \"inline_asked\": 0, ");
	json_object_put(o);
}

/* The members send and send --qemu-replay share: the exact text both
 * summaries had before they shared the code (the shell tests grep it). */
TEST(source_members)
{
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct json_object *o = cj_object();

	st.register_requests = 7;
	st.register_ahead = 3;
	st.register_rtt_p50_us = 12.5;
	st.register_rtt_p99_us = 40;
	st.register_wait_seconds = 0.25;
	st.register_seconds = 1.5;
	st.register_threads = 2;
	mig_json_destination(o, "10.99.0.1", "4444", NULL); /* no connection: no pin-all */
	mig_json_register(o, &st);
	CHECK_EQ(strcmp(cj_text(o), "{ \"to\": \"10.99.0.1\", \"port\": 4444, \"pin_all\": false, "
				    "\"register_requests\": 7, \"register_ahead\": 3, "
				    "\"register_rtt_p50_us\": 12.5, \"register_rtt_p99_us\": 40.0, "
				    "\"register_wait_seconds\": 0.250000, \"register_seconds\": 1.500000, "
				    "\"register_threads\": 2 }"),
		 0);
	json_object_put(o);
}

TEST(print_writes_one_line_to_stdout)
{
	char buf[4096];
	FILE *f = tmpfile();
	struct json_object *o = cj_object(), *p;
	int saved = dup(1);
	size_t n;

	CHECK(f && saved >= 0);
	cj_str(o, "out", "/tmp/a \"b\"\n");
	fflush(stdout);
	dup2(fileno(f), 1);
	CHECK_OK(cj_print(o)); /* frees o */
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	CHECK(n > 1 && buf[n - 1] == '\n' && !memchr(buf, '\n', n - 1));
	p = json_tokener_parse(buf);
	CHECK(p && json_object_is_type(p, json_type_object));
	json_object_put(p);
}

/* What the object printed on stdout says (parsed), in *out: 0 or -1. */
static int print_summary(struct json_object *o, struct json_object **out)
{
	char buf[8192];
	FILE *f = tmpfile();
	int saved = dup(1);
	size_t n;

	if (!f || saved < 0)
		return -1;
	fflush(stdout);
	dup2(fileno(f), 1);
	cj_summary_print(o);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	*out = json_tokener_parse(buf);
	return *out ? 0 : -1;
}

static const char *member(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* argv as a command gets it (writable strings) */
static char a_send[] = "send", a_to[] = "--to", a_addr[] = "x:1", a_json[] = "--json",
	    a_file[] = "f", a_help[] = "--help", a_h[] = "-h", a_dashes[] = "--",
	    a_replay[] = "--qemu-replay";
static char *args[] = {a_send, a_to, a_addr, a_json, a_file, NULL};

/* Every object starts the same way (rdmig-json(7)); a success says ok. */
TEST(summary_head_and_success)
{
	struct json_object *o, *p;

	cli_run_begin("send", "files", "send", 5, args);
	CHECK(cli_run.json); /* --json seen before any parsing */
	o = cj_summary();
	CHECK_STR_CONTAINS(cj_text(o), "{ \"schema\": 1, \"command\": \"send\", \"mode\": "
				       "\"files\", \"rdmig_version\": \"" RDMIG_VERSION_STRING "\"");
	CHECK_OK(print_summary(o, &p));
	CHECK(cli_run.printed);
	CHECK_EQ(strcmp(member(p, "ok"), "true"), 0);
	CHECK(!member(p, "error") && !member(p, "phase"));
	json_object_put(p);
	/* a command without modes has no mode member */
	cli_run_begin("probe", NULL, "probe", 1, args);
	o = cj_summary();
	CHECK(!strstr(cj_text(o), "\"mode\""));
	json_object_put(o);
}

/* A failure names its phase and its first error; a later one does not
 * replace it, and the run's end prints nothing more once an object went out. */
TEST(failure_has_phase_and_first_error)
{
	struct json_object *o, *p, *e;

	cli_run_begin("send", "files", "send", 1, args);
	CHECK(!cli_run.json);
	cli_phase("connect");
	CHECK_EQ(cli_fail_lib("send", RDMIG_ETIMEDOUT, "no answer"), 1);
	cli_phase("migrate");
	cli_fail("send", "a second failure");
	CHECK_OK(print_summary(cj_summary(), &p));
	CHECK_EQ(strcmp(member(p, "ok"), "false"), 0);
	CHECK_EQ(strcmp(member(p, "phase"), "connect"), 0);
	CHECK(json_object_object_get_ex(p, "error", &e));
	CHECK_EQ(strcmp(member(e, "code"), "RDMIG_ETIMEDOUT"), 0);
	CHECK_EQ(strcmp(member(e, "message"), "no answer"), 0);
	CHECK_EQ(json_object_object_length(e), 2);
	json_object_put(p);
	(void)o;
}

/* A usage error: exit status 2, code "usage", phase "options". */
TEST(usage_error_outcome)
{
	struct json_object *p, *e;

	cli_run_begin("recv", "qemu", "recv --qemu", 1, args);
	cli_phase("setup");
	CHECK_EQ(cli_usage("--count '%s': bad", "5x"), 2);
	CHECK_OK(print_summary(cj_summary(), &p));
	CHECK_EQ(strcmp(member(p, "phase"), "options"), 0);
	CHECK(json_object_object_get_ex(p, "error", &e));
	CHECK_EQ(strcmp(member(e, "code"), "usage"), 0);
	CHECK_EQ(strcmp(member(e, "message"), "--count '5x': bad"), 0);
	CHECK_EQ(strcmp(member(p, "mode"), "qemu"), 0);
	json_object_put(p);
}

/* --help anywhere before "--", even where it would be an option's value. */
TEST(help_anywhere)
{
	char *a[] = {a_send, a_replay, a_help, NULL};
	char *b[] = {a_send, a_to, a_addr, a_dashes, a_help, NULL};
	char *c[] = {a_send, a_file, a_h, NULL};

	CHECK(cli_wants_help(3, a));
	CHECK(!cli_wants_help(5, b));
	CHECK(cli_wants_help(3, c));
}

/* A budget: the phases in their order, then "other" (what they leave of
 * the total), "total" (from main() on, idle left out) and "idle". */
TEST(budget_phases_add_up_to_the_total)
{
	static const char *const keys[] = {"start", "connect", "other", "total", "idle"};
	static const double want[] = {0.5, 0.25, 7.25, 8.0, 2.0};
	struct cli_budget b = {.idle = 2.0};
	struct json_object *o, *v;
	int i = 0;

	cli_t_main = 100.0;
	cli_budget_add(&b, "start", 0.5);
	cli_budget_add(&b, "connect", 0.25);
	cli_budget_close(&b, 110.0);
	CHECK(fabs(b.total - 8.0) < 1e-9);
	o = cj_budget(&b, true);
	CHECK_EQ(json_object_object_length(o), 5);
	json_object_object_foreach(o, key, val) {
		CHECK_EQ(strcmp(key, keys[i]), 0);
		CHECK(fabs(json_object_get_double(val) - want[i]) < 1e-6);
		i++;
	}
	json_object_put(o);
	o = cj_budget(&b, false); /* a sender's: no idle */
	CHECK(!json_object_object_get_ex(o, "idle", &v));
	json_object_put(o);
}

/* More phases than it holds: the last ones are dropped, never "other". */
TEST(budget_keeps_room_for_other)
{
	struct cli_budget b = {0};
	double sum = 0;

	cli_t_main = 0;
	for (int i = 0; i < CLI_BUDGET_MAX + 3; i++)
		cli_budget_add(&b, "phase", 1.0);
	cli_budget_close(&b, 100.0);
	CHECK_EQ(b.n, CLI_BUDGET_MAX);
	CHECK_EQ(strcmp(b.name[b.n - 1], "other"), 0);
	for (unsigned i = 0; i < b.n; i++)
		sum += b.seconds[i];
	CHECK(fabs(sum - 100.0) < 1e-9);
}

CHECK_MAIN()
