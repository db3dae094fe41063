// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbol tables shared by every process of a run (see symcache.h).
 *
 * A table holds a module's symbols relative to its load start (so one table
 * serves every process, wherever ASLR put the file), sorted by offset, each
 * with the largest end of all the symbols up to it. A lookup then gives what
 * dwfl_module_addrinfo's linear scan gives, in a binary search and a short
 * walk back: the sized symbols holding the pc, the closest start first,
 * then the stronger binding (global, weak, local), then the smaller size,
 * then the earlier in the table; a global one is preferred to any local one
 * (libdwfl searches the local symbols only when no global one holds the
 * pc, and no global unsized label is at the pc itself). With none, an unsized label (hand-written assembly) in the pc's
 * section counts, if no symbol at or below the pc reaches past it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/symcache.h"
#include "native_guard.h"

#define BUILD_ID_MAX 64
/* A longer name is cut: names end up in reports, not in a linker. */
#define NAME_MAX_LEN 4096
/* The walk back over symbols overlapping the pc (a hostile file nests many). */
#define MAX_WALK 4096

struct sym {
	uint64_t off, size;
	uint64_t max_end; /* the largest off + size of this and every earlier one */
	uint32_t name, idx;
	int32_t sec; /* an unsized one's section (index in secs, -1 for none) */
	uint8_t bind, global, abs;
};

/* An allocated section, as offsets from the module's start. */
struct sec {
	uint64_t lo, hi;
	size_t ndx;
};

struct table {
	struct table *prev, *next; /* most recently used first */
	struct symcache_file file;
	uint8_t build_id[BUILD_ID_MAX];
	int id_len;
	bool refused;
	struct sym *syms;
	size_t n, bytes;
	char *strs;
	struct sec *secs;
	size_t nsecs;
};

struct symcache {
	pthread_mutex_t lock;
	size_t max_bytes;
	struct table *head, *tail;
	struct symcache_stats stats;
};

static struct symcache *shared;
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

struct symcache *symcache__new(size_t max_bytes)
{
	struct symcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->max_bytes = max_bytes;
	return c;
}

static void table__free(struct table *t)
{
	free(t->syms);
	free(t->strs);
	free(t->secs);
	free(t);
}

void symcache__free(struct symcache *c)
{
	struct table *t, *next;

	if (!c)
		return;
	for (t = c->head; t; t = next) {
		next = t->next;
		table__free(t);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void shared__make(void)
{
	shared = symcache__new(SYMCACHE_DEFAULT_BYTES);
}

struct symcache *symcache__shared(void)
{
	pthread_once(&shared_once, shared__make);
	return shared;
}

void symcache__file_of(const struct stat *st, struct symcache_file *f)
{
	memset(f, 0, sizeof(*f));
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	f->ctime = st->st_ctim;
}

static void lru__unlink(struct symcache *c, struct table *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		c->head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		c->tail = t->prev;
	t->prev = t->next = NULL;
}

static void lru__push(struct symcache *c, struct table *t)
{
	t->next = c->head;
	if (c->head)
		c->head->prev = t;
	c->head = t;
	if (!c->tail)
		c->tail = t;
}

static bool same_file(const struct symcache_file *a, const struct symcache_file *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static struct table *find(struct symcache *c, const struct symcache_file *f, const uint8_t *id,
			  int id_len)
{
	struct table *t;

	for (t = c->head; t; t = t->next)
		if (same_file(&t->file, f) && t->id_len == id_len &&
		    !memcmp(t->build_id, id, (size_t)id_len))
			return t;
	return NULL;
}

/* libdwfl's preference of bindings: global over weak over local. */
static uint8_t bind_value(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int sec_cmp(const void *a, const void *b)
{
	const struct sec *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

/*
 * The main file's allocated sections, sorted as libdwfl sorts them to find
 * an address's section (which decides whether an unsized label counts).
 */
static int table__sections(struct table *t, Dwfl_Module *mod, Dwarf_Addr start)
{
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	size_t n = 0;

	if (!elf || elf_getshdrnum(elf, &n) || !n)
		return 0;
	if (n > SYMCACHE_MAX_SYMS)
		return -E2BIG;
	t->secs = calloc(n, sizeof(*t->secs));
	if (!t->secs)
		return -ENOMEM;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (!sh || !(sh->sh_flags & SHF_ALLOC) || sh->sh_addr + bias < start ||
		    t->nsecs == n)
			continue;
		t->secs[t->nsecs].lo = sh->sh_addr + bias - start;
		t->secs[t->nsecs].hi = t->secs[t->nsecs].lo + sh->sh_size;
		t->secs[t->nsecs++].ndx = elf_ndxscn(scn);
	}
	qsort(t->secs, t->nsecs, sizeof(*t->secs), sec_cmp);
	return 0;
}

/* x's section as libdwfl finds it (an end is in its section unless the next starts there); -1 for none. */
static int32_t section_at(const struct table *t, uint64_t x)
{
	size_t l = 0, u = t->nsecs;

	while (l < u) {
		size_t i = (l + u) / 2;

		if (x < t->secs[i].lo) {
			u = i;
		} else if (x > t->secs[i].hi) {
			l = i + 1;
		} else {
			if (x == t->secs[i].hi && i + 1 < t->nsecs && x == t->secs[i + 1].lo)
				i++;
			return (int32_t)i;
		}
	}
	return -1;
}

/*
 * Strings of the table, grown as needed, within max bytes (many symbols can
 * share one long name in the file): 0, -E2BIG or -ENOMEM.
 */
static int strs__add(struct table *t, size_t *len, size_t *cap, const char *name, size_t n,
		     uint32_t *at, size_t max)
{
	if (*len + n + 1 > max)
		return -E2BIG;
	if (*len + n + 1 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		char *p;

		while (ncap < *len + n + 1)
			ncap *= 2;
		if (ncap > UINT32_MAX || !(p = realloc(t->strs, ncap)))
			return -ENOMEM;
		t->strs = p;
		*cap = ncap;
	}
	memcpy(t->strs + *len, name, n);
	t->strs[*len + n] = '\0';
	*at = (uint32_t)*len;
	*len += n + 1;
	return 0;
}

static void shrink(void **p, size_t bytes)
{
	void *q = bytes ? realloc(*p, bytes) : NULL;

	if (q)
		*p = q;
}

/*
 * Where a symbol's name may be read. libdwfl hands out a name as its string
 * table's bytes at st_name, checked to start in the table but not to end in
 * it: a hostile file's table without its last NUL made the name run past
 * libelf's buffer (the fuzzer read the heap past it). So a name is read only
 * within a table known here: the main file's string tables its symbol
 * tables link to (libdwfl's own Elf_Data, by the pointer), else the mini
 * symbol table's in .gnu_debugdata, decompressed here (by st_name). A name
 * in neither (a table libdwfl found by the dynamic segment) is not read.
 */
#define MAX_STRTABS 8

struct strtabs {
	struct strtab {
		const char *buf;
		size_t len;
	} main[MAX_STRTABS], aux;
	int nmain;
	Elf *elf, *aux_elf;
	void *aux_image;
	bool aux_tried;
};

static void strtabs__init(struct strtabs *st, Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t i = 0;

	memset(st, 0, sizeof(*st));
	st->elf = dwfl_module_getelf(mod, &bias);
	while (st->elf && st->nmain < MAX_STRTABS && (scn = elf_nextscn(st->elf, scn)) &&
	       i++ < NATIVE_GUARD_MAX_SECTIONS) {
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(elf_getscn(st->elf, sh.sh_link), NULL);
		if (d && d->d_buf && d->d_size)
			st->main[st->nmain++] = (struct strtab){ d->d_buf, d->d_size };
	}
}

/* The .gnu_debugdata's symbol table's strings, in memory of our own. */
static void strtabs__aux(struct strtabs *st)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t len, i = 0;

	st->aux_tried = true;
	if (!st->elf || !(st->aux_image = native_guard__debugdata(st->elf, &len)) ||
	    !(st->aux_elf = elf_memory(st->aux_image, len)))
		return;
	/* libdwfl's: the first SHT_SYMTAB */
	while ((scn = elf_nextscn(st->aux_elf, scn)) && i++ < NATIVE_GUARD_MAX_SECTIONS) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(elf_getscn(st->aux_elf, sh.sh_link), NULL);
		if (d && d->d_buf)
			st->aux = (struct strtab){ d->d_buf, d->d_size };
		return;
	}
}

static void strtabs__free(struct strtabs *st)
{
	elf_end(st->aux_elf);
	free(st->aux_image);
}

/* The name libdwfl gave for st_name, read within its table: *n bytes; NULL if none. */
static const char *strtabs__name(struct strtabs *st, const char *name, GElf_Word st_name, size_t *n)
{
	uintptr_t at = (uintptr_t)name;
	const struct strtab *t = NULL;
	int i;

	for (i = 0; i < st->nmain && !t; i++)
		if (at >= (uintptr_t)st->main[i].buf &&
		    at - (uintptr_t)st->main[i].buf < st->main[i].len)
			t = &st->main[i];
	if (t) {
		*n = strnlen(name, t->buf + t->len - name);
	} else {
		if (!st->aux_tried)
			strtabs__aux(st);
		if (!st->aux.buf || st_name >= st->aux.len)
			return NULL;
		name = st->aux.buf + st_name;
		*n = strnlen(name, st->aux.len - st_name);
	}
	if (*n > NAME_MAX_LEN - 1)
		*n = NAME_MAX_LEN - 1;
	return *n ? name : NULL;
}

/* Whether libdwfl would consider this symbol at all. */
static bool eligible(const char *name, const GElf_Sym *s, GElf_Addr value, Dwarf_Addr start)
{
	int type = GELF_ST_TYPE(s->st_info);

	return name && name[0] && s->st_shndx != SHN_UNDEF && type != STT_SECTION &&
	       type != STT_FILE && type != STT_TLS && value >= start;
}

/* Symbols 1..n-1 of mod, the eligible ones with their names, into t. */
static int table__symbols(struct table *t, Dwfl_Module *mod, Dwarf_Addr start, int n,
			  int first_global, struct strtabs *st, size_t *len, size_t *cap,
			  size_t max_bytes)
{
	size_t nlen;
	int i, err;

	for (i = 1; i < n; i++) {
		struct sym *s = &t->syms[t->n];
		GElf_Word shndx = 0;
		GElf_Addr value = 0;
		const char *name;
		GElf_Sym gs;

		name = dwfl_module_getsym_info(mod, i, &gs, &value, &shndx, NULL, NULL);
		if (!eligible(name, &gs, value, start) ||
		    !(name = strtabs__name(st, name, gs.st_name, &nlen)))
			continue;
		s->off = value - start;
		s->size = gs.st_size;
		s->idx = (uint32_t)i;
		s->bind = bind_value(&gs);
		s->global = first_global <= 0 || i >= first_global;
		s->abs = shndx >= SHN_LORESERVE;
		err = strs__add(t, len, cap, name, nlen, &s->name,
				max_bytes - (size_t)n * sizeof(*s));
		if (err)
			return err;
		t->n++;
	}
	return 0;
}

/* The module's eligible symbols into t (unsorted): 0, -E2BIG or -ENOMEM. */
static int table__read(struct table *t, Dwfl_Module *mod, Dwarf_Addr start, size_t max_bytes)
{
	int n = dwfl_module_getsymtab(mod), first_global, err;
	size_t len = 0, cap = 0;
	struct strtabs st;

	if (n <= 1)
		return 0;
	err = table__sections(t, mod, start);
	if (err)
		return err;
	if ((unsigned)n > SYMCACHE_MAX_SYMS || (size_t)n * sizeof(struct sym) > max_bytes)
		return -E2BIG;
	first_global = dwfl_module_getsymtab_first_global(mod);
	t->syms = calloc((size_t)n, sizeof(*t->syms));
	if (!t->syms)
		return -ENOMEM;
	strtabs__init(&st, mod);
	err = table__symbols(t, mod, start, n, first_global, &st, &len, &cap, max_bytes);
	strtabs__free(&st);
	if (err)
		return err;
	/* what is kept is what is counted */
	shrink((void **)&t->strs, len);
	shrink((void **)&t->syms, t->n * sizeof(*t->syms));
	t->bytes = t->n * sizeof(struct sym) + len + t->nsecs * sizeof(struct sec);
	return t->bytes > max_bytes ? -E2BIG : 0;
}

static void table__sort(struct table *t)
{
	uint64_t max_end = 0;
	size_t i;

	/* a file without symbols has no array at all (qsort's is declared non-null) */
	if (!t->n)
		return;
	qsort(t->syms, t->n, sizeof(*t->syms), sym_cmp);
	for (i = 0; i < t->n; i++) {
		struct sym *s = &t->syms[i];

		s->sec = s->size ? -1 : section_at(t, s->off);
		if (s->off + s->size > max_end)
			max_end = s->off + s->size;
		s->max_end = max_end;
	}
}

/* Room for bytes more, dropping the least recently used tables. */
static void make_room(struct symcache *c, size_t bytes)
{
	while (c->tail && c->stats.bytes + bytes > c->max_bytes) {
		struct table *t = c->tail;

		lru__unlink(c, t);
		c->stats.bytes -= t->bytes;
		c->stats.tables--;
		c->stats.evicted++;
		table__free(t);
	}
}

static struct table *build(struct symcache *c, Dwfl_Module *mod, Dwarf_Addr start,
			   const struct symcache_file *f, const uint8_t *id, int id_len)
{
	struct table *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return NULL;
	t->file = *f;
	memcpy(t->build_id, id, (size_t)id_len);
	t->id_len = id_len;
	err = table__read(t, mod, start, c->max_bytes);
	if (err == -ENOMEM) {
		table__free(t);
		return NULL;
	}
	if (err) {
		/* remembered as refused, so it is not read again at every lookup */
		free(t->syms);
		free(t->strs);
		t->syms = NULL;
		t->strs = NULL;
		t->n = t->bytes = 0;
		t->refused = true;
		c->stats.refused++;
	} else {
		table__sort(t);
		c->stats.built++;
	}
	make_room(c, t->bytes);
	lru__push(c, t);
	c->stats.bytes += t->bytes;
	c->stats.tables++;
	return t;
}

/*
 * libdwfl's choice, symbol by symbol in table order, among the sized ones
 * holding the pc: a later one replaces the one kept if it starts closer or
 * binds more strongly, or starts at the same place and is smaller without
 * binding less strongly, or is no larger and binds more strongly.
 */
static bool replaces(const struct sym *s, const struct sym *kept)
{
	if (!kept || kept->off < s->off || kept->bind < s->bind)
		return true;
	return kept->off == s->off && ((kept->size > s->size && kept->bind <= s->bind) ||
				       (kept->size >= s->size && kept->bind < s->bind));
}

/* The candidates of one pass (global or local), taken in table order. */
static const struct sym *choose(const struct sym **cand, size_t n)
{
	const struct sym *kept = NULL;
	size_t i, j;

	/* few: insertion sort by table index */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && cand[j - 1]->idx > cand[j]->idx; j--) {
			const struct sym *tmp = cand[j];

			cand[j] = cand[j - 1];
			cand[j - 1] = tmp;
		}
	for (i = 0; i < n; i++)
		if (replaces(cand[i], kept))
			kept = cand[i];
	return kept;
}

#define MAX_CAND 64

/*
 * A global unsized label at x itself, in x's section: libdwfl then searches
 * no local symbol, and names x by the label even where a local symbol holds
 * it (a linker's _edata on a .bss object's first byte).
 */
static const struct sym *global_label_at(const struct table *t, size_t below, uint64_t x)
{
	const struct sym *g = NULL;
	int32_t sec = section_at(t, x);
	size_t j;

	for (j = below; j-- > 0 && t->syms[j].off == x && below - j <= MAX_WALK;) {
		const struct sym *s = &t->syms[j];

		if (!s->size && s->global && (s->abs || s->sec == sec) && (!g || s->idx > g->idx))
			g = s;
	}
	return g;
}

/*
 * *capped: more symbols overlap x than are looked at (a hostile file's).
 * NULL with *label set: x is named by a global label (global_label_at).
 */
static const struct sym *lookup_sized(const struct table *t, size_t below, uint64_t x, bool *capped,
				      const struct sym **label)
{
	const struct sym *g[MAX_CAND], *l[MAX_CAND], *best;
	size_t j, walked = 0, ng = 0, nl = 0;

	for (j = below; j-- > 0 && t->syms[j].max_end > x; walked++) {
		const struct sym *s = &t->syms[j];

		if (walked == MAX_WALK) {
			*capped = true;
			break;
		}
		if (!s->size || x - s->off >= s->size)
			continue;
		if ((s->global ? ng : nl) == MAX_CAND)
			*capped = true;
		else if (s->global)
			g[ng++] = s;
		else
			l[nl++] = s;
	}
	best = choose(g, ng);
	if (best)
		return best;
	*label = global_label_at(t, below, x);
	return *label ? NULL : choose(l, nl);
}

/*
 * An unsized label (hand-written assembly) when no sized symbol holds x:
 * only one at the highest end of everything at or below x can be, and only
 * in x's section (by address). libdwfl keeps the last of them in its scan
 * (the globals, then the locals unless a global one is at x itself).
 */
static const struct sym *lookup_label(const struct table *t, size_t below, uint64_t x)
{
	uint64_t min_label = t->syms[below - 1].max_end;
	const struct sym *g = NULL, *l = NULL;
	int32_t sec = section_at(t, x);
	size_t j;

	for (j = below; j-- > 0 && t->syms[j].off == min_label;) {
		const struct sym *s = &t->syms[j];
		bool same = s->abs ? s->off == x : s->sec == sec;

		if (s->size || !same)
			continue;
		if (s->global && (!g || s->idx > g->idx))
			g = s;
		else if (!s->global && (!l || s->idx > l->idx))
			l = s;
	}
	if (g && g->off == x)
		return g;
	return l ? l : g;
}

static const char *table__lookup(const struct table *t, uint64_t x, bool *capped)
{
	const struct sym *s, *label = NULL;
	size_t lo = 0, hi = t->n;

	/* below = how many start at or before x */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].off <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = lookup_sized(t, lo, x, capped, &label);
	if (!s)
		s = label ? label : lookup_label(t, lo, x);
	return s ? t->strs + s->name : NULL;
}

/* Without a table (refused, or no memory): libdw's own linear search. */
static int name_direct(Dwfl_Module *mod, uint64_t pc, char *name, size_t namelen)
{
	const char *sym;
	GElf_Off off = 0;
	GElf_Sym s;

	sym = dwfl_module_addrinfo(mod, pc, &off, &s, NULL, NULL, NULL);
	if (!sym || !*sym)
		return 0;
	snprintf(name, namelen, "%s", sym);
	return 1;
}

int symcache__name(struct symcache *c, Dwfl_Module *mod, const struct symcache_file *f, uint64_t pc,
		   char *name, size_t namelen)
{
	const unsigned char *bits = NULL;
	uint8_t id[BUILD_ID_MAX] = { 0 };
	Dwarf_Addr start = 0;
	GElf_Addr vaddr;
	const char *sym;
	bool capped = false;
	struct table *t;
	int id_len, ret;

	if (!c || !f || !dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL) ||
	    pc < start)
		return name_direct(mod, pc, name, namelen);
	id_len = dwfl_module_build_id(mod, &bits, &vaddr);
	id_len = id_len > 0 ? (id_len < BUILD_ID_MAX ? id_len : BUILD_ID_MAX) : 0;
	if (id_len)
		memcpy(id, bits, (size_t)id_len);
	pthread_mutex_lock(&c->lock);
	t = find(c, f, id, id_len);
	if (t) {
		c->stats.hits++;
		lru__unlink(c, t);
		lru__push(c, t);
	} else {
		t = build(c, mod, start, f, id, id_len);
	}
	if (!t || t->refused) {
		pthread_mutex_unlock(&c->lock);
		return name_direct(mod, pc, name, namelen);
	}
	sym = table__lookup(t, pc - start, &capped);
	c->stats.capped += capped;
	ret = sym ? 1 : 0;
	if (sym)
		snprintf(name, namelen, "%s", sym);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

void symcache__stats(struct symcache *c, struct symcache_stats *s)
{
	pthread_mutex_lock(&c->lock);
	*s = c->stats;
	pthread_mutex_unlock(&c->lock);
}
