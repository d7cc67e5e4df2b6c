/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * copy_memory.c - copy one block of memory from one process to another
 * with librdmig, the way a migration does: the source writes the block
 * into the destination's memory with RDMA WRITEs and says what it sent on
 * the migration's stream; the destination checks what arrived.
 *
 *   copy_memory recv HOST PORT    listen on HOST:PORT (PORT 0: any) and
 *                                 print the port, then receive one block
 *   copy_memory send HOST PORT    connect and send it
 *
 * Both exit 0 when the block arrived whole, 1 on any failure (with the
 * library's message on stderr).  Build: cc copy_memory.c $(pkg-config
 * --cflags --libs rdmig).
 */
#include <rdmig.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define BLOCK_SIZE (8u << 20) /* 8 MiB: several chunks of the default 1 MiB */
#define GREETING "eight mebibytes, one byte per offset"

/* The block's bytes: a pattern the destination can check without a copy,
 * with the last mebibyte left zero (the source sends that as COMPRESS:
 * the destination zeroes it, no data moves). */
static uint8_t pattern_at(uint64_t offset)
{
	return offset < BLOCK_SIZE - (1u << 20) ? (uint8_t)(offset * 7 + 1) : 0;
}

/* RDMA needs memory that stays put: whole pages, not on the stack. */
static uint8_t *map_block(void)
{
	void *p = mmap(NULL, BLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Every librdmig function returns 0 or a negative RDMIG_E* code; the
 * handle's errmsg says what failed in words. */
static int fail(const char *what, int code, const char *msg)
{
	fprintf(stderr, "copy_memory: %s: %s (%s)\n", what, msg, rdmig_strerror(code));
	return 1;
}

/* ------------------------------------------------------------ source -- */

static int send_block(struct rdmig_conn *conn, uint8_t *mem)
{
	struct rdmig_block block = {.name = "example", .host = mem, .length = BLOCK_SIZE};
	struct rdmig_source *src;
	int ret;

	ret = rdmig_source_create(conn, &block, 1, &src);
	if (ret)
		return fail("rdmig_source_create", ret, rdmig_conn_errmsg(conn));
	/* setup: the destination tells where its block is; then the stream
	 * message, the writes (split into chunks, registered on demand), and
	 * the end of the pass, which waits until every write has landed */
	if (!(ret = rdmig_source_setup(src)) &&
	    !(ret = rdmig_source_write_stream(src, GREETING, sizeof(GREETING))) &&
	    !(ret = rdmig_source_write(src, 0, 0, BLOCK_SIZE)))
		ret = rdmig_source_end_iteration(src);
	if (ret)
		fail("sending the block", ret, rdmig_source_errmsg(src));
	rdmig_source_destroy(src);
	return ret ? 1 : 0;
}

static int run_source(const char *host, const char *port)
{
	struct rdmig_opts opts;
	struct rdmig_conn *conn;
	uint8_t *mem = map_block();
	int ret;

	if (!mem) {
		perror("copy_memory: mmap");
		return 1;
	}
	for (uint64_t i = 0; i < BLOCK_SIZE; i++)
		mem[i] = pattern_at(i);
	rdmig_opts_init(&opts);
	ret = rdmig_conn_create(&opts, &conn);
	if (ret)
		return fail("rdmig_conn_create", ret, "cannot create a connection");
	ret = rdmig_connect(conn, host, port);
	ret = ret ? fail("rdmig_connect", ret, rdmig_conn_errmsg(conn)) : send_block(conn, mem);
	rdmig_conn_destroy(conn); /* disconnects: the destination sees the end */
	munmap(mem, BLOCK_SIZE);
	return ret;
}

/* ------------------------------------------------------- destination -- */

/* Serve the source until it disconnects: registration requests, COMPRESS
 * and the writes themselves are handled inside rdmig_dest_next; what it
 * returns is what the program must hear of. */
static int receive_block(struct rdmig_dest *dest, const uint8_t *mem)
{
	bool greeted = false, done = false;

	for (;;) {
		struct rdmig_event ev;
		int ret = rdmig_dest_next(dest, &ev);

		if (ret)
			return fail("rdmig_dest_next", ret, rdmig_dest_errmsg(dest));
		if (ev.type == RDMIG_EV_STREAM) /* the bytes are valid until the next call */
			greeted = ev.len == sizeof(GREETING) && !memcmp(ev.data, GREETING, ev.len);
		else if (ev.type == RDMIG_EV_ITERATION_DONE)
			done = true; /* every write of the pass is in our memory */
		else if (ev.type == RDMIG_EV_END)
			break;
	}
	if (!greeted || !done) {
		fprintf(stderr, "copy_memory: the source ended early (greeting %s, pass %s)\n",
			greeted ? "ok" : "missing", done ? "done" : "not done");
		return 1;
	}
	for (uint64_t i = 0; i < BLOCK_SIZE; i++)
		if (mem[i] != pattern_at(i)) {
			fprintf(stderr, "copy_memory: byte %llu is %u, not %u\n",
				(unsigned long long)i, mem[i], pattern_at(i));
			return 1;
		}
	printf("received %u bytes: %s\n", BLOCK_SIZE, GREETING);
	return 0;
}

static int serve(struct rdmig_conn *conn, uint8_t *mem)
{
	struct rdmig_block block = {.name = "example", .host = mem, .length = BLOCK_SIZE};
	struct rdmig_dest *dest;
	int ret;

	ret = rdmig_dest_create(conn, &dest);
	if (ret)
		return fail("rdmig_dest_create", ret, rdmig_conn_errmsg(conn));
	/* the blocks may be given before the source asks for them */
	ret = rdmig_dest_set_blocks(dest, &block, 1);
	ret = ret ? fail("rdmig_dest_set_blocks", ret, rdmig_dest_errmsg(dest))
		  : receive_block(dest, mem);
	rdmig_dest_destroy(dest);
	return ret;
}

static int run_destination(const char *host, const char *port)
{
	struct rdmig_opts opts;
	struct rdmig_listener *lis;
	struct rdmig_conn *conn = NULL;
	uint8_t *mem = map_block();
	int ret;

	if (!mem) {
		perror("copy_memory: mmap");
		return 1;
	}
	rdmig_opts_init(&opts);
	ret = rdmig_listener_create(&opts, &lis);
	if (ret)
		return fail("rdmig_listener_create", ret, "cannot create a listener");
	ret = rdmig_listen(lis, host, port);
	if (!ret) {
		/* port 0 let the system choose: say which, for the source */
		printf("listening on port %u\n", rdmig_listener_port(lis));
		fflush(stdout);
		ret = rdmig_accept(lis, &conn);
	}
	ret = ret ? fail("listening", ret, rdmig_listener_errmsg(lis)) : serve(conn, mem);
	rdmig_conn_destroy(conn);
	rdmig_listener_destroy(lis);
	munmap(mem, BLOCK_SIZE);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "send"))
		return run_source(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return run_destination(argv[2], argv[3]);
	fprintf(stderr, "usage: copy_memory send|recv HOST PORT\n");
	return 2;
}
