/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_notify.c - tell systemd how a receiver stands (sd_notify(3)'s
 * protocol, without libsystemd): one datagram to $NOTIFY_SOCKET, a path or,
 * with a leading '@', a name in the abstract namespace.  Without it (not
 * under a unit of Type=notify, or NotifyAccess=) nothing is sent.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "cli.h"

void cli_notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun;
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sun.sun_path))
		return;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (const struct sockaddr *)&sun, len);
	close(fd);
}
