/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_verbs.c - the ground floor on real devices: each device opens, its
 * port is ACTIVE, PD/CQ/QP can be created, and two processes exchange a
 * message over rdma_cm through librdmig.
 */
#include <infiniband/verbs.h>
#include <string.h>
#include "devenv.h"

static struct ibv_context *open_named(const char *name)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

DEVICE_TEST(open_device_and_create_qp)
{
	struct ibv_context *ctx = open_named(dev->name);
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr attr = {.qp_type = IBV_QPT_RC};

	CHECK(ctx != NULL);
	CHECK_OK(ibv_query_port(ctx, 1, &port));
	CHECK_EQ(port.state, IBV_PORT_ACTIVE);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd != NULL);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq != NULL);
	attr.send_cq = attr.recv_cq = cq;
	attr.cap = (struct ibv_qp_cap){.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				       .max_recv_sge = 1};
	qp = ibv_create_qp(pd, &attr);
	CHECK(qp != NULL);
	CHECK_OK(ibv_destroy_qp(qp));
	CHECK_OK(ibv_destroy_cq(cq));
	CHECK_OK(ibv_dealloc_pd(pd));
	CHECK_OK(ibv_close_device(ctx));
}

#define HELLO_LEN 1000

static void dest_receive_hello(struct rdmig_conn *c, void *arg)
{
	uint8_t want[HELLO_LEN];
	struct rdmig_msg m;

	fill_pattern(want, sizeof(want), 7);
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_QEMU_FILE, &m));
	CHECK_EQ(m.len, HELLO_LEN);
	CHECK_MEM_EQ(m.payload, want, HELLO_LEN);
	CHECK(!strcmp(rdmig_conn_device(c), ((const struct dev *)arg)->name));
	/* Wait for the source's REGISTER_FINISHED so it is not torn down early. */
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_REGISTER_FINISHED, &m));
}

DEVICE_TEST(two_processes_exchange_a_message)
{
	struct dev devcopy = *dev;
	struct pair p = {.dev = dev, .dest = dest_receive_hello, .arg = &devcopy};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	uint8_t hello[HELLO_LEN];

	test_opts(&o);
	test_opts(&p.dest_opts);
	fill_pattern(hello, sizeof(hello), 7);
	CHECK_OK(pair_start(&p));
	if (test_connect(&p, &o, &c) == 0) {
		CHECK(!strcmp(rdmig_conn_device(c), dev->name));
		CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, HELLO_LEN, hello}));
		CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL}));
	}
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

CHECK_MAIN()
