/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --native: a thread's native frames from a copy of its registers and of the
 * top of its stack (struct py_ustack), unwound with the call frame
 * information (.eh_frame, .debug_frame) of the process's mapped files, down
 * to the first frame in the interpreter's own code, or through it to the
 * stack's end; and their names, from .symtab, .dynsym or .gnu_debugdata
 * (libdw), or library+0xoffset.
 *
 * Everything read is the target's: the stack copy (only it is read as
 * memory, never the live process) and its mapped files, opened through
 * /proc/PID/map_files (the very file mapped, whatever its path says). Both
 * are bounded: NATIVE_MAX_FRAMES (or _ALL) frames, NATIVE_MAX_MODULES files of at most
 * ELF_FILE_MAX_SIZE bytes each.
 */
#ifndef PYBPFPROF_NATIVE_UNWIND_H
#define PYBPFPROF_NATIVE_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#define NATIVE_MAX_FRAMES 64
/* Frames of a whole stack (unwind_all): up to the 16 KiB copy's worth of small frames. */
#define NATIVE_MAX_FRAMES_ALL 512
#define NATIVE_MAX_MODULES 1024
/*
 * What one stack's unwind may take of pybpfprof's CPU (checked between
 * libdw's callbacks; native_guard.h keeps any one step of libdw's small), and
 * what one process's unwinds may take in all: a budget refilled at
 * NATIVE_PROCESS_NS each second, up to twice that. A stack over either is
 * refused (enum native_stop), so a target cannot hold the run or the other
 * targets' samples. Measured: a stack of 60 frames takes 0.1-0.3 ms.
 */
#define NATIVE_STACK_NS 10000000LL
#define NATIVE_MAPS_NS 50000000LL
#define NATIVE_PROCESS_NS 250000000LL

struct native_unwinder;

/* Why the last unwind ended where it did. */
enum native_stop {
	NATIVE_STOP_END,     /* the interpreter's code, the thread's first frame, or max frames */
	NATIVE_STOP_COPY,    /* a frame beyond the stack copy */
	NATIVE_STOP_NO_CFI,  /* a pc without call frame information libdw could use */
	NATIVE_STOP_NO_FILE, /* a pc in no file mapped executable (anonymous code) */
	NATIVE_STOP_REFUSED, /* a pc in a file libdw was not given (native_guard.h) */
	NATIVE_STOP_BUDGET,  /* the stack's time ran out (NATIVE_STACK_NS) */
	NATIVE_STOP_PROCESS, /* the process's budget was spent: not unwound at all */
	NATIVE_STOP_N,
};

/* The registers the unwind starts from (the callee-saved ones, the stack and the instruction pointers). */
struct native_regs {
	uint64_t ip, sp, bp, bx, r12, r13, r14, r15;
	/*
	 * Which are known: all (0), or (a thread read from outside, in a system
	 * call: /proc/PID/task/TID/syscall) only ip and sp (NATIVE_REGS_IP_SP),
	 * or those and bp (NATIVE_REGS_IP_SP_BP). The others are left undefined,
	 * so a frame that needs one ends the unwind instead of reading a guess.
	 */
	uint8_t known;
};

enum native_regs_known {
	NATIVE_REGS_ALL = 0,
	NATIVE_REGS_IP_SP = 1,
	NATIVE_REGS_IP_SP_BP = 2,
};

/* For pid, whose interpreter code is [interp_lo, interp_hi). NULL on allocation failure. */
struct native_unwinder *native_unwinder__new(pid_t pid, uint64_t interp_lo, uint64_t interp_hi);
void native_unwinder__free(struct native_unwinder *u);
/*
 * Reads the process's mappings again, in a new Dwfl (unwind does it by
 * itself when a pc is in no known file and the process's executable
 * mappings changed: looked at most every NATIVE_MAPS_NS). 0 or -ENOMEM.
 */
int native_unwinder__refresh(struct native_unwinder *u);

/*
 * The native frames of thread tid (pcs, innermost first; a caller's pc is
 * its return address minus one, inside the call) from regs and len bytes of
 * stack copied at regs->sp, up to max (at most NATIVE_MAX_FRAMES). Returns
 * how many; *complete is set when the unwind reached the interpreter's code
 * (else it stopped on a frame it could not unwind).
 */
int native_unwinder__unwind(struct native_unwinder *u, pid_t tid, const struct native_regs *regs,
			    const uint8_t *stack, size_t len, uint64_t *pcs, int max,
			    bool *complete);

/*
 * The same, but on through the interpreter's frames to the end of the stack
 * (at most NATIVE_MAX_FRAMES_ALL frames), with each frame's stack pointer in
 * sps (0 where unknown): for placing native frames between Python frames.
 */
int native_unwinder__unwind_all(struct native_unwinder *u, pid_t tid,
				const struct native_regs *regs, const uint8_t *stack, size_t len,
				uint64_t *pcs, uint64_t *sps, int max);

/* Why the last unwind stopped, and the last pc it reached (0 if none). */
enum native_stop native_unwinder__stop(const struct native_unwinder *u, uint64_t *pc);

/*
 * How many times the process's files were reported afresh: names given
 * before a change may be wrong after it (a pc once in no file, a library
 * unloaded and another mapped there).
 */
unsigned long native_unwinder__generation(const struct native_unwinder *u);

/*
 * Up to max bytes of the live process pid's memory from sp on, as far as it
 * is mapped (a thread's stack up to its end): page by page, with
 * process_vm_readv, which stops at the first page it cannot read. Nothing
 * is written to the process, and it is not stopped. The bytes read, or
 * -errno when not even the first could be.
 */
ssize_t native_read_stack(pid_t pid, uint64_t sp, uint8_t *buf, size_t max);

/* Whether pc is in the code of a file the process maps (as last reported). */
bool native_unwinder__in_code(struct native_unwinder *u, uint64_t pc);

/* Whether pc is in the interpreter's own code. */
bool native_unwinder__in_interp(const struct native_unwinder *u, uint64_t pc);

/*
 * How many files the process maps executable were kept from libdw at the last
 * report of its mappings: files whose compressed sections would expand past
 * native_guard.h's bounds, or which libdw would take whole and are too large
 * to read so (or could not be). Their frames end the unwind and are named
 * "library+0xoffset".
 */
unsigned long native_unwinder__refused(const struct native_unwinder *u);

/*
 * pc's name: the symbol holding it, else "library+0xoffset", else
 * "0xaddress"; and the file it is in ("" if none). 0, or -ENOENT when pc is
 * in no mapped file.
 */
int native_unwinder__name(struct native_unwinder *u, uint64_t pc, char *name, size_t namelen,
			  char *file, size_t filelen);

#endif
