/* SPDX-License-Identifier: BSD-2-Clause */
/* cli_qemu.h - the rdmig command's QEMU interoperability (public API only). */
#ifndef RDMIG_CLI_QEMU_H
#define RDMIG_CLI_QEMU_H

/*
 * `rdmig recv --qemu --listen ADDR:PORT --out DIR ...`: be the destination
 * of a real QEMU's RDMA migration.  argv[0] is the command's name; a
 * "--qemu" among the options is accepted and ignored, so the command table
 * can route `recv --qemu` here with argv unchanged.
 */
int cmd_recv_qemu(int argc, char **argv);

/*
 * `rdmig send --qemu-replay DIR --to ADDR:PORT ...`: replay what `recv
 * --qemu` recorded in DIR into a real QEMU destination.  Routed from
 * `send` like recv --qemu: argv unchanged.
 */
int cmd_send_replay(int argc, char **argv);

#endif
