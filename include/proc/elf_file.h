/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading what we need from a CPython ELF file (executable or libpython):
 * symbol addresses from .dynsym/.symtab, bytes at a virtual address (for
 * Py_Version and _Py_DebugOffsets, read from the file, not the process), and
 * the load bias of a mapping. The file is untrusted: every read is bounded by
 * the section or segment it falls in.
 */
#ifndef PYBPFPROF_ELF_FILE_H
#define PYBPFPROF_ELF_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct elf_file;

/*
 * A target's file is read, not mapped, and only so much of it: a regular
 * file of at most ELF_FILE_MAX_SIZE, of which libelf loads at most
 * ELF_FILE_READ_BUDGET bytes of section data (a libpython's symbol tables
 * and notes are a few MB; a debug build's file is rarely over 200 MB).
 */
#define ELF_FILE_MAX_SIZE (2048ULL << 20)
#define ELF_FILE_READ_BUDGET (256ULL << 20)

/*
 * Opens path read-only and non-blocking (a FIFO or a device is refused, not
 * waited on). NULL and errno on failure (ENOEXEC: not an ELF file, not a
 * regular file, or too large).
 */
struct elf_file *elf_file__open(const char *path);
void elf_file__close(struct elf_file *ef);

/*
 * Frees what libelf loaded (symbol tables, notes: MBs), keeping the file
 * open and its program headers: enough for elf_file__bias and elf_file__read.
 * The other calls load it again, if the file's size and mtime are unchanged.
 */
void elf_file__release(struct elf_file *ef);

/* The file's fstat at open: its identity (device, inode, size, mtime). 0. */
int elf_file__stat(const struct elf_file *ef, struct stat *st);

/* ET_EXEC or ET_DYN. */
int elf_file__type(const struct elf_file *ef);

/* Finds a defined symbol by name in .dynsym, then .symtab. 0 or -ENOENT. */
int elf_file__symbol(struct elf_file *ef, const char *name, uint64_t *vaddr, uint64_t *size);

/* Copies len bytes at vaddr from the file image. 0, or -EFAULT if not in a PT_LOAD's file part. */
int elf_file__read(struct elf_file *ef, uint64_t vaddr, void *buf, size_t len);

/*
 * Finds the PY_VERSION literal "3.<minor>.<micro>" in .rodata: a string
 * ending right after the micro digits, alone or as the tail of a longer one
 * (the linker merges string tails), not preceded by a digit or a dot. The
 * patch level of builds without Py_Version (< 3.11). Returns the micro
 * version, or -ENOENT.
 */
int elf_file__find_py_version(struct elf_file *ef, unsigned minor);

/* 1 if a DT_NEEDED entry of the file starts with prefix (e.g. "libpython3"), else 0. */
int elf_file__needs(struct elf_file *ef, const char *prefix);

/*
 * The file offset of a function's first instruction (found by name as with
 * elf_file__symbol), where a uprobe goes. 0, or -ENOENT.
 */
int elf_file__func_offset(struct elf_file *ef, const char *name, uint64_t *off);

/*
 * Load bias of this file given one of its mappings (start address and file
 * offset, from /proc/PID/maps): runtime address = bias + vaddr. 0 or -ENOENT.
 */
int elf_file__bias(const struct elf_file *ef, uint64_t map_start, uint64_t map_off, uint64_t *bias);

/*
 * Calls fn for every USDT probe of provider in the file's .note.stapsdt notes,
 * with its name and semaphore address (0: none). Returns the number found.
 */
int elf_file__usdt_probes(struct elf_file *ef, const char *provider,
			  void (*fn)(const char *name, uint64_t semaphore, void *ctx), void *ctx);

#endif
