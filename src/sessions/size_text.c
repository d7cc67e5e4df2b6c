/* SPDX-License-Identifier: BSD-2-Clause */
/* size_text.c - bytes in binary units (size_text.h). */
#include <stdio.h>
#include "size_text.h"

const char *size_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes < 1024)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else if (bytes < (1ull << 20))
		snprintf(buf, len, "%.1f KiB", (double)bytes / 1024);
	else if (bytes < (1ull << 30))
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1 << 20));
	else
		snprintf(buf, len, "%.2f GiB", (double)bytes / (1 << 30));
	return buf;
}
