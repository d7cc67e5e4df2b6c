/* SPDX-License-Identifier: BSD-2-Clause */
/* addr.c - command-line address and option parsing shared by subcommands,
 * and the tool's failure messages and hints. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static int copy_part(char *dst, size_t dstlen, const char *src, size_t n)
{
	if (n >= dstlen)
		return -1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

int cli_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	/* strtol skips leading blanks and takes a sign: neither is a number here */
	if (!s || !(*s >= '0' && *s <= '9'))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int cli_split_addr(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
		   char *err, size_t errlen)
{
	const char *colon, *hstart = s, *hend;

	if (s[0] == '[') {
		hend = strchr(s, ']');
		if (!hend || hend[1] != ':') {
			snprintf(err, errlen, "'%s': expected [IPV6]:PORT", s);
			return -1;
		}
		hstart = s + 1;
		colon = hend + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon) {
			snprintf(err, errlen, "'%s': expected HOST:PORT (IPv6 in brackets: [::]:4444)", s);
			return -1;
		}
		hend = colon;
	}
	if (copy_part(host, hostlen, hstart, (size_t)(hend - hstart)) ||
	    copy_part(port, portlen, colon + 1, strlen(colon + 1))) {
		snprintf(err, errlen, "'%s': address too long", s);
		return -1;
	}
	long p;
	if (cli_parse_long(port, 0, 65535, &p)) {
		snprintf(err, errlen, "'%s': port must be a number from 0 to 65535", s);
		return -1;
	}
	return 0;
}

int cli_parse_inline(const char *s, int *out)
{
	long v;

	if (!strcmp(s, "auto")) {
		*out = RDMIG_INLINE_AUTO;
		return 0;
	}
	if (cli_parse_long(s, 0, 1024, &v))
		return -1;
	*out = (int)v;
	return 0;
}

/* Whether this rdmig runs from a build directory of a source checkout
 * (the executable up to three directories below a scripts/rdma-vm): only
 * then is the project's test guest there to be pointed at. */
static bool cli_in_source_tree(void)
{
	char exe[4096], probe[4096 + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	for (int up = 0; up < 3; up++) {
		char *slash = strrchr(exe, '/');

		if (!slash || slash == exe)
			return false;
		*slash = '\0';
		snprintf(probe, sizeof(probe), "%s/scripts/rdma-vm", exe);
		if (access(probe, X_OK) == 0)
			return true;
	}
	return false;
}

/* How to get an RDMA device: a NIC's driver, or one of the kernel's
 * software devices made with rdma-core's `rdma` tool (iproute2). */
static void cli_hint_make_device(void)
{
	fprintf(stderr,
		"  load the driver of an RDMA NIC, or make a software RDMA device on an\n"
		"  Ethernet interface IFACE (`ip link` lists them) with rdma-core's tools:\n"
		"    Soft-RoCE:  modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IFACE\n"
		"    Soft-iWARP: modprobe siw && rdma link add siw0 type siw netdev IFACE\n"
		"  (the user-space drivers are in ibverbs-providers; `rdma link` lists devices)\n");
	if (cli_in_source_tree())
		fprintf(stderr, "  or, from this source tree, the project's test guest has both: "
				"scripts/rdma-vm\n");
}

/* What to do when the library says the host has no RDMA device or no
 * connection manager: printed under those messages. */
static void cli_hint(const char *msg)
{
	/* ENODEV means "no RDMA device" only where an address is resolved or
	 * bound; a post to a connection whose peer died may say the same, and
	 * a hint there would be a second, wrong line under the error */
	bool addr_enodev = strstr(msg, "No such device") &&
			   (strstr(msg, "cannot resolve") || strstr(msg, "cannot listen") ||
			    strstr(msg, "cannot reach"));

	if (strstr(msg, "no RDMA device found")) {
		fprintf(stderr, "rdmig: hint: no RDMA device found:\n");
		cli_hint_make_device();
	} else if (strstr(msg, "rdma_create_event_channel") || addr_enodev) {
		fprintf(stderr, "rdmig: hint: the RDMA connection manager needs `modprobe rdma_ucm`\n"
				"  (/dev/infiniband/rdma_cm); if `rdmig probe` then finds no RDMA device:\n");
		cli_hint_make_device();
	}
}

struct cli_run cli_run;

int cli_fail_code(const char *what, const char *code, const char *msg)
{
	fprintf(stderr, "rdmig: %s: %s\n", what, msg);
	cli_hint(msg);
	if (!cli_run.failed) {
		cli_run.failed = true;
		snprintf(cli_run.code, sizeof(cli_run.code), "%s", code);
		snprintf(cli_run.message, sizeof(cli_run.message), "%s", msg);
	}
	return 1;
}

int cli_fail(const char *what, const char *msg)
{
	return cli_fail_code(what, "failed", msg);
}

/* -1 is what the tool's own steps return after a failure whose message
 * they kept: not a code, whatever errno -1 would be. */
int cli_fail_lib(const char *what, int ret, const char *msg)
{
	return cli_fail_code(what, ret < -1 ? rdmig_err_name(ret) : "failed", msg);
}

/* The library logs every failure at RDMIG_LOG_ERROR as it keeps the
 * message for the handle's errmsg, which the tool then prints as its one
 * "rdmig: ..." line: printed here too, each error would appear twice. */
void cli_log(void *ctx, int level, const char *msg)
{
	static const char *names[] = {"error", "info", "debug"};

	(void)ctx;
	if (level <= RDMIG_LOG_ERROR)
		return;
	fprintf(stderr, "rdmig[%s]: %s\n", names[level > 2 ? 2 : level], msg);
}

/* "123", "512M", "2G": bytes, with binary suffixes; -1 if malformed. */
int cli_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	char *end;
	const char *u;

	if (!(*s >= '0' && *s <= '9')) /* strtoull takes blanks, signs */
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end) {
		if (end[1] || !(u = strchr(units, *end)))
			return -1;
		for (int shift = (int)(u - units + 1) * 10; shift > 0; shift -= 10) {
			if (v > UINT64_MAX >> 10)
				return -1;
			v <<= 10;
		}
	}
	*out = v;
	return 0;
}

int cli_parse_chunk_size(const char *s, uint64_t *out)
{
	uint64_t v;

	if (cli_parse_size(s, &v) || !RDMIG_CHUNK_SIZE_VALID(v))
		return -1;
	*out = v;
	return 0;
}
