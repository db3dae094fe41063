// SPDX-License-Identifier: GPL-2.0-only
/*
 * Source of the small ELF seeds in corpus/elf/ (see gen_elf_seeds.sh): what
 * the ELF reader looks for in a CPython binary, in a few KB: the symbols
 * _PyRuntime (starting with a _Py_DebugOffsets cookie), Py_Version and
 * PyCode_Type, a PY_VERSION literal in .rodata, and python-provider USDT notes
 * in .note.stapsdt as <sys/sdt.h> lays them out (with a semaphore each).
 */
#include <stdint.h>

struct runtime {
	char cookie[8];
	uint64_t version, free_threaded;
	char rest[1000];
};

struct runtime _PyRuntime = { "xdebugpy", 0x030D00F0, 0, { 0 } };
const unsigned long Py_Version = 0x030D00F0;
char PyCode_Type[208];
const char *py_version_str = "3.13.0";
unsigned short python_function__entry_semaphore __attribute__((section(".probes")));
unsigned short python_gc__start_semaphore __attribute__((section(".probes")));

/* One stapsdt note: probe pc, base, semaphore, then provider, name and argument strings. */
// clang-format off
#define NOTE(name, sem, args)							\
	__asm__ volatile("990: nop\n"						\
			 ".pushsection .note.stapsdt,\"?\",\"note\"\n"		\
			 ".balign 4\n"						\
			 ".4byte 992f-991f, 994f-993f, 3\n"			\
			 "991: .asciz \"stapsdt\"\n"				\
			 "992: .balign 4\n"					\
			 "993: .8byte 990b\n"					\
			 ".8byte _.stapsdt.base\n"				\
			 ".8byte " #sem "\n"					\
			 ".asciz \"python\"\n"					\
			 ".asciz \"" name "\"\n"				\
			 ".asciz \"" args "\"\n"				\
			 "994: .balign 4\n"					\
			 ".popsection\n")
// clang-format on

__asm__(".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
	".weak _.stapsdt.base\n"
	".hidden _.stapsdt.base\n"
	"_.stapsdt.base: .space 1\n"
	".size _.stapsdt.base, 1\n"
	".popsection\n");

int py_probes(void);
int py_probes(void)
{
	NOTE("function__entry", python_function__entry_semaphore, "8@%rbx 8@%r15 -4@%eax");
	NOTE("function__return", 0, "8@%rbx 8@%r15 -4@%eax");
	NOTE("gc__start", python_gc__start_semaphore, "-4@%eax");
	NOTE("gc__done", 0, "-8@%rax");
	NOTE("line", 0, "8@%rbx 8@%r15 -4@%eax");
	return PyCode_Type[0] + py_version_str[0];
}
