/* SPDX-License-Identifier: BSD-2-Clause */
/* outdir.c - recv's output files in --out DIR (the rules are in outdir.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <rdmig/private.h>
#include "outdir.h"


/* mkdir -p: dir and its parents; err says what failed.  *made: the length
 * of the shortest leading part of dir this call created (0: none), for
 * out_remove_made. */
int out_make_dir(const char *dir, size_t *made, char *err, size_t errlen)
{
	char path[4096];
	struct stat st;
	size_t n = strlen(dir);

	*made = 0;
	if (n >= sizeof(path)) {
		snprintf(err, errlen, "--out: path too long");
		return -1;
	}
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(path, 0755) == 0) {
			if (!*made)
				*made = (size_t)(p - path);
		} else if (errno != EEXIST) {
			snprintf(err, errlen, "cannot create '%.600s': %s", path, strerror(errno));
			out_remove_made(dir, *made);
			*made = 0;
			return -1;
		}
		*p = saved;
		if (!saved)
			break;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "'%.600s' is not a directory", dir);
		out_remove_made(dir, *made);
		*made = 0;
		return -1;
	}
	return 0;
}

void out_remove_made(const char *dir, size_t made)
{
	char path[4096];
	size_t n = strlen(dir);

	if (!made || n >= sizeof(path))
		return;
	memcpy(path, dir, n + 1);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	/* deepest first; rmdir leaves a directory that is not empty */
	while (n >= made) {
		if (rmdir(path))
			return;
		while (n > 0 && path[n - 1] != '/')
			n--;
		while (n > 1 && path[n - 1] == '/')
			n--;
		path[n] = '\0';
	}
}

/* Who may plant files in DIR?  Its owner, if that is neither us nor root,
 * and its group and others when they may write and the sticky bit does not
 * stop them from replacing our files. */
static int check_owner(const struct out_dir *d, const struct stat *st, char *err, size_t errlen)
{
	if (st->st_uid != geteuid() && st->st_uid != 0) {
		snprintf(err, errlen, "--out %.600s is owned by uid %u, neither you (uid %u) nor "
			 "root: its owner could plant links under the outputs' names; use a "
			 "directory of your own, or --force", d->path, (unsigned)st->st_uid,
			 (unsigned)geteuid());
		return -1;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX)) {
		snprintf(err, errlen, "--out %.600s is writable by %s without the sticky bit: they "
			 "could replace the outputs; chmod go-w (or +t) it, or give --force",
			 d->path, (st->st_mode & S_IWOTH) ? "everyone" : "its group");
		return -1;
	}
	return 0;
}

int out_dir_open(struct out_dir *d, const char *path, bool force, char *err, size_t errlen)
{
	struct stat st;

	d->path = path;
	d->force = force;
	d->fd = -1;
	d->made = 0;
	d->sync = true;
	d->parent_fd = -1;
	if (out_make_dir(path, &d->made, err, errlen))
		return -1;
	if ((d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(d->fd, &st)) {
		snprintf(err, errlen, "cannot open --out %.600s: %s", path, strerror(errno));
		return -1;
	}
	return force ? 0 : check_owner(d, &st, err, errlen);
}

void out_dir_close(struct out_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

void out_dir_remove_made(struct out_dir *d)
{
	if (d->path)
		out_remove_made(d->path, d->made);
	d->made = 0;
}

uint64_t out_dir_free(const struct out_dir *d)
{
	struct statvfs v;

	if (d->fd < 0 || fstatvfs(d->fd, &v))
		return UINT64_MAX;
	return (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
}

uint64_t out_dir_free_files(const struct out_dir *d)
{
	struct statvfs v;

	if (d->fd < 0 || fstatvfs(d->fd, &v) || v.f_files == 0)
		return UINT64_MAX;
	return (uint64_t)v.f_favail;
}

static const char *kind_of(mode_t m)
{
	return S_ISLNK(m) ? "a symlink" : S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory" :
	       S_ISREG(m) ? "a file" : "a special file";
}

int out_check_new(const struct out_dir *d, const char *name, char *err, size_t errlen)
{
	struct stat st;

	if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot look at %.600s/%s: %s", d->path, name, strerror(errno));
		return -1;
	}
	if (d->force && !S_ISDIR(st.st_mode))
		return 0; /* replaced by rename once the output is verified */
	snprintf(err, errlen, "%.600s/%s exists (%s): recv never overwrites what it did not "
		 "create in this run; remove it%s", d->path, name, kind_of(st.st_mode),
		 S_ISDIR(st.st_mode) ? "" : ", or give --force to replace it");
	return -1;
}

int out_create(struct out_dir *d, struct out_file *f, const char *name, char *err, size_t errlen)
{
	static atomic_uint serial; /* serve creates outputs on several threads */
	struct stat st;

	f->fd = -1;
	f->state = OUT_NONE;
	snprintf(f->name, sizeof(f->name), "%s", name);
	/* a name someone planted is skipped: O_EXCL never opens what exists */
	for (int tries = 0; tries < 100 && f->fd < 0; tries++) {
		snprintf(f->tmp, sizeof(f->tmp), ".rdmig-%ld-%u.%s", (long)getpid(),
			 atomic_fetch_add(&serial, 1), name);
		f->fd = openat(d->fd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			       0644);
		if (f->fd < 0 && errno != EEXIST)
			break;
	}
	if (f->fd < 0) {
		snprintf(err, errlen, "cannot create %.600s/%s: %s", d->path, f->tmp, strerror(errno));
		return -1;
	}
	f->state = OUT_TEMP;
	if (fstat(f->fd, &st)) {
		snprintf(err, errlen, "cannot stat %.600s/%s: %s", d->path, f->tmp, strerror(errno));
		return -1; /* OUT_TEMP: out_discard removes it */
	}
	f->dir_fd = d->fd;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->sync = d->sync;
	return 0;
}

int out_park(struct out_file *f)
{
	int r = 0;

	if (f->state == OUT_TEMP && f->fd >= 0) {
		r = close(f->fd);
		f->fd = -1;
	}
	return r ? -1 : 0;
}

/* f's descriptor, or (parked) f opened again: the same file or -1. */
static int out_fd(const struct out_file *f)
{
	struct stat st;
	int fd;

	if (f->fd >= 0)
		return f->fd;
	fd = openat(f->dir_fd, f->tmp, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_dev != f->dev || st.st_ino != f->ino) {
		close(fd);
		errno = ESTALE; /* someone replaced the temporary file */
		return -1;
	}
	return fd;
}

/* Done with fd from out_fd: a parked file's is closed, and a failed
 * close (a write error reported late) fails the call.  ok: the call had
 * succeeded so far (else its errno is kept). */
static int out_fd_done(const struct out_file *f, int fd, bool ok)
{
	int e = errno, r = 0;

	if (fd != f->fd)
		r = close(fd);
	if (!ok) {
		errno = e;
		return -1;
	}
	return r ? -1 : 0;
}

/* The data of f on stable storage before it gets a name: a power cut
 * after the name is durable must not leave it short or empty. */
static int out_flush(struct out_dir *d, struct out_file *f, char *err, size_t errlen)
{
	int fd, r;

	if (!f->sync)
		return 0;
	if ((fd = out_fd(f)) < 0) {
		snprintf(err, errlen, "cannot open %.600s/%s to flush it: %s", d->path, f->tmp,
			 strerror(errno));
		return -1;
	}
	r = fsync(fd);
	if (out_fd_done(f, fd, r == 0)) {
		snprintf(err, errlen, "cannot flush %.600s/%s to stable storage: %s", d->path,
			 f->name, strerror(errno));
		return -1;
	}
	return 0;
}

int out_commit(struct out_dir *d, struct out_file *f, char *err, size_t errlen)
{
	int r;

	if (f->state == OUT_TEMP && out_flush(d, f, err, errlen))
		return -1;
	if (f->state == OUT_TEMP && f->fd >= 0) {
		r = close(f->fd);
		f->fd = -1;
		if (r) {
			snprintf(err, errlen, "cannot write %.600s/%s: %s", d->path, f->name,
				 strerror(errno));
			return -1;
		}
	}
	if (f->state != OUT_TEMP)
		return 0;
	/* link fails if the name exists (planted since the check); rename,
	 * only with --force, replaces the name itself, never what it links to */
	if (d->force)
		r = renameat(d->fd, f->tmp, d->fd, f->name);
	else
		r = linkat(d->fd, f->tmp, d->fd, f->name, 0);
	if (r) {
		int e = errno;
		/* planted meanwhile: say what is there, as the early check would */
		if (e != EEXIST || !out_check_new(d, f->name, err, errlen))
			snprintf(err, errlen, "cannot name %.600s/%s: %s", d->path, f->name,
				 strerror(e));
		return -1;
	}
	if (!d->force)
		unlinkat(d->fd, f->tmp, 0);
	f->state = d->force ? OUT_RENAMED : OUT_LINKED;
	return 0;
}

void out_discard(struct out_dir *d, struct out_file *f)
{
	if (f->state == OUT_TEMP && f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->state == OUT_TEMP)
		unlinkat(d->fd, f->tmp, 0);
	else if (f->state == OUT_LINKED)
		unlinkat(d->fd, f->name, 0); /* new in this run: nothing was replaced */
	f->state = OUT_NONE;
}

int out_write_chunk(struct out_file *f, uint64_t off, const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t start = off;
	size_t total = n;
	int fd;

	if (rdmig_is_zero(p, n))
		return 0; /* a hole: out_set_size makes the file long enough */
	if ((fd = out_fd(f)) < 0)
		return -1;
	while (n > 0) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!w)
				errno = EIO;
			return out_fd_done(f, fd, false);
		}
		c += w;
		off += (uint64_t)w;
		n -= (size_t)w;
	}
	/* start writing it back now, so that the flush before the name
	 * finds little left to do (its errors are the flush's to report) */
	if (f->sync)
		sync_file_range(fd, (off64_t)start, (off64_t)total, SYNC_FILE_RANGE_WRITE);
	return out_fd_done(f, fd, true);
}

int out_set_size(struct out_file *f, uint64_t size)
{
	int fd = out_fd(f), r;

	if (fd < 0)
		return -1;
	r = ftruncate(fd, (off_t)size);
	return out_fd_done(f, fd, r == 0);
}

int out_append(struct out_file *f, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n > 0) {
		ssize_t w = write(f->fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* fsync the directory at path (opened for that). */
static int sync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (fd < 0)
		return -1;
	r = fsync(fd);
	close(fd);
	return r;
}

/* The directories out_dir_open created hold each other's names, and the
 * first one's name is in a directory that existed: flush them all. */
static int sync_made(const struct out_dir *d, char *err, size_t errlen)
{
	char path[4096];
	size_t n = strlen(d->path);

	if (!d->made || n >= sizeof(path))
		return 0;
	memcpy(path, d->path, n + 1);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	while (n >= d->made) {
		while (n > 0 && path[n - 1] != '/')
			n--;
		while (n > 1 && path[n - 1] == '/')
			n--;
		path[n] = '\0';
		if (sync_path(n ? path : "/")) {
			snprintf(err, errlen, "cannot flush the directory '%.600s': %s",
				 n ? path : "/", strerror(errno));
			return -1;
		}
		if (!n)
			break;
	}
	return 0;
}

int out_dir_sync(struct out_dir *d, char *err, size_t errlen)
{
	if (!d->sync)
		return 0;
	if (fsync(d->fd) || (d->parent_fd >= 0 && fsync(d->parent_fd))) {
		snprintf(err, errlen, "cannot flush --out %.600s to stable storage: %s", d->path,
			 strerror(errno));
		return -1;
	}
	return sync_made(d, err, errlen);
}

/* ".rdmig-PID-N.NAME": the PID of the run that made it, or 0. */
static long temp_pid(const char *name)
{
	char *end;
	long pid;

	if (strncmp(name, ".rdmig-", 7) || !(name[7] >= '1' && name[7] <= '9'))
		return 0;
	pid = strtol(name + 7, &end, 10);
	if (*end != '-' || !(end[1] >= '0' && end[1] <= '9'))
		return 0;
	strtoul(end + 1, &end, 10);
	return *end == '.' && end[1] ? pid : 0;
}

/* A run that is gone (our own PID was another run's, before a reboot). */
static bool run_gone(long pid)
{
	return pid == (long)getpid() || (kill((pid_t)pid, 0) && errno == ESRCH);
}

int out_dir_sweep(struct out_dir *d, unsigned *removed, char *first, size_t firstlen, char *err,
		  size_t errlen)
{
	int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	struct stat st;

	*removed = 0;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "cannot read --out %.600s: %s", d->path, strerror(errno));
		return -1;
	}
	while ((e = readdir(dir))) {
		long pid = temp_pid(e->d_name);

		if (!pid || fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() || !run_gone(pid))
			continue;
		if (unlinkat(d->fd, e->d_name, 0))
			continue; /* gone meanwhile, or not ours to remove */
		if (!(*removed)++ && first)
			snprintf(first, firstlen, "%s", e->d_name);
	}
	closedir(dir);
	if (*removed && d->sync && fsync(d->fd)) {
		snprintf(err, errlen, "cannot flush --out %.600s: %s", d->path, strerror(errno));
		return -1;
	}
	return 0;
}
