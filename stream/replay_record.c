/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * replay_record.c - parse `rdmig recv --qemu`'s record.txt and plan which
 * registration pass sends each chunk (see rdmig/qemu.h).
 *
 * The record is read line by line; every line kind has a fixed first word.
 * Values are "key=value" tokens separated by single spaces, except name=,
 * which is last and runs to the end of the line.  The parser is strict:
 * the record drives network traffic into a real QEMU, so anything it does
 * not understand is an error rather than a guess.
 */
#include <rdmig/qemu.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SHIFT 20
#define NO_PHASE UINT32_MAX

struct parser {
	struct rdmig_replay_record *r;
	unsigned line;
	uint32_t blocks_announced;
	bool have_header, have_blocks, have_stream, ended;
	rdmig_rr_image_fn image; /* the caller's view of the directory, or NULL */
	void *image_ctx;
	/* per block, while parsing: the chunks not yet given a pass, as a
	 * disjoint-set forest (unmarked[c] == c: chunk c has no pass yet, else
	 * it points further along; [nchunks] is the end), so that a chunk is
	 * given its pass once, however many `touched` lines cover it */
	uint32_t **unmarked;
	uint32_t last_touched; /* the phase of the latest `touched` line */
	char *err;
	size_t errlen;
};

static int perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int perr(struct parser *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "line %u: ", p->line);
	va_list ap;

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->errlen)
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---------------------------------------------------------- tokens -- */

/* Where the value of " key=" starts in line, and its length; NULL when
 * absent.  For values too long to copy (chunk range lists). */
static const char *field_span(const char *line, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	const char *s = line;

	while ((s = strchr(s, ' '))) {
		s++;
		if (!strncmp(s, key, klen) && s[klen] == '=') {
			*len = strcspn(s + klen + 1, " ");
			return s + klen + 1;
		}
	}
	return NULL;
}

/* The value of " key=" copied into out; NULL when absent or too long. */
static const char *field(const char *line, const char *key, char *out, size_t outlen)
{
	size_t n;
	const char *v = field_span(line, key, &n);

	if (!v || n >= outlen)
		return NULL;
	memcpy(out, v, n);
	out[n] = '\0';
	return out;
}

/* A decimal (or 0x hex) number with nothing after it. */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	int base = 10;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16;
	errno = 0;
	*out = strtoull(s, &end, base);
	return errno || *end ? -1 : 0;
}

static int num_field(struct parser *p, const char *line, const char *key, uint64_t max,
		     uint64_t *out)
{
	char buf[32];

	if (!field(line, key, buf, sizeof(buf)))
		return perr(p, "no %s= field", key);
	if (parse_u64(buf, out) || *out > max)
		return perr(p, "%s=%s is not a number up to %" PRIu64, key, buf, max);
	return 0;
}

/* The second word of a line ("phase 3 ...", "block 2 ..."): an index. */
static int index_word(struct parser *p, const char *line, uint32_t limit, uint32_t *out)
{
	char buf[16];
	uint64_t v;
	const char *s = strchr(line, ' ');
	size_t n = s ? strcspn(s + 1, " ") : 0;

	if (!s || !n || n >= sizeof(buf))
		return perr(p, "no index after '%.*s'", (int)strcspn(line, " "), line);
	memcpy(buf, s + 1, n);
	buf[n] = '\0';
	if (parse_u64(buf, &v) || v >= limit)
		return perr(p, "index %s is out of range (%u)", buf, limit);
	*out = (uint32_t)v;
	return 0;
}

/* ------------------------------------------------------------ lines -- */

static int on_header(struct parser *p, const char *line)
{
	if (strcmp(line, "rdmig-qemu-record 1"))
		return perr(p, "not an rdmig QEMU record (version 1): '%.40s'", line);
	p->have_header = true;
	return 0;
}

static int on_machine(struct parser *p, const char *line)
{
	const char *m = line + strlen("machine ");

	if (strlen(m) >= sizeof(p->r->machine) || strchr(m, ' '))
		return perr(p, "machine '%.40s' is not one word of at most %zu bytes", m,
			    sizeof(p->r->machine) - 1);
	strcpy(p->r->machine, m);
	return 0;
}

static int on_pin_all(struct parser *p, const char *line)
{
	if (!strcmp(line, "pin_all 0") || !strcmp(line, "pin_all 1")) {
		p->r->pin_all = line[8] == '1';
		return 0;
	}
	return perr(p, "pin_all must be 0 or 1");
}

static int on_blocks(struct parser *p, const char *line)
{
	uint32_t n;

	if (p->have_blocks)
		return perr(p, "a second 'blocks' line");
	if (index_word(p, line, RDMIG_RR_MAX_BLOCKS + 1, &n))
		return -1;
	if (!n)
		return perr(p, "a record without RAM blocks");
	p->r->blocks = calloc(n, sizeof(*p->r->blocks));
	p->unmarked = calloc(n, sizeof(*p->unmarked));
	if (!p->r->blocks || !p->unmarked)
		return perr(p, "out of memory");
	p->blocks_announced = n;
	p->have_blocks = true;
	return 0;
}

/* An image name in the record's directory: one path component. */
static bool safe_file(const char *f)
{
	return *f && !strchr(f, '/') && strcmp(f, ".") && strcmp(f, "..");
}

static int on_block(struct parser *p, const char *line)
{
	char file[256];
	uint64_t len, chunks;
	uint32_t i;
	const char *name = strstr(line, " name=");
	struct rdmig_rr_block b = {0};

	if (!p->have_blocks)
		return perr(p, "'block' before 'blocks'");
	if (index_word(p, line, p->blocks_announced, &i))
		return -1;
	if (i != p->r->nblocks)
		return perr(p, "block %u where block %u was due", i, p->r->nblocks);
	if (num_field(p, line, "length", RDMIG_RR_MAX_BLOCK_BYTES, &len) ||
	    num_field(p, line, "chunks", UINT32_MAX, &chunks))
		return -1;
	if (chunks != (len + (1ull << CHUNK_SHIFT) - 1) >> CHUNK_SHIFT)
		return perr(p, "block %u: chunks=%" PRIu64 " for length=%" PRIu64, i, chunks, len);
	if (!field(line, "file", file, sizeof(file)) || !safe_file(file))
		return perr(p, "block %u: no file= naming an image in the record's directory", i);
	if (!name || !name[6])
		return perr(p, "block %u: no name=", i);
	/* each image once: block lines naming one file would read it, and
	 * hold a copy of it, once each */
	for (uint32_t k = 0; k < p->r->nblocks; k++)
		if (!strcmp(p->r->blocks[k].file, file))
			return perr(p, "block %u: image '%s' is block %u's already (a record "
				    "names each image once)", i, file, k);
	/* what a record may claim, checked before anything is allocated for
	 * it: in all, and block by block against its image's real size (the
	 * message gives the record's figure, never the file's) */
	if (len > RDMIG_RR_MAX_RAM_BYTES - p->r->ram_bytes)
		return perr(p, "block %u: the blocks claim more than %" PRIu64 " bytes in all", i,
			    (uint64_t)RDMIG_RR_MAX_RAM_BYTES);
	if (p->image) {
		char why[256] = "";
		uint64_t real = 0;

		if (p->image(p->image_ctx, file, &real, why, sizeof(why)))
			return perr(p, "block %u: image '%s': %s", i, file, why);
		if (real != len)
			return perr(p, "block %u: image '%s' does not have the record's length=%" PRIu64
				    " bytes", i, file, len);
	}
	b.length = len;
	b.nchunks = (uint32_t)chunks;
	b.name = strdup(name + 6);
	b.file = strdup(file);
	b.send_phase = malloc((chunks ? chunks : 1) * sizeof(*b.send_phase));
	if (!b.name || !b.file || !b.send_phase) {
		free(b.name);
		free(b.file);
		free(b.send_phase);
		return perr(p, "out of memory");
	}
	for (uint32_t c = 0; c < b.nchunks; c++)
		b.send_phase[c] = NO_PHASE;
	p->r->blocks[i] = b;
	p->r->nblocks++;
	p->r->ram_bytes += len;
	return 0;
}

static int on_phase(struct parser *p, const char *line)
{
	struct rdmig_replay_record *r = p->r;
	struct rdmig_rr_phase *ph;
	uint32_t k;
	uint64_t off;
	bool ram_blocks = strstr(line, " ram_blocks_request ") != NULL;

	if (index_word(p, line, RDMIG_RR_MAX_PHASES, &k))
		return -1;
	if (k != r->nphases)
		return perr(p, "phase %u where phase %u was due", k, r->nphases);
	if (!ram_blocks && !strstr(line, " registration "))
		return perr(p, "phase %u is neither ram_blocks_request nor registration", k);
	if (num_field(p, line, "offset", UINT64_MAX, &off))
		return -1;
	if (k == 0 && !ram_blocks)
		return perr(p, "the first phase must be ram_blocks_request");
	if (k > 0 && ram_blocks)
		return perr(p, "a second ram_blocks_request (phase %u)", k);
	if (k > 0 && off < r->phases[k - 1].offset)
		return perr(p, "phase %u at stream offset %" PRIu64 ", before phase %u's %" PRIu64, k,
			    off, k - 1, r->phases[k - 1].offset);
	if (!(k & (k - 1))) { /* grow at powers of two */
		ph = realloc(r->phases, (k ? 2 * (size_t)k : 1) * sizeof(*ph));
		if (!ph)
			return perr(p, "out of memory");
		r->phases = ph;
	}
	r->phases[k] = (struct rdmig_rr_phase){ram_blocks, off};
	r->nphases++;
	return 0;
}

/* The first chunk at or after c without a pass (b->nchunks: none); the
 * path walked is pointed at it, so later searches skip it in one step. */
static uint32_t next_unmarked(uint32_t *u, uint32_t c)
{
	uint32_t root = c;

	while (u[root] != root)
		root = u[root];
	while (u[c] != root) {
		uint32_t up = u[c];
		u[c] = root;
		c = up;
	}
	return root;
}

/* "-" or "N,N-M,..." chunk ranges of block bi (n bytes at s): mark them
 * sent in phase k unless an earlier phase already sends them.  Lines come
 * in phase order, so a chunk that has a pass keeps it: each range costs
 * its chunks without a pass, and a step per chunk it skips is paid once. */
static int mark_ranges(struct parser *p, uint32_t bi, const char *s, size_t n, uint32_t k)
{
	struct rdmig_rr_block *b = &p->r->blocks[bi];
	const char *stop = s + n;
	uint32_t *u = p->unmarked[bi];

	if (n == 1 && *s == '-')
		return 0;
	while (s < stop) {
		uint64_t lo = 0, hi;

		if (*s < '0' || *s > '9')
			return perr(p, "bad chunk range at '%.20s'", s);
		while (s < stop && *s >= '0' && *s <= '9' && lo <= UINT32_MAX)
			lo = lo * 10 + (uint64_t)(*s++ - '0');
		hi = lo;
		if (s < stop && *s == '-') {
			if (++s == stop || *s < '0' || *s > '9')
				return perr(p, "bad chunk range before '%.20s'", s);
			for (hi = 0; s < stop && *s >= '0' && *s <= '9' && hi <= UINT32_MAX;)
				hi = hi * 10 + (uint64_t)(*s++ - '0');
		}
		if (lo > hi || hi >= b->nchunks)
			return perr(p, "chunk range %" PRIu64 "-%" PRIu64 " is outside the block's %u "
				    "chunks", lo, hi, b->nchunks);
		for (uint32_t c = next_unmarked(u, (uint32_t)lo); c <= hi;
		     c = next_unmarked(u, c + 1)) {
			b->send_phase[c] = k;
			u[c] = c + 1;
		}
		if (s < stop && *s++ != ',')
			return perr(p, "bad chunk range separator before '%.20s'", s - 1);
	}
	return 0;
}

static int on_touched(struct parser *p, const char *line)
{
	const char *data, *zero;
	size_t dn = 0, zn = 0; /* set by field_span; gcc 12 -O2 cannot see it */
	uint32_t k;
	uint64_t bi;

	if (index_word(p, line, p->r->nphases, &k))
		return -1;
	if (p->r->phases[k].ram_blocks)
		return perr(p, "chunks touched in phase %u, a ram_blocks_request", k);
	if (!p->r->nblocks)
		return perr(p, "'touched' before any block");
	if (k < p->last_touched)
		return perr(p, "chunks touched in phase %u after phase %u: out of order", k,
			    p->last_touched);
	p->last_touched = k;
	if (num_field(p, line, "block", p->r->nblocks - 1, &bi))
		return -1;
	data = field_span(line, "data", &dn);
	zero = field_span(line, "zero", &zn);
	if (!data || !zero || !dn || !zn)
		return perr(p, "touched needs data= and zero=");
	if (!p->unmarked[bi]) { /* a block's first `touched` line */
		uint32_t nc = p->r->blocks[bi].nchunks;
		uint32_t *u = malloc(((size_t)nc + 1) * sizeof(*u));
		if (!u)
			return perr(p, "out of memory");
		for (uint32_t c = 0; c <= nc; c++)
			u[c] = c;
		p->unmarked[bi] = u;
	}
	if (mark_ranges(p, (uint32_t)bi, data, dn, k) || mark_ranges(p, (uint32_t)bi, zero, zn, k))
		return -1;
	return 0;
}

static int on_stream(struct parser *p, const char *line)
{
	if (num_field(p, line, "bytes", UINT64_MAX, &p->r->stream_bytes))
		return -1;
	p->have_stream = true;
	return 0;
}

static int on_end(struct parser *p, const char *line)
{
	if (!strncmp(line, "end failed", 10))
		return perr(p, "the recorded migration failed (%.200s): nothing to replay",
			    line + 10 + (line[10] == ' '));
	if (strncmp(line, "end ok", 6))
		return perr(p, "'end' must be 'end ok' or 'end failed'");
	p->ended = true;
	return 0;
}

static int on_line(struct parser *p, const char *line)
{
	static const struct {
		const char *word;
		int (*fn)(struct parser *, const char *);
	} kinds[] = {
		{"machine", on_machine}, {"pin_all", on_pin_all}, {"blocks", on_blocks},
		{"block", on_block},     {"phase", on_phase},     {"touched", on_touched},
		{"stream", on_stream},   {"end", on_end},
	};
	size_t w = strcspn(line, " ");

	if (!p->have_header)
		return on_header(p, line);
	if (p->ended && !strncmp(line, "nonzero ", 8))
		return 0; /* the final RAM, for checks: a replay sends the images */
	if (p->ended)
		return perr(p, "'%.*s' after 'end'", (int)w, line);
	if (!strncmp(line, "nonzero ", 8))
		return perr(p, "'nonzero' before 'end ok'");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strlen(kinds[i].word) != w || strncmp(line, kinds[i].word, w))
			continue;
		/* every kind has values after its word, and the handlers start
		 * reading past "word ": a bare word would have them read past
		 * the line's end (found by fuzz_stream) */
		if (line[w] != ' ')
			return perr(p, "'%s' without a value", kinds[i].word);
		return kinds[i].fn(p, line);
	}
	return perr(p, "unknown line '%.*s'", (int)(w > 40 ? 40 : w), line);
}

/* ------------------------------------------------------- the whole -- */

static int check_complete(struct parser *p, struct rdmig_replay_record *r)
{
	uint32_t last = NO_PHASE;

	if (!p->have_header)
		return perr(p, "empty record");
	if (!p->ended)
		return perr(p, "no 'end ok' line: the record is incomplete");
	if (r->nblocks != p->blocks_announced)
		return perr(p, "%u block lines for %u blocks", r->nblocks, p->blocks_announced);
	if (!p->have_stream)
		return perr(p, "no 'stream' line");
	for (uint32_t k = 0; k < r->nphases; k++) {
		if (r->phases[k].offset > r->stream_bytes)
			return perr(p, "phase %u at stream offset %" PRIu64 ", past the stream's %"
				    PRIu64 " bytes", k, r->phases[k].offset, r->stream_bytes);
		if (!r->phases[k].ram_blocks)
			last = k;
	}
	if (last == NO_PHASE)
		return perr(p, "no registration phase: QEMU's setup always has one");
	for (uint32_t b = 0; b < r->nblocks; b++)
		for (uint32_t c = 0; c < r->blocks[b].nchunks; c++)
			if (r->blocks[b].send_phase[c] == NO_PHASE)
				r->blocks[b].send_phase[c] = last;
	return 0;
}

int rdmig_rr_parse_dir(const char *text, size_t len, rdmig_rr_image_fn image, void *ctx,
		       struct rdmig_replay_record *r, char *err, size_t errlen)
{
	struct parser p = {.r = r, .image = image, .image_ctx = ctx, .err = err, .errlen = errlen};
	char *buf, *line, *save = NULL;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	if (len > RDMIG_RR_MAX_RECORD_BYTES) {
		snprintf(err, errlen, "the record has %zu bytes, more than %u", len,
			 RDMIG_RR_MAX_RECORD_BYTES);
		return -1;
	}
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "the record contains a NUL byte: not a text record");
		return -1;
	}
	if (!(buf = malloc(len + 1))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	/* strtok_r skips empty lines, which the format never has anyway */
	for (line = strtok_r(buf, "\n", &save); line && !ret; line = strtok_r(NULL, "\n", &save)) {
		p.line++;
		ret = on_line(&p, line);
	}
	if (!ret)
		ret = check_complete(&p, r);
	free(buf);
	for (uint32_t i = 0; p.unmarked && i < p.blocks_announced; i++)
		free(p.unmarked[i]);
	free(p.unmarked);
	if (ret)
		rdmig_rr_free(r);
	return ret;
}

int rdmig_rr_parse(const char *text, size_t len, struct rdmig_replay_record *r, char *err,
		   size_t errlen)
{
	return rdmig_rr_parse_dir(text, len, NULL, NULL, r, err, errlen);
}

void rdmig_rr_free(struct rdmig_replay_record *r)
{
	for (uint32_t i = 0; r->blocks && i < r->nblocks; i++) {
		free(r->blocks[i].name);
		free(r->blocks[i].file);
		free(r->blocks[i].send_phase);
	}
	free(r->blocks);
	free(r->phases);
	memset(r, 0, sizeof(*r));
}
