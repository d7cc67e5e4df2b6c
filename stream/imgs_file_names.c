/* SPDX-License-Identifier: BSD-2-Clause */
/* imgs_file_names.c - safe, distinct file names for received blocks
 * (rdmig/imgstream.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdmig/imgstream.h>

static int is_safe(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '_' || ch == '-';
}

static void safe_stem(const char *name, char *out)
{
	size_t n = 0;

	for (; name[n] && n < RDMIG_IMGS_FILE_STEM; n++)
		out[n] = is_safe((unsigned char)name[n]) ? name[n] : '_';
	out[n] = '\0';
	if (!strcmp(out, "."))
		strcpy(out, "_");
	else if (!strcmp(out, ".."))
		strcpy(out, "__");
	else if (n == 0)
		strcpy(out, "_"); /* not a valid block name, but never an empty file name */
}

/*
 * A set of strings (and a number per string), open addressing, for
 * rdmig_imgs_file_names: comparing each candidate name with every name chosen so
 * far made 4096 names sharing a 200-byte stem cost cubic time (over a
 * minute).  The table holds pointers; the caller owns the strings.
 */
struct name_set {
	const char **keys;
	unsigned *vals;
	size_t mask;
};

static int name_set_init(struct name_set *s, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	s->keys = calloc(cap, sizeof(*s->keys));
	s->vals = calloc(cap, sizeof(*s->vals));
	s->mask = cap - 1;
	return s->keys && s->vals ? 0 : -1;
}

static void name_set_free(struct name_set *s)
{
	free(s->keys);
	free(s->vals);
}

/* The slot of key: where it is, or the empty slot where it would go. */
static size_t name_set_slot(const struct name_set *s, const char *key)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	size_t i;

	for (const char *p = key; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	for (i = h & s->mask; s->keys[i] && strcmp(s->keys[i], key); i = (i + 1) & s->mask)
		;
	return i;
}

int rdmig_imgs_file_names(const struct rdmig_imgs_block *blocks, uint32_t n, const char *suffix,
			  char (*out)[RDMIG_IMGS_FILE_NAME])
{
	/* the stems chosen so far (a candidate must not be any of them, so a
	 * renamed "a-2" cannot collide with a block named "a-2"), and per
	 * base the last suffix number tried: the numbers below it were all
	 * taken and stay taken, so the search goes on from there */
	char (*stems)[RDMIG_IMGS_FILE_STEM + 16] = calloc(n ? n : 1, sizeof(*stems));
	char (*bases)[RDMIG_IMGS_FILE_STEM + 1] = calloc(n ? n : 1, sizeof(*bases));
	struct name_set taken = {0}, next = {0};
	int ret = -1;

	if (!stems || !bases || name_set_init(&taken, n) || name_set_init(&next, n))
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		size_t b, t;
		unsigned k;

		safe_stem(blocks[i].name, bases[i]);
		b = name_set_slot(&next, bases[i]);
		if (!next.keys[b]) {
			next.keys[b] = bases[i];
			next.vals[b] = 1;
		}
		k = next.vals[b];
		if (k == 1)
			strcpy(stems[i], bases[i]);
		else
			snprintf(stems[i], sizeof(stems[i]), "%s-%u", bases[i], k);
		while (taken.keys[t = name_set_slot(&taken, stems[i])])
			snprintf(stems[i], sizeof(stems[i]), "%s-%u", bases[i], ++k);
		next.vals[b] = k;
		taken.keys[t] = stems[i];
		snprintf(out[i], RDMIG_IMGS_FILE_NAME, "%s%s", stems[i], suffix);
	}
	ret = 0;
out:
	name_set_free(&taken);
	name_set_free(&next);
	free(stems);
	free(bases);
	return ret;
}
