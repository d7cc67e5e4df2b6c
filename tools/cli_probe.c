/* SPDX-License-Identifier: BSD-2-Clause */
/* cli_probe.c - `rdmig probe`: the inline ladder and table per device. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "cli_json.h"

static void print_text(const struct rdmig_probe_report *r)
{
	printf("%s: ladder (max_send_wr %u, max_send_sge %u): ", r->device, r->max_send_wr,
	       r->max_send_sge);
	if (r->ladder_result)
		printf("FAILED after %u tries (%s)\n", r->ladder.tries,
		       rdmig_strerror(r->ladder_result));
	else
		printf("asked %u, granted %u, tries %u, written back %u\n", r->ladder.asked,
		       r->ladder.granted, r->ladder.tries, r->ladder.written_back);
	printf("  %9s  %-14s %12s %13s %12s\n", "requested", "result", "written back", "send_sge back",
	       "queue bytes");
	for (int i = 0; i < RDMIG_PROBE_SIZES; i++) {
		const struct rdmig_probe_row *w = &r->rows[i];
		if (w->result)
			printf("  %9u  %-14s %12s %13s\n", w->requested, strerror(-w->result), "-", "-");
		else
			printf("  %9u  %-14s %12u %13u %12llu\n", w->requested, "ok", w->written_back,
			       w->send_sge_back, (unsigned long long)w->queue_bytes);
	}
}

static struct json_object *json_ladder(const struct rdmig_probe_report *r)
{
	struct json_object *o = cj_object();

	cj_bool(o, "ok", !r->ladder_result);
	cj_u64(o, "asked", r->ladder.asked);
	cj_u64(o, "granted", r->ladder.granted);
	cj_u64(o, "tries", r->ladder.tries);
	cj_u64(o, "written_back", r->ladder.written_back);
	return o;
}

static struct json_object *json_row(const struct rdmig_probe_row *w)
{
	struct json_object *o = cj_object();

	cj_u64(o, "requested", w->requested);
	cj_bool(o, "ok", !w->result);
	cj_i64(o, "errno", -w->result);
	cj_u64(o, "written_back", w->result ? 0 : w->written_back);
	cj_u64(o, "queue_bytes", w->queue_bytes);
	return o;
}

/* One object: the devices in an array, one object each. */
static void print_json(const struct rdmig_probe_report *r, size_t n)
{
	struct json_object *o = cj_summary(), *arr = cj_array();

	for (size_t d = 0; d < n; d++) {
		struct json_object *dev = cj_object(), *rows = cj_array();

		cj_str(dev, "device", r[d].device);
		cj_u64(dev, "max_send_wr", r[d].max_send_wr);
		cj_u64(dev, "max_send_sge", r[d].max_send_sge);
		cj_add(dev, "ladder", json_ladder(&r[d]));
		for (int i = 0; i < RDMIG_PROBE_SIZES; i++)
			cj_push(rows, json_row(&r[d].rows[i]));
		cj_add(dev, "rows", rows);
		cj_push(arr, dev);
	}
	cj_add(o, "devices", arr);
	cj_summary_print(o);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmig probe [--device DEV] [--inline auto|0|N] [--json] [-v]\n"
		   "Show how each RDMA device settles inline sizes.\n"
		   "  -d, --device DEV  only this device (e.g. rxe0)\n"
		   "  -i, --inline      the ladder's request: auto, 0 or N up to 1024\n"
		   "  -j, --json        one JSON object on stdout instead of the table\n"
		   "  -v, --verbose     the library's notes; -vv adds its debug log (the rungs)\n"
		   "  -h, --help        this help\n");
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"device", required_argument, NULL, 'd'}, {"inline", required_argument, NULL, 'i'},
		{"json", no_argument, NULL, 'j'},         {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
	struct rdmig_opts opts;
	struct rdmig_probe_report *reports;
	const char *device = NULL;
	char err[512];
	size_t n;
	int json = 0, c;

	cli_run_begin("probe", NULL, "probe", argc, argv);
	rdmig_opts_init(&opts);
	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	while ((c = getopt_long(argc, argv, ":d:i:jvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': device = optarg; break;
		case 'i':
			if (cli_parse_inline(optarg, &opts.inline_request))
				return cli_usage("--inline '%s': takes auto, 0 or a size up to 1024",
						 optarg);
			break;
		case 'j': json = 1; cli_run.json = true; break;
		case 'v': /* as send and recv: -v notes, -vv the debug log (the rungs) too */
			opts.log_level = opts.log == cli_log ? RDMIG_LOG_DEBUG : RDMIG_LOG_INFO;
			opts.log = cli_log;
			break;
		case 'h': usage(stdout); return 0;
		default: return cli_bad_option(c, argv);
		}
	}
	if (optind != argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	cli_phase("probe");
	c = rdmig_probe(device, &opts, &reports, &n, err, sizeof(err));
	if (c)
		return cli_fail_lib("probe", c, err);
	if (json)
		print_json(reports, n);
	else
		for (size_t i = 0; i < n; i++)
			print_text(&reports[i]);
	rdmig_probe_free(reports);
	return 0;
}
