/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_cancel.c - SIGINT and SIGTERM end a migration cleanly.
 *
 * (And SIGPIPE is ignored: see cli_cancel_install.)
 *
 * The handler only records the signal and writes one byte to a self-pipe
 * whose read end is the library's rdmig_opts.cancel_fd: every wait of the
 * library then returns RDMIG_ECANCELED at once, and the command looks at
 * cli_cancelled() between its own steps (hashing a chunk, writing an
 * image).  (Without a pipe, the handler raises rdmig_opts.cancel, which
 * the library polls every 100 ms.)  It then tells the
 * peer (ERROR), disconnects, removes what it had not finished and exits
 * with 128 + the signal (130 for SIGINT, 143 for SIGTERM).
 *
 * To tell the peer, the command empties the pipe (and lowers the flag)
 * again (cli_cancel_rearm): sending ERROR waits a little for a credit, and
 * closing waits for the last sends.  A second signal writes again, so
 * those waits end at once: press Ctrl-C twice to leave without the
 * courtesy.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static volatile sig_atomic_t cancel_flag; /* what the library polls, without a pipe */
static volatile sig_atomic_t cancel_signal; /* the first signal that came */
static int cancel_pipe[2] = {-1, -1}; /* [0]: the library's cancel_fd */

static void on_cancel_signal(int sig)
{
	int saved = errno; /* write(2) must not change it under the thread */

	if (!cancel_signal)
		cancel_signal = sig;
	cancel_flag = 1;
	/* Non-blocking: a full pipe (thousands of signals) is readable anyway. */
	if (cancel_pipe[1] >= 0 && write(cancel_pipe[1], "!", 1) < 0) {
		/* nothing to do: the pipe already says cancel */
	}
	errno = saved;
}

/* The self-pipe, once per process (cli_cancel_install may run again). */
static bool cancel_pipe_open(void)
{
	if (cancel_pipe[0] < 0 && pipe2(cancel_pipe, O_NONBLOCK | O_CLOEXEC)) {
		cancel_pipe[0] = cancel_pipe[1] = -1;
		return false;
	}
	return true;
}

int cli_cancel_install(struct rdmig_opts *opts)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	/* The pipe before the handler: a signal in between must find it. */
	bool piped = cancel_pipe_open();
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_cancel_signal;
	sigemptyset(&sa.sa_mask);
	/* Restart ordinary system calls (reads, writes); poll(2), where the
	 * library waits, returns EINTR regardless, and sees the pipe. */
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -1;
	/* siw transmits on its TCP socket from the thread that posts, without
	 * MSG_NOSIGNAL: posting to a connection whose peer died can raise
	 * SIGPIPE in us.  The failure arrives as a completion error anyway. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -1;
	/* With the pipe, the library need not poll the flag every 100 ms. */
	if (piped)
		opts->cancel_fd = cancel_pipe[0];
	else
		opts->cancel = &cancel_flag;
	return 0;
}

bool cli_cancelled(void)
{
	return cancel_signal != 0;
}

void cli_cancel_rearm(void)
{
	char buf[64];

	cancel_flag = 0;
	while (cancel_pipe[0] >= 0 && read(cancel_pipe[0], buf, sizeof(buf)) > 0)
		; /* empty until EAGAIN: a signal after this writes again */
}

bool cli_cancel_tell_peer(struct rdmig_conn *conn)
{
	cli_cancel_rearm();
	return conn && rdmig_send_error(conn) == 0;
}

int cli_cancel_status(void)
{
	return cancel_signal ? 128 + cancel_signal : 1;
}

const char *cli_cancel_name(void)
{
	switch (cancel_signal) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	}
	return "a signal";
}

int cli_cancel_mask(int how, sigset_t *old)
{
	sigset_t sigs;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	return pthread_sigmask(how, &sigs, old);
}
