/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * replay_dir.c - reading the record directory of `rdmig send --qemu-replay`
 * as untrusted input (see replay_dir.h).
 */
#include "replay_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_PIECE (64u << 20) /* between two looks at cancelled() */

int rd_open(struct replay_dir *d, const char *path, char *err, size_t errlen)
{
	/* DIR itself is the user's choice, a link to it included */
	d->path = path;
	d->seen = NULL;
	d->nseen = 0;
	d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->fd < 0) {
		snprintf(err, errlen, "cannot open the record's directory '%s': %s", path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

void rd_close(struct replay_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	free(d->seen);
	d->seen = NULL;
	d->nseen = 0;
}

struct rd_ident {
	dev_t dev;
	ino_t ino;
};

/* Note st as taken: 0, or -1 with err when it was taken before (at most
 * RDMIG_RR_MAX_BLOCKS images: a linear look is enough). */
static int take_ident(struct replay_dir *d, const struct stat *st, char *err, size_t errlen)
{
	struct rd_ident *more;

	for (size_t i = 0; i < d->nseen; i++)
		if (d->seen[i].dev == st->st_dev && d->seen[i].ino == st->st_ino) {
			snprintf(err, errlen, "is an image an earlier block names already "
				 "(a hard link?): each image is read once");
			return -1;
		}
	if (!(more = realloc(d->seen, (d->nseen + 1) * sizeof(*more)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->seen = more;
	d->seen[d->nseen++] = (struct rd_ident){st->st_dev, st->st_ino};
	return 0;
}

#define LINK_REFUSED "is a symbolic link (a record's files are never followed)"

/* Why st is not a file the replay takes, or NULL. */
static const char *refusal(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return LINK_REFUSED;
	if (!S_ISREG(st->st_mode))
		return "is not a regular file";
	return NULL;
}

int rd_open_file(const struct replay_dir *d, const char *name, uint64_t *size, char *err,
		 size_t errlen)
{
	struct stat st;
	const char *why;
	int fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(err, errlen, "'%s/%s' " LINK_REFUSED, d->path, name);
		else
			snprintf(err, errlen, "cannot open '%s/%s': %s", d->path, name,
				 strerror(errno));
		return -1;
	}
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "cannot stat '%s/%s': %s", d->path, name, strerror(errno));
		close(fd);
		return -1;
	}
	if ((why = refusal(&st))) {
		snprintf(err, errlen, "'%s/%s' %s", d->path, name, why);
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

int rd_pread_all(int fd, void *buf, size_t len, uint64_t offset)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = 0;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

int rd_read_record(const struct replay_dir *d, char **text, size_t *len, char *err,
		   size_t errlen)
{
	uint64_t size;
	char *buf;
	int fd = rd_open_file(d, "record.txt", &size, err, errlen);

	if (fd < 0)
		return -1;
	if (size > RDMIG_RR_MAX_RECORD_BYTES) {
		snprintf(err, errlen, "'%s/record.txt' is larger than the %u bytes a record may have",
			 d->path, RDMIG_RR_MAX_RECORD_BYTES);
		close(fd);
		return -1;
	}
	if (!(buf = malloc(size ? (size_t)size : 1))) {
		snprintf(err, errlen, "out of memory for '%s/record.txt'", d->path);
		close(fd);
		return -1;
	}
	if (rd_pread_all(fd, buf, (size_t)size, 0)) {
		snprintf(err, errlen, "cannot read '%s/record.txt': %s", d->path,
			 errno ? strerror(errno) : "it shrank while it was read");
		free(buf);
		close(fd);
		return -1;
	}
	close(fd);
	*text = buf;
	*len = (size_t)size;
	return 0;
}

int rd_image_size(void *dir, const char *file, uint64_t *size, char *err, size_t errlen)
{
	struct replay_dir *d = dir;
	struct stat st;
	const char *why;

	if (fstatat(d->fd, file, &st, AT_SYMLINK_NOFOLLOW)) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if ((why = refusal(&st))) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (take_ident(d, &st, err, errlen))
		return -1;
	*size = (uint64_t)st.st_size;
	return 0;
}

void rd_free_image(uint8_t *mem, uint64_t length)
{
	if (mem)
		munmap(mem, (size_t)length);
}

/* The next data extent of fd at or after *from, below end: [*from, *to);
 * false when only a hole is left.  Without SEEK_DATA, everything is data. */
static bool next_data(int fd, uint64_t *from, uint64_t *to, uint64_t end)
{
	off_t data = lseek(fd, (off_t)*from, SEEK_DATA), hole;

	if (data < 0) {
		if (errno == ENXIO)
			return false; /* a hole up to the end (the size is checked after) */
		*to = end;
		return true;
	}
	if ((uint64_t)data >= end)
		return false;
	hole = lseek(fd, data, SEEK_HOLE);
	*from = (uint64_t)data;
	*to = hole < 0 || (uint64_t)hole > end ? end : (uint64_t)hole;
	return true;
}

int rd_read_image(const struct replay_dir *d, const struct rdmig_rr_block *b, uint8_t **mem,
		  bool (*cancelled)(void), char *err, size_t errlen)
{
	uint64_t size, from = 0, to;
	uint8_t *m = NULL;
	struct stat st;
	int fd = rd_open_file(d, b->file, &size, err, errlen), ret = -1;

	*mem = NULL;
	if (fd < 0)
		return -1;
	if (size != b->length) {
		snprintf(err, errlen, "block '%s': '%s/%s' no longer has the record's length=%" PRIu64
			 " bytes", b->name, d->path, b->file, b->length);
		goto out;
	}
	if (b->length > SIZE_MAX) {
		snprintf(err, errlen, "block '%s' does not fit in this address space", b->name);
		goto out;
	}
	if (b->length) {
		/* untouched pages stay unallocated: a hole costs nothing */
		void *p = mmap(NULL, (size_t)b->length, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			snprintf(err, errlen, "cannot allocate %" PRIu64 " bytes for block '%s': %s",
				 b->length, b->name, strerror(errno));
			goto out;
		}
		m = p;
	}
	while (from < b->length && next_data(fd, &from, &to, b->length)) {
		while (from < to) {
			size_t n = to - from > READ_PIECE ? READ_PIECE : (size_t)(to - from);
			if (cancelled && cancelled()) {
				ret = -2;
				goto out;
			}
			if (rd_pread_all(fd, m + from, n, from)) {
				if (errno)
					snprintf(err, errlen, "cannot read '%s/%s': %s", d->path,
						 b->file, strerror(errno));
				else
					snprintf(err, errlen, "block '%s': '%s/%s' shrank while it "
						 "was read", b->name, d->path, b->file);
				goto out;
			}
			from += n;
		}
	}
	/* a file cut while it was read reads as a hole from the cut on */
	if (fstat(fd, &st) || (uint64_t)st.st_size != b->length) {
		snprintf(err, errlen, "block '%s': '%s/%s' changed while it was read", b->name,
			 d->path, b->file);
		goto out;
	}
	*mem = m;
	m = NULL;
	ret = 0;
out:
	rd_free_image(m, b->length);
	close(fd);
	return ret;
}
