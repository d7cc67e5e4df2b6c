/* SPDX-License-Identifier: BSD-2-Clause */
/* source_admission.c - what the sources of a receiver may hold together,
 * and admitting one (source_admission.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "size_text.h"
#include "source_admission.h"

struct source_admission {
	struct rdmig_admission *books; /* the library's: slots and reservations */
	struct source_limits lim;      /* in force, defaults filled in */
	const struct out_dir *out;     /* where the sources write: its room */
	pthread_mutex_t lock;          /* one admission at a time */
};

static uint64_t physical_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 1ull << 30;
}

uint64_t machine_available_memory(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kib;
	char line[256];

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
			fclose(f);
			return (uint64_t)kib << 10;
		}
	}
	if (f)
		fclose(f);
	return physical_memory();
}

/* RLIMIT_MEMLOCK, which the kernel counts for the whole process: what all
 * the sources together may pin (UINT64_MAX: unlimited, or unknown). */
static uint64_t memlock_limit(void)
{
	struct rlimit rl;

	return !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY
		       ? (uint64_t)rl.rlim_cur : UINT64_MAX;
}

/* The limits not given, from the machine and --out as they are now: the
 * sources hold their blocks in memory while they run and write them to
 * --out after, so the bytes are bounded by both. */
static void default_limits(struct source_limits *lim, const struct out_dir *out)
{
	if (!lim->bytes) {
		uint64_t mem = machine_available_memory(), disk = out_dir_free(out);

		lim->bytes = mem < disk ? mem : disk;
	}
	if (!lim->files)
		lim->files = out_dir_free_files(out);
	if (!lim->pinned)
		lim->pinned = memlock_limit();
}

int source_admission_create(const struct source_limits *given, const struct out_dir *out,
			    struct source_admission **adm)
{
	struct source_admission *a = calloc(1, sizeof(*a));
	struct rdmig_admission_limits books = {.size = sizeof(books)};
	int ret;

	*adm = NULL;
	if (!a)
		return RDMIG_ENOMEM;
	a->lim = *given;
	a->out = out;
	default_limits(&a->lim, out);
	books.slots = a->lim.slots;
	books.bytes = a->lim.bytes;
	books.pinned = a->lim.pinned;
	books.files = a->lim.files;
	if ((ret = rdmig_admission_create(&books, &a->books))) {
		free(a);
		return ret;
	}
	pthread_mutex_init(&a->lock, NULL);
	*adm = a;
	return 0;
}

void source_admission_destroy(struct source_admission *adm)
{
	if (!adm)
		return;
	rdmig_admission_destroy(adm->books);
	pthread_mutex_destroy(&adm->lock);
	free(adm);
}

void source_admission_listen(struct source_admission *adm, struct rdmig_listener *l,
			     rdmig_busy_fn on_busy, void *ctx)
{
	rdmig_listener_set_admission(l, adm->books, on_busy, ctx);
}

void source_admission_limits(const struct source_admission *adm, struct source_limits *lim)
{
	if (adm)
		*lim = adm->lim;
	else
		memset(lim, 0, sizeof(*lim));
}

void source_admission_usage(const struct source_admission *adm, struct rdmig_admission_usage *u)
{
	if (adm)
		rdmig_admission_usage(adm->books, u);
}

/* ------------------------------------------------------------ admit -- */

static uint64_t left(uint64_t limit, uint64_t used)
{
	return limit == UINT64_MAX ? UINT64_MAX : limit > used ? limit - used : 0;
}

/* What --out can still take (adm->lock held): the free space and inodes
 * less what the running sources reserved, which they may still write
 * (what they wrote so far then counts twice: a safe bound).  0, or -1
 * with which says no in err. */
static int out_has_room(struct source_admission *adm, uint64_t total, uint64_t files, char *err,
			size_t errlen)
{
	struct rdmig_admission_usage u = {.size = sizeof(u)};
	uint64_t disk_left, inodes_left;
	char a[32], b[32];

	rdmig_admission_usage(adm->books, &u);
	disk_left = left(out_dir_free(adm->out), u.bytes);
	inodes_left = left(out_dir_free_files(adm->out), u.files);
	if (total > disk_left)
		snprintf(err, errlen, "the source's blocks (%s) exceed what the running sources "
			 "leave of the free space in %s (%s)", size_text(total, a, sizeof(a)),
			 adm->out->path, size_text(disk_left, b, sizeof(b)));
	else if (files > inodes_left)
		snprintf(err, errlen, "the source's files (%llu) exceed what the running sources "
			 "leave of the free inodes in %s (%llu)", (unsigned long long)files,
			 adm->out->path, (unsigned long long)inodes_left);
	else
		return 0;
	return -1;
}

/* The library's refusal (rdmig_conn_reserve's why: "memory: ...",
 * "pinned memory: ...", "files: ...") in the words of the options. */
static void say_refusal(struct source_admission *adm, const struct rdmig_admission_ask *ask,
			const char *why, char *err, size_t errlen)
{
	struct rdmig_admission_usage u = {.size = sizeof(u)};
	char a[32], b[32];

	rdmig_admission_usage(adm->books, &u);
	if (!strncmp(why, "memory:", 7))
		snprintf(err, errlen, "the source's blocks and hashing copies (%s) exceed what the "
			 "running sources leave of --serve-max-total (%s)",
			 size_text(ask->bytes, a, sizeof(a)),
			 size_text(left(adm->lim.bytes, u.bytes), b, sizeof(b)));
	else if (!strncmp(why, "pinned memory:", 14))
		snprintf(err, errlen, "the memory the source may pin (%s) exceeds what the running "
			 "sources leave of --serve-max-pinned (%s)",
			 size_text(ask->pinned, a, sizeof(a)),
			 size_text(left(adm->lim.pinned, u.pinned), b, sizeof(b)));
	else if (!strncmp(why, "files:", 6))
		snprintf(err, errlen, "the source's files (%llu) exceed what the running sources "
			 "leave of --serve-max-files (%llu)", (unsigned long long)ask->files,
			 (unsigned long long)left(adm->lim.files, u.files));
	else
		snprintf(err, errlen, "the source cannot be admitted: %s", why);
}

int source_admission_admit(struct source_admission *adm, struct rdmig_conn *conn, uint64_t total,
			   uint64_t copies, uint64_t files, const struct rdmig_pin_need *pins,
			   char *err, size_t errlen)
{
	struct rdmig_admission_ask ask = {
		.size = sizeof(ask), .bytes = total + copies, .pinned = pins->most, .files = files + 1,
	};
	char why[256];
	int ret;

	/* one admission at a time: what --out has room for is read and
	 * reserved together */
	pthread_mutex_lock(&adm->lock);
	ret = out_has_room(adm, total, ask.files, err, errlen);
	if (!ret && rdmig_conn_reserve(conn, &ask, why, sizeof(why))) {
		say_refusal(adm, &ask, why, err, errlen);
		ret = -1;
	}
	pthread_mutex_unlock(&adm->lock);
	return ret;
}
