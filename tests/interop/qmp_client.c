/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qmp_client.c - the interop tests' QMP client (json-c).
 *
 * It replaces a Python one: in the emulated test guest each start of the
 * Python interpreter took 1.5-3 s, and a case asks QEMU ten to twenty
 * questions, so the client's start-up was most of an interop case's time.
 *
 * usage: qmp_client SOCKET hmp 'COMMAND LINE'    a human-monitor command's output
 *        qmp_client SOCKET caps NAME=on|off ...  migrate-set-capabilities
 *        qmp_client SOCKET migrate URI [TIMEOUT] migrate and wait until it is over;
 *                                                prints a JSON summary, exit 0 only
 *                                                if it completed
 *        qmp_client SOCKET incoming [TIMEOUT]    wait until an incoming migration is
 *                                                over; JSON summary, exit 0 only if
 *                                                it completed
 *        qmp_client SOCKET active [TIMEOUT]      wait until a migration (either side)
 *                                                is active; prints its status, exit 0
 *                                                only if active
 *        qmp_client SOCKET status                the run state
 *        qmp_client SOCKET EXECUTE [JSON-ARGS]   any command; prints its "return"
 *
 * Every QMP or socket error ends it with status 2 and one line on stderr.
 * The summaries print "key": value pairs, which the scripts grep.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct qmp {
	FILE *in;
	int fd;
	const char *what; /* the command, for error lines */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(double seconds)
{
	struct timespec ts = { 0, (long)(seconds * 1e9) };

	nanosleep(&ts, NULL);
}

static void die(const struct qmp *q, const char *why, const char *detail)
{
	fprintf(stderr, "qmp: %s: %s%s%s\n", q->what, why, detail ? ": " : "", detail ? detail : "");
	exit(2);
}

/* QEMU creates its socket a moment after it starts: retry for WAIT s. */
static int connect_socket(const char *path, double wait)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	double deadline = now() + wait;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		close(fd);
		if (now() > deadline)
			return -1;
		nap(0.1);
	}
}

/* One JSON object a line; QEMU's events are skipped. */
static struct json_object *read_reply(struct qmp *q)
{
	char *line = NULL;
	size_t cap = 0;

	for (;;) {
		struct json_object *msg;

		if (getline(&line, &cap, q->in) < 0) {
			free(line);
			die(q, "QMP connection closed", NULL);
		}
		msg = json_tokener_parse(line);
		if (!msg) {
			free(line);
			die(q, "QEMU sent a line that is not JSON", NULL);
		}
		if (json_object_object_get_ex(msg, "event", NULL)) {
			json_object_put(msg);
			continue;
		}
		free(line);
		return msg;
	}
}

/* Execute NAME with ARGS (taken over, may be NULL); its "return", owned by
 * the caller.  A QMP error ends the program. */
static struct json_object *execute(struct qmp *q, const char *name, struct json_object *args)
{
	struct json_object *msg = json_object_new_object(), *reply, *ret, *err, *desc;
	const char *text;

	json_object_object_add(msg, "execute", json_object_new_string(name));
	if (args)
		json_object_object_add(msg, "arguments", args);
	text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
	if (dprintf(q->fd, "%s\n", text) < 0)
		die(q, "cannot write to QEMU", strerror(errno));
	json_object_put(msg);
	reply = read_reply(q);
	if (json_object_object_get_ex(reply, "error", &err)) {
		json_object_object_get_ex(err, "desc", &desc);
		fprintf(stderr, "qmp: %s: %s\n", name, desc ? json_object_get_string(desc) : "?");
		exit(2);
	}
	if (!json_object_object_get_ex(reply, "return", &ret))
		ret = NULL;
	json_object_get(ret);
	json_object_put(reply);
	return ret;
}

static void qmp_open(struct qmp *q, const char *path)
{
	q->fd = connect_socket(path, 60.0);
	if (q->fd < 0)
		die(q, "cannot connect to the QMP socket", strerror(errno));
	q->in = fdopen(dup(q->fd), "r");
	if (!q->in)
		die(q, "fdopen", strerror(errno));
	json_object_put(read_reply(q)); /* the greeting */
	json_object_put(execute(q, "qmp_capabilities", NULL));
}

static const char *get_string(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static bool status_is(const char *status, const char *const *set)
{
	for (; status && *set; set++)
		if (strcmp(status, *set) == 0)
			return true;
	return false;
}

static const char *const over[] = { "completed", "failed", "cancelled", NULL };

/* Poll query-migrate until one of UNTIL or TIMEOUT s after T0; the last answer. */
static struct json_object *poll_migrate(struct qmp *q, double t0, double timeout, double period,
					const char *const *until)
{
	struct json_object *info = NULL;

	while (now() - t0 < timeout) {
		json_object_put(info);
		info = execute(q, "query-migrate", NULL);
		if (status_is(get_string(info, "status"), until))
			break;
		nap(period);
	}
	return info;
}

/* QEMU says "completed" a moment before it fills in total-time and
 * downtime (7.2 answered 0 for both once the client polled fast enough to
 * ask in between): ask again, for up to a second, until they are there. */
static struct json_object *settle_times(struct qmp *q, struct json_object *info)
{
	struct json_object *total;
	double until = now() + 1.0;

	while (info && now() < until) {
		const char *status = get_string(info, "status");

		if (!status || strcmp(status, "completed") != 0)
			break;
		if (json_object_object_get_ex(info, "total-time", &total) &&
		    json_object_get_int64(total) > 0)
			break;
		nap(0.02);
		json_object_put(info);
		info = execute(q, "query-migrate", NULL);
	}
	return info;
}

static struct json_object *seconds(double s)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3f", s);
	return json_object_new_double_s(s, text);
}

static void copy_key(struct json_object *to, struct json_object *from, const char *key)
{
	struct json_object *v;

	if (from && json_object_object_get_ex(from, key, &v))
		json_object_object_add(to, key, json_object_get(v));
	else
		json_object_object_add(to, key, NULL);
}

static void copy_if_present(struct json_object *to, struct json_object *from, const char *key)
{
	if (from && json_object_object_get_ex(from, key, NULL))
		copy_key(to, from, key);
}

static int print_summary(struct json_object *out)
{
	const char *status = get_string(out, "status");

	puts(json_object_to_json_string_ext(out, JSON_C_TO_STRING_SPACED));
	return status && strcmp(status, "completed") == 0 ? 0 : 1;
}

static int cmd_migrate(struct qmp *q, const char *uri, double timeout)
{
	static const char *const times[] = { "total-time", "downtime", "setup-time", "error-desc" };
	static const char *const ram_keys[] = { "transferred", "total", "normal", "duplicate",
						"dirty-sync-count", "mbps" };
	struct json_object *args = json_object_new_object(), *info, *out, *ram, *ram_in = NULL;
	double t0 = now();
	int rc;

	json_object_object_add(args, "uri", json_object_new_string(uri));
	json_object_put(execute(q, "migrate", args));
	info = poll_migrate(q, t0, timeout, 0.02, over);
	info = settle_times(q, info);
	out = json_object_new_object();
	copy_key(out, info, "status");
	json_object_object_add(out, "wall_seconds", seconds(now() - t0));
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		copy_if_present(out, info, times[i]);
	ram = json_object_new_object();
	if (info)
		json_object_object_get_ex(info, "ram", &ram_in);
	for (size_t i = 0; i < sizeof(ram_keys) / sizeof(ram_keys[0]); i++)
		copy_key(ram, ram_in, ram_keys[i]);
	json_object_object_add(out, "ram", ram);
	rc = print_summary(out);
	json_object_put(out);
	json_object_put(info);
	return rc;
}

static int cmd_incoming(struct qmp *q, double timeout)
{
	double t0 = now();
	struct json_object *info = poll_migrate(q, t0, timeout, 0.05, over);
	struct json_object *out = json_object_new_object();
	int rc;

	copy_key(out, info, "status");
	json_object_object_add(out, "waited_seconds", seconds(now() - t0));
	copy_if_present(out, info, "error-desc");
	rc = print_summary(out);
	json_object_put(out);
	json_object_put(info);
	return rc;
}

static int cmd_active(struct qmp *q, double timeout)
{
	static const char *const active_or_over[] = { "active", "completed", "failed",
						      "cancelled", NULL };
	struct json_object *info = poll_migrate(q, now(), timeout, 0.02, active_or_over);
	const char *status = get_string(info, "status");
	int rc = status && strcmp(status, "active") == 0 ? 0 : 1;

	puts(status ? status : "None");
	json_object_put(info);
	return rc;
}

static int cmd_caps(struct qmp *q, char **caps, int n)
{
	struct json_object *list = json_object_new_array(), *args = json_object_new_object();

	for (int i = 0; i < n; i++) {
		char *eq = strchr(caps[i], '=');
		struct json_object *cap = json_object_new_object();

		if (!eq)
			die(q, "not NAME=on|off", caps[i]);
		*eq = '\0';
		json_object_object_add(cap, "capability", json_object_new_string(caps[i]));
		json_object_object_add(cap, "state", json_object_new_boolean(strcmp(eq + 1, "on") == 0));
		json_object_array_add(list, cap);
	}
	json_object_object_add(args, "capabilities", list);
	json_object_put(execute(q, "migrate-set-capabilities", args));
	return 0;
}

static double timeout_arg(int argc, char **argv, int i, double fallback)
{
	return argc > i ? strtod(argv[i], NULL) : fallback;
}

static int run(struct qmp *q, int argc, char **argv)
{
	const char *cmd = argv[2];
	struct json_object *ret, *args = NULL;

	if (strcmp(cmd, "hmp") == 0 && argc > 3) {
		args = json_object_new_object();
		json_object_object_add(args, "command-line", json_object_new_string(argv[3]));
		ret = execute(q, "human-monitor-command", args);
		fputs(json_object_get_string(ret), stdout);
		json_object_put(ret);
		return 0;
	}
	if (strcmp(cmd, "caps") == 0)
		return cmd_caps(q, argv + 3, argc - 3);
	if (strcmp(cmd, "migrate") == 0 && argc > 3)
		return cmd_migrate(q, argv[3], timeout_arg(argc, argv, 4, 300.0));
	if (strcmp(cmd, "incoming") == 0)
		return cmd_incoming(q, timeout_arg(argc, argv, 3, 120.0));
	if (strcmp(cmd, "active") == 0)
		return cmd_active(q, timeout_arg(argc, argv, 3, 120.0));
	if (strcmp(cmd, "status") == 0) {
		ret = execute(q, "query-status", NULL);
		puts(get_string(ret, "status") ? get_string(ret, "status") : "?");
		json_object_put(ret);
		return 0;
	}
	if (argc > 3) {
		args = json_tokener_parse(argv[3]);
		if (!args)
			die(q, "not a JSON object", argv[3]);
	}
	ret = execute(q, cmd, args);
	puts(ret ? json_object_to_json_string_ext(ret, JSON_C_TO_STRING_SPACED) : "null");
	json_object_put(ret);
	return 0;
}

int main(int argc, char **argv)
{
	struct qmp q = { .what = argc > 2 ? argv[2] : "?" };
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SOCKET hmp|caps|migrate|incoming|active|status|EXECUTE ...\n",
			argv[0]);
		return 2;
	}
	qmp_open(&q, argv[1]);
	rc = run(&q, argc, argv);
	fclose(q.in);
	close(q.fd);
	return rc;
}
