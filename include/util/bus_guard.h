/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libbpf maps the files it parses (USDT notes: elf_begin with
 * ELF_C_READ_MMAP), and a target can truncate its own interpreter file
 * (a libpython it owns) while libbpf reads it: the next access to the lost
 * pages raises SIGBUS. bus_guard__call runs such a call with SIGBUS turned
 * into an error return. What the interrupted call had allocated is leaked,
 * and it must not have held a lock: meant for a failure that ends the run.
 * Single-threaded use only.
 */
#ifndef PYBPFPROF_BUS_GUARD_H
#define PYBPFPROF_BUS_GUARD_H

/* fn(ctx)'s result, or -EFAULT if it was cut short by SIGBUS. */
int bus_guard__call(int (*fn)(void *ctx), void *ctx);

#endif
