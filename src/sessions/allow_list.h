/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * allow_list.h - the sources a receiver lets connect: a few address
 * rules ("10.0.0.0/8", "fd00::/8", "[fe80::1]", "192.0.2.7"), checked by
 * the listener's filter before anything is allocated for a request.  An
 * empty list lets everyone in; a non-empty one only the sources some rule
 * matches.
 *
 * The list does not print: a source it refuses is handed to on_refused,
 * which the program sets to say so in its own words.  Its messages name
 * the option the rules came from (option, given at init), as the user
 * wrote it.
 */
#ifndef RDMIG_ALLOW_LIST_H
#define RDMIG_ALLOW_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* A receiver with more rules than this wants a firewall, not a list. */
#define ALLOW_LIST_MAX 16

struct allow_rule {
	int family;       /* AF_INET or AF_INET6 */
	uint8_t addr[16]; /* network order */
	unsigned prefix;  /* leading bits that must match */
};

struct allow_list {
	const char *option; /* names the rules' option in messages ("--allow") */
	int n;              /* 0: no rule, everyone may connect */
	struct allow_rule rule[ALLOW_LIST_MAX];
	/* told of each source allow_list_filter refuses (NULL: nobody) */
	void (*on_refused)(void *ctx, const struct sockaddr *source);
	void *refused_ctx;
};

/* An empty list whose messages name option. */
void allow_list_init(struct allow_list *a, const char *option);
/* Add one rule; -1 with a message in err when it is malformed or the
 * list is full. */
int allow_list_add(struct allow_list *a, const char *spec, char *err, size_t errlen);
/* Does some rule match?  An IPv4-mapped IPv6 address matches IPv4 rules.
 * An empty list matches nothing (allow_list_filter lets it all in). */
bool allow_list_match(const struct allow_list *a, const struct sockaddr *sa);
/* An rdmig_accept_filter_fn (ctx: the struct allow_list): true when the
 * list is empty or a rule matches; else on_refused hears of the source. */
bool allow_list_filter(void *ctx, const struct sockaddr *source);

/* "10.99.0.1" or "fe80::1", as the rules are written; "an address of
 * family N" for anything else. */
void sockaddr_text(const struct sockaddr *sa, char *buf, size_t len);

#endif
