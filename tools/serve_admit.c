/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * serve_admit.c - what `rdmig recv --serve` lets its sources hold: the
 * limits' defaults, the library's admission that keeps the books (slots,
 * memory, pinned memory, files), the room left in --out, which is the
 * tool's, and the refusal in the words of the options.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include "cli.h"
#include "recv_serve.h"

/* What the sources may hold together, in the library's admission: the
 * slots (--max-sources) and the totals; --out's room is the tool's. */
int serve_admission(struct serve *sv)
{
	struct rdmig_admission_limits lim = {
		.size = sizeof(lim), .slots = sv->max_sources, .bytes = sv->max_total,
		.pinned = sv->max_pinned, .files = sv->max_files,
	};

	return rdmig_admission_create(&lim, &sv->adm);
}

/* The defaults of the totals, once --out is open. */
void serve_limits(struct serve *sv)
{
	struct rlimit rl;

	if (!sv->max_total_given) {
		uint64_t mem = cli_available_memory(), disk = out_dir_free(&sv->a.dir);

		sv->max_total = mem < disk ? mem : disk;
	}
	if (!sv->max_files_given)
		sv->max_files = out_dir_free_files(&sv->a.dir);
	if (!sv->max_pinned_given)
		sv->max_pinned = !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY
				 ? (uint64_t)rl.rlim_cur : UINT64_MAX;
}

static uint64_t left(uint64_t limit, uint64_t used)
{
	return limit == UINT64_MAX ? UINT64_MAX : limit > used ? limit - used : 0;
}

/* What --out can still take (sv->lock held): the free space and inodes
 * less what the running sources reserved, which they may still write
 * (what they wrote so far then counts twice: a safe bound).  0, or -1
 * with which says no in err. */
static int out_has_room(struct serve *sv, uint64_t total, uint64_t files, char *err, size_t errlen)
{
	struct rdmig_admission_usage u = {.size = sizeof(u)};
	uint64_t disk_left, inodes_left;
	char a[32], b[32];

	rdmig_admission_usage(sv->adm, &u);
	disk_left = left(out_dir_free(&sv->a.dir), u.bytes);
	inodes_left = left(out_dir_free_files(&sv->a.dir), u.files);
	if (total > disk_left)
		snprintf(err, errlen, "the source's blocks (%s) exceed what the running sources "
			 "leave of the free space in %s (%s)", mig_size(total, a, sizeof(a)),
			 sv->a.out, mig_size(disk_left, b, sizeof(b)));
	else if (files > inodes_left)
		snprintf(err, errlen, "the source's files (%llu) exceed what the running sources "
			 "leave of the free inodes in %s (%llu)", (unsigned long long)files,
			 sv->a.out, (unsigned long long)inodes_left);
	else
		return 0;
	return -1;
}

/* The library's refusal (rdmig_conn_reserve's why: "memory: ...",
 * "pinned memory: ...", "files: ...") in the words of the options. */
static void say_refusal(struct serve *sv, const struct rdmig_admission_ask *ask, const char *why,
			char *err, size_t errlen)
{
	struct rdmig_admission_usage u = {.size = sizeof(u)};
	char a[32], b[32];

	rdmig_admission_usage(sv->adm, &u);
	if (!strncmp(why, "memory:", 7))
		snprintf(err, errlen, "the source's blocks and hashing copies (%s) exceed what the "
			 "running sources leave of --serve-max-total (%s)",
			 mig_size(ask->bytes, a, sizeof(a)),
			 mig_size(left(sv->max_total, u.bytes), b, sizeof(b)));
	else if (!strncmp(why, "pinned memory:", 14))
		snprintf(err, errlen, "the memory the source may pin (%s) exceeds what the running "
			 "sources leave of --serve-max-pinned (%s)",
			 mig_size(ask->pinned, a, sizeof(a)),
			 mig_size(left(sv->max_pinned, u.pinned), b, sizeof(b)));
	else if (!strncmp(why, "files:", 6))
		snprintf(err, errlen, "the source's files (%llu) exceed what the running sources "
			 "leave of --serve-max-files (%llu)", (unsigned long long)ask->files,
			 (unsigned long long)left(sv->max_files, u.files));
	else
		snprintf(err, errlen, "the source cannot be admitted: %s", why);
}

/* recv_serve_hooks.admit, on the source's thread: reserve what its header
 * asks on its connection (the library's admission: memory, pinned memory,
 * files; given back when the connection goes), after the room in --out
 * (the tool's: its files), or refuse it with which limit says so.  FILES
 * are its images and stream.bin; its directory, made before the header
 * came, is one more. */
int serve_admit(void *ctx, uint64_t total, uint64_t copies, uint64_t files,
		 const struct rdmig_pin_need *pins, char *err, size_t errlen)
{
	struct source *src = ctx;
	struct serve *sv = src->sv;
	struct rdmig_admission_ask ask = {
		.size = sizeof(ask), .bytes = total + copies, .pinned = pins->most, .files = files + 1,
	};
	char why[256];
	int ret;

	/* one admission at a time: what --out has room for is read and
	 * reserved together */
	pthread_mutex_lock(&sv->lock);
	ret = out_has_room(sv, total, ask.files, err, errlen);
	if (!ret && rdmig_conn_reserve(src->s.conn, &ask, why, sizeof(why))) {
		say_refusal(sv, &ask, why, err, errlen);
		ret = -1;
	}
	pthread_mutex_unlock(&sv->lock);
	return ret;
}
