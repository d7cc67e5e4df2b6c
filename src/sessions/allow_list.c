/* SPDX-License-Identifier: BSD-2-Clause */
/* allow_list.c - the sources a receiver lets connect (allow_list.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "allow_list.h"

void allow_list_init(struct allow_list *a, const char *option)
{
	memset(a, 0, sizeof(*a));
	a->option = option;
}

/* The address part of a rule, in brackets or not. */
static int rule_address(struct allow_rule *r, const char *s, size_t len)
{
	char addr[INET6_ADDRSTRLEN];

	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
	}
	if (len >= sizeof(addr))
		return -1;
	memcpy(addr, s, len);
	addr[len] = '\0';
	if (inet_pton(AF_INET, addr, r->addr) == 1)
		r->family = AF_INET;
	else if (inet_pton(AF_INET6, addr, r->addr) == 1)
		r->family = AF_INET6;
	else
		return -1;
	return 0;
}

/* The prefix after '/': a whole decimal number up to max, nothing before
 * or after it (strtol alone would take blanks and a sign). */
static int rule_prefix(const char *s, unsigned max, unsigned *out)
{
	char *end;
	long v;

	if (!(*s >= '0' && *s <= '9'))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > (long)max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int allow_list_add(struct allow_list *a, const char *spec, char *err, size_t errlen)
{
	const char *slash = strchr(spec, '/');
	struct allow_rule *r;
	unsigned max;

	if (a->n == ALLOW_LIST_MAX) {
		snprintf(err, errlen, "%s: at most %d rules", a->option, ALLOW_LIST_MAX);
		return -1;
	}
	r = &a->rule[a->n];
	if (rule_address(r, spec, slash ? (size_t)(slash - spec) : strlen(spec))) {
		snprintf(err, errlen, "%s '%s': expected an IPv4 or IPv6 address, optionally "
			 "with /PREFIX (10.99.0.0/16, fd00::/8)", a->option, spec);
		return -1;
	}
	max = r->family == AF_INET ? 32 : 128;
	r->prefix = max;
	if (slash && rule_prefix(slash + 1, max, &r->prefix)) {
		snprintf(err, errlen, "%s '%s': the prefix must be a number from 0 to %u",
			 a->option, spec, max);
		return -1;
	}
	a->n++;
	return 0;
}

/* Do the first `bits` bits of a and b agree? */
static bool same_prefix(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole))
		return false;
	return !rest || ((a[whole] ^ b[whole]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

bool allow_list_match(const struct allow_list *a, const struct sockaddr *sa)
{
	const uint8_t *v4 = NULL, *v6 = NULL;

	if (sa && sa->sa_family == AF_INET) {
		v4 = (const uint8_t *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct in6_addr *in6 = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		v6 = in6->s6_addr;
		/* an IPv4 source on a dual-stack listener: ::ffff:a.b.c.d */
		if (IN6_IS_ADDR_V4MAPPED(in6))
			v4 = in6->s6_addr + 12;
	}
	for (int i = 0; i < a->n; i++) {
		const struct allow_rule *r = &a->rule[i];
		if ((r->family == AF_INET && v4 && same_prefix(v4, r->addr, r->prefix)) ||
		    (r->family == AF_INET6 && v6 && same_prefix(v6, r->addr, r->prefix)))
			return true;
	}
	return false;
}

bool allow_list_filter(void *ctx, const struct sockaddr *source)
{
	const struct allow_list *a = ctx;

	if (!a->n || allow_list_match(a, source))
		return true;
	if (a->on_refused)
		a->on_refused(a->refused_ctx, source);
	return false;
}

void sockaddr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *in = NULL;

	if (sa && sa->sa_family == AF_INET)
		in = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	else if (sa && sa->sa_family == AF_INET6)
		in = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	if (!in || !inet_ntop(sa->sa_family, in, buf, (socklen_t)len))
		snprintf(buf, len, "an address of family %d", sa ? sa->sa_family : -1);
}
