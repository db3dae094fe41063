/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for the live-object renderer (cpython/py_objects.c) on hand-built
 * memory images: the "target" is this process, whose fake objects (laid out
 * as CPython 3.11, 3.12 and 3.14 lay them out) are read back through
 * process_vm_readv like a real target's. Then damaged images: wild
 * pointers, lengths no object has, cycles, a class posing as a builtin.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cpython/py_objects.h"
#include "fake_memory.h"

#define NOBJ 64
#define OBJ 512

static uint8_t objs[NOBJ][OBJ] __attribute__((aligned(64)));
static unsigned nobj;
static struct py_layout layout;
static struct py_reader reader;
/* An address nothing is mapped at: a page we unmapped. */
static uint64_t hole;

static void put32(uint8_t *o, size_t off, uint32_t v)
{
	memcpy(o + off, &v, sizeof(v));
}

static uint8_t *new_obj(void)
{
	assert_true(nobj < NOBJ);
	memset(objs[nobj], 0, OBJ);
	return objs[nobj++];
}

/* A static type object named name (heap: a class). */
static uint8_t *new_type(const char *name, bool heap)
{
	uint8_t *t = new_obj();
	char *text = (char *)t + 256;

	snprintf(text, 64, "%s", name);
	put64(t, 24, addr(text));
	put64(t, 168, heap ? 512 : 0);
	return t;
}

static uint8_t *new_of(const uint8_t *type)
{
	uint8_t *o = new_obj();

	put64(o, 1 * 8 - 8, 1); /* ob_refcnt */
	put64(o, 8, addr(type));
	return o;
}

static void setup_version(uint32_t hex)
{
	uint8_t dbg[PY_DEBUG_OFFSETS_READ];
	char why[128];
	FILE *f;

	nobj = 0;
	if (py_layout__for_version(hex, &layout)) {
		/* 3.13+: the checked-in _Py_DebugOffsets capture */
		f = fopen(hex >> 16 == 0x030F ? "tests/fixtures/debug_offsets/3.15.2-sid.bin" :
						"tests/fixtures/debug_offsets/3.14.10-sid.bin",
			  "rb");
		assert_non_null(f);
		assert_int_equal(fread(dbg, 1, sizeof(dbg), f), sizeof(dbg));
		fclose(f);
		assert_int_equal(py_layout__from_debug_offsets(hex, dbg, sizeof(dbg), &layout, why,
							       sizeof(why)),
				 0);
	}
	assert_int_equal(py_reader__init(&reader, getpid(), &layout, hex), 0);
}

/* A 3.11-style int (ob_size = signed digit count) or a 3.12+ one (lv_tag). */
static uint8_t *new_int(const uint8_t *type, int sign, const uint32_t *digits, unsigned n)
{
	uint8_t *o = new_of(type);
	unsigned i;

	if (reader.O.long_tagged)
		put64(o, 16, ((uint64_t)n << 3) | (sign < 0 ? 2 : n ? 0 : 1));
	else
		put64(o, 16, sign < 0 ? -(int64_t)n : n);
	for (i = 0; i < n; i++)
		put32(o, 24 + 4 * i, digits[i]);
	return o;
}

static uint8_t *new_ascii(const uint8_t *type, const char *text, int64_t len)
{
	uint8_t *o = new_of(type);

	put64(o, layout.bpf.str_length, len);
	put32(o, layout.bpf.str_state, 0x60 | (1 << 2));
	memcpy(o + layout.bpf.str_ascii_data, text, strlen(text));
	return o;
}

static const char *show(uint64_t a, int want_err)
{
	static char out[PY_RENDER_MAX];

	assert_int_equal(py_render(&reader, a, out, sizeof(out), NULL), want_err);
	return out;
}

static void test_scalars(void **state)
{
	static const uint32_t d7[] = { 7 }, big[] = { 7, 0, 0, 1 << 10 }; /* 2^100 + 7 */
	uint8_t *tint, *tbool, *tfloat, *tnone;
	double v = 2.5;
	char want[64];
	uint8_t *f;
	unsigned k;

	(void)state;
	for (k = 0; k < 2; k++) {
		setup_version(k ? 0x030C01F0 : 0x030B02F0);
		tint = new_type("int", false);
		tbool = new_type("bool", false);
		tfloat = new_type("float", false);
		tnone = new_type("NoneType", false);
		assert_string_equal(show(addr(new_of(tnone)), 0), "None");
		assert_string_equal(show(addr(new_int(tint, -1, d7, 1)), 0), "-7");
		assert_string_equal(show(addr(new_int(tint, 0, NULL, 0)), 0), "0");
		assert_string_equal(show(addr(new_int(tint, 1, big, 4)), 0),
				    "1267650600228229401496703205383");
		assert_string_equal(show(addr(new_int(tbool, 1, d7, 1)), 0), "True");
		assert_string_equal(show(addr(new_int(tbool, 0, NULL, 0)), 0), "False");
		f = new_of(tfloat);
		memcpy(f + 16, &v, 8);
		assert_string_equal(show(addr(f), 0), "2.5");
		/* a digit with bits above 30: no int looks like that */
		snprintf(want, sizeof(want), "<unreadable at 0x%llx>",
			 (unsigned long long)addr(new_int(tint, 1, (uint32_t[]){ 1u << 31 }, 1)));
		assert_string_equal(show(addr(objs[nobj - 1]), -EFAULT), want);
	}
}

static void test_huge_int_abbreviated(void **state)
{
	static uint32_t digits[300];
	static uint8_t big[24 + 300 * 4] __attribute__((aligned(8)));
	uint8_t *tint;
	unsigned i;

	(void)state;
	setup_version(0x030B02F0);
	tint = new_type("int", false);
	/* 2^(30*299) exactly: 8971 bits, about 1.734048e+2700 (Python: str(2**8970) begins 17340480) */
	for (i = 0; i < 299; i++)
		digits[i] = 0;
	digits[299] = 1;
	put64(big, 8, addr(tint));
	put64(big, 16, 300);
	memcpy(big + 24, digits, sizeof(digits));
	assert_string_equal(show(addr(big), 0), "1.734048e+2700 (8971 bits)");
	/* a size no int has: refused before anything is read */
	put64(big, 16, (uint64_t)1 << 50);
	show(addr(big), -EFAULT);
}

static void test_strings_and_bytes(void **state)
{
	uint8_t *tstr, *tbytes, *s, *b;
	char want[PY_RENDER_MAX];
	uint16_t ucs2[3] = { 0x4e2d, 0x6587, '\n' };

	(void)state;
	setup_version(0x030C01F0);
	tstr = new_type("str", false);
	tbytes = new_type("bytes", false);
	assert_string_equal(show(addr(new_ascii(tstr, "it's", 4)), 0), "'it\\'s'");
	/* a length of 10^12: 80 characters shown, never 10^12 read */
	s = new_ascii(tstr, "", 1000000000000LL);
	memset(s + layout.bpf.str_ascii_data, 'y', 80);
	snprintf(
		want, sizeof(want), "'%.80s'... (1000000000000 chars)",
		"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
	/* (the rest of the object is not mapped as text: the read is of 80 bytes) */
	assert_string_equal(show(addr(s), 0), want);
	/* UCS-2 compact, not ASCII */
	s = new_of(tstr);
	put64(s, layout.bpf.str_length, 3);
	put32(s, layout.bpf.str_state, 0x20 | (2 << 2));
	memcpy(s + layout.str_compact_data, ucs2, sizeof(ucs2));
	assert_string_equal(show(addr(s), 0), "'\xe4\xb8\xad\xe6\x96\x87\\n'");
	/* not compact: its text is elsewhere; unreadable rather than guessed */
	put32(s, layout.bpf.str_state, 2 << 2);
	show(addr(s), -EFAULT);
	b = new_of(tbytes);
	put64(b, 16, 5);
	memcpy(b + 32, "a\x00\xff'\\", 5);
	assert_string_equal(show(addr(b), 0), "b'a\\x00\\xff\\'\\\\'");
	put64(b, 16, (uint64_t)-1);
	show(addr(b), -EFAULT);
}

static void test_containers(void **state)
{
	uint8_t *tint, *tlist, *ttuple, *tdict, *tstr, *tset, *l, *t, *d, *keys, *st, *table;
	static const uint32_t one[] = { 1 }, two[] = { 2 };
	uint8_t *i1, *i2, *sa;

	(void)state;
	setup_version(0x030C01F0);
	tint = new_type("int", false);
	tlist = new_type("list", false);
	ttuple = new_type("tuple", false);
	tdict = new_type("dict", false);
	tstr = new_type("str", false);
	tset = new_type("set", false);
	i1 = new_int(tint, 1, one, 1);
	i2 = new_int(tint, 1, two, 1);
	sa = new_ascii(tstr, "a", 1);
	/* a list that holds itself: the depth bound ends it */
	l = new_of(tlist);
	put64(l, 16, 1);
	put64(l, 24, addr(l + 256));
	put64(l, 256, addr(l));
	assert_string_equal(show(addr(l), 0), "[[<list len 1>]]");
	/* a list of 7 shows 5 and its length */
	put64(l, 16, 7);
	put64(l, 256, addr(i1));
	put64(l, 264, addr(i2));
	put64(l, 272, addr(i1));
	put64(l, 280, 0x10); /* a wild item: shown as such, the rest still shown */
	put64(l, 288, addr(i2));
	assert_string_equal(show(addr(l), 0), "[1, 2, 1, <unreadable at 0x10>, 2, ...] (len 7)");
	t = new_of(ttuple);
	put64(t, 16, 1);
	put64(t, 24, addr(sa));
	assert_string_equal(show(addr(t), 0), "('a',)");
	/* a 3.12 combined dict, str keys (dk_kind 1): 16-byte entries after 8 index bytes */
	d = new_of(tdict);
	keys = new_obj();
	put64(d, 16, 1);
	put64(d, 32, addr(keys));
	keys[8] = 3;  /* log2 size */
	keys[9] = 3;  /* log2 index bytes */
	keys[10] = 1; /* unicode keys */
	put64(keys, 24, 2);
	put64(keys, 32 + 8 + 16, addr(sa)); /* entry 1 (entry 0 deleted: NULL value) */
	put64(keys, 32 + 8 + 24, addr(i2));
	assert_string_equal(show(addr(d), 0), "{'a': 2}");
	keys[9] = 60; /* an index size no dict has */
	show(addr(d), -EFAULT);
	st = new_of(tset);
	table = new_obj();
	put64(st, 24, 2);
	put64(st, 32, 7);
	put64(st, 40, addr(table));
	put64(table, 3 * 16, addr(i1));
	put64(table, 5 * 16, addr(i2));
	assert_string_equal(show(addr(st), 0), "{1, 2}");
	put64(st, 32, 6); /* a mask that is not 2^n - 1 */
	show(addr(st), -EFAULT);
}

static void test_impostors_and_wild_pointers(void **state)
{
	uint8_t *fake_int, *o, *bad;
	char want[64];

	(void)state;
	setup_version(0x030B02F0);
	/* a class named "int" is not int: its memory is not read as one */
	fake_int = new_type("int", true);
	o = new_of(fake_int);
	put64(o, 16, (uint64_t)1 << 62);
	snprintf(want, sizeof(want), "<int at 0x%llx>", (unsigned long long)addr(o));
	assert_string_equal(show(addr(o), 0), want);
	/* a type whose name holds a control character: shown (the output escapes it) */
	bad = new_type("in\x1bt", false);
	o = new_of(bad);
	snprintf(want, sizeof(want), "<in\x1bt at 0x%llx>", (unsigned long long)addr(o));
	assert_string_equal(show(addr(o), 0), want);
	/* a type without a name */
	bad = new_type("", false);
	show(addr(new_of(bad)), -EFAULT);
	/* an object in an unmapped page, a type pointer into one, NULL */
	show(hole, -EFAULT);
	o = new_obj();
	put64(o, 8, hole);
	show(addr(o), -EFAULT);
	show(0, -EFAULT);
}

static void test_ndarray(void **state)
{
	uint8_t *tarr, *a, *descr, *dims;

	(void)state;
	setup_version(0x030B02F0);
	tarr = new_type("numpy.ndarray", false);
	a = new_of(tarr);
	descr = new_obj();
	dims = new_obj();
	put32(a, 24, 2);
	put64(a, 32, addr(dims));
	put64(a, 56, addr(descr));
	put64(dims, 0, 500);
	put64(dims, 8, 400);
	put32(descr, 28, 12);
	assert_string_equal(show(addr(a), 0), "ndarray[float64, (500, 400)]");
	put32(a, 24, 1);
	put32(descr, 28, 11);
	assert_string_equal(show(addr(a), 0), "ndarray[float32, (500,)]");
	put32(a, 24, 1000); /* more dimensions than numpy allows */
	show(addr(a), -EFAULT);
}

/* 3.14 frames: locals are _PyStackRefs, names sit after the tuple's cached hash. */
static void test_frame_locals_314(void **state)
{
	uint8_t *code, *names, *frame, *tstr, *tint, *n1, *n2, *n3, *v;
	struct py_local loc[4];
	size_t total = 0;

	(void)state;
	setup_version(0x030E0AF0);
	assert_int_equal(reader.O.tuple_items, 32);
	tstr = new_type("str", false);
	tint = new_type("int", false);
	n1 = new_ascii(tstr, "a", 1);
	n2 = new_ascii(tstr, "b", 1);
	n3 = new_ascii(tstr, "c", 1);
	v = new_int(tint, 1, (uint32_t[]){ 9 }, 1);
	code = new_obj();
	names = new_obj();
	frame = new_obj();
	put64(code, reader.O.code_names, addr(names));
	put64(names, 16, 3);
	put64(names, 32, addr(n1));
	put64(names, 40, addr(n2));
	put64(names, 48, addr(n3));
	put64(frame, reader.O.frame_localsplus, (5 << 2) | 3);	  /* a tagged int */
	put64(frame, reader.O.frame_localsplus + 8, addr(v) | 1); /* a deferred reference */
	put64(frame, reader.O.frame_localsplus + 16, 0);	  /* unbound */
	assert_int_equal(py_frame_locals(&reader, addr(frame), addr(code), loc, 4, &total), 3);
	assert_int_equal(total, 3);
	assert_string_equal(loc[0].name, "a");
	assert_true(loc[0].tagged);
	assert_int_equal(loc[0].ival, 5);
	assert_string_equal(loc[1].name, "b");
	assert_int_equal(loc[1].value, addr(v));
	assert_string_equal(show(loc[1].value, 0), "9");
	assert_int_equal(loc[2].value, 0);
	/* a names tuple claiming 10^9 entries is refused */
	put64(names, 16, 1000000000);
	assert_int_equal(py_frame_locals(&reader, addr(frame), addr(code), loc, 4, &total),
			 -EBADMSG);
}

/* A str-keyed keys object with "_target" then "_name": split tables index values by entry. */
static uint8_t *new_keys(uint8_t *tstr)
{
	uint8_t *keys = new_obj();

	keys[8] = 3;  /* log2 size */
	keys[9] = 3;  /* log2 index bytes */
	keys[10] = 2; /* split */
	put64(keys, 24, 2);
	put64(keys, 32 + 8, addr(new_ascii(tstr, "_target", 7)));
	put64(keys, 32 + 8 + 16, addr(new_ascii(tstr, "_name", 5)));
	return keys;
}

/* Thread._name as each version keeps an instance's attributes. */
static void test_instance_attribute(void **state)
{
	uint8_t *type, *tstr, *keys, *name, *block, *obj, *values, *d;
	char out[64];

	(void)state;
	/* 3.12: values kept apart, their address less 1 in place of the dict */
	setup_version(0x030C01F0);
	tstr = new_type("str", false);
	type = new_type("Thread", true);
	put64(type, 168, 512 | 16); /* heap type, managed dict */
	keys = new_keys(tstr);
	put64(type, reader.O.heap_cached_keys, addr(keys));
	name = new_ascii(tstr, "locker-a", 8);
	block = new_obj();
	obj = block + 64;
	put64(obj, 8, addr(type));
	values = new_obj();
	put64(values, 8, addr(name));
	put64(obj - 24, 0, addr(values) - 1);
	assert_int_equal(py_object_attr_str(&reader, addr(obj), "_name", out, sizeof(out)), 0);
	assert_string_equal(out, "locker-a");
	assert_int_equal(py_object_attr_str(&reader, addr(obj), "_nope", out, sizeof(out)),
			 -ENOENT);
	/* 3.13+: inline after the object (tp_basicsize 16), behind an 8-byte header */
	setup_version(0x030E0AF0);
	tstr = new_type("str", false);
	type = new_type("Thread", true);
	put64(type, 168, 512 | 16);
	put64(type, 32, 16);
	keys = new_keys(tstr);
	put64(type, reader.O.heap_cached_keys, addr(keys));
	name = new_ascii(tstr, "locker-b", 8);
	block = new_obj();
	obj = block + 64;
	put64(obj, 8, addr(type));
	put64(obj, 16 + 8 + 8, addr(name));
	assert_int_equal(py_object_attr_str(&reader, addr(obj), "_name", out, sizeof(out)), 0);
	assert_string_equal(out, "locker-b");
	/* a cached-keys pointer into nothing: an error, not a crash */
	put64(type, reader.O.heap_cached_keys, hole);
	assert_true(py_object_attr_str(&reader, addr(obj), "_name", out, sizeof(out)) < 0);
	/* 3.10: a combined __dict__ at tp_dictoffset */
	setup_version(0x030A0DF0);
	tstr = new_type("str", false);
	type = new_type("Thread", true);
	put64(type, 288, 16);
	d = new_obj();
	keys = new_obj();
	put64(keys, 8, 8);  /* dk_size */
	put64(keys, 32, 1); /* dk_nentries */
	put64(keys, 40 + 8 + 8, addr(new_ascii(tstr, "_name", 5)));
	put64(keys, 40 + 8 + 16, addr(new_ascii(tstr, "heartbeat", 9)));
	put64(d, 16, 1);
	put64(d, 32, addr(keys));
	block = new_obj();
	obj = block + 64;
	put64(obj, 8, addr(type));
	put64(obj, 16, addr(d));
	assert_int_equal(py_object_attr_str(&reader, addr(obj), "_name", out, sizeof(out)), 0);
	assert_string_equal(out, "heartbeat");
}

/* A type named name with tp_flags flags and tp_basicsize size. */
static uint8_t *new_type_of(const char *name, uint64_t flags, uint64_t size)
{
	uint8_t *t = new_type(name, false);

	put64(t, 168, flags);
	put64(t, 32, size);
	return t;
}

/* An object of type t rendered with its lock information. */
static const char *show_info(uint64_t a, struct py_value_info *info)
{
	static char out[PY_RENDER_MAX];

	assert_int_equal(py_render_info(&reader, a, out, sizeof(out), NULL, info), 0);
	return out;
}

/*
 * _thread.lock and _thread.RLock in each layout read live: 3.8-3.13.0 (a
 * char after two pointers; lock, owner, count), 3.13.x-3.15 (a PyMutex; a
 * _PyRecursiveMutex), and made from a spec (3.10+: heap, immutable).
 */
static void test_locks(void **state)
{
	static const struct py_thread_id threads[] = { { 0x7f0000001000, 4242, "holder" },
						       { 0x7f0000002000, 4243, "" } };
	struct py_value_info info;
	uint8_t *tl, *tr, *o;
	char want[160];

	(void)state;
	setup_version(0x030B02F0);
	reader.threads = threads;
	reader.nthreads = 2;
	/* 3.11: heap and immutable, 40 bytes: the char at 32 */
	tl = new_type_of("_thread.lock", 512 | 256, 40);
	o = new_of(tl);
	snprintf(want, sizeof(want), "<unlocked _thread.lock object at 0x%llx>",
		 (unsigned long long)addr(o));
	assert_string_equal(show_info(addr(o), &info), want);
	assert_true(info.lock == 1 && info.locked == 0);
	o[32] = 1;
	snprintf(want, sizeof(want), "<locked _thread.lock object at 0x%llx>",
		 (unsigned long long)addr(o));
	assert_string_equal(show_info(addr(o), &info), want);
	assert_true(info.lock == 1 && info.locked == 1);
	/* 3.11 RLock, 48 bytes: owner at 24, count at 32 */
	tr = new_type_of("_thread.RLock", 512 | 256, 48);
	o = new_of(tr);
	put64(o, 24, 0x7f0000001000);
	put64(o, 32, 2);
	snprintf(want, sizeof(want),
		 "<locked _thread.RLock object owner=thread 4242 (holder) count=2 at 0x%llx>",
		 (unsigned long long)addr(o));
	assert_string_equal(show_info(addr(o), &info), want);
	assert_true(info.lock == 2 && info.locked == 1 && info.owner == 0x7f0000001000 &&
		    info.count == 2);
	put64(o, 24, 0x7f0000002000); /* a thread without a threading name */
	put64(o, 32, 1);
	assert_non_null(strstr(show_info(addr(o), &info), "owner=thread 4243 count=1 "));
	put64(o, 24, 0x7f0000009000); /* no thread read has this ident */
	assert_non_null(strstr(show_info(addr(o), &info), "owner=ident 0x7f0000009000 count=1"));
	put64(o, 32, 0);
	assert_non_null(strstr(show_info(addr(o), &info), "<unlocked _thread.RLock object"));
	assert_true(info.lock == 2 && info.locked == 0 && info.owner == 0 && info.count == 0);
	/* 3.14+: a PyMutex (24 bytes); a _PyRecursiveMutex (40): held twice, level 1 */
	setup_version(0x030E0AF0);
	reader.threads = threads;
	reader.nthreads = 2;
	tl = new_type_of("_thread.lock", 512 | 256, 24);
	o = new_of(tl);
	o[16] = 3; /* locked, with a thread parked */
	assert_non_null(strstr(show_info(addr(o), &info), "<locked _thread.lock"));
	o[16] = 2;
	assert_non_null(strstr(show_info(addr(o), &info), "<unlocked _thread.lock"));
	tr = new_type_of("_thread.RLock", 512 | 256, 40);
	o = new_of(tr);
	o[16] = 1;
	put64(o, 24, 0x7f0000001000);
	put64(o, 32, 1);
	assert_non_null(strstr(show_info(addr(o), &info), "owner=thread 4242 (holder) count=2 "));
	assert_true(info.locked == 1 && info.count == 2);
	/* a layout not known (another size): an object like any other, no state guessed */
	tl = new_type_of("_thread.lock", 512 | 256, 64);
	o = new_of(tl);
	snprintf(want, sizeof(want), "<_thread.lock at 0x%llx>", (unsigned long long)addr(o));
	assert_string_equal(show_info(addr(o), &info), want);
	assert_int_equal(info.lock, 0);
	/* a class named _thread.lock (heap, not immutable) is not read as a lock */
	tl = new_type_of("_thread.lock", 512 | 1024, 24);
	o = new_of(tl);
	o[16] = 1;
	assert_non_null(strstr(show_info(addr(o), &info), "<_thread.lock at 0x"));
	assert_int_equal(info.lock, 0);
	reader.threads = NULL;
	reader.nthreads = 0;
}

/* numpy scalars by value, as numpy 2 shows them; their value right after the header. */
static void test_numpy_scalars(void **state)
{
	static const struct {
		const char *type;
		uint8_t bytes[16];
		unsigned size;
		const char *want;
	} cases[] = {
		{ "numpy.int8", { 0xfb }, 1, "np.int8(-5)" },
		{ "numpy.uint8", { 0xfb }, 1, "np.uint8(251)" },
		{ "numpy.int16", { 0x00, 0x80 }, 2, "np.int16(-32768)" },
		{ "numpy.uint16", { 0xff, 0xff }, 2, "np.uint16(65535)" },
		{ "numpy.int64",
		  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		  8,
		  "np.int64(-1)" },
		{ "numpy.uint64",
		  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		  8,
		  "np.uint64(18446744073709551615)" },
		{ "numpy.bool_", { 1 }, 1, "np.True_" },
		{ "numpy.bool", { 0 }, 1, "np.False_" },
		{ "numpy.float64", { 0, 0, 0, 0, 0, 0, 0x04, 0x40 }, 8, "np.float64(2.5)" },
		{ "numpy.float64", { 0, 0, 0, 0, 0, 0, 0x14, 0x40 }, 8, "np.float64(5.0)" },
		{ "numpy.float32", { 0xcd, 0xcc, 0xcc, 0x3d }, 4, "np.float32(0.1)" },
		{ "numpy.float16", { 0x66, 0x2e }, 2, "np.float16(0.1)" },
		{ "numpy.float16", { 0x00, 0x7c }, 2, "np.float16(inf)" },
		{ "numpy.complex128",
		  { 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0 },
		  16,
		  "np.complex128(1-2j)" },
	};
	uint8_t *t, *o;
	size_t i;

	(void)state;
	setup_version(0x030B02F0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = new_type_of(cases[i].type, 0, 16 + (cases[i].size < 8 ? 8 : cases[i].size));
		o = new_of(t);
		memcpy(o + 16, cases[i].bytes, cases[i].size);
		assert_string_equal(show(addr(o), 0), cases[i].want);
	}
	/* a type too small to hold its value is not read past its end */
	t = new_type_of("numpy.float64", 0, 20);
	show(addr(new_of(t)), -EFAULT);
	/* a class named numpy.int8 is an object like any other */
	t = new_type_of("numpy.int8", 512, 24);
	o = new_of(t);
	assert_non_null(strstr(show(addr(o), 0), "<numpy.int8 at 0x"));
}

/* A code object's names and argument counts, as version hex lays them out. */
static uint8_t *new_code(uint8_t *tstr, const char *const *names, unsigned n, int32_t argc,
			 int32_t posonly, int32_t kwonly, int32_t flags)
{
	uint8_t *code = new_obj(), *tuple = new_obj();
	unsigned i;

	put64(code, reader.O.code_names, addr(tuple));
	put64(tuple, 16, n);
	for (i = 0; i < n; i++)
		put64(tuple, reader.O.tuple_items + 8 * i,
		      addr(new_ascii(tstr, names[i], strlen(names[i]))));
	put32(code, reader.O.code_argcount, argc);
	put32(code, reader.O.code_argcount + 4, posonly);
	put32(code, reader.O.code_argcount + 8, kwonly);
	put32(code, reader.O.code_flags, flags);
	if (reader.O.code_nlocals != PYPROF_NO_OFFSET)
		put32(code, reader.O.code_nlocals, n);
	return code;
}

/*
 * def f(a, b, /, c, *rest, d, **kw): x — the arguments marked in
 * co_varnames' order (keyword-only before *rest), on each code layout.
 */
static void test_arguments(void **state)
{
	static const char *const names[] = { "a", "b", "c", "d", "rest", "kw", "x" };
	static const uint8_t want[] = { PY_PARAM_POSONLY, PY_PARAM_POSONLY, PY_PARAM_POS,
					PY_PARAM_KWONLY,  PY_PARAM_VARARGS, PY_PARAM_VARKW,
					PY_PARAM_NONE };
	static const uint32_t versions[] = { 0x030812F0, 0x030A0DF0, 0x030B02F0, 0x030C01F0,
					     0x030F02F0 };
	struct py_local loc[8];
	uint8_t *tstr, *code, *frame;
	size_t total, k, i;

	(void)state;
	for (k = 0; k < sizeof(versions) / sizeof(versions[0]); k++) {
		setup_version(versions[k]);
		tstr = new_type("str", false);
		code = new_code(tstr, names, 7, 3, 2, 1, 4 | 8);
		frame = new_obj();
		assert_int_equal(py_frame_locals(&reader, addr(frame), addr(code), loc, 8, &total),
				 7);
		for (i = 0; i < 7; i++)
			assert_int_equal(loc[i].param, want[i]);
		/* counts the names cannot hold: nothing marked */
		put32(code, reader.O.code_argcount, 9);
		assert_int_equal(py_frame_locals(&reader, addr(frame), addr(code), loc, 8, &total),
				 7);
		for (i = 0; i < 7; i++)
			assert_int_equal(loc[i].param, PY_PARAM_NONE);
		put32(code, reader.O.code_argcount, 3);
		put32(code, reader.O.code_argcount + 4,
		      4); /* more positional-only than positional */
		assert_int_equal(py_frame_locals(&reader, addr(frame), addr(code), loc, 8, &total),
				 7);
		assert_int_equal(loc[0].param, PY_PARAM_NONE);
	}
}

/*
 * 3.10: def f(arg, other) whose arg an inner function captures: its slot is
 * empty and its cell, after the locals, holds it: the cell takes its place.
 */
static void test_captured_argument_310(void **state)
{
	static const char *const names[] = { "arg", "other", "inner" };
	uint8_t *tstr, *tcell, *code, *frame, *cells, *cell, *value;
	struct py_local loc[8];
	size_t total;

	(void)state;
	setup_version(0x030A0DF0);
	tstr = new_type("str", false);
	tcell = new_type("cell", false);
	code = new_code(tstr, names, 3, 2, 0, 0, 0);
	cells = new_obj();
	put64(code, reader.O.code_cellvars, addr(cells));
	put64(cells, 16, 1);
	put64(cells, 24, addr(new_ascii(tstr, "arg", 3)));
	put64(code, reader.O.code_freevars, addr(new_obj())); /* no free variables */
	value = new_ascii(tstr, "cell-arg", 8);
	cell = new_of(tcell);
	put64(cell, 16, addr(value));
	frame = new_obj();
	put64(frame, reader.O.frame_localsplus + 8, addr(value)); /* other */
	put64(frame, reader.O.frame_localsplus + 24, addr(cell)); /* the cell, after 3 locals */
	assert_int_equal(py_frame_locals(&reader, addr(frame), addr(code), loc, 8, &total), 3);
	assert_int_equal(total, 3);
	assert_string_equal(loc[0].name, "arg");
	assert_int_equal(loc[0].param, PY_PARAM_POS);
	assert_int_equal(loc[0].value, addr(cell));
	assert_string_equal(show(loc[0].value, 0), "'cell-arg'");
	assert_string_equal(loc[2].name, "inner");
	assert_int_equal(loc[2].value, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_huge_int_abbreviated),
		cmocka_unit_test(test_strings_and_bytes),
		cmocka_unit_test(test_containers),
		cmocka_unit_test(test_impostors_and_wild_pointers),
		cmocka_unit_test(test_ndarray),
		cmocka_unit_test(test_frame_locals_314),
		cmocka_unit_test(test_instance_attribute),
		cmocka_unit_test(test_locks),
		cmocka_unit_test(test_numpy_scalars),
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_captured_argument_310),
	};
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		return 1;
	munmap(page, 4096);
	hole = addr(page);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
