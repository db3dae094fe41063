/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for the BPF stack walk (bpf/stackwalk.h, compiled here as host C)
 * over memory images of real interpreters (tests/fixtures/stackwalk/,
 * captured by tests/capture_stackwalk.sh): each image holds a thread asleep
 * in f1 -> f2 -> f3 and the stack the interpreter itself reported for it.
 * The walk must find exactly those code objects and positions; on a damaged
 * image (a frame pointing to itself, a cycle, a wild pointer) it must stop
 * within its bounds with a partial stack and the right flag.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include <zlib.h>

#include "cpython/code_cache.h"
#include "../../bpf/stackwalk.h"
#include "stackwalk_image.h"

/* The interpreters captured: every one must be there and pass. */
static const char *const fixtures[] = {
	"pyenv-3.8",  "pyenv-3.9",  "pyenv-3.10", "pyenv-3.11",	  "debian-3.11",
	"pyenv-3.12", "pyenv-3.13", "forky-3.14", "trixie-3.13t", "trixie-3.13t-thread",
};

#define MAX_FRAMES 8
#define MAX_PAGES 64

struct expected_frame {
	uint64_t code;
	int32_t instr;
	char name[64];
};

struct page {
	uint64_t addr;
	uint8_t data[STACKWALK_PAGE];
};

struct image {
	const char *name;
	struct py_target proc;
	uint64_t thread;
	struct expected_frame frames[MAX_FRAMES];
	unsigned nframes;
	struct page pages[MAX_PAGES];
	unsigned npages;
	unsigned minor; /* of the version captured, 3.MINOR */
};

__u32 max_depth = PYPROF_DEFAULT_DEPTH;
/* The image stackwalk_read reads, and how many reads it served (a bound on the walk's work). */
static struct image *mem;
static unsigned long reads;
static struct scratch scratch;

static uint8_t *image_at(struct image *im, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(STACKWALK_PAGE - 1);
	unsigned i;

	for (i = 0; i < im->npages; i++)
		if (im->pages[i].addr == base)
			return im->pages[i].data + (addr - base);
	return NULL;
}

/* The module body stackwalk_module_sent says was sent already (seen_code's key), or 0. */
static __u64 sent_module;

int stackwalk_module_sent(__u64 key)
{
	return key && key == sent_module;
}

long stackwalk_read(void *dst, __u32 size, __u64 addr)
{
	uint8_t *out = dst, *p;
	__u32 done, n;

	reads++;
	for (done = 0; done < size; done += n) {
		p = image_at(mem, addr + done);
		if (!p)
			return -EFAULT;
		n = STACKWALK_PAGE - ((addr + done) & (STACKWALK_PAGE - 1));
		if (n > size - done)
			n = size - done;
		memcpy(out + done, p, n);
	}
	return 0;
}

static uint64_t image_word(struct image *im, uint64_t addr)
{
	uint64_t v;

	mem = im;
	assert_int_equal(stackwalk_read(&v, sizeof(v), addr), 0);
	return v;
}

static void image_put_word(struct image *im, uint64_t addr, uint64_t v)
{
	uint8_t *p = image_at(im, addr);

	assert_non_null(p);
	assert_true((addr & (STACKWALK_PAGE - 1)) <= STACKWALK_PAGE - sizeof(v));
	memcpy(p, &v, sizeof(v));
}

static int hex_page(const char *hex, uint8_t *out)
{
	unsigned i, b;

	for (i = 0; i < STACKWALK_PAGE; i++) {
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = b;
	}
	return 0;
}

/* One line of a fixture into im; the test fails on a line it does not know. */
static void image_line(struct image *im, char *line)
{
	struct expected_frame *f = &im->frames[im->nframes];
	char key[64];
	unsigned v;
	int at;

	if (sscanf(line, "python 3.%u", &im->minor) == 1)
		return;
	if (sscanf(line, "runtime %llx", (unsigned long long *)&im->proc.runtime_addr) == 1 ||
	    sscanf(line, "thread %" SCNx64, &im->thread) == 1)
		return;
	if (sscanf(line, "off %63s %u", key, &v) == 2) {
		if (stackwalk_offset_set(&im->proc.off, key, v))
			fail_msg("%s: unknown offset %s", im->name, key);
		return;
	}
	if (sscanf(line, "frame %" SCNx64 " %" SCNd32 " %*d %63s", &f->code, &f->instr, f->name) ==
	    3) {
		assert_true(++im->nframes < MAX_FRAMES);
		return;
	}
	assert_true(im->npages < MAX_PAGES);
	if (sscanf(line, "page %" SCNx64 " %n", &im->pages[im->npages].addr, &at) == 1) {
		assert_true(strlen(line + at) >= 2 * STACKWALK_PAGE);
		assert_int_equal(hex_page(line + at, im->pages[im->npages].data), 0);
		im->npages++;
		return;
	}
	fail_msg("%s: unknown line %.40s", im->name, line);
}

static struct image *image_load(const char *name)
{
	static char line[2 * STACKWALK_PAGE + 128];
	struct image *im = calloc(1, sizeof(*im));
	char path[256];
	gzFile in;

	assert_non_null(im);
	im->name = name;
	stackwalk_offset_defaults(&im->proc.off);
	snprintf(path, sizeof(path), "tests/fixtures/stackwalk/%s.txt.gz", name);
	in = gzopen(path, "rb");
	if (!in)
		fail_msg("missing %s (run the tests from the repository root)", path);
	while (gzgets(in, line, sizeof(line)))
		image_line(im, line);
	gzclose(in);
	assert_true(im->nframes >= 4 && im->npages > 0 && im->thread && im->proc.runtime_addr);
	return im;
}

/* Runs the walk on im for its thread: frames in scratch.sample, their count returned. */
static __u32 walk(struct image *im, uint64_t thread)
{
	struct walk_ctx w = { .off = &im->proc.off, .s = &scratch };
	uint64_t tstate;

	mem = im;
	reads = 0;
	memset(&scratch, 0, sizeof(scratch));
	tstate = stackwalk_find_tstate(&im->proc, thread);
	if (!tstate)
		return 0;
	w.f = current_frame(&im->proc.off, tstate);
	w.read_size = im->proc.off.frame_read_size;
	stackwalk_frames(&w);
	return w.n;
}

/* The fingerprint userspace computes for the code object at code (code_identity). */
static uint32_t user_fingerprint(struct image *im, uint64_t code, char *name, size_t len)
{
	const struct py_offsets *off = &im->proc.off;
	uint8_t id[PY_CODE_ID_READ] = { 0 }, str[PY_STR_READ];
	uint64_t qualname = image_word(im, code + off->code_qualname);
	size_t n = off->code_id_size < sizeof(id) ? off->code_id_size : sizeof(id);

	assert_int_equal(stackwalk_read(id, n, code + off->code_id_start), 0);
	assert_int_equal(stackwalk_read(str, PY_STR_READ, qualname + off->str_length), 0);
	/* the qualname's first bytes (compact ASCII), inside what the walk reads, for the test's own check */
	memset(name, 0, len);
	stackwalk_read(name, len - 1, qualname + off->str_ascii_data);
	return code_identity(off, id, str);
}

/* Every interpreter: exactly its own stack, innermost first, with positions and fingerprints. */
static void test_walk_finds_the_interpreters_stack(void **state)
{
	char name[PY_NAME_TEXT + 1];
	size_t i;
	__u32 j, n;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct image *im = image_load(fixtures[i]);

		print_message("%s: %u frames expected\n", im->name, im->nframes);
		n = walk(im, im->thread);
		assert_int_equal(scratch.sample.flags, 0);
		assert_int_equal(n, im->nframes);
		for (j = 0; j < n; j++) {
			struct py_frame *got = &scratch.sample.frames[j];

			assert_int_equal(got->code, im->frames[j].code);
			assert_int_equal(got->instr, im->frames[j].instr);
			assert_int_equal(got->fingerprint,
					 user_fingerprint(im, got->code, name, sizeof(name)));
			assert_string_equal(name, im->frames[j].name);
		}
		assert_string_equal(im->frames[0].name, "f3");
		free(im);
	}
}

/*
 * The frames a C-level call of the eval loop started (--native places native
 * frames by them): up to 3.10 every frame is its own call; from 3.11 one call
 * runs the whole script, so only its outermost frame (<module>, or a thread's
 * Thread._bootstrap) is one: 3.11 by is_entry, 3.12+ by the shim frame, whose
 * address is kept (it is the one owner >= owner_skip_min frame of the chain).
 */
static void test_entry_frames(void **state)
{
	uint64_t want;
	size_t i;
	__u32 n;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct image *im = image_load(fixtures[i]);

		n = walk(im, im->thread);
		assert_int_equal(n, im->nframes);
		want = im->minor <= 10 ? (1ULL << n) - 1 : 1ULL << (n - 1);
		print_message("%s (3.%u): entries %#llx, expected %#llx\n", im->name, im->minor,
			      (unsigned long long)scratch.entry_mask[0], (unsigned long long)want);
		assert_int_equal(scratch.entry_mask[0], want);
		assert_int_equal(scratch.nentries, __builtin_popcountll(want));
		assert_int_equal(scratch.nshims, im->minor >= 12);
		if (scratch.nshims)
			assert_true(image_at(im,
					     scratch.shim_addr[0] + im->proc.off.frame_owner)[0] >=
				    im->proc.off.owner_skip_min);
		free(im);
	}
}

/*
 * A module body on the stack (the script's <module>, outermost in a main
 * thread's fixture: f3 <- f2 <- f1 <- <module>) is marked for the sampler's
 * wakeup and its name: its seen_code key and code object (none once it
 * was sent); a thread's stack (Thread._bootstrap outermost) has none.
 */
static void test_module_frame_marked(void **state)
{
	const struct py_frame *m;
	size_t i, modules = 0;
	__u32 n;

	(void)state;
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct image *im = image_load(fixtures[i]);

		n = walk(im, im->thread);
		assert_int_equal(n, im->nframes);
		m = &scratch.sample.frames[n - 1];
		if (strcmp(im->frames[n - 1].name, "<module>")) {
			assert_int_equal(scratch.nmodules, 0);
		} else {
			assert_int_equal(scratch.nmodules, 1);
			assert_int_equal(scratch.modules[0].key,
					 m->code ^ ((__u64)m->fingerprint << 47));
			assert_int_equal(scratch.modules[0].code, m->code);
			modules++;
			/* once sent, it is not marked again */
			sent_module = scratch.modules[0].key;
			assert_int_equal(walk(im, im->thread), n);
			assert_int_equal(scratch.nmodules, 0);
			sent_module = 0;
		}
		free(im);
	}
	assert_true(modules > 0);
}

/* An unknown thread id: no thread state, after one bounded scan of the list. */
static void test_unknown_thread_has_no_stack(void **state)
{
	struct image *im = image_load("pyenv-3.12");

	assert_int_equal(walk(im, im->thread ^ 0x1000), 0);
	assert_true(reads < 16);
	free(im);
}

/*
 * The address of the frame holding expected frame k (walking the chain as
 * the walk does, shims included), and of its link to its caller.
 */
static uint64_t frame_of(struct image *im, unsigned k, uint64_t *link)
{
	const struct py_offsets *off = &im->proc.off;
	uint64_t f, tstate;
	int i;

	mem = im;
	tstate = stackwalk_find_tstate(&im->proc, im->thread);
	f = current_frame(off, tstate);
	for (i = 0; i < 16 && f; i++) {
		uint64_t code = image_word(im, f + off->frame_code) & ~(uint64_t)off->code_tag_mask;

		if (code == im->frames[k].code) {
			*link = f + off->frame_previous;
			return f;
		}
		f = image_word(im, f + off->frame_previous);
	}
	fail_msg("%s: frame %u not found", im->name, k);
	return 0;
}

/* f3's frame is its own caller: the walk stops at the depth limit, truncated. */
static void test_frame_pointing_to_itself_is_truncated(void **state)
{
	size_t i;
	__u32 j, n;
	uint64_t link, f;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct image *im = image_load(fixtures[i]);

		f = frame_of(im, 0, &link);
		image_put_word(im, link, f);
		n = walk(im, im->thread);
		assert_int_equal(scratch.sample.flags, PY_SAMPLE_TRUNCATED);
		assert_int_equal(n, max_depth);
		for (j = 0; j < n; j++)
			assert_int_equal(scratch.sample.frames[j].code, im->frames[0].code);
		free(im);
	}
}

/* f1 calls back into f3: the cycle repeats f3, f2, f1 up to the depth limit. */
static void test_cycle_is_truncated(void **state)
{
	struct image *im = image_load("pyenv-3.13");
	uint64_t link, f3 = frame_of(im, 0, &link);
	__u32 j, n;

	frame_of(im, 2, &link);
	image_put_word(im, link, f3);
	max_depth = 10;
	n = walk(im, im->thread);
	max_depth = PYPROF_DEFAULT_DEPTH;
	assert_int_equal(scratch.sample.flags, PY_SAMPLE_TRUNCATED);
	assert_int_equal(n, 10);
	for (j = 0; j < n; j++)
		assert_int_equal(scratch.sample.frames[j].code, im->frames[j % 3].code);
	free(im);
}

/* f2's caller is outside the image: f3 and f2, then a read error. */
static void test_wild_caller_gives_a_partial_stack(void **state)
{
	size_t i;
	__u32 n;
	uint64_t link;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct image *im = image_load(fixtures[i]);

		frame_of(im, 1, &link);
		image_put_word(im, link, 0xdead0000);
		n = walk(im, im->thread);
		assert_int_equal(scratch.sample.flags, PY_SAMPLE_READ_ERROR);
		assert_int_equal(n, 2);
		assert_int_equal(scratch.sample.frames[0].code, im->frames[0].code);
		assert_int_equal(scratch.sample.frames[1].code, im->frames[1].code);
		free(im);
	}
}

/* f2's code object is outside the image: f3 only, then a read error. */
static void test_wild_code_gives_a_partial_stack(void **state)
{
	struct image *im = image_load("pyenv-3.8");
	uint64_t link, f2 = frame_of(im, 1, &link);

	image_put_word(im, f2 + im->proc.off.frame_code, 0xdead0000);
	assert_int_equal(walk(im, im->thread), 1);
	assert_int_equal(scratch.sample.flags, PY_SAMPLE_READ_ERROR);
	assert_int_equal(scratch.sample.frames[0].code, im->frames[0].code);
	free(im);
}

/*
 * 3.12+: f2 as a generator's frame. Linked to its caller, it is one frame
 * of a whole stack; as the end of the chain (a yield caught half done: the
 * generator already unlinked, the thread's current frame not yet moved),
 * f3 and f2 are kept and the stack is partial, its callers lost. A chain
 * ending at a frame the thread owns is not flagged, nor is a suspended
 * coroutine's frame read alone (an asyncio task's, which has no caller).
 */
static void test_chain_ending_at_a_generator_is_partial(void **state)
{
	size_t i;
	uint64_t link, f2;
	struct walk_ctx w;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct image *im = image_load(fixtures[i]);
		uint8_t *owner;

		if (im->minor < 12) {
			free(im);
			continue;
		}
		f2 = frame_of(im, 1, &link);
		owner = image_at(im, f2 + im->proc.off.frame_owner);
		assert_non_null(owner);
		*owner = PY_FRAME_OWNED_BY_GENERATOR;
		assert_int_equal(walk(im, im->thread), im->nframes);
		assert_int_equal(scratch.sample.flags, 0);
		image_put_word(im, link, 0);
		assert_int_equal(walk(im, im->thread), 2);
		assert_int_equal(scratch.sample.flags, PY_SAMPLE_READ_ERROR);
		assert_int_equal(scratch.sample.frames[1].code, im->frames[1].code);
		*owner = 0; /* FRAME_OWNED_BY_THREAD */
		assert_int_equal(walk(im, im->thread), 2);
		assert_int_equal(scratch.sample.flags, 0);
		/* a suspended coroutine's frame read alone (an asyncio task's) is whole */
		*owner = PY_FRAME_OWNED_BY_GENERATOR;
		memset(&scratch, 0, sizeof(scratch));
		w = (struct walk_ctx){ .off = &im->proc.off,
				       .s = &scratch,
				       .f = f2,
				       .read_size = im->proc.off.frame_read_size };
		assert_int_equal(walk_step(0, &w), 0);
		assert_int_equal(w.n, 1);
		assert_int_equal(scratch.sample.flags, 0);
		free(im);
	}
}

/*
 * The thread list loops on its first entry and the thread is not in it: the
 * scan gives up after its bound (threads plus interpreters), finding nothing.
 */
static void test_thread_list_cycle_is_bounded(void **state)
{
	struct image *im = image_load("debian-3.11");
	const struct py_offsets *off = &im->proc.off;
	uint64_t interp = image_word(im, im->proc.runtime_addr + off->runtime_interp_head);
	uint64_t head = image_word(im, interp + off->interp_threads_head);

	image_put_word(im, head + off->tstate_next, head);
	assert_int_equal(walk(im, im->thread ^ 0x1000), 0);
	assert_true(reads <= 2 * (PYPROF_MAX_THREADS + PYPROF_MAX_INTERPS) + 2);
	assert_true(reads > PYPROF_MAX_THREADS);
	free(im);
}

/* A zeroed page of its own at addr, for structures a test adds to an image. */
static void image_add_page(struct image *im, uint64_t addr)
{
	assert_true(im->npages < MAX_PAGES && !image_at(im, addr));
	im->pages[im->npages].addr = addr;
	memset(im->pages[im->npages].data, 0, STACKWALK_PAGE);
	im->npages++;
}

static void image_put_u32(struct image *im, uint64_t addr, uint32_t v)
{
	uint8_t *p = image_at(im, addr);

	assert_non_null(p);
	memcpy(p, &v, sizeof(v));
}

/*
 * 3.14t thread-local bytecode, on the 3.13t image (the same frame and code
 * layout but for the two fields): f3's frame gets a tlbc_index (in its
 * stacktop word, which the walk does not read), its code object a co_tlbc
 * (inside its head, before the bytecode) pointing to a _PyCodeArray
 * {size, entries[]}, and its instr_ptr is moved into a copy of the
 * bytecode. The walk must give the position in that copy, the same as
 * before; an index out of the array or a wild array gives no position
 * (INT32_MAX, past any bytecode), never one computed from the wrong base.
 */
static void test_thread_local_bytecode(void **state)
{
	const uint64_t array = 0x10000000, copy = 0x10002000;
	struct image *im = image_load("trixie-3.13t");
	struct py_offsets *off = &im->proc.off;
	uint64_t link, f3 = frame_of(im, 0, &link), code = im->frames[0].code;
	int32_t want = im->frames[0].instr;
	__u32 n;

	off->frame_tlbc_index = 64;
	off->code_tlbc = 200;
	image_add_page(im, array);
	image_add_page(im, copy);
	image_put_word(im, code + off->code_tlbc, array);
	image_put_word(im, array, 3); /* size */
	image_put_word(im, array + 8, code + off->code_adaptive);
	image_put_word(im, array + 16, 0);
	image_put_word(im, array + 24, copy);
	image_put_word(im, f3 + off->frame_instr, copy + want);

	image_put_u32(im, f3 + off->frame_tlbc_index, 2);
	n = walk(im, im->thread);
	assert_int_equal(n, im->nframes);
	assert_int_equal(scratch.sample.frames[0].code, code);
	assert_int_equal(scratch.sample.frames[0].instr, want);
	/* the other frames, index 0, keep the code object's own bytecode */
	assert_int_equal(scratch.sample.frames[1].instr, im->frames[1].instr);

	image_put_u32(im, f3 + off->frame_tlbc_index, 1); /* an empty slot */
	walk(im, im->thread);
	assert_int_equal(scratch.sample.frames[0].instr, 0x7fffffff);
	image_put_u32(im, f3 + off->frame_tlbc_index, 3); /* = size */
	walk(im, im->thread);
	assert_int_equal(scratch.sample.frames[0].instr, 0x7fffffff);
	image_put_u32(im, f3 + off->frame_tlbc_index, (uint32_t)-1);
	walk(im, im->thread);
	assert_int_equal(scratch.sample.frames[0].instr, 0x7fffffff);
	image_put_u32(im, f3 + off->frame_tlbc_index, 2);
	image_put_word(im, array, 1ULL << 40); /* a hostile size: the index bound holds */
	image_put_u32(im, f3 + off->frame_tlbc_index, 0x7fffffff);
	n = walk(im, im->thread);
	assert_int_equal(n, im->nframes);
	assert_int_equal(scratch.sample.frames[0].instr, 0x7fffffff);
	image_put_word(im, code + off->code_tlbc, 0xdead0000); /* a wild array */
	image_put_u32(im, f3 + off->frame_tlbc_index, 2);
	n = walk(im, im->thread);
	assert_int_equal(n, im->nframes);
	assert_int_equal(scratch.sample.frames[0].instr, 0x7fffffff);
	/* and without the fields (a default build), the same image gives the raw difference */
	off->frame_tlbc_index = off->code_tlbc = PYPROF_NO_OFFSET;
	walk(im, im->thread);
	assert_int_not_equal(scratch.sample.frames[0].instr, want);
	free(im);
}

/*
 * 3.14t's str state: interned is a byte, the other bits 8 higher. With the
 * shift the walk's fingerprint (which includes a compact ASCII qualname's
 * text) is the one userspace computes; read unshifted, the text is lost.
 */
static void test_str_state_shift(void **state)
{
	struct image *im = image_load("trixie-3.13t");
	struct py_offsets *off = &im->proc.off;
	uint64_t code = im->frames[0].code;
	uint64_t qualname = image_word(im, code + off->code_qualname);
	uint32_t st, fp, plain;
	char name[PY_NAME_TEXT + 1];

	walk(im, im->thread);
	plain = scratch.sample.frames[0].fingerprint;
	assert_int_equal(plain, user_fingerprint(im, code, name, sizeof(name)));
	memcpy(&st, image_at(im, qualname + off->str_state), 4);
	image_put_u32(im, qualname + off->str_state, (st & ~3u) << 8 | (st & 3));
	off->str_state_shift = 8;
	walk(im, im->thread);
	fp = scratch.sample.frames[0].fingerprint;
	assert_int_equal(fp, plain);
	assert_int_equal(fp, user_fingerprint(im, code, name, sizeof(name)));
	off->str_state_shift = 0;
	walk(im, im->thread);
	assert_int_not_equal(scratch.sample.frames[0].fingerprint, plain);
	free(im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_finds_the_interpreters_stack),
		cmocka_unit_test(test_entry_frames),
		cmocka_unit_test(test_module_frame_marked),
		cmocka_unit_test(test_unknown_thread_has_no_stack),
		cmocka_unit_test(test_frame_pointing_to_itself_is_truncated),
		cmocka_unit_test(test_cycle_is_truncated),
		cmocka_unit_test(test_wild_caller_gives_a_partial_stack),
		cmocka_unit_test(test_wild_code_gives_a_partial_stack),
		cmocka_unit_test(test_chain_ending_at_a_generator_is_partial),
		cmocka_unit_test(test_thread_list_cycle_is_bounded),
		cmocka_unit_test(test_thread_local_bytecode),
		cmocka_unit_test(test_str_state_shift),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
