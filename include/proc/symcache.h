/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --native's symbol tables, built once per file for the whole run: with -a
 * over a pool of workers mapping the same libraries, each library's symbols
 * (.symtab, .dynsym or .gnu_debugdata, read by libdw) are read and sorted
 * once, not once per process.
 *
 * A table is keyed by the file's build-id AND by the identity of the very
 * file mapped (st_dev, st_ino, size, mtime, ctime of the descriptor opened
 * through /proc/PID/map_files): a build-id is only bytes in a file anyone
 * can write, so keying by it alone would let a crafted library claiming
 * libc's build-id name the frames of every other user's processes. The
 * identity alone is what makes sharing safe, so a file without a build-id
 * is cached by its identity (ctime cannot be set back by the file's owner:
 * a file rewritten in place gets a new key).
 *
 * Bounded: SYMCACHE_MAX_SYMS symbols per table; max_bytes for all the
 * tables, the least recently used evicted to make room, and a table that
 * cannot fit at all refused (its file's names then come from libdw
 * directly, as before); and the walk over the symbols overlapping a pc (a
 * hostile file can nest thousands: past the bound, the name may not be
 * libdw's, and is counted). Every count is in struct symcache_stats.
 */
#ifndef PYBPFPROF_SYMCACHE_H
#define PYBPFPROF_SYMCACHE_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define SYMCACHE_MAX_SYMS (1u << 20)
#define SYMCACHE_DEFAULT_BYTES (64u << 20)

struct symcache;

/* The identity of a mapped file, from fstat of its map_files descriptor. */
struct symcache_file {
	uint64_t dev, ino, size;
	struct timespec mtime, ctime;
};

struct symcache_stats {
	uint64_t built;		/* tables built from libdw */
	uint64_t hits;		/* lookups that found their table cached */
	uint64_t evicted;	/* tables dropped to make room */
	uint64_t refused;	/* tables too large to cache (names from libdw instead) */
	uint64_t capped;	/* lookups among more overlapping symbols than looked at */
	uint64_t tables, bytes; /* cached now */
};

/* NULL on allocation failure. */
struct symcache *symcache__new(size_t max_bytes);
void symcache__free(struct symcache *c);
/* The run's cache, shared by every unwinder (made on first use; NULL without memory). */
struct symcache *symcache__shared(void);

void symcache__file_of(const struct stat *st, struct symcache_file *f);

/*
 * The name of the symbol holding pc in mod (whose file is f), as
 * dwfl_module_addrinfo gives it, into name: 1 if one does, 0 if none.
 */
int symcache__name(struct symcache *c, Dwfl_Module *mod, const struct symcache_file *f, uint64_t pc,
		   char *name, size_t namelen);
void symcache__stats(struct symcache *c, struct symcache_stats *s);

#endif
