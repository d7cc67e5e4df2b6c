/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source_admission.h - what the sources of a receiver that serves many at
 * once (`rdmig recv --serve`) may hold together, and the decision to admit
 * one when its header says what it asks for.
 *
 * The object owns the library's admission (struct rdmig_admission, which
 * keeps the books: slots, memory, pinned memory, files, each connection
 * giving back what it reserved when it is destroyed) and the limits it
 * was made with, whose defaults come from the machine and the output
 * directory: the bytes of all blocks from the smaller of the available
 * memory and --out's free space, the pinned bytes from RLIMIT_MEMLOCK,
 * the files from --out's free inodes.  On top of the library's books it
 * checks the room --out still has (free space and inodes less what the
 * running sources reserved), which only the receiver knows of.
 *
 * Thread-safe: each source is admitted on its own thread.  The object has
 * a mutex of its own that makes one admission at a time (what --out has
 * room for is read and reserved together); its limits do not change once
 * it is made, and the library's usage has its own lock.
 *
 * A refusal is said in the receiver's words, naming the options a user
 * sets the limits with (--serve-max-total, --serve-max-pinned,
 * --serve-max-files): the same words whatever program holds the object.
 */
#ifndef RDMIG_SOURCE_ADMISSION_H
#define RDMIG_SOURCE_ADMISSION_H

#include <stddef.h>
#include <stdint.h>
#include <rdmig.h>
#include "outdir.h"

/* The limits across the running sources.  In what the caller gives, 0
 * means "the default"; in what source_admission_limits says, UINT64_MAX
 * means none. */
struct source_limits {
	unsigned slots;  /* sources at once, handshakes included (>= 1; no default) */
	uint64_t bytes;  /* their blocks and hashing copies */
	uint64_t pinned; /* what they may pin */
	uint64_t files;  /* the files they make in --out */
};

struct source_admission;

/* Make the admission of sources written into out (which must stay open
 * while the admission lives): the limits given, the defaults for those
 * given as 0.  0, or the library's RDMIG_E code (no slot, no memory). */
int source_admission_create(const struct source_limits *given, const struct out_dir *out,
			    struct source_admission **adm);
/* After the last connection that holds a slot of it is destroyed; NULL
 * is fine. */
void source_admission_destroy(struct source_admission *adm);

/* Give the listener the admission's slots: a request that finds every
 * one taken is rejected before anything is allocated, and on_busy hears
 * of it (rdmig_listener_set_admission). */
void source_admission_listen(struct source_admission *adm, struct rdmig_listener *l,
			     rdmig_busy_fn on_busy, void *ctx);

/* Admit a source whose header asks for total bytes of blocks, copies
 * bytes of hashing copies, files files (its images and stream.bin; its
 * directory, made before the header came, counts as one more) and may pin
 * pins->most: reserve that on its connection (given back when the
 * connection is destroyed), if --out has room for it and the library's
 * limits let it.  0, or -1 with which says no in err. */
int source_admission_admit(struct source_admission *adm, struct rdmig_conn *conn, uint64_t total,
			   uint64_t copies, uint64_t files, const struct rdmig_pin_need *pins,
			   char *err, size_t errlen);

/* The limits in force (the defaults filled in; zeros for NULL). */
void source_admission_limits(const struct source_admission *adm, struct source_limits *lim);
/* What the running sources hold now, and the peaks (zeros for NULL). */
void source_admission_usage(const struct source_admission *adm, struct rdmig_admission_usage *u);

/* MemAvailable of /proc/meminfo, the physical memory when it cannot be
 * read: what a receiver can hold while its sources write. */
uint64_t machine_available_memory(void);

#endif
