// SPDX-License-Identifier: GPL-2.0-only
/*
 * Module bodies' files as BPF read them (module_names.h). A record is a
 * target's word for where its code came from: its text is kept as bytes up
 * to the first NUL, and every writer makes file names safe as it prints them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "session/module_names.h"
#include "util/vec.h"

void module_names__init(struct module_names *m)
{
	memset(m, 0, sizeof(*m));
	hashmap__init(&m->by_key);
}

void module_names__free(struct module_names *m)
{
	hashmap__free(&m->by_key);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

int module_names__add(struct module_names *m, const void *data, size_t size)
{
	const struct py_module_record *r = data;
	struct module_name *e;
	uint64_t key, len;

	if (size < sizeof(*r) || r->kind != PY_KIND_MODULE)
		return -EINVAL;
	key = module_names__key(r->code, r->fingerprint);
	if (hashmap__find(&m->by_key, key))
		return 0;
	len = r->value < PY_MODULE_PATH - 1 ? r->value : PY_MODULE_PATH - 1;
	len = strnlen(r->text, len);
	if (!len) {
		m->refused++;
		return -ENODATA;
	}
	if (m->n >= MODULE_NAMES_MAX) {
		m->refused++;
		return -ENOSPC;
	}
	if (vec_grow((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v)))
		return -ENOMEM;
	e = &m->v[m->n];
	e->firstlineno = r->firstlineno;
	memcpy(e->file, r->text, len);
	e->file[len] = '\0';
	if (hashmap__set(&m->by_key, key, m->n))
		return -ENOMEM;
	m->n++;
	return 0;
}

const struct module_name *module_names__find(const struct module_names *m, uint64_t code,
					     uint32_t fingerprint)
{
	uint64_t *i = hashmap__find(&m->by_key, module_names__key(code, fingerprint));

	return i && *i < m->n ? &m->v[*i] : NULL;
}

size_t module_names__bytes(const struct module_names *m)
{
	return hashmap__bytes(&m->by_key) + m->cap * sizeof(*m->v);
}
