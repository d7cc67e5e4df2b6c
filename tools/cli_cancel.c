/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_cancel.c - SIGINT and SIGTERM end a migration cleanly.
 *
 * (And SIGPIPE is ignored: see cli_cancel_install.)
 *
 * The handler only records the signal and raises the flag the library
 * polls (rdmig_opts.cancel): every wait of the library then returns
 * RDMIG_ECANCELED within 100 ms, and the command looks at the flag between
 * its own steps (hashing a chunk, writing an image).  It then tells the
 * peer (ERROR), disconnects, removes what it had not finished and exits
 * with 128 + the signal (130 for SIGINT, 143 for SIGTERM).
 *
 * To tell the peer, the command lowers the flag again (cli_cancel_rearm):
 * sending ERROR waits a little for a credit, and closing waits for the last
 * sends.  A second signal raises it again, so those waits end at once:
 * press Ctrl-C twice to leave without the courtesy.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include "cli.h"

static volatile sig_atomic_t cancel_flag; /* what the library polls */
static volatile sig_atomic_t cancel_signal; /* the first signal that came */

static void on_cancel_signal(int sig)
{
	if (!cancel_signal)
		cancel_signal = sig;
	cancel_flag = 1;
}

int cli_cancel_install(struct rdmig_opts *opts)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_cancel_signal;
	sigemptyset(&sa.sa_mask);
	/* Restart ordinary system calls (reads, writes); poll(2), where the
	 * library waits, returns EINTR regardless and looks at the flag. */
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -1;
	/* siw transmits on its TCP socket from the thread that posts, without
	 * MSG_NOSIGNAL: posting to a connection whose peer died can raise
	 * SIGPIPE in us.  The failure arrives as a completion error anyway. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -1;
	opts->cancel = &cancel_flag;
	return 0;
}

bool cli_cancelled(void)
{
	return cancel_signal != 0;
}

void cli_cancel_rearm(void)
{
	cancel_flag = 0;
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
