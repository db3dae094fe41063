// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/kallsyms, read once when the first kernel stack arrives. The file is
 * the kernel's (not a target's), but it is large (200,000 lines here) and
 * its addresses read as 0 when kptr_restrict hides them: then nothing is
 * kept and every kernel frame is shown by its address.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "session/ksyms.h"
#include "util/vec.h"

#define KSYM_NAME_MAX 127

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* One "ADDR TYPE NAME [MODULE]" line; 1 when kept, 0 when skipped, -ENOMEM. */
static int read_line(struct ksyms *k, const char *line)
{
	char type, name[KSYM_NAME_MAX + 1];
	unsigned long long addr;
	size_t len;

	if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3 || !addr)
		return 0;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	len = strlen(name) + 1;
	if (vec_grow((void **)&k->syms, &k->cap, k->n + 1, sizeof(*k->syms)) ||
	    vec_grow((void **)&k->names, &k->names_cap, k->names_len + len, 1))
		return -ENOMEM;
	memcpy(k->names + k->names_len, name, len);
	k->syms[k->n].addr = addr;
	k->syms[k->n].name = (uint32_t)k->names_len;
	k->names_len += len;
	k->n++;
	return 1;
}

int ksyms__read(struct ksyms *k, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	while (getline(&line, &cap, f) > 0 && k->names_len < UINT32_MAX - KSYM_NAME_MAX - 1) {
		if (read_line(k, line) < 0) {
			err = -ENOMEM;
			break;
		}
	}
	free(line);
	if (k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	return err;
}

int ksyms__load(struct ksyms *k)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	int err;

	if (!f)
		return -errno;
	err = ksyms__read(k, f);
	fclose(f);
	return err;
}

const char *ksyms__find(const struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;

	if (!k->n || addr < k->syms[0].addr)
		return NULL;
	/* the last symbol at or below addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return k->names + k->syms[lo].name;
}

void ksyms__free(struct ksyms *k)
{
	free(k->syms);
	free(k->names);
	memset(k, 0, sizeof(*k));
}
