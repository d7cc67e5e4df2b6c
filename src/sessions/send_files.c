/* SPDX-License-Identifier: BSD-2-Clause */
/* send_files.c - naming and mapping the input files of `rdmig send`
 * (send_files.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "send_files.h"

/* "NAME=FILE" (split at the first '=') or "FILE" (named by its basename). */
static int name_file(const char *arg, uint32_t index, struct rdmig_imgs_block *d, const char **path,
		     char *err, size_t errlen)
{
	const char *eq = strchr(arg, '='), *name;
	size_t len;

	if (eq) {
		name = arg;
		len = (size_t)(eq - arg);
		*path = eq + 1;
	} else {
		const char *slash = strrchr(arg, '/');
		name = slash ? slash + 1 : arg;
		len = strlen(name);
		*path = arg;
	}
	if (!**path) {
		snprintf(err, errlen, "'%s': no file name", arg);
		return -1;
	}
	if (rdmig_imgs_check_name(name, len, index, err, errlen)) {
		size_t n = strlen(err);
		snprintf(err + n, errlen - n, " in '%s'%s", arg,
			 eq ? "" : " (give the block another name with NAME=FILE)");
		return -1;
	}
	memcpy(d->name, name, len);
	d->name[len] = '\0';
	return 0;
}

/* Map one file read-only; an empty file gets no mapping. */
static int map_file(struct src_file *f, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", f->path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", f->path);
		close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		snprintf(err, errlen, "'%s' is too large to map", f->path);
		close(fd);
		return -1;
	}
	f->length = (uint64_t)st.st_size;
	if (f->length) {
		void *p = mmap(NULL, (size_t)f->length, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			snprintf(err, errlen, "cannot map '%s' (%llu bytes): %s", f->path,
				 (unsigned long long)f->length, strerror(errno));
			close(fd);
			return -1;
		}
		madvise(p, (size_t)f->length, MADV_SEQUENTIAL);
		f->map = p;
	}
	close(fd); /* the mapping keeps the file */
	return 0;
}

int send_files_name(struct send_files *in, char **args, int n, char *err, size_t errlen)
{
	in->n = n;
	in->f = calloc((size_t)n, sizeof(*in->f));
	in->desc = calloc((size_t)n, sizeof(*in->desc));
	in->blocks = calloc((size_t)n, sizeof(*in->blocks));
	in->items = calloc((size_t)n, sizeof(*in->items));
	if (!in->f || !in->desc || !in->blocks || !in->items) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (name_file(args[i], (uint32_t)i, &in->desc[i], &in->f[i].path, err, errlen))
			return -1;
		for (int j = 0; j < i; j++)
			if (!strcmp(in->desc[j].name, in->desc[i].name)) {
				snprintf(err, errlen, "'%s' and '%s' would both be block '%s' (name "
					 "one with NAME=FILE)", args[j], args[i], in->desc[i].name);
				return -1;
			}
	}
	return 0;
}

int send_files_map(struct send_files *in, char *err, size_t errlen)
{
	/* an empty block still needs a valid, non-NULL host address */
	static uint8_t empty_block;

	for (int i = 0; i < in->n; i++) {
		struct src_file *f = &in->f[i];

		if (map_file(f, err, errlen))
			return -1;
		if (f->length > UINT64_MAX - in->total) {
			snprintf(err, errlen, "the files add up to more than 2^64 bytes");
			return -1;
		}
		in->desc[i].length = f->length;
		in->total += f->length;
		in->blocks[i] = (struct rdmig_block){
			.name = in->desc[i].name,
			.host = f->map ? (void *)f->map : (void *)&empty_block,
			.length = f->length,
		};
		in->items[i] = (struct rdmig_images_item){in->desc[i].name, f->map, f->length};
	}
	return 0;
}

void send_files_free(struct send_files *in)
{
	for (int i = 0; in->f && i < in->n; i++)
		if (in->f[i].map)
			munmap(in->f[i].map, (size_t)in->f[i].length);
	free(in->f);
	free(in->desc);
	free(in->blocks);
	free(in->items);
	in->items = NULL;
	in->f = NULL;
	in->desc = NULL;
	in->blocks = NULL;
}
