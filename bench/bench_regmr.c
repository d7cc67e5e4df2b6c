/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_regmr.c - rdmig-bench regmr: how long pin-all's registration of a
 * large region takes as one MR, as several MRs registered one after the
 * other by one thread, and as several MRs registered by as many threads
 *.  Verbs only, no connection: the device's PD is enough.
 *
 *   rdmig-bench regmr [--dev NAME] [--mb N] [--pieces 1,2,4] [--rounds R]
 *
 * For each piece count P and each of "fresh" memory (a new anonymous
 * mapping, as a destination's zero-filled RAM: registering it faults every
 * page in) and "touched" memory (every page written first, as a source's
 * RAM), one JSON line per mode: mode "one" (P = 1), "serial" (P MRs, one
 * thread) and "threads" (P MRs, P threads); seconds to register (the
 * median of the rounds, and the minimum) and to deregister.
 */
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "bench.h"

#define REGMR_MAX_PIECES 16
#define REGMR_MAX_ROUNDS 15

struct piece {
	pthread_t th;
	struct ibv_pd *pd;
	void *addr;
	size_t len;
	struct ibv_mr *mr;
};

static void *reg_piece(void *arg)
{
	struct piece *p = arg;

	p->mr = ibv_reg_mr(p->pd, p->addr, p->len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	return NULL;
}

static void *dereg_piece(void *arg)
{
	struct piece *p = arg;

	if (p->mr)
		ibv_dereg_mr(p->mr);
	p->mr = NULL;
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One round: register size bytes as n pieces, with n threads or one;
 * *reg and *dereg get the seconds.  -1 when a registration failed. */
static int one_round(struct ibv_pd *pd, size_t size, int n, int threaded, int touch, double *reg,
		     double *dereg)
{
	struct piece p[REGMR_MAX_PIECES];
	size_t each = size / (size_t)n;
	uint8_t *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok = 1;
	double t0;

	if (mem == MAP_FAILED)
		return -1;
	if (touch)
		for (size_t off = 0; off < size; off += 4096)
			mem[off] = 1;
	for (int i = 0; i < n; i++)
		p[i] = (struct piece){.pd = pd, .addr = mem + (size_t)i * each,
				      .len = i == n - 1 ? size - (size_t)i * each : each};
	t0 = rdmig_monotonic_seconds();
	for (int i = 0; i < n; i++)
		if (!threaded || n == 1 || pthread_create(&p[i].th, NULL, reg_piece, &p[i]))
			reg_piece(&p[i]), p[i].th = 0;
	for (int i = 0; i < n; i++)
		if (p[i].th)
			pthread_join(p[i].th, NULL);
	*reg = rdmig_monotonic_seconds() - t0;
	for (int i = 0; i < n; i++)
		ok &= p[i].mr != NULL;
	t0 = rdmig_monotonic_seconds();
	for (int i = 0; i < n; i++)
		if (!threaded || n == 1 || pthread_create(&p[i].th, NULL, dereg_piece, &p[i]))
			dereg_piece(&p[i]), p[i].th = 0;
	for (int i = 0; i < n; i++)
		if (p[i].th)
			pthread_join(p[i].th, NULL);
	*dereg = rdmig_monotonic_seconds() - t0;
	munmap(mem, size);
	return ok ? 0 : -1;
}

static int run_mode(struct ibv_pd *pd, const char *dev, size_t mb, int n, int threaded, int touch,
		    int rounds)
{
	double reg[REGMR_MAX_ROUNDS], dereg[REGMR_MAX_ROUNDS];
	const char *mode = n == 1 ? "one" : threaded ? "threads" : "serial";
	struct json_object *o;

	for (int r = 0; r < rounds; r++)
		if (one_round(pd, mb << 20, n, threaded, touch, &reg[r], &dereg[r])) {
			fprintf(stderr, "rdmig-bench: regmr: ibv_reg_mr of %zu MiB in %d pieces "
					"failed (ulimit -l?)\n", mb, n);
			return 1;
		}
	qsort(reg, (size_t)rounds, sizeof(double), cmp_double);
	qsort(dereg, (size_t)rounds, sizeof(double), cmp_double);
	o = json_object_new_object();
	bj_add_str(o, "bench", "regmr");
	bj_add_str(o, "device", dev);
	bj_add_int(o, "mib", (int64_t)mb);
	bj_add_str(o, "memory", touch ? "touched" : "fresh");
	bj_add_str(o, "mode", mode);
	bj_add_int(o, "mrs", n);
	bj_add_int(o, "threads", threaded ? n : 1);
	bj_add_int(o, "rounds", rounds);
	bj_add_fixed(o, "reg_seconds", reg[rounds / 2], 6);
	bj_add_fixed(o, "reg_seconds_min", reg[0], 6);
	bj_add_fixed(o, "dereg_seconds", dereg[rounds / 2], 6);
	bj_add_fixed(o, "reg_gib_per_s",
		     (double)mb / 1024.0 / (reg[rounds / 2] > 0 ? reg[rounds / 2] : 1e-9), 3);
	if (bj_write(stdout, o))
		return 1;
	fflush(stdout);
	return 0;
}

int bench_regmr(int argc, char **argv)
{
	const char *want = NULL, *list = "1,2,4";
	size_t mb = 512;
	int rounds = 3, npieces = 0, pieces[REGMR_MAX_PIECES], ndev = 0, ret = 0;
	struct ibv_device **devs;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	char *copy, *tok, *save;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--dev") && v)
			want = v, i++;
		else if (!strcmp(argv[i], "--mb") && v)
			mb = strtoul(v, NULL, 10), i++;
		else if (!strcmp(argv[i], "--pieces") && v)
			list = v, i++;
		else if (!strcmp(argv[i], "--rounds") && v)
			rounds = atoi(v), i++;
		else {
			fprintf(stderr, "usage: rdmig-bench regmr [--dev NAME] [--mb N] "
					"[--pieces 1,2,4] [--rounds R]\n");
			return 2;
		}
	}
	if (!mb || mb > (1u << 20) || rounds < 1 || rounds > REGMR_MAX_ROUNDS) {
		fprintf(stderr, "rdmig-bench: regmr: --mb 1.. and --rounds 1..%d\n",
			REGMR_MAX_ROUNDS);
		return 2;
	}
	copy = strdup(list);
	for (tok = strtok_r(copy, ",", &save); tok && npieces < REGMR_MAX_PIECES;
	     tok = strtok_r(NULL, ",", &save)) {
		int n = atoi(tok);
		if (n >= 1 && n <= REGMR_MAX_PIECES)
			pieces[npieces++] = n;
	}
	free(copy);
	devs = ibv_get_device_list(&ndev);
	for (int i = 0; devs && i < ndev && !ctx; i++)
		if (!want || !strcmp(ibv_get_device_name(devs[i]), want))
			ctx = ibv_open_device(devs[i]);
	if (!ctx) {
		fprintf(stderr, "rdmig-bench: regmr: no device %s\n", want ? want : "at all");
		if (devs)
			ibv_free_device_list(devs);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "rdmig-bench: regmr: ibv_alloc_pd failed\n");
		ret = 1;
	}
	for (int touch = 0; touch < 2 && !ret; touch++)
		for (int k = 0; k < npieces && !ret; k++) {
			ret = run_mode(pd, ibv_get_device_name(ctx->device), mb, pieces[k], 1,
				       touch, rounds);
			if (!ret && pieces[k] > 1)
				ret = run_mode(pd, ibv_get_device_name(ctx->device), mb, pieces[k],
					       0, touch, rounds);
		}
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	return ret;
}
