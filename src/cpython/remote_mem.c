// SPDX-License-Identifier: GPL-2.0-only
/*
 * process_vm_readv-based reads of target memory. The target is hostile input:
 * sizes read from it are clamped before they size a read or an allocation,
 * and object kinds are checked before their payload is interpreted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "cpython/py_layout.h"
#include "remote_mem.h"

/*
 * When a process's main thread has exited (pthread_exit) and other threads run
 * on, reads through its pid fail with ESRCH: the zombie main thread has no
 * memory map. Any other thread shares the map, so reads go through the first
 * one found, remembered for the next read of that process.
 */
static pid_t other_thread(pid_t pid)
{
	static pid_t last_pid, last_tid;
	char path[64];
	struct dirent *de;
	pid_t tid = 0;
	DIR *d;

	if (pid == last_pid && last_tid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, last_tid);
		if (!access(path, F_OK))
			return last_tid;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		long v = strtol(de->d_name, NULL, 10);

		if (v > 0 && v != pid) {
			tid = v;
			break;
		}
	}
	closedir(d);
	last_pid = pid;
	last_tid = tid;
	return tid;
}

int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;
	pid_t tid;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0 && errno == ESRCH && (tid = other_thread(pid)) > 0)
		n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int put_utf8(uint32_t cp, char *out, size_t room)
{
	if (cp < 0x80 && room >= 1) {
		out[0] = cp;
		return 1;
	}
	if (cp < 0x800 && room >= 2) {
		out[0] = 0xc0 | (cp >> 6);
		out[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000 && room >= 3) {
		out[0] = 0xe0 | (cp >> 12);
		out[1] = 0x80 | ((cp >> 6) & 0x3f);
		out[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	if (cp < 0x110000 && room >= 4) {
		out[0] = 0xf0 | (cp >> 18);
		out[1] = 0x80 | ((cp >> 12) & 0x3f);
		out[2] = 0x80 | ((cp >> 6) & 0x3f);
		out[3] = 0x80 | (cp & 0x3f);
		return 4;
	}
	return 0;
}

int ucs_to_utf8(const void *data, size_t n, int kind, char *out, size_t outlen)
{
	size_t i, w = 0;

	if (!outlen)
		return -1;
	for (i = 0; i < n; i++) {
		uint32_t cp;
		int k;

		if (kind == 1)
			cp = ((const uint8_t *)data)[i];
		else if (kind == 2)
			cp = ((const uint16_t *)data)[i];
		else if (kind == 4)
			memcpy(&cp, (const uint8_t *)data + 4 * i, 4);
		else
			return -1;
		if (cp >= 0xdc80 && cp <= 0xdcff) {
			/*
			 * A byte that was not UTF-8 where the str came from (a file
			 * name: os.fsdecode's surrogateescape): the byte itself, so
			 * that the file can be opened by its name.
			 */
			k = w + 1 < outlen;
			if (k)
				out[w] = (char)(cp - 0xdc00);
		} else if (cp >= 0x110000 || (cp >= 0xd800 && cp < 0xe000 && kind == 4)) {
			return -1;
		} else {
			k = put_utf8(cp, out + w, outlen - 1 - w);
		}
		if (!k)
			break; /* out of room: truncate at a character boundary */
		w += k;
	}
	out[w] = '\0';
	return (int)w;
}

/*
 * PyASCIIObject.state bits, the same in 3.8-3.15 default builds, once the
 * state is shifted right by str_state_shift (8 in 3.14t).
 */
#define STATE_KIND(s) (((s) >> 2) & 7)
#define STATE_COMPACT(s) (((s) >> 5) & 1)
#define STATE_ASCII(s) (((s) >> 6) & 1)

int remote_read_str(pid_t pid, const struct py_layout *L, uint64_t addr, char *out, size_t outlen)
{
	uint8_t head[PY_STR_HEAD_READ], data[REMOTE_MAX_STR * 4];
	int64_t length;
	uint32_t state;
	size_t n;
	int err, kind;

	if (!outlen || (size_t)L->str_compact_data > sizeof(head))
		return -EINVAL;
	out[0] = '\0';
	err = remote_read(pid, addr, head, L->str_compact_data);
	if (err)
		return err;
	memcpy(&length, head + L->bpf.str_length, sizeof(length));
	memcpy(&state, head + L->bpf.str_state, sizeof(state));
	state >>= L->bpf.str_state_shift & 31;
	if (length < 0 || !STATE_COMPACT(state))
		return -EINVAL; /* legacy strings never name code; don't guess */
	n = length > REMOTE_MAX_STR ? REMOTE_MAX_STR : (size_t)length;
	if (STATE_ASCII(state)) {
		n = n < outlen - 1 ? n : outlen - 1;
		err = remote_read(pid, addr + L->bpf.str_ascii_data, out, n);
		if (err)
			return err;
		out[n] = '\0';
		return 0;
	}
	kind = STATE_KIND(state);
	if (kind != 1 && kind != 2 && kind != 4)
		return -EINVAL;
	err = remote_read(pid, addr + L->str_compact_data, data, n * kind);
	if (err)
		return err;
	return ucs_to_utf8(data, n, kind, out, outlen) < 0 ? -EINVAL : 0;
}

int remote_read_bytes(pid_t pid, const struct py_layout *L, uint64_t addr, size_t max,
		      uint8_t **out, size_t *len)
{
	int64_t size = 0; /* filled by remote_read; set for static analysers */
	uint8_t *buf;
	int err;

	*out = NULL;
	*len = 0;
	err = remote_read(pid, addr + L->bytes_size, &size, sizeof(size));
	if (err)
		return err;
	if (size < 0 || (uint64_t)size > max)
		return -EINVAL;
	buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	err = remote_read(pid, addr + L->bytes_data, buf, size);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = size;
	return 0;
}
