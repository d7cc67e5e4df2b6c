/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_cli_hardening.c - the tool's pure guards: recv's --allow rules
 * (src/sessions/allow_list.c), the locked memory a migration needs,
 * reading CAP_IPC_LOCK from /proc/self/status, what SIGINT/SIGTERM leave
 * for the library, and what recv takes from a source: unverified images
 * only when recv says so, stream.bin within --max-total with the RAM.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "allow_list.h"
#include "cli.h"

static struct sockaddr_in v4(const char *s)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	inet_pton(AF_INET, s, &sa.sin_addr);
	return sa;
}

static struct sockaddr_in6 v6(const char *s)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
	inet_pton(AF_INET6, s, &sa.sin6_addr);
	return sa;
}

/* recv's list, as recv_args_init makes it. */
static struct allow_list fresh_list(void)
{
	struct allow_list a;

	allow_list_init(&a, "--allow");
	return a;
}

static bool match4(const struct allow_list *a, const char *s)
{
	struct sockaddr_in sa = v4(s);
	return allow_list_match(a, (const struct sockaddr *)&sa);
}

static bool match6(const struct allow_list *a, const char *s)
{
	struct sockaddr_in6 sa = v6(s);
	return allow_list_match(a, (const struct sockaddr *)&sa);
}

TEST(allow_single_ipv4_address)
{
	struct allow_list a = fresh_list();
	char err[200];

	CHECK_OK(allow_list_add(&a, "10.99.0.1", err, sizeof(err)));
	CHECK_EQ(a.rule[0].prefix, 32);
	CHECK(match4(&a, "10.99.0.1"));
	CHECK(!match4(&a, "10.99.0.2"));
	CHECK(!match4(&a, "10.99.1.1"));
	/* an IPv4 source seen through a dual-stack listener */
	CHECK(match6(&a, "::ffff:10.99.0.1"));
	CHECK(!match6(&a, "::ffff:10.99.0.3"));
}

TEST(allow_prefixes_with_odd_lengths)
{
	struct allow_list a = fresh_list();
	char err[200];

	CHECK_OK(allow_list_add(&a, "10.99.0.0/23", err, sizeof(err)));
	CHECK(match4(&a, "10.99.0.200"));
	CHECK(match4(&a, "10.99.1.1"));
	CHECK(!match4(&a, "10.99.2.1"));
	CHECK(!match4(&a, "10.98.255.255"));
	/* host bits in the rule do not matter */
	CHECK_OK(allow_list_add(&a, "192.168.7.9/30", err, sizeof(err)));
	CHECK(match4(&a, "192.168.7.8"));
	CHECK(match4(&a, "192.168.7.11"));
	CHECK(!match4(&a, "192.168.7.12"));
}

TEST(allow_ipv6_rules_and_brackets)
{
	struct allow_list a = fresh_list();
	char err[200];

	CHECK_OK(allow_list_add(&a, "[fe80::1]", err, sizeof(err)));
	CHECK_OK(allow_list_add(&a, "fd00::/8", err, sizeof(err)));
	CHECK(match6(&a, "fe80::1"));
	CHECK(!match6(&a, "fe80::2"));
	CHECK(match6(&a, "fd12:3456::7"));
	CHECK(!match6(&a, "fc00::1"));
	/* IPv6 rules never match IPv4 sources */
	CHECK(!match4(&a, "10.0.0.1"));
}

TEST(allow_zero_prefix_matches_its_family_only)
{
	struct allow_list a = fresh_list();
	char err[200];

	CHECK_OK(allow_list_add(&a, "0.0.0.0/0", err, sizeof(err)));
	CHECK(match4(&a, "203.0.113.5"));
	CHECK(!match6(&a, "2001:db8::1"));
}

TEST(allow_without_rules_matches_nothing)
{
	struct allow_list a = fresh_list();
	struct sockaddr unknown = {.sa_family = AF_UNIX};

	CHECK(!match4(&a, "10.99.0.1"));
	CHECK(!allow_list_match(&a, &unknown));
	CHECK(!allow_list_match(&a, NULL));
}

TEST(allow_rejects_malformed_rules)
{
	static const char *bad[] = {"", "10.99.0", "10.99.0.1/33", "10.99.0.1/", "10.99.0.1/-1",
				    "10.99.0.1/8x", "fe80::1/129", "host.example", "[10.0.0.1",
				    "fe80::1%eth0", "::/", "1.2.3.4/24/8"};
	struct allow_list a = fresh_list();
	char err[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (allow_list_add(&a, bad[i], err, sizeof(err)) == 0)
			CHECK_FAIL_AT("--allow '%s' was accepted", bad[i]);
		CHECK_STR_CONTAINS(err, "--allow");
	}
	CHECK_EQ(a.n, 0);
}

/* The words of a bad --allow are the tool's usage errors: the same as
 * before the list left the tool. */
TEST(allow_messages_name_the_option)
{
	struct allow_list a = fresh_list();
	char err[200];

	static const char prefix[] =
		"--allow '10.99.0.1/33': the prefix must be a number from 0 to 32";
	static const char address[] = "--allow 'host.example': expected an IPv4 or IPv6 "
				      "address, optionally with /PREFIX (10.99.0.0/16, fd00::/8)";

	CHECK_EQ(allow_list_add(&a, "10.99.0.1/33", err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, prefix);
	CHECK_EQ(strlen(err), strlen(prefix));
	CHECK_EQ(allow_list_add(&a, "host.example", err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, address);
	CHECK_EQ(strlen(err), strlen(address));
}

static int refused;
static char refused_who[64];

static void note_refused(void *ctx, const struct sockaddr *source)
{
	CHECK(ctx == &refused);
	refused++;
	sockaddr_text(source, refused_who, sizeof(refused_who));
}

TEST(allow_filter_lets_all_in_without_rules_and_tells_of_refusals)
{
	struct allow_list a = fresh_list();
	struct sockaddr_in in = v4("10.99.0.1"), out = v4("10.98.0.1");
	char err[200];

	a.on_refused = note_refused;
	a.refused_ctx = &refused;
	refused = 0;
	CHECK(allow_list_filter(&a, (const struct sockaddr *)&out));
	CHECK_OK(allow_list_add(&a, "10.99.0.0/16", err, sizeof(err)));
	CHECK(allow_list_filter(&a, (const struct sockaddr *)&in));
	CHECK_EQ(refused, 0);
	CHECK(!allow_list_filter(&a, (const struct sockaddr *)&out));
	CHECK_EQ(refused, 1);
	CHECK_STR_CONTAINS(refused_who, "10.98.0.1");
	CHECK_EQ(strlen(refused_who), strlen("10.98.0.1"));
}

TEST(allow_holds_a_bounded_number_of_rules)
{
	struct allow_list a = fresh_list();
	char err[200];

	for (int i = 0; i < ALLOW_LIST_MAX; i++)
		CHECK_OK(allow_list_add(&a, "10.0.0.0/8", err, sizeof(err)));
	CHECK_EQ(allow_list_add(&a, "10.0.0.0/8", err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "at most");
}

/* Whether fd has a byte to read right now. */
static bool fd_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

TEST(signals_write_the_library_cancel_fd_and_set_the_exit_status)
{
	struct rdmig_opts o;

	memset(&o, 0, sizeof(o)); /* what rdmig_opts_init leaves in cancel */
	o.cancel_fd = -1;         /* and in cancel_fd (no library linked here) */
	CHECK_OK(cli_cancel_install(&o));
	/* the self-pipe, not the flag the library would poll every 100 ms */
	CHECK(o.cancel == NULL);
	CHECK(o.cancel_fd >= 0);
	CHECK(!cli_cancelled());
	CHECK(!fd_readable(o.cancel_fd));
	CHECK_OK(raise(SIGTERM));
	CHECK(cli_cancelled());
	CHECK(fd_readable(o.cancel_fd));
	CHECK_EQ(cli_cancel_status(), 128 + SIGTERM);
	CHECK_STR_CONTAINS(cli_cancel_name(), "SIGTERM");
	/* rearmed: waits work again, but the command still knows it must stop */
	cli_cancel_rearm();
	CHECK(!fd_readable(o.cancel_fd));
	CHECK(cli_cancelled());
	/* a second signal cancels again; the first one names the exit */
	CHECK_OK(raise(SIGINT));
	CHECK(fd_readable(o.cancel_fd));
	CHECK_EQ(cli_cancel_status(), 128 + SIGTERM);
}

/* --chunk-size: what QEMU's x-rdma-chunk-size takes, in the tool's size
 * syntax */
TEST(chunk_size_takes_powers_of_two_from_1m_to_1g)
{
	static const struct {
		const char *arg;
		uint64_t bytes; /* 0: refused */
	} cases[] = {
		{"1M", 1ull << 20},    {"1048576", 1ull << 20}, {"1024K", 1ull << 20},
		{"4M", 4ull << 20},    {"32M", 32ull << 20},    {"256M", 256ull << 20},
		{"1G", 1ull << 30},    {"1073741824", 1ull << 30},
		{"512K", 0},           {"3M", 0},               {"2G", 0},
		{"1048577", 0},        {"0", 0},                {"", 0},
		{"-1M", 0},            {"32MiB", 0},            {"m", 0},
		{"99999999999999999999", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int r = cli_parse_chunk_size(cases[i].arg, &v);
		if (cases[i].bytes) {
			CHECK_OK(r);
			CHECK_EQ(v, cases[i].bytes);
		} else {
			CHECK_EQ(r, -1);
			CHECK_EQ(v, 12345);
		}
	}
}

/* dynamic registration pins at least one chunk of the chunk size */
TEST(memlock_need_follows_the_chunk_size)
{
	struct rdmig_block b[] = {{"a", (void *)4096, 100ull << 20, 0}, {"b", (void *)4096, 4096, 0}};
	struct rdmig_pin_need need;
	char err[256] = "";

	CHECK_OK(cli_memlock_need(NULL, false, 32ull << 20, b, 2, &need, err, sizeof(err)));
	CHECK_EQ(need.least, RDMIG_CONTROL_REGISTERED + (32ull << 20));
	CHECK_OK(cli_memlock_need(NULL, false, 1ull << 30, b, 2, &need, err, sizeof(err)));
	CHECK_EQ(need.least, RDMIG_CONTROL_REGISTERED + (100ull << 20)); /* a block < a chunk */
	CHECK_EQ(need.most, RDMIG_CONTROL_REGISTERED + (100ull << 20) + 4096);
	CHECK_EQ(cli_memlock_need(NULL, false, 3ull << 20, b, 2, &need, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "cannot tell what the migration pins");
}

/* Below the least need: refused with both numbers; no limit: 1, so that
 * send checks again once the device is known (siw applies the limit to
 * a process with CAP_IPC_LOCK too). */
TEST(memlock_check_refuses_or_says_no_limit_applies)
{
	struct rdmig_pin_need need = {.size = sizeof(need), .least = 8u << 20, .most = 8u << 20,
				      .limit = 4u << 20};
	char err[256] = "";

	CHECK_EQ(cli_memlock_check("send", &need, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "the locked-memory limit is 4096 KiB; this migration needs 8192 KiB");
	CHECK_STR_CONTAINS(err, "ulimit -l");
	need.limit = 8u << 20;
	CHECK_EQ(cli_memlock_check("send", &need, err, sizeof(err)), 0);
	need.limit = UINT64_MAX;
	CHECK_EQ(cli_memlock_check("send", &need, err, sizeof(err)), 1);
}

/* cli_fail's message to stderr (captured through a temporary file). */
static void fail_output(const char *msg, char *out, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	if (!tmp || saved < 0)
		abort();
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	cli_fail("send", msg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, len - 1, tmp);
	out[n] = 0;
	fclose(tmp);
}

/* A hint follows only the errors it explains: a post that failed with
 * ENODEV after the peer died is not a missing device (one line only). */
TEST(hints_follow_only_the_errors_they_explain)
{
	char out[2048];

	fail_output("cannot resolve 10.0.0.1 port 1: No such device", out, sizeof(out));
	CHECK(strstr(out, "rdmig: hint: ") != NULL);
	fail_output("rdma_create_event_channel: No such device (is rdma_ucm loaded?)", out,
		    sizeof(out));
	CHECK(strstr(out, "modprobe rdma_ucm") != NULL);
	fail_output("ibv_post_send (RDMA WRITE of 4096 bytes to 0x1000): No such device", out,
		    sizeof(out));
	CHECK(strstr(out, "hint") == NULL);
	CHECK(strchr(out, '\n') == out + strlen(out) - 1); /* one line */
}

/* Numbers on the command line are whole and nothing else. */
TEST(numbers_are_parsed_strictly)
{
	static const char *const bad[] = {"5x", "abc", "", " 5", "+5", "-1", "0x10", "5 ",
					  "99999999999999999999", "1e3", "101"};
	long v = -7;
	uint64_t size;
	int inl;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(cli_parse_long(bad[i], 0, 100, &v), -1);
		CHECK_EQ(v, -7); /* untouched */
	}
	CHECK_OK(cli_parse_long("0", 0, 100, &v));
	CHECK_EQ(v, 0);
	CHECK_OK(cli_parse_long("100", 0, 100, &v));
	CHECK_EQ(v, 100);
	CHECK_EQ(cli_parse_long("0", 1, 100, &v), -1);
	CHECK_EQ(cli_parse_size(" 5", &size), -1);
	CHECK_EQ(cli_parse_size("+5", &size), -1);
	CHECK_EQ(cli_parse_size("5MB", &size), -1);
	CHECK_OK(cli_parse_size("5M", &size));
	CHECK_EQ(size, 5ull << 20);
	CHECK_EQ(cli_parse_inline("+16", &inl), -1);
	CHECK_EQ(cli_parse_inline("16x", &inl), -1);
	CHECK_OK(cli_parse_inline("16", &inl));
	CHECK_EQ(inl, 16);
}

/* mkdir -p that can be undone: only what it made, deepest first, and
 * only while empty. */
TEST(made_directories_are_removed)
{
	char base[] = "/tmp/rdmig-made-XXXXXX", dir[128], keep[160], err[256];
	struct stat st;
	size_t made = 0;

	CHECK(mkdtemp(base) != NULL);
	snprintf(dir, sizeof(dir), "%s/a/b/c/", base);
	CHECK_OK(out_make_dir(dir, &made, err, sizeof(err)));
	CHECK_EQ(made, strlen(base) + 2); /* "<base>/a" */
	out_remove_made(dir, made);
	CHECK_EQ(stat(base, &st), 0); /* it was there before */
	snprintf(keep, sizeof(keep), "%s/a", base);
	CHECK(stat(keep, &st) != 0);
	/* nothing made: nothing removed */
	CHECK_OK(out_make_dir(base, &made, err, sizeof(err)));
	CHECK_EQ(made, 0);
	/* a file someone put inside keeps its directories */
	CHECK_OK(out_make_dir(dir, &made, err, sizeof(err)));
	snprintf(keep, sizeof(keep), "%s/a/b/f", base);
	fclose(fopen(keep, "w"));
	out_remove_made(dir, made);
	snprintf(keep, sizeof(keep), "%s/a/b/c", base);
	CHECK(stat(keep, &st) != 0);
	snprintf(keep, sizeof(keep), "%s/a/b/f", base);
	CHECK_EQ(stat(keep, &st), 0);
	unlink(keep);
	snprintf(keep, sizeof(keep), "%s/a/b", base);
	rmdir(keep);
	snprintf(keep, sizeof(keep), "%s/a", base);
	rmdir(keep);
	CHECK_OK(rmdir(base));
}

TEST(recv_refuses_a_source_without_checksums_unless_told_verify_off)
{
	char err[512] = "";

	CHECK_OK(recv_verify_policy(false, false, err, sizeof(err)));
	CHECK_OK(recv_verify_policy(true, false, err, sizeof(err)));
	CHECK_OK(recv_verify_policy(true, true, err, sizeof(err)));
	CHECK_EQ(recv_verify_policy(false, true, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "--verify off there");
	CHECK_STR_CONTAINS(err, "--verify on here");
	CHECK_STR_CONTAINS(err, "give recv --verify off");
}

TEST(stream_bin_counts_with_the_ram_against_max_total)
{
	const uint64_t g = 1ull << 30;

	CHECK(recv_stream_fits(4 * g, 3 * g, 0, g));
	CHECK(!recv_stream_fits(4 * g, 3 * g, 0, g + 1));
	CHECK(!recv_stream_fits(4 * g, 3 * g, g, 1));
	CHECK(recv_stream_fits(4 * g, 0, 0, 4 * g)); /* before the blocks are known */
	CHECK(!recv_stream_fits(4 * g, 0, 4 * g, 1));
	CHECK(!recv_stream_fits(4 * g, 5 * g, 0, 0));
	CHECK(!recv_stream_fits(UINT64_MAX, UINT64_MAX - 1, 1, UINT64_MAX)); /* no wrap */
	CHECK(recv_stream_fits(UINT64_MAX, UINT64_MAX - 1, 1, 0));
}

CHECK_MAIN()
