/* addr.c - command-line address and option parsing shared by subcommands. */
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
	char *end;
	long p = strtol(port, &end, 10);
	if (!port[0] || *end || p < 0 || p > 65535) {
		snprintf(err, errlen, "'%s': port must be a number from 0 to 65535", s);
		return -1;
	}
	return 0;
}

int cli_parse_inline(const char *s, int *out)
{
	char *end;
	long v;

	if (!strcmp(s, "auto")) {
		*out = RDMIG_INLINE_AUTO;
		return 0;
	}
	v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || v > 1024)
		return -1;
	*out = (int)v;
	return 0;
}

int cli_fail(const char *what, const char *msg)
{
	fprintf(stderr, "rdmig: %s: %s\n", what, msg);
	return 1;
}

void cli_log(void *ctx, int level, const char *msg)
{
	static const char *names[] = {"error", "info", "debug"};
	fprintf(stderr, "rdmig[%s]: %s\n", names[level < 0 ? 0 : level > 2 ? 2 : level], msg);
}

/* "123", "512M", "2G": bytes, with binary suffixes; -1 if malformed. */
int cli_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	char *end;
	const char *u;

	if (!*s || *s == '-')
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

uint64_t cli_physical_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 1ull << 30;
}

/* mkdir -p: dir and its parents; err says what failed. */
/* mkdir -p */
int cli_make_dir(const char *dir, char *err, size_t errlen)
{
	char path[4096];
	struct stat st;
	size_t n = strlen(dir);

	if (n >= sizeof(path)) {
		snprintf(err, errlen, "--out: path too long");
		return -1;
	}
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			snprintf(err, errlen, "cannot create '%.600s': %s", path, strerror(errno));
			return -1;
		}
		*p = saved;
		if (!saved)
			break;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "'%.600s' is not a directory", dir);
		return -1;
	}
	return 0;
}
