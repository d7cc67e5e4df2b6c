/* SPDX-License-Identifier: BSD-2-Clause */
/* pin_need.h - rdmig_pin_need's reading of a process's capabilities, for
 * its tests. */
#ifndef RDMIG_PIN_NEED_H
#define RDMIG_PIN_NEED_H
#include <stdbool.h>

/* Is capability bit cap set in the CapEff line of a /proc/PID/status
 * text (whose first line must follow a newline too)? */
bool rdmig__capeff_has(const char *status, int cap);

#endif
