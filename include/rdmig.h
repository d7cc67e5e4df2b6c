/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmig.h - librdmig's engine: connections, control messages, the
 * migration engine, probing, errors.  The image-set layer is in
 * <rdmig/images.h>; librdmig-stream's API in <rdmig/qemu.h> and
 * <rdmig/imgstream.h> (librdmig(3)).
 *
 * librdmig speaks version 1 of QEMU's RDMA live-migration wire protocol over
 * real verbs (libibverbs + librdmacm).  Small control messages are posted
 * with IBV_SEND_INLINE straight from the caller's memory; larger ones are
 * copied into a registered buffer.  The bytes on the wire are the same
 * either way.
 *
 * Conventions:
 *  - Every handle is opaque and comes in a create/destroy pair.  A create
 *    function returns 0 and writes the handle through its out-parameter, or
 *    returns a negative code and writes NULL there: nothing to destroy.
 *    Why it failed goes to the log callback (ERROR level) of the options,
 *    and for rdmig_source_create/rdmig_dest_create also to the connection's
 *    errmsg.  Destroy functions take NULL.
 *  - Every function that can fail returns 0 or a negative code: -errno for
 *    a system failure, or an RDMIG_E* code (see "errors" below);
 *    rdmig_strerror() describes a code, and the handle's errmsg function
 *    says what exactly failed the last time.
 *  - Getters take a NULL handle: errmsg functions then return a static
 *    string, the others zeroes ("" for names).
 *  - Extensible structs start with `size_t size`.  Inputs (rdmig_opts):
 *    rdmig_opts_init() sets it to the caller's sizeof; the library reads
 *    the fields that size covers and takes its defaults for the rest, and
 *    refuses a larger struct only when the bytes it does not know are not
 *    zero.  Outputs (rdmig_engine_stats, rdmig_counters): the caller sets
 *    size = sizeof before the call, and the library writes min(size, its
 *    sizeof) bytes.  Every other public struct is frozen: it never grows
 *    (a change would be a new struct and new functions).
 *  - The library never prints and never exits; it reports through return
 *    codes and an optional log callback in struct rdmig_opts.
 *  - Multi-byte values in the public structs are in host byte order; the
 *    rdmig_encode_* / rdmig_decode_* functions convert to and from the
 *    big-endian wire format.
 *
 * Threads, lifetimes and blocking:
 *  - The library has no global mutable state and takes no locks.  Distinct
 *    handles (two connections, two listeners) may be used from different
 *    threads at the same time.  One handle, and the source or destination
 *    made on it, is used by one thread at a time; the caller serialises.
 *    The log callback runs in the thread that made the call which logs.
 *  - The handle copies struct rdmig_opts, but not what its pointers point
 *    to: opts.log_ctx, *opts.cancel and opts.cancel_fd must stay valid
 *    (the fd open) until the last handle made with those options is
 *    destroyed.
 *  - A connection must outlive the source or destination made on it.  The
 *    memory of every struct rdmig_block (host) stays mapped, and its size
 *    unchanged, until rdmig_source_destroy / rdmig_dest_destroy returns: it
 *    is registered with the device, and on a destination the peer may
 *    write into it by RDMA until then.  The block array itself is copied.
 *  - An errmsg function's string belongs to the handle: it is valid until
 *    the handle is destroyed, and the next failing call on that handle
 *    (or on its source or destination) overwrites it.  Copy it to keep it.
 *  - Every call that waits for the peer blocks the calling thread, for at
 *    most opts.timeout_ms per wait (accept: opts.accept_timeout_ms), and
 *    returns RDMIG_ECANCELED within 100 ms of *opts.cancel becoming
 *    non-zero, and at once when opts.cancel_fd becomes readable.  Event
 *    loops (0.2): rdmig_conn_fd and rdmig_listener_fd to sleep on, and
 *    rdmig_dest_try_next and rdmig_try_accept, which return RDMIG_EAGAIN
 *    instead of waiting for the peer's next message or request.
 *  - Destroy functions may block: rdmig_conn_destroy of a connected handle
 *    waits up to 2 s for posted sends to complete before it disconnects,
 *    then for the kernel to tear the QP and CM id down (milliseconds on
 *    the devices tested); rdmig_source_destroy and rdmig_dest_destroy
 *    deregister memory, which takes time in proportion to what was
 *    registered.  They never wait for the peer beyond that.
 */
#ifndef RDMIG_H
#define RDMIG_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- errors -- */

/*
 * One error convention, as rdma-core and libfabric have it:
 *
 *   0                      success
 *   -1 .. -999             -errno: a system, verbs or rdma_cm call failed
 *                          with that errno (-EPERM, -EADDRINUSE, ...), or a
 *                          condition errno already names (the five codes
 *                          below that are equal to -EINVAL, -ENOMEM, ...)
 *   -1001 .. -1018         rdmig's own protocol and library codes
 *                          (-(RDMIG_ELIB_BASE + n)): no errno is there
 *
 * The two ranges cannot collide (Linux errno values end near 133).
 * rdmig_strerror() describes every code, any -errno included, and the
 * handle's errmsg function says what exactly failed the last time.
 */
#define RDMIG_ELIB_BASE 1000
/* A code that is -errno (a system failure) rather than an rdmig code. */
#define RDMIG_IS_ERRNO(code) ((code) < 0 && (code) > -RDMIG_ELIB_BASE)

enum rdmig_error {
	RDMIG_OK = 0,
	/* conditions errno names: the code is -errno */
	RDMIG_EINVAL = -EINVAL,       /* invalid argument or option */
	RDMIG_ENOMEM = -ENOMEM,       /* out of memory */
	RDMIG_ENODEV = -ENODEV,       /* no (such) RDMA device */
	RDMIG_ETIMEDOUT = -ETIMEDOUT, /* a wait ran past the configured timeout */
	RDMIG_ECANCELED = -ECANCELED, /* the caller cancelled the wait (cancel, cancel_fd) */
	/* rdmig's own codes */
	RDMIG_EDISCONNECTED = -(RDMIG_ELIB_BASE + 1), /* the peer disconnected */
	RDMIG_EPEER = -(RDMIG_ELIB_BASE + 2),         /* the peer sent ERROR: it is aborting */
	RDMIG_EREJECTED = -(RDMIG_ELIB_BASE + 3),     /* the destination rejected the connection */
	RDMIG_EVERSION = -(RDMIG_ELIB_BASE + 4),      /* capability version is not 1 */
	RDMIG_EMSG_SHORT = -(RDMIG_ELIB_BASE + 5),    /* fewer bytes than a header */
	RDMIG_EMSG_LEN = -(RDMIG_ELIB_BASE + 6),      /* header len above 512 KiB - 16 */
	RDMIG_EMSG_SIZE = -(RDMIG_ELIB_BASE + 7),     /* received byte count != 16 + len */
	RDMIG_EMSG_REPEAT = -(RDMIG_ELIB_BASE + 8),   /* repeat above 4096 */
	RDMIG_EMSG_REPEAT_LEN = -(RDMIG_ELIB_BASE + 9), /* repeat does not match len for the type */
	RDMIG_EMSG_TYPE = -(RDMIG_ELIB_BASE + 10),    /* unknown message type */
	RDMIG_EMSG_UNEXPECTED = -(RDMIG_ELIB_BASE + 11), /* known type, but not the one expected */
	RDMIG_ECOMPLETION = -(RDMIG_ELIB_BASE + 12),  /* a work request completed with an error */
	RDMIG_ERANGE = -(RDMIG_ELIB_BASE + 13),       /* a peer's index/offset/length is out of range */
	RDMIG_EADDR = -(RDMIG_ELIB_BASE + 14),        /* address could not be resolved or bound */
	RDMIG_ESTATE = -(RDMIG_ELIB_BASE + 15),       /* call not valid in this state */
	RDMIG_ETOOBIG = -(RDMIG_ELIB_BASE + 16),      /* message larger than a control buffer */
	RDMIG_EPROTO = -(RDMIG_ELIB_BASE + 17),       /* any other protocol violation */
	/* Not a failure (0.2): a non-blocking call (rdmig_dest_try_next,
	 * rdmig_try_accept) found nothing to do yet; sleep on the handle's fd
	 * and call again.  An rdmig code, not -EAGAIN: a system call failing
	 * with EAGAIN stays a failure and cannot be taken for "call again". */
	RDMIG_EAGAIN = -(RDMIG_ELIB_BASE + 18),
};
/* The lowest of rdmig's own codes (a new code goes below it, never
 * renumbering one). */
#define RDMIG_ERROR_MIN RDMIG_EAGAIN

/* A fixed description of a code: rdmig's own, or any -errno (the C
 * library's text); "unknown error" for anything else. */
const char *rdmig_strerror(int code);
/* The code's symbolic name: "RDMIG_EMSG_LEN", or for an -errno that is not
 * one of rdmig's names the errno's own ("EADDRINUSE"); "RDMIG_E?" else. */
const char *rdmig_err_name(int code);

/* ---------------------------------------------------------- wire format -- */

#define RDMIG_CAP_VERSION 1u
#define RDMIG_CAP_PIN_ALL 0x1u
/* rdmig's own bits start at 16, clear of the ones QEMU assigns from bit 0
 * upward.  VERDICT: after the image stream's trailer the destination
 * tells the source whether it durably committed the images
 * (rdmig/images.h).  A QEMU destination clears it, a QEMU source never
 * sets it: with QEMU the protocol stays exactly as it was.  Added in 0.3. */
#define RDMIG_CAP_VERDICT 0x10000u
#define RDMIG_CAP_KNOWN_FLAGS (RDMIG_CAP_PIN_ALL | RDMIG_CAP_VERDICT)

#define RDMIG_HEADER_SIZE 16u
#define RDMIG_CAPS_SIZE 8u
#define RDMIG_REGISTER_SIZE 24u
#define RDMIG_REGISTER_RESULT_SIZE 16u
#define RDMIG_COMPRESS_SIZE 24u
#define RDMIG_DEST_BLOCK_SIZE 32u
/* The largest message a peer may send: len <= RDMIG_MAX_LEN. */
#define RDMIG_CONTROL_BUFFER 524288u
#define RDMIG_MAX_LEN (RDMIG_CONTROL_BUFFER - RDMIG_HEADER_SIZE)
/* What every connection registers for its control messages (three buffers
 * of RDMIG_CONTROL_BUFFER, local access only): part of the locked memory a
 * migration needs besides its blocks. */
#define RDMIG_CONTROL_REGISTERED (3u * RDMIG_CONTROL_BUFFER)
#define RDMIG_MAX_REPEAT 4096u
/* QEMU never puts more than this into one QEMU_FILE message. */
#define RDMIG_MAX_STREAM_CHUNK 32768u

/* Message types: the values are the wire values. */
enum rdmig_msg_type {
	RDMIG_MSG_NONE = 0, /* never sent: "expect any" */
	RDMIG_MSG_ERROR = 1,
	RDMIG_MSG_READY = 2,
	RDMIG_MSG_QEMU_FILE = 3,
	RDMIG_MSG_RAM_BLOCKS_REQUEST = 4,
	RDMIG_MSG_RAM_BLOCKS_RESULT = 5,
	RDMIG_MSG_COMPRESS = 6,
	RDMIG_MSG_REGISTER_REQUEST = 7,
	RDMIG_MSG_REGISTER_RESULT = 8,
	RDMIG_MSG_REGISTER_FINISHED = 9,
	RDMIG_MSG_UNREGISTER_REQUEST = 10,
	RDMIG_MSG_UNREGISTER_FINISHED = 11,
};
#define RDMIG_MSG_TYPE_COUNT 12

/* "REGISTER_REQUEST" etc.; "?" for values out of range. */
const char *rdmig_msg_type_name(uint32_t type);

/* The capability record exchanged in rdma_cm private data. */
struct rdmig_caps {
	uint32_t version;
	uint32_t flags;
};

/* A message header. padding is sent as 0 and ignored on receipt. */
struct rdmig_header {
	uint32_t len;
	uint32_t type;
	uint32_t repeat;
};

/* Register: a chunk range to register (or, for UNREGISTER, key = chunk).
 * chunks counts the chunks after the first: 0 registers one chunk.  That
 * is what QEMU 7.2 sends (qemu_rdma_write_one) and what its destination
 * does (chunk .. chunk + chunks, inclusive). */
struct rdmig_register {
	uint64_t key;
	uint32_t block_index;
	uint64_t chunks;
};

/* RegisterResult: host_addr is the destination address of the block start. */
struct rdmig_register_result {
	uint32_t rkey;
	uint64_t host_addr;
};

/* Compress: zero [offset, offset + length) of a block; value must be 0. */
struct rdmig_compress {
	uint32_t value;
	uint32_t block_index;
	uint64_t offset;
	uint64_t length;
};

/* DestBlock: one destination RAM block, in the source's order. */
struct rdmig_dest_block {
	uint64_t remote_host_addr;
	uint64_t offset;
	uint64_t length;
	uint32_t remote_rkey;
};

void rdmig_encode_header(const struct rdmig_header *h, uint8_t out[RDMIG_HEADER_SIZE]);
void rdmig_decode_header(const uint8_t in[RDMIG_HEADER_SIZE], struct rdmig_header *h);
void rdmig_encode_caps(const struct rdmig_caps *c, uint8_t out[RDMIG_CAPS_SIZE]);
void rdmig_decode_caps(const uint8_t in[RDMIG_CAPS_SIZE], struct rdmig_caps *c);
void rdmig_encode_register(const struct rdmig_register *r, uint8_t out[RDMIG_REGISTER_SIZE]);
void rdmig_decode_register(const uint8_t in[RDMIG_REGISTER_SIZE], struct rdmig_register *r);
void rdmig_encode_register_result(const struct rdmig_register_result *r,
				  uint8_t out[RDMIG_REGISTER_RESULT_SIZE]);
void rdmig_decode_register_result(const uint8_t in[RDMIG_REGISTER_RESULT_SIZE],
				  struct rdmig_register_result *r);
void rdmig_encode_compress(const struct rdmig_compress *c, uint8_t out[RDMIG_COMPRESS_SIZE]);
void rdmig_decode_compress(const uint8_t in[RDMIG_COMPRESS_SIZE], struct rdmig_compress *c);
void rdmig_encode_dest_block(const struct rdmig_dest_block *b, uint8_t out[RDMIG_DEST_BLOCK_SIZE]);
void rdmig_decode_dest_block(const uint8_t in[RDMIG_DEST_BLOCK_SIZE], struct rdmig_dest_block *b);

/*
 * A received or to-be-sent control message.  payload points at `len` bytes
 * in wire format (records already encoded).  For a received message it
 * points into the connection's receive buffer and stays valid until the
 * next call that receives on the same connection.
 */
struct rdmig_msg {
	uint32_t type;
	uint32_t repeat;
	uint32_t len;
	const void *payload;
};

/*
 * Validate a received message (header + payload, `size` bytes as the
 * completion reported them) like a careful peer: len bound, size == 16 + len,
 * repeat bound, repeat consistent with len for typed payloads, known type,
 * and type == expect unless expect is RDMIG_MSG_NONE (ERROR always yields
 * RDMIG_EPEER).  On success *out describes the message (payload points into
 * buf).  On failure returns the code and, when why != NULL, writes a message
 * naming the field and its value.
 */
int rdmig_msg_parse(const void *buf, size_t size, uint32_t expect, struct rdmig_msg *out,
		    char *why, size_t why_len);

/* --------------------------------------------------------------- options -- */

enum rdmig_log_level { RDMIG_LOG_ERROR = 0, RDMIG_LOG_INFO = 1, RDMIG_LOG_DEBUG = 2 };
typedef void (*rdmig_log_fn)(void *ctx, int level, const char *msg);

/* Inline request: RDMIG_INLINE_AUTO walks the ladder 40, 32, 16, 0. */
#define RDMIG_INLINE_AUTO (-1)
/* What AUTO asks first: a header plus the largest fixed payload. */
#define RDMIG_INLINE_WANTED (RDMIG_HEADER_SIZE + RDMIG_REGISTER_SIZE)

/*
 * Options of a listener or connection (and of rdmig_probe).  Initialise with
 * rdmig_opts_init(), then change fields.  The struct only grows at its end;
 * the library takes its own defaults for fields past the caller's size.
 */
struct rdmig_opts {
	size_t size;          /* the caller's sizeof(struct rdmig_opts); set by rdmig_opts_init */
	int inline_request;   /* RDMIG_INLINE_AUTO, 0 (always copy), or N bytes */
	bool pin_all;         /* source: ask for PIN_ALL; destination: allow it */
	int backlog;          /* listener backlog (default 128) */
	int timeout_ms;       /* limit of every wait (default 60000; <= 0: none) */
	int accept_timeout_ms; /* limit of rdmig_accept (default 0: wait forever) */
	uint32_t max_send_wr; /* send queue depth (default 512, as QEMU) */
	int spin_us;          /* busy-poll this long before sleeping in a wait (default 50;
			       * 0: sleep at once).  A sleeping thread wakes on a timer tick
			       * on some hosts (emulated CPUs), costing milliseconds. */
	rdmig_log_fn log;     /* optional; called from the calling thread */
	void *log_ctx;
	int log_level;        /* highest level passed to log (default INFO) */
	/* Optional (default NULL): when *cancel becomes non-zero, every wait of
	 * the handles made with these options (rdmig_accept, rdmig_connect,
	 * every wait for the peer) returns RDMIG_ECANCELED within 100 ms.  A
	 * signal handler may set it.  Reset it to 0 to wait again, e.g. to
	 * tell the peer with rdmig_send_error before closing.  cancel_fd
	 * (below) does the same at once, without the 100 ms. */
	const volatile sig_atomic_t *cancel;
	/* Registration chunk of the migration engine, in bytes: a power of two
	 * from RDMIG_CHUNK_SIZE_MIN (1 MiB) to RDMIG_CHUNK_SIZE_MAX (1 GiB);
	 * 0 or the default: RDMIG_CHUNK_SIZE (1 MiB, what QEMU uses unless its
	 * x-rdma-chunk-size parameter says otherwise).  Both sides must use the
	 * same value: it numbers the chunks of REGISTER_REQUEST and
	 * UNREGISTER_REQUEST and bounds every dynamic registration and
	 * COMPRESS range (see "migration engine" below).  Added in 0.2. */
	uint64_t chunk_size;
	/* Optional (default -1: none): a file descriptor that, once readable
	 * (or hung up), makes every wait of the handles made with these
	 * options return RDMIG_ECANCELED at once, the way *cancel does but
	 * without its 100 ms polling: the library polls it beside its own
	 * fds.  The library never reads, drains or closes it: it is the
	 * caller's, e.g. the read end of a pipe (or an eventfd) that a signal
	 * handler writes one byte to.  Drain it to wait again.  It must stay
	 * open until every handle made with these options is destroyed.
	 * rdmig_opts_init sets -1; options of programs built before 0.2 (a
	 * size that ends before this field) are treated as -1.  Set it only
	 * after rdmig_opts_init: 0 is a file descriptor (stdin).  Added in 0.2. */
	int cancel_fd;
	/* Destination: end a source that makes no progress for this long
	 * (default 0: never; < 0 is refused).  Progress is what moves data:
	 * stream bytes (a QEMU_FILE message of at least one byte), a chunk
	 * registered, a COMPRESS range zeroed.  Keep-alives (empty QEMU_FILE
	 * messages), REGISTER_FINISHED, UNREGISTER and REGISTER_REQUESTs
	 * answered from a region already registered do not count, so a source
	 * that only keeps the connection busy is ended with RDMIG_ETIMEDOUT
	 * (and ERROR to it) once this much time passed since its last
	 * progress; rdmig_dest_next never waits past that moment.  An event
	 * loop driving rdmig_dest_try_next must call it at least that often
	 * for the clock to be read.  timeout_ms still bounds one silence.
	 * Added in 0.2. */
	int idle_timeout_ms;
	/* Destination: how many chunks a source may register again after
	 * it unregistered them (UNREGISTER_REQUEST then REGISTER_REQUEST of
	 * the same chunk), in total per connection; each one pins memory
	 * again.  RDMIG_REPIN_BUDGET by default; -1: no limit; 0: none.  The
	 * REGISTER_REQUEST that goes past it is refused with RDMIG_EPROTO
	 * and ERROR to the source.  Neither QEMU nor rdmig's source
	 * unregisters, so only a hostile or broken source meets it.
	 * Added in 0.2. */
	int repin_budget;
	/* Source: ask for RDMIG_CAP_VERDICT; destination: grant it when asked.
	 * Default false.  The image-set API (rdmig/images.h) uses the verdict
	 * when both sides set it; a caller of the bare engine must not set it.
	 * Added in 0.3. */
	bool verdict;
	/* Destination: end the source this long after the engine was made
	 * (rdmig_dest_create), whatever it moved (default 0: never; < 0 is
	 * refused), with RDMIG_ETIMEDOUT and ERROR to it.  idle_timeout_ms
	 * does not bound a source that moves one stream byte per idle period;
	 * this does.  A server sets it to the longest a source may hold a
	 * slot.  Added in 0.3. */
	int deadline_ms;
};

/* The default rdmig_opts.repin_budget: 4096 chunks (4 GiB at 1 MiB
 * chunks) pinned again per connection. */
#define RDMIG_REPIN_BUDGET 4096

/*
 * Fill the first `size` bytes of *opts with the library's defaults (bytes
 * past its own sizeof with zero) and set opts->size = size.  Call it
 * through rdmig_opts_init, which passes the caller's sizeof.
 */
void rdmig_opts_init_sized(struct rdmig_opts *opts, size_t size);

static inline void rdmig_opts_init(struct rdmig_opts *opts)
{
	rdmig_opts_init_sized(opts, sizeof(*opts));
}

/* -------------------------------------------------------- the inline QP -- */

/* How the inline size of a QP was settled. */
struct rdmig_inline_info {
	uint32_t asked;        /* the first request of the ladder */
	uint32_t granted;      /* min(request that succeeded, written back) */
	uint32_t tries;        /* QP creations attempted */
	uint32_t written_back; /* cap.max_inline_data after the successful create */
};

/* --------------------------------------------------------- connections -- */

struct rdmig_listener;
struct rdmig_conn;

/*
 * Destination side.  rdmig_listener_create fails only on invalid options
 * (RDMIG_EINVAL) or memory; rdmig_listen binds every address that host
 * (NULL or "" = any) resolves to and listens; rdmig_accept waits (opts.accept_timeout_ms, or forever when
 * it is <= 0) for one source, checks its capabilities, creates the QP and
 * accepts.  The accepted connection is a new handle.  A request with bad
 * capabilities (short, or a version other than 1) is rejected, logged
 * (INFO) and forgotten, like one the filter refuses: rdmig_accept waits on
 * for a valid source, and when the timeout ends the wait its message says
 * how many requests it refused and why the last one.  So is a request
 * whose requester goes away before the connection is established (it
 * rejects or resets the handshake, or sends nothing for opts.timeout_ms,
 * 60 s when that is none): at most 8 handshakes are in flight, the
 * oldest dropped for a new request.  Only this side's own failures (no
 * memory, no locked memory for the control buffers) end the wait.
 */
int rdmig_listener_create(const struct rdmig_opts *opts, struct rdmig_listener **out);
int rdmig_listen(struct rdmig_listener *l, const char *host, const char *port);
/* The port actually bound (useful with port "0"); 0 before rdmig_listen. */
uint16_t rdmig_listener_port(const struct rdmig_listener *l);
int rdmig_accept(struct rdmig_listener *l, struct rdmig_conn **out);
/*
 * Event loops (0.2).  rdmig_listener_fd returns a file descriptor that is
 * readable while the listener has an rdma_cm event queued: a connection
 * request, or (rarely) another event of its ids, a device removal or an
 * address change, which the accept functions take and ignore.  The same fd
 * every time; -1 for NULL or before rdmig_listen.  It belongs to the
 * library: do not read, close or change it (rdmig_listener_destroy closes
 * it).
 *
 * rdmig_try_accept is rdmig_accept without the wait for a request: it
 * takes the queued events; a request that passes the filter and the
 * capability check is accepted as rdmig_accept does, and one that fails
 * either is rejected and forgotten (as there), then the next queued one is
 * looked at.  RDMIG_EAGAIN (and *out NULL) when no acceptable request was
 * queued, or after 16 refusals in one call (the fd stays readable): sleep on
 * the fd again.  It never waits for a handshake: a good request gets its
 * resources and our accept, and its connection is returned by the call
 * that takes its ESTABLISHED from the same fd (a handshake that hears
 * nothing is dropped after opts.timeout_ms; a loop that wants that
 * enforced while the fd stays quiet calls now and then).  The call reads
 * up to 16 events (the fd stays readable for the rest).
 * accept_timeout_ms does not apply: the loop
 * decides how long it waits for a source.  Use rdmig_try_accept, not
 * rdmig_accept, after the fd woke: the wake may be for an event that is
 * not a request, or for a request the filter refuses, and rdmig_accept
 * would then wait for the next request (up to accept_timeout_ms, forever
 * by default).
 */
int rdmig_listener_fd(struct rdmig_listener *l);
int rdmig_try_accept(struct rdmig_listener *l, struct rdmig_conn **out);
/* (0.3) How many requests the listener accepted whose handshake is still
 * in flight (at most 8): a server that bounds its sources counts these
 * too, from the request (its filter) to the end.  0 for NULL. */
int rdmig_listener_handshakes(const struct rdmig_listener *l);
const char *rdmig_listener_errmsg(const struct rdmig_listener *l);
void rdmig_listener_destroy(struct rdmig_listener *l);

/*
 * Who may connect.  rdmig_accept calls fn with the address of every source
 * that asks to connect (a struct sockaddr_in or sockaddr_in6), before it
 * looks at the request's capabilities and before anything is allocated or
 * registered for it.  When fn returns false the request is rejected
 * (the source sees RDMIG_EREJECTED) and rdmig_accept waits for the next
 * one, within the same accept timeout.
 * fn runs in the thread that called rdmig_accept.  NULL: everyone may.
 */
struct sockaddr;
typedef bool (*rdmig_accept_filter_fn)(void *ctx, const struct sockaddr *source);
void rdmig_listener_set_filter(struct rdmig_listener *l, rdmig_accept_filter_fn fn, void *ctx);

/*
 * SIGPIPE: on siw (SoftiWARP, Linux 6.1) posting to a connection whose peer
 * died can raise SIGPIPE in the posting thread, because siw transmits on
 * its TCP socket from there without MSG_NOSIGNAL.  Ignore SIGPIPE (as any
 * program using sockets does); the failure then arrives as an error code.
 */

/* Source side: create, then connect to host:port (every resolved address).
 * With invalid options create returns RDMIG_EINVAL and sets *out to NULL
 * (the reason goes to opts->log), like every create function. */
int rdmig_conn_create(const struct rdmig_opts *opts, struct rdmig_conn **out);
int rdmig_connect(struct rdmig_conn *c, const char *host, const char *port);
/* Disconnects (if connected) and frees everything.  NULL is fine. */
void rdmig_conn_destroy(struct rdmig_conn *c);
const char *rdmig_conn_errmsg(const struct rdmig_conn *c);

/* The negotiated capabilities (flags = what both sides agreed to). */
void rdmig_conn_caps(const struct rdmig_conn *c, struct rdmig_caps *caps);
void rdmig_conn_inline(const struct rdmig_conn *c, struct rdmig_inline_info *info);
/* (0.3) The peer's address (a struct sockaddr_in or sockaddr_in6), read
 * from the connection itself: 0; RDMIG_EINVAL for NULL; RDMIG_ESTATE
 * (and *out zeroed) when the connection has no peer (not connected). */
struct sockaddr_storage;
int rdmig_conn_peer_addr(const struct rdmig_conn *c, struct sockaddr_storage *out);
/* (0.3) Cancel the connection, from any thread or a signal handler: every
 * wait on it (rdmig_recv, the engines' waits, the images destination and
 * source over it) returns RDMIG_ECANCELED at once, and the engines stop
 * serving (a COMPRESS being zeroed stops within a slice).  It stays
 * cancelled: what is left is rdmig_conn_destroy.  The per-connection
 * counterpart of opts.cancel_fd, for a server that ends one source of
 * many; NULL is ignored. */
void rdmig_conn_cancel(struct rdmig_conn *c);
/* The RDMA device the connection runs on ("rxe0"...). */
const char *rdmig_conn_device(const struct rdmig_conn *c);

/*
 * (0.3) Admission: what the connections of a server may hold together.  A
 * server that takes many sources at once gives its listener an admission
 * (rdmig_listener_set_admission): each connection request that passes the
 * filter then takes a slot, held through its handshake and, once accepted,
 * by its connection until rdmig_conn_destroy; a request that finds every
 * slot taken is rejected before anything is allocated for it (on_busy
 * hears of it, with the source's address).  Once a connection knows what
 * its source asks for (the image-set destination's header), it reserves
 * that with rdmig_conn_reserve: bytes of memory (its blocks and the
 * hashing copies, rdmig_images_dest_copy_bytes), bytes it may pin, files;
 * a reservation that does not fit in what the others left is refused with
 * the limit named, and what a connection reserved is given back with it
 * (rdmig_conn_destroy).  UINT64_MAX in a limit: none.  Thread-safe: the
 * connections may run on threads of their own; the admission must outlive
 * every connection that holds a slot of it.
 */
struct rdmig_admission;

struct rdmig_admission_limits {
	size_t size;       /* sizeof(struct rdmig_admission_limits) */
	unsigned slots;    /* connections at once, handshakes included (>= 1) */
	uint64_t bytes;    /* memory of all reservations */
	uint64_t pinned;   /* pinnable bytes of all reservations */
	uint64_t files;    /* files of all reservations */
};

/* What one connection asks for, and what all of them hold (usage). */
struct rdmig_admission_ask {
	size_t size;       /* sizeof(struct rdmig_admission_ask) */
	uint64_t bytes, pinned, files;
};

struct rdmig_admission_usage {
	size_t size;       /* sizeof(struct rdmig_admission_usage) */
	unsigned slots;    /* taken now */
	uint64_t bytes, pinned, files; /* reserved now */
	unsigned peak_slots;
	uint64_t peak_bytes, peak_pinned, peak_files;
	uint64_t busy;     /* requests rejected for want of a slot */
};

/* 0, RDMIG_EINVAL (no slot, a bad size), RDMIG_ENOMEM. */
int rdmig_admission_create(const struct rdmig_admission_limits *limits,
			   struct rdmig_admission **out);
/* NULL is fine. */
void rdmig_admission_destroy(struct rdmig_admission *a);
void rdmig_admission_usage(struct rdmig_admission *a, struct rdmig_admission_usage *u);
/* Slots for the listener's requests; on_busy (optional) is called, on the
 * thread that accepts, for each request rejected for want of one. */
typedef void (*rdmig_busy_fn)(void *ctx, const struct sockaddr *source, unsigned slots);
void rdmig_listener_set_admission(struct rdmig_listener *l, struct rdmig_admission *a,
				  rdmig_busy_fn on_busy, void *ctx);
/* Reserve ask for the connection (it adds to what it holds): 0;
 * RDMIG_EAGAIN when it does not fit (why says which limit and what is
 * left); RDMIG_ESTATE when the connection has no admission (it did not
 * come from a listener with one); RDMIG_EINVAL for a bad argument. */
int rdmig_conn_reserve(struct rdmig_conn *c, const struct rdmig_admission_ask *ask, char *why,
		       size_t whylen);

/*
 * A file descriptor an event loop can sleep on (poll, epoll, select) until
 * the connection may have work, instead of blocking a thread in a call.
 * Call it right before every sleep: it gets the connection ready for the
 * sleep (takes the events already queued, arms the completion queues,
 * takes the completions that came meanwhile), then returns the same fd
 * every time.  Readable means: a completion, a message or an rdma_cm event
 * (the peer disconnected, say) came after that, or had come already; the
 * blocking call you would make next (rdmig_send owing the peer's READY,
 * rdmig_source_write short of send-queue room...) may find its work
 * pending and return without waiting.  It is a hint: spurious
 * wake-ups happen (a completion the call does not need), so the call may
 * still wait, within opts.timeout_ms as ever.  It misses nothing from the
 * peer: while it stays unreadable, nothing came that a waiting call could
 * use (calls that need nothing from the peer never wait for it anyway).
 * Mind the READY flow: the peer sends a message only after our READY, and
 * rdmig_recv (and so rdmig_dest_next) sends that READY itself, then
 * waits.  Sleeping on the fd before them waits only for a disconnect or
 * an ERROR: call them at once (opts.cancel_fd stops their wait), or, on a
 * destination, use rdmig_dest_try_next, which sends the READY and returns
 * RDMIG_EAGAIN instead of waiting: then sleep on the fd.
 * The fd belongs to the library: do not read, close or change it; it is
 * closed by rdmig_conn_destroy.  Use it from the thread that makes the
 * calls on c.  The first call makes it (an epoll fd and an eventfd: a
 * connection whose owner never calls this has neither).  -1 when c is
 * NULL, when those could not be made, or when the connection failed while
 * getting ready (rdmig_conn_errmsg says why: treat it as the failure of
 * the next call).  Added in 0.2.
 */
int rdmig_conn_fd(struct rdmig_conn *c);

/* ------------------------------------------------- control messages (READY flow) -- */

/*
 * The credit flow of the protocol (stop-and-wait):
 *  rdmig_send:    wait for the peer's READY if one is owed, then send msg.
 *  rdmig_request: like rdmig_send, and wait for a reply of type reply_type
 *                 (the reply comes without READY).
 *  rdmig_recv:    send READY, then wait for one message of type expect
 *                 (RDMIG_MSG_NONE = any type); out->payload stays valid
 *                 until the next call on c (its receive is posted again
 *                 only then).
 *  rdmig_reply:   send a reply directly, without waiting for READY.
 * A message whose 16 + len fits the granted inline size goes inline, with
 * no copy; any other is copied into the registered send buffer.
 * A received ERROR returns RDMIG_EPEER.
 */
int rdmig_send(struct rdmig_conn *c, const struct rdmig_msg *msg);
int rdmig_request(struct rdmig_conn *c, const struct rdmig_msg *msg, uint32_t reply_type,
		  struct rdmig_msg *reply);
int rdmig_recv(struct rdmig_conn *c, uint32_t expect, struct rdmig_msg *out);
int rdmig_reply(struct rdmig_conn *c, const struct rdmig_msg *msg);
/* Best effort: tell the peer we abort (an ERROR message), taking an owed
 * READY first if it comes within a second.  Returns 0 when the ERROR was
 * posted; the connection's errmsg is left as it was. */
int rdmig_send_error(struct rdmig_conn *c);

/* Counters of one connection, per message type (index = wire type). */
struct rdmig_counters {
	size_t size; /* the caller's sizeof(struct rdmig_counters), set before the call */
	uint64_t sent[RDMIG_MSG_TYPE_COUNT];
	uint64_t sent_inline[RDMIG_MSG_TYPE_COUNT];
	uint64_t sent_copied[RDMIG_MSG_TYPE_COUNT];
	uint64_t received[RDMIG_MSG_TYPE_COUNT];
	uint64_t bytes_inline; /* header + payload bytes posted inline */
	uint64_t bytes_copied; /* header + payload bytes copied and posted */
	uint64_t bytes_received;
};
/* Set out->size = sizeof(*out) first: min(out->size, the library's size)
 * bytes are written (a NULL connection writes zeroes). */
void rdmig_conn_counters(const struct rdmig_conn *c, struct rdmig_counters *out);

/* ------------------------------------------------------ migration engine -- */

/*
 * A RAM block: a named range of memory.  On the source, host is the memory
 * to send; on the destination, the memory to receive into (allocated by the
 * caller, zero-filled for a first iteration).  offset is the block's place
 * in the side's RAM offset space (0 = let the library lay blocks out).
 * Registration works in chunks of a block, of opts.chunk_size bytes
 * (C = 2^k, 1 MiB by default, as QEMU's x-rdma-chunk-size):
 *
 *   block:  |<-- chunk 0 (C bytes) -->|<-- chunk 1 -->| ... |<- last ->|
 *           host                                                host+length
 *   chunk of an address a = (a - host) >> k; the last chunk may be short.
 *
 * RDMIG_CHUNK_SHIFT and RDMIG_CHUNK_SIZE name the default (1 MiB).
 */
#define RDMIG_CHUNK_SHIFT 20
#define RDMIG_CHUNK_SIZE (1ull << RDMIG_CHUNK_SHIFT)
#define RDMIG_CHUNK_SIZE_MIN RDMIG_CHUNK_SIZE
#define RDMIG_CHUNK_SIZE_MAX (1ull << 30)
/* Whether v is a valid chunk size (0 is not: it only means "default"). */
#define RDMIG_CHUNK_SIZE_VALID(v) \
	((v) >= RDMIG_CHUNK_SIZE_MIN && (v) <= RDMIG_CHUNK_SIZE_MAX && !((v) & ((v) - 1)))
#define RDMIG_MAX_MERGE (2ull << 20) /* the longest single RDMA WRITE */

/* The chunk geometry above, for callers that walk a block as the engine
 * does (chunk_size: a valid chunk size, see RDMIG_CHUNK_SIZE_VALID). */
static inline uint64_t rdmig_chunk_count(uint64_t length, uint64_t chunk_size)
{
	return (length + chunk_size - 1) / chunk_size;
}

/* Bytes of chunk `chunk` of a block of `length` bytes: chunk_size, or
 * less for the last one (0 past the end). */
static inline uint64_t rdmig_chunk_len(uint64_t length, uint64_t chunk, uint64_t chunk_size)
{
	uint64_t start = chunk * chunk_size;

	if (start >= length)
		return 0;
	return length - start < chunk_size ? length - start : chunk_size;
}

struct rdmig_block {
	const char *name; /* copied by the library */
	void *host;
	uint64_t length;
	uint64_t offset;
};

/* What one side did, for summaries and benchmarks. */
struct rdmig_engine_stats {
	size_t size;                   /* the caller's sizeof, set before the call */
	uint64_t bytes_written;        /* RDMA WRITE payload (source) */
	uint64_t bytes_compressed;     /* ranges sent / applied as COMPRESS */
	uint64_t writes_posted;        /* RDMA WRITE work requests (source) */
	uint64_t writes_signaled;
	uint64_t register_requests;    /* REGISTER_REQUEST round trips (source) or served (dest) */
	uint64_t chunks_registered;    /* local chunk registrations */
	uint64_t stream_bytes;         /* QEMU_FILE payload bytes */
	uint64_t iterations;           /* REGISTER_FINISHED sent / received */
	/* registration round-trip latencies in microseconds (source only),
	 * from the request to its reply, of the requests whose reply was
	 * waited for at once; a request sent ahead waits behind the writes
	 * queued before it, and since 0.2 those (register_ahead) are left
	 * out: their cost is what register_wait_seconds shows */
	double register_rtt_p50_us, register_rtt_p99_us;
	/* of register_requests (source): those sent ahead, before the previous
	 * chunk's write was posted, so that the round trip overlapped it */
	uint64_t register_ahead;
	/* Since 0.2 (callers built against 0.1 pass a smaller size and do not
	 * see them).  register_wait_seconds (source): time spent waiting for
	 * REGISTER_RESULTs, ahead or not; writes already posted may keep the
	 * wire busy meanwhile.  register_seconds: time spent registering
	 * local memory (chunks, or whole blocks with PIN_ALL); on a
	 * destination that is where fresh pages are faulted in. */
	double register_wait_seconds;
	double register_seconds;
	/* Appended in 0.2, after the above (source): the threads that
	 * registered local blocks whole (PIN_ALL, pin-local), the most any
	 * one block had (rdmig_source_set_register_threads; fewer when the
	 * block has fewer chunks or a thread could not start); 0 when no
	 * block was registered whole. */
	uint64_t register_threads;
};

struct rdmig_source;

/*
 * Source: wrap a connected connection (the source keeps using it and it
 * must outlive the source) and describe the blocks to send.
 */
int rdmig_source_create(struct rdmig_conn *c, const struct rdmig_block *blocks, size_t nblocks,
			struct rdmig_source **out);
/* Append bytes to the opaque stream (sent as QEMU_FILE messages of at most
 * 32 KiB each).  After rdmig_source_setup the writes handed over before are
 * posted first, as QEMU does: the destination has their data in memory by
 * the time these bytes arrive. */
int rdmig_source_write_stream(struct rdmig_source *s, const void *buf, size_t len);
/* RAM_BLOCKS_REQUEST / RESULT: learn the destination's blocks and check
 * their count and lengths; with PIN_ALL register every local block.
 * Call once, before the first rdmig_source_write. */
int rdmig_source_setup(struct rdmig_source *s);
/*
 * Send [offset, offset + len) of block.  Contiguous calls are merged into
 * one RDMA WRITE (never across a chunk with dynamic registration, at most
 * RDMIG_MAX_MERGE).  A range that is all zero in a chunk the destination
 * has not registered yet goes as COMPRESS instead of data.  The memory
 * must not change until rdmig_source_end_iteration returns.
 */
int rdmig_source_write(struct rdmig_source *s, uint32_t block, uint64_t offset, uint64_t len);
/*
 * Keep-alives (0.2, RDMIG_0.2).  With interval_ms > 0 the source sends an
 * empty stream message (QEMU_FILE of 0 bytes) whenever interval_ms passed
 * since its last control message: from rdmig_source_write, and from
 * rdmig_source_keep_alive, which a caller busy elsewhere between writes
 * (hashing, reading a file) calls now and then; it returns 0 at once when
 * none is due.  Only RDMA writes flow with PIN_ALL, so without them a
 * destination times out after its opts.timeout_ms of silence; and the
 * message waits for the peer's READY, so a dead destination is noticed
 * instead of written on.  Off by default (0); RDMIG_EINVAL for < 0.  An
 * rdmig destination ignores the empty message; QEMU's would take it for
 * the end of the stream, so leave them off towards QEMU.
 */
int rdmig_source_set_keep_alive(struct rdmig_source *s, int interval_ms);
int rdmig_source_keep_alive(struct rdmig_source *s);
/*
 * Lookahead (0.2, RDMIG_0.2).  With on != 0 and dynamic registration, the
 * first write into chunk N of a block also sends the REGISTER_REQUEST of
 * chunk N+1, when that chunk has no key yet and is not all zero in the
 * source's memory, and takes its reply only when the next control message
 * or the first write into N+1 needs it: the round trip and the
 * destination's registration overlap chunk N on the wire instead of
 * following it.  For callers that write a block's chunks in order, as a
 * first pass does; a chunk asked for and never written stays registered
 * on the destination (one chunk at most per guess).  The bytes are what
 * QEMU sends, in another order, so a QEMU destination serves them too.
 * Off by default.
 */
int rdmig_source_set_lookahead(struct rdmig_source *s, int on);
/*
 * Pin local (0.2, RDMIG_0.2).  With on != 0 and dynamic registration the
 * source registers its own blocks whole in rdmig_source_setup, while the
 * destination answers RAM_BLOCKS_REQUEST, instead of each chunk before
 * its first write; the destination still registers chunk by chunk, and
 * the wire is unchanged.  Pinning costs per page, so a chunk at a time
 * costs as much in all, but between the writes, where it holds them up
 * (siw in the test guest, 512 MiB at 32 MiB chunks: 4.3-6.2 s of the
 * source's registration in the data path, 1.5-2.1 s whole at setup).
 * The price: all of the source's memory is pinned from the start, zero
 * chunks too (they still go as COMPRESS).  A block that cannot be
 * registered whole (the locked-memory limit) is registered by chunks as
 * without the option, which the log says at RDMIG_LOG_INFO.  Call before
 * rdmig_source_setup (RDMIG_ESTATE after); off by default.
 */
int rdmig_source_set_pin_local(struct rdmig_source *s, int on);
/*
 * What a migration pins (0.3, RDMIG_0.3), so that a caller can check the
 * locked-memory limit before it starts, with the library's own figures
 * rather than a model of them.  Registered memory is pinned and counted
 * against RLIMIT_MEMLOCK (ulimit -l; LimitMEMLOCK= for a systemd service)
 * per process: every connection its control buffers
 * (RDMIG_CONTROL_REGISTERED); with pin_all every block whole, from
 * RAM_BLOCKS on; with dynamic registration each chunk (chunk_size bytes,
 * 0: RDMIG_CHUNK_SIZE) that carries data, from its first write, so at
 * least the largest chunk and at most every block (a source with
 * rdmig_source_set_pin_local, every block; a destination of image sets
 * gives chunks back as their spans land, rdmig_images(3)).  The block
 * lengths count in whole pages.
 *
 * rdmig_pin_need fills *out (its size set by the caller: sizeof(*out),
 * or less from an older build, which gets the fields it knows): least,
 * what the migration cannot start without; most, what it may hold at
 * once; and limit, the limit as the kernel applies it to this process on
 * device (a device name, or NULL when not known yet): UINT64_MAX when none
 * applies (unlimited, or CAP_IPC_LOCK on a device that honours it; siw
 * counts every registration against the limit, capability or not).  A
 * limit below least refuses the migration; one below most lets a dynamic
 * one run while the data that arrives fits.  RDMIG_EINVAL for a NULL out
 * or one whose size is not set, NULL blocks with n > 0 or an invalid
 * chunk size.
 */
struct rdmig_pin_need {
	size_t size;    /* set by the caller: sizeof(struct rdmig_pin_need) */
	uint64_t least; /* bytes pinned before the first write */
	uint64_t most;  /* bytes pinned at most */
	uint64_t limit; /* RLIMIT_MEMLOCK on device for this process; UINT64_MAX: none */
};
int rdmig_pin_need(const char *device, int pin_all, uint64_t chunk_size,
		   const struct rdmig_block *blocks, size_t n, struct rdmig_pin_need *out);
/*
 * Register threads (0.2, RDMIG_0.2).  A block registered whole (PIN_ALL,
 * or rdmig_source_set_pin_local) is registered in pieces of 16 MiB of
 * whole chunks, each its own MR, by n threads that rdmig_source_setup
 * starts and that go on, piece by piece in the order of the writes, while
 * the first pieces are written (since 0.3): a write waits only for its own
 * piece.  The keys are the source's own, so the wire does not change; a
 * merged PIN_ALL write stops at a piece's border.  The threads block every
 * signal, end with the last piece, and rdmig_source_destroy joins them.
 * 1 (the default): one thread; 0: one per online CPU, at most 8.
 * RDMIG_EINVAL above RDMIG_MAX_REGISTER_THREADS, RDMIG_ESTATE after
 * rdmig_source_setup.
 */
#define RDMIG_MAX_REGISTER_THREADS 64
int rdmig_source_set_register_threads(struct rdmig_source *s, unsigned n);
/*
 * Skip zero pages (0.2, RDMIG_0.2).  The source tests what
 * rdmig_source_write hands over for zeros itself, once, so a caller hands
 * whole ranges and does not scan them.  Off (the default, what QEMU
 * sends): a range whose chunk has no key yet and that is all zero goes as
 * COMPRESS (the destination zeroes it), everything else is written.  With
 * on != 0, every page (4 KiB, at block offsets that are multiples of 4096)
 * that is all zero is not sent at all, neither written nor COMPRESSed:
 * only for a destination whose memory is known to be zero already (fresh
 * anonymous memory, as rdmig recv allocates), never for one that may hold
 * old data (a QEMU destination).  bytes_written then counts what was
 * written, and what was handed over beyond it was skipped.  May be changed
 * at any time; it applies to the ranges handed over after it.
 */
int rdmig_source_set_skip_zero(struct rdmig_source *s, int on);
/* Post what is pending, wait for every write to complete, and send
 * REGISTER_FINISHED.  Pages may then be sent again (a new iteration). */
int rdmig_source_end_iteration(struct rdmig_source *s);
/* Set out->size = sizeof(*out) first (see rdmig_conn_counters). */
void rdmig_source_stats(const struct rdmig_source *s, struct rdmig_engine_stats *out);
/* Deregisters local memory; does not close the connection. */
void rdmig_source_destroy(struct rdmig_source *s);

struct rdmig_dest;

enum rdmig_event_type {
	RDMIG_EV_STREAM = 1,         /* data/len: stream bytes, valid until the next call */
	RDMIG_EV_BLOCKS_NEEDED = 2,  /* the source asked for the blocks: call
				      * rdmig_dest_set_blocks, then rdmig_dest_next */
	RDMIG_EV_ITERATION_DONE = 3, /* REGISTER_FINISHED: one pass of writes is complete */
	RDMIG_EV_END = 4,            /* the source disconnected */
	/* Added in 0.2, reported only when asked for (rdmig_dest_set_events);
	 * data points at a struct rdmig_dest_range, len = its sizeof: */
	RDMIG_EV_REGISTERED = 5,     /* a REGISTER_REQUEST record was served */
	RDMIG_EV_COMPRESSED = 6,     /* a COMPRESS record zeroed its range */
	RDMIG_EV_UNREGISTERED = 7,   /* an UNREGISTER_REQUEST record was served */
};

struct rdmig_event {
	int type;
	const void *data;
	size_t len;
};

/*
 * What one served record covered (RDMIG_EV_REGISTERED, _COMPRESSED,
 * _UNREGISTERED): bytes [offset, offset + len) of block `block` (its index
 * in the source's order), offset counted from the block's start (host),
 * and chunk = offset / chunk size, the chunk the range begins in.
 *  - REGISTERED: the chunks the record asked for, whole (the last chunk of
 *    a block may be short): chunk .. chunk + (its `chunks` field), clipped
 *    to the block; reported whether the chunks were registered for it or
 *    already were.
 *  - COMPRESSED: the range the record zeroed, as the source gave it (it
 *    need not be chunk-aligned); a record of length 0 zeroes nothing and
 *    is not reported.
 *  - UNREGISTERED: the chunk the record named, whole; reported whether it
 *    was released or stays registered because its region spans others.
 * Frozen (see the conventions above).  Added in 0.2.
 */
struct rdmig_dest_range {
	uint32_t block;
	uint32_t chunk;
	uint64_t offset;
	uint64_t len;
};

/* The reports a destination may be asked for (rdmig_dest_set_events). */
#define RDMIG_DEST_REPORT_REGISTER 0x1u   /* RDMIG_EV_REGISTERED */
#define RDMIG_DEST_REPORT_COMPRESS 0x2u   /* RDMIG_EV_COMPRESSED */
#define RDMIG_DEST_REPORT_UNREGISTER 0x4u /* RDMIG_EV_UNREGISTERED */

/* Destination: wrap an accepted connection (it must outlive the dest).
 * Its chunk size is the connection's (opts.chunk_size). */
int rdmig_dest_create(struct rdmig_conn *c, struct rdmig_dest **out);
/* Change the destination's chunk size (see rdmig_opts.chunk_size; 0 = the
 * default) once it is known, e.g. from the source's own stream: only before
 * rdmig_dest_set_blocks (RDMIG_ESTATE after), RDMIG_EINVAL for a value that
 * is not a power of two from 1 MiB to 1 GiB.  Added in 0.2 (RDMIG_0.2). */
int rdmig_dest_set_chunk_size(struct rdmig_dest *d, uint64_t chunk_size);
/* The blocks to receive into, in the source's order (count and lengths
 * must match the source's).  Offsets of 0 are laid out by the library.
 * May be called before the source asks, or on RDMIG_EV_BLOCKS_NEEDED. */
int rdmig_dest_set_blocks(struct rdmig_dest *d, const struct rdmig_block *blocks, size_t nblocks);
/*
 * Run the destination loop (send READY, wait for any message, handle it)
 * until something needs the caller: stream bytes, the block list, the end
 * of an iteration, the end, or a served request the caller asked to hear
 * of (rdmig_dest_set_events).  Registration, COMPRESS and unregistration
 * are served inside, after checking every index, offset and length against
 * the blocks; a violation sends ERROR and returns RDMIG_ERANGE (or another
 * code), with the field and value in rdmig_conn_errmsg.  After a failure
 * every later call returns the same code and receives nothing.
 */
int rdmig_dest_next(struct rdmig_dest *d, struct rdmig_event *ev);
/*
 * rdmig_dest_next for an event loop (0.2): it never waits for the source's
 * next message.  It sends the READY that message needs (once: a call that
 * finds it sent does not send another), then looks whether the message
 * came: when it did, it is served and the event returned exactly as
 * rdmig_dest_next would; when not, RDMIG_EAGAIN (nothing failed, nothing
 * is sticky): sleep on rdmig_conn_fd of the connection, which becomes
 * readable when the message (or the disconnect, or an ERROR) comes, and
 * call again.  RDMIG_EV_END, failures and the sticky failure are as with
 * rdmig_dest_next, and the two may be mixed freely: rdmig_dest_next after
 * an RDMIG_EAGAIN waits for the message the READY already asked for.  No
 * timeout runs for the message: the loop decides how long it waits.
 *
 * What may still block, each step bounded by opts.timeout_ms unless said
 * otherwise, none waiting for the peer's next message: sending the READY
 * and the replies (REGISTER_RESULT, UNREGISTER_FINISHED, RAM_BLOCKS_RESULT)
 * when the send queue is full or the copy buffer is still in use (local
 * completions only); registering memory (REGISTER_REQUEST: the chunks
 * asked for; with PIN_ALL the whole blocks, when the blocks are sent:
 * time in proportion to their size, no timeout); zeroing COMPRESS ranges
 * (in proportion to their size; opts.cancel is looked at); and after a
 * violation, telling the source (up to about 2 s).  Several of those may
 * happen in one call: the records of one message are served together, and
 * a message that yields no event (REGISTER_REQUEST...) is followed by the
 * READY for the next and one more look, never a wait.
 */
int rdmig_dest_try_next(struct rdmig_dest *d, struct rdmig_event *ev);
/*
 * Destination events: which served requests rdmig_dest_next reports, as a
 * mask of RDMIG_DEST_REPORT_* bits (RDMIG_EINVAL for any other bit;
 * RDMIG_ENOMEM when the first non-zero mask cannot get its queue).  The
 * default, 0, reports none: a caller that never calls this sees only
 * RDMIG_EV_STREAM .. RDMIG_EV_END, as with 0.1.  The mask applies to the messages served after the
 * call (events already queued are still handed out); it may be changed at
 * any time.
 *
 * When: after the library served the whole message, i.e. checked every
 * record, registered or zeroed or released, and (REGISTER_REQUEST,
 * UNREGISTER_REQUEST) sent the reply; a message it refuses reports
 * nothing.  What: one event per record, in the records' order (a message
 * carries up to RDMIG_MAX_REPEAT of them), each handed out by its own
 * rdmig_dest_next call before the next message is read.  ev.data points
 * at a struct rdmig_dest_range (ev.len = its sizeof) that stays valid until
 * the next call on the destination.
 *
 * With PIN_ALL every block is registered whole when the blocks are sent
 * (RAM_BLOCKS_RESULT), and no event reports that; a source then sends no
 * REGISTER_REQUEST for them (QEMU does not), and one it does send is
 * answered with the block's key and reported like any other.  COMPRESS is
 * reported either way.  Added in 0.2 (RDMIG_0.2).
 */
int rdmig_dest_set_events(struct rdmig_dest *d, unsigned mask);
/* Set out->size = sizeof(*out) first (see rdmig_conn_counters). */
void rdmig_dest_stats(const struct rdmig_dest *d, struct rdmig_engine_stats *out);
void rdmig_dest_destroy(struct rdmig_dest *d);
/* The last error of a source or destination (its connection's errmsg, or
 * the engine's own). */
const char *rdmig_source_errmsg(const struct rdmig_source *s);
const char *rdmig_dest_errmsg(const struct rdmig_dest *d);

/* ------------------------------------------------------------------ probe -- */

/* One QP creation with a fixed inline request (no ladder). */
struct rdmig_probe_row {
	uint32_t requested;
	int result;             /* 0, or -errno of the failed create */
	uint32_t written_back;  /* cap.max_inline_data written back */
	uint32_t send_sge_back; /* cap.max_send_sge written back */
	uint64_t queue_bytes;   /* the QP's queue mappings (send + receive), 0 if unknown */
};

#define RDMIG_PROBE_SIZES 10
struct rdmig_probe_report {
	char device[64];
	uint32_t max_send_wr, max_send_sge; /* the caps the ladder used */
	int ladder_result;                  /* 0 or a negative code (-errno) */
	struct rdmig_inline_info ladder;    /* outcome of the ladder */
	struct rdmig_probe_row rows[RDMIG_PROBE_SIZES]; /* 0,16,...,1024 */
};

/*
 * For the named device (NULL: every device), create QPs through the inline
 * ladder of opts->inline_request with the transport's real caps, and once per
 * request size 0, 16, 32, 40, 64, 80, 128, 256, 512, 1024.  *out is an array
 * of *count reports, freed with rdmig_probe_free.  errbuf (may be NULL)
 * receives a message on failure.
 */
int rdmig_probe(const char *device, const struct rdmig_opts *opts,
		struct rdmig_probe_report **out, size_t *count, char *errbuf, size_t errlen);
void rdmig_probe_free(struct rdmig_probe_report *reports);

#ifdef __cplusplus
}
#endif
#endif /* RDMIG_H */
