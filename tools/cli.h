/* cli.h - shared pieces of the rdmig command (public API only). */
#ifndef RDMIG_CLI_H
#define RDMIG_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include "rdmig.h"

/* Split "HOST:PORT", "[V6]:PORT" or ":PORT" into host and port (both
 * NUL-terminated copies in the buffers).  Returns 0, or -1 with a message
 * in err. */
int cli_split_addr(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
		   char *err, size_t errlen);

/* Parse --inline's value: "auto", "0" or N bytes. */
int cli_parse_inline(const char *s, int *out);

/* Print "rdmig: <what>: <msg>" to stderr and return exit status 1. */
int cli_fail(const char *what, const char *msg);

/* Log callback printing to stderr with a level prefix (-v/-vv). */
void cli_log(void *ctx, int level, const char *msg);

int cmd_probe(int argc, char **argv);
int cmd_ping(int argc, char **argv);
int cmd_pong(int argc, char **argv);

#endif
