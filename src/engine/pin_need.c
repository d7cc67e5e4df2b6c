/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pin_need.c - rdmig_pin_need: what a migration pins on this side and the
 * locked-memory limit it pins under (rdmig.h says what the engines
 * register, and when).
 */
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "log.h"
#include "rdmig.h"
#include "pin_need.h"

static uint64_t page_round(uint64_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) / page * page;
}

bool rdmig__capeff_has(const char *status, int cap)
{
	const char *line = status ? strstr(status, "\nCapEff:") : NULL;
	unsigned long long eff;

	if (!line || sscanf(line + 8, "%llx", &eff) != 1)
		return false;
	return cap >= 0 && cap < 64 && (eff >> cap) & 1;
}

/* Does the kernel let this process pin beyond the limit on device?  It
 * enforces the limit in ib_umem_get() (rxe, mlx5, ...) unless the process
 * has CAP_IPC_LOCK, and in SoftiWARP's siw_umem_get() always. */
static bool exempt_from_limit(const char *device)
{
	char status[4096];
	FILE *f;
	size_t len;

	/* siw's devices are named after it by convention (rdma link add siw0) */
	if (device && !strncmp(device, "siw", 3))
		return false;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	status[0] = '\n'; /* so that the first line is found like the others */
	len = fread(status + 1, 1, sizeof(status) - 2, f);
	fclose(f);
	status[len + 1] = '\0';
	return rdmig__capeff_has(status, CAP_IPC_LOCK);
}

static uint64_t memlock_limit(const char *device)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    exempt_from_limit(device))
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

int rdmig_pin_need(const char *device, int pin_all, uint64_t chunk_size,
		   const struct rdmig_block *blocks, size_t n, struct rdmig_pin_need *out)
{
	struct rdmig_pin_need need = {.size = sizeof(need)};
	uint64_t all = 0, largest = 0;
	size_t size;

	if (!out)
		return RDMIG_EINVAL;
	memcpy(&size, out, sizeof(size));
	if (size < sizeof(size) || (n && !blocks))
		return RDMIG_EINVAL;
	if (!chunk_size)
		chunk_size = RDMIG_CHUNK_SIZE;
	if (!RDMIG_CHUNK_SIZE_VALID(chunk_size))
		return RDMIG_EINVAL;
	for (size_t i = 0; i < n; i++) {
		uint64_t len = page_round(blocks[i].length);
		uint64_t one = len < chunk_size ? len : chunk_size;

		all += len;
		if (one > largest)
			largest = one;
	}
	need.most = RDMIG_CONTROL_REGISTERED + all;
	need.least = pin_all ? need.most : RDMIG_CONTROL_REGISTERED + largest;
	need.limit = memlock_limit(device);
	rdmig__put_sized(out, &need, sizeof(need));
	return 0;
}
