/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_json.c - rdmig-bench's JSON, built with json-c (bench.h): json-c
 * escapes the strings (a device name is whatever the kernel calls it), and
 * numbers keep the fixed decimals report.py and the plots were written for.
 */
#include <math.h>
#include <stdio.h>
#include "bench.h"

struct json_object *bj_fixed(double v, int decimals)
{
	char text[64];

	if (!isfinite(v))
		return NULL; /* null: JSON has no inf or nan */
	snprintf(text, sizeof(text), "%.*f", decimals, v);
	return json_object_new_double_s(v, text);
}

void bj_add_fixed(struct json_object *o, const char *key, double v, int decimals)
{
	json_object_object_add(o, key, bj_fixed(v, decimals));
}

void bj_add_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}

void bj_add_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void bb_add(struct bench_budget *b, const char *name, double seconds)
{
	if (b->n >= sizeof(b->name) / sizeof(b->name[0]) - 1) /* the last is other's */
		return;
	b->name[b->n] = name;
	b->seconds[b->n++] = seconds;
}

struct json_object *bj_budget(const struct bench_budget *b, double end, double idle)
{
	struct json_object *o = json_object_new_object();
	double total = end - bench_t_main - (idle > 0 ? idle : 0), sum = 0;

	for (unsigned i = 0; i < b->n; i++) {
		bj_add_fixed(o, b->name[i], b->seconds[i], 6);
		sum += b->seconds[i];
	}
	bj_add_fixed(o, "other", total - sum, 6);
	bj_add_fixed(o, "total", total, 6);
	if (idle >= 0)
		bj_add_fixed(o, "idle", idle, 6);
	return o;
}

int bj_write(FILE *f, struct json_object *o)
{
	const char *text = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE)
			     : NULL;
	int ret = text && fprintf(f, "%s\n", text) > 0 ? 0 : -1;

	json_object_put(o);
	if (ret)
		fprintf(stderr, "rdmig-bench: cannot write the JSON (out of memory?)\n");
	return ret;
}
