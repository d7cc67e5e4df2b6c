/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_memlock.c - is the locked-memory limit high enough for a migration?
 *
 * Registered memory is pinned, and the kernel counts it against
 * RLIMIT_MEMLOCK (ulimit -l; LimitMEMLOCK= for a systemd service) per
 * process.  What one side of a migration registers:
 *
 *   every connection   its control buffers (RDMIG_CONTROL_REGISTERED, 1.5 MiB)
 *   --pin-all          every block, whole, at RAM_BLOCKS time
 *   dynamic            each chunk that carries data, when it is first
 *                      written; neither side unregisters, so at least one
 *                      chunk and at most every block by the end
 *
 * The kernel enforces the limit in ib_umem_get() (rxe, mlx5, ...) unless
 * the process has CAP_IPC_LOCK, and in SoftiWARP's own siw_umem_get()
 * always, capability or not.  A migration whose least need is above the
 * limit is refused before it starts, with both numbers; a dynamic one whose
 * most is above it only gets a warning: it works while the data that
 * actually arrives fits, and otherwise fails with the library's error,
 * which names ulimit -l.
 */
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "cli.h"

static uint64_t page_round(uint64_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	return (len + page - 1) / page * page;
}

void cli_memlock_need(bool pin_all, const struct rdmig_block *blocks, size_t n,
		      struct cli_memlock_need *need)
{
	cli_memlock_need_chunk(pin_all, RDMIG_CHUNK_SIZE, blocks, n, need);
}

void cli_memlock_need_chunk(bool pin_all, uint64_t chunk_size, const struct rdmig_block *blocks,
			    size_t n, struct cli_memlock_need *need)
{
	uint64_t all = 0, largest = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t len = page_round(blocks[i].length);
		uint64_t one = len < chunk_size ? len : chunk_size;
		all += len;
		if (one > largest)
			largest = one;
	}
	need->most = RDMIG_CONTROL_REGISTERED + all;
	need->least = pin_all ? need->most : RDMIG_CONTROL_REGISTERED + largest;
}

bool cli_capeff_has(const char *status, int cap)
{
	const char *line = strstr(status, "\nCapEff:");
	unsigned long long eff;

	if (!line || sscanf(line + 8, "%llx", &eff) != 1)
		return false;
	return cap >= 0 && cap < 64 && (eff >> cap) & 1;
}

/* Does the kernel let this process pin beyond the limit on this device? */
static bool exempt_from_limit(const char *device)
{
	char status[4096];
	FILE *f = fopen("/proc/self/status", "r");
	size_t len;

	if (!f)
		return false;
	status[0] = '\n'; /* so that the first line is found like the others */
	len = fread(status + 1, 1, sizeof(status) - 2, f);
	fclose(f);
	status[len + 1] = '\0';
	/* siw counts every registration against the limit, even for root;
	 * its devices are named after it by convention (rdma link add siw0) */
	if (device && !strncmp(device, "siw", 3))
		return false;
	return cli_capeff_has(status, CAP_IPC_LOCK);
}

/* The limit this process pins under on device, or UINT64_MAX for none. */
static uint64_t memlock_limit(const char *device)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    exempt_from_limit(device))
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

bool cli_memlock_covers_most(const char *device, const struct cli_memlock_need *need)
{
	return need->most <= memlock_limit(device);
}

int cli_memlock_check(const char *cmd, const char *device, const struct cli_memlock_need *need,
		      char *err, size_t errlen)
{
	uint64_t limit = memlock_limit(device);

	if (limit == UINT64_MAX)
		return 0;
	if (need->least > limit) {
		snprintf(err, errlen, "the locked-memory limit is %" PRIu64 " KiB; this migration "
			 "needs %" PRIu64 " KiB (%s): raise it with ulimit -l (LimitMEMLOCK= for a "
			 "service)", limit / 1024, need->least / 1024,
			 need->least == need->most ? "its blocks and control buffers"
						   : "control buffers and one chunk");
		return -1;
	}
	if (need->most > limit)
		fprintf(stderr, "%s: warning: the locked-memory limit is %" PRIu64 " KiB; this "
			"migration may need up to %" PRIu64 " KiB (every chunk that carries data "
			"stays registered) and fails if its data outgrows the limit\n", cmd,
			limit / 1024, need->most / 1024);
	return 0;
}
