// SPDX-License-Identifier: GPL-2.0-only
/*
 * The helpers report writers share: estimated seconds, percentages, line
 * numbers, frame and process labels, the honest counts, JSON strings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_common.h"
#include "util/text.h"

double report_seconds(const struct profile *p, uint64_t samples)
{
	return p->frequency_hz ? (double)samples / p->frequency_hz : 0.0;
}

double report_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

const char *report_line_str(int line, char *buf, size_t len)
{
	if (line < 1)
		return "?";
	snprintf(buf, len, "%d", line);
	return buf;
}

/*
 * A frame of a folded line holds no ';' (the separator), and no line break
 * or other character text_sanitize replaces.
 */
static char *folded_frame(char *buf)
{
	char *c;

	text_sanitize(buf);
	for (c = buf; *c; c++)
		if (*c == ';')
			*c = ':';
	return buf;
}

char *report_frame_label(const struct profile *p, uint32_t frame, char *buf, size_t len)
{
	const struct profile_frame *fr = &p->frames[frame];
	const struct profile_func *fn = &p->funcs[fr->func];

	if (fn->unresolved || !fn->file[0])
		snprintf(buf, len, "%s", fn->qualname);
	else if (fr->line > 0)
		snprintf(buf, len, "%s (%s:%d)", fn->qualname, fn->file, fr->line);
	else
		snprintf(buf, len, "%s (%s)", fn->qualname, fn->file);
	return folded_frame(buf);
}

int report_cols(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	int n = 0, k;

	for (; *c; c += k, n++) {
		k = text_utf8_len(c, 4);
		k = k ? k : 1;
	}
	return n;
}

/* The byte offset of column col of s (its end if it has fewer). */
static size_t col_offset(const char *s, int col)
{
	const unsigned char *c = (const unsigned char *)s;
	int k;

	for (; *c && col > 0; c += k, col--) {
		k = text_utf8_len(c, 4);
		k = k ? k : 1;
	}
	return (size_t)((const char *)c - s);
}

/* Where a native name's "+0xHEX" ending begins, or NULL. */
static const char *offset_suffix(const char *s)
{
	const char *o = strrchr(s, '+'), *c;

	if (!o || strncmp(o, "+0x", 3) || !o[3])
		return NULL;
	for (c = o + 3; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') ||
		      (*c >= 'A' && *c <= 'F')))
			return NULL;
	return o;
}

char *report_fit(char *buf, size_t len, const char *s, int width, enum report_fit how)
{
	char tmp[REPORT_FIELD];
	const char *suffix;
	int cols, keep, tail = 0;
	size_t head;

	text_clean(tmp, sizeof(tmp), s);
	cols = report_cols(tmp);
	if (cols <= width || width < 4) {
		snprintf(buf, len, "%s", tmp);
		return buf;
	}
	if (how == REPORT_FIT_LEFT) {
		snprintf(buf, len, "...%s", tmp + col_offset(tmp, cols - (width - 3)));
		return buf;
	}
	suffix = how == REPORT_FIT_NAME ? offset_suffix(tmp) : NULL;
	if (suffix)
		tail = report_cols(suffix);
	keep = width - 3 - tail;
	if (keep < 1) /* an offset longer than the column: it is shown whole all the same */
		keep = 1;
	head = col_offset(tmp, keep);
	snprintf(buf, len, "%.*s...%s", (int)head, tmp, suffix ? suffix : "");
	return buf;
}

void report_put_padded(FILE *f, const char *s, int width)
{
	char tmp[REPORT_FIELD];
	int n;

	text_clean(tmp, sizeof(tmp), s);
	fputs(tmp, f);
	for (n = report_cols(tmp); n < width; n++)
		fputc(' ', f);
}

char *report_func_label(const struct profile *p, uint32_t frame, char *buf, size_t len)
{
	const struct profile_func *fn = &p->funcs[p->frames[frame].func];

	if (fn->unresolved || !fn->file[0])
		snprintf(buf, len, "%s", fn->qualname);
	else
		snprintf(buf, len, "%s (%s)", fn->qualname, fn->file);
	return folded_frame(buf);
}

uint32_t *report_func_frames(const struct profile *p)
{
	uint32_t *rep = malloc((p->nframes ? p->nframes : 1) * sizeof(*rep));
	uint32_t *first = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*first));
	size_t i;

	if (!rep || !first) {
		free(rep);
		free(first);
		return NULL;
	}
	for (i = 0; i < p->nfuncs; i++)
		first[i] = UINT32_MAX;
	for (i = 0; i < p->nframes; i++) {
		uint32_t fn = p->frames[i].func;

		if (first[fn] == UINT32_MAX)
			first[fn] = (uint32_t)i;
		rep[i] = first[fn];
	}
	free(first);
	return rep;
}

uint32_t *report_frame_places(const struct profile *p, bool merge_lines, size_t *n)
{
	uint32_t *rep = merge_lines ? report_func_frames(p) : NULL;
	uint32_t *place = malloc((p->nframes ? p->nframes : 1) * sizeof(*place));
	size_t i;

	*n = 0;
	if (!place || (merge_lines && !rep)) {
		free(rep);
		free(place);
		return NULL;
	}
	/* a function's first frame comes before its others: its place is set first */
	for (i = 0; i < p->nframes; i++)
		place[i] = !rep || rep[i] == i ? (uint32_t)(*n)++ : place[rep[i]];
	free(rep);
	return place;
}

int report_frame_line(const struct profile *p, uint32_t frame, bool merge_lines)
{
	const struct profile_frame *fr = &p->frames[frame];

	return merge_lines ? p->funcs[fr->func].firstline : fr->line;
}

struct report_totals report_totals(const struct profile *p)
{
	struct report_totals t = { 0 };
	size_t i;

	for (i = 0; i < p->ntargets; i++) {
		t.samples += p->targets[i].samples;
		t.truncated += p->targets[i].truncated;
		t.partial += p->targets[i].partial;
		t.unresolved += p->targets[i].unresolved;
	}
	return t;
}

char *report_counts(const struct profile *p, char *buf, size_t len)
{
	struct report_totals t = report_totals(p);
	int n;

	n = snprintf(buf, len,
		     "%llu samples (%llu dropped, %llu truncated, %llu unresolved, "
		     "%llu partial)",
		     (unsigned long long)t.samples, (unsigned long long)p->counts.dropped,
		     (unsigned long long)t.truncated, (unsigned long long)t.unresolved,
		     (unsigned long long)t.partial);
	/* a selected profile says what it left out (the options are in text and JSON) */
	if (p->selection && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "; selected: %llu samples of %llu processes left out",
			 (unsigned long long)p->sel_samples_out,
			 (unsigned long long)p->sel_procs_out);
	return buf;
}

char *report_dropped_causes(const struct profile_counts *c, char *buf, size_t len)
{
	const uint64_t v[] = { c->dropped_ring, c->dropped_unknown, c->dropped_malformed,
			       c->dropped_late };
	static const char *const what[] = { "ring buffer full", "of a process not known (or gone)",
					    "malformed", "came too late to be named" };
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < 4 && at < len; i++)
		if (v[i])
			at += snprintf(buf + at, len - at, "%s%llu %s", at ? ", " : "",
				       (unsigned long long)v[i], what[i]);
	return buf;
}

char *report_page_title(const struct profile *p, const char *version, const char *middle, char *buf,
			size_t len)
{
	char counts[200], busiest[REPORT_BUSIEST_LEN];

	snprintf(buf, len, "pybpfprof %s: %s profile at %u Hz, %s%s%s", version, p->mode,
		 p->frequency_hz, report_counts(p, counts, sizeof(counts)), middle ? "; " : "",
		 middle ? middle : "");
	if (report_busiest(p, busiest, sizeof(busiest))[0]) {
		strncat(buf, "; ", len - strlen(buf) - 1);
		strncat(buf, busiest, len - strlen(buf) - 1);
	}
	return buf;
}

void report_json_selection(FILE *f, const char *key, const struct profile *p)
{
	fputs(key, f);
	fputs("{\"options\": ", f);
	json_string(f, p->selection);
	fprintf(f,
		", \"processes_out\": %llu, \"threads_out\": %llu, \"samples_out\": %llu, "
		"\"threads_cut\": %s}",
		(unsigned long long)p->sel_procs_out, (unsigned long long)p->sel_threads_out,
		(unsigned long long)p->sel_samples_out, p->sel_threads_cut ? "true" : "false");
}

bool report_is_merged(const struct profile *p, const struct profile_target *pp)
{
	return p->nmerged && !pp->pid;
}

void report_json_pids(FILE *f, const char *key, const struct profile *p)
{
	size_t i;

	fputs(key, f);
	fputc('[', f);
	for (i = 0; i < p->nmerged; i++)
		fprintf(f, "%s%d", i ? ", " : "", p->merged_pids[i]);
	fputc(']', f);
}

char *report_nprocs(const struct profile *p, char *buf, size_t len)
{
	size_t n = p->nmerged ? p->nmerged : p->ntargets;

	snprintf(buf, len, "%zu process%s%s", n, n == 1 ? "" : "es", p->nmerged ? " merged" : "");
	return buf;
}

char *report_samples_time(const struct profile *p, const struct profile_target *pp, char *buf,
			  size_t len)
{
	uint64_t off = 0;
	size_t i;

	if (!p->wall && !p->gil) {
		snprintf(buf, len, "%.2f s of CPU", report_seconds(p, pp->samples));
		return buf;
	}
	for (i = 0; i < pp->nstacks; i++)
		if (profile__offcpu_class(p, &pp->stacks[i]) >= 0)
			off += pp->stacks[i].count;
	off = off < pp->samples ? off : pp->samples;
	snprintf(buf, len, "%.2f s of thread time: %.2f s on the CPU, %.2f s off it",
		 report_seconds(p, pp->samples), report_seconds(p, pp->samples - off),
		 report_seconds(p, off));
	return buf;
}

char *report_proc_label(const struct profile_target *pp, char *buf, size_t len)
{
	char role[PROFILE_ROLE];

	/* a section of no one pid (merged, or a saved profile's pid 0) has no role of its own */
	snprintf(buf, len, "pid %d (%s)", pp->pid,
		 pp->pid ? profile_target__role(pp, role, sizeof(role)) : pp->comm);
	return folded_frame(buf);
}

/* The first of those with the most samples, NULL if none has any. */
static const struct profile_thread *busiest_thread(const struct profile_target *pp)
{
	const struct profile_thread *th = NULL;
	size_t i;

	for (i = 0; i < pp->nthreads; i++)
		if (pp->threads[i].samples && (!th || pp->threads[i].samples > th->samples))
			th = &pp->threads[i];
	return th;
}

char *report_busiest(const struct profile *p, char *buf, size_t len)
{
	const struct profile_target *pp = NULL;
	const struct profile_thread *th;
	char who[PROFILE_ROLE + 64], name[PROFILE_PYNAME];
	uint64_t total = 0;
	size_t i;
	int n;

	buf[0] = '\0';
	for (i = 0; i < p->ntargets; i++) {
		total += p->targets[i].samples;
		if (p->targets[i].samples && (!pp || p->targets[i].samples > pp->samples))
			pp = &p->targets[i];
	}
	if (!pp)
		return buf;
	if (report_is_merged(p, pp))
		report_nprocs(p, who, sizeof(who));
	else
		report_proc_label(pp, who, sizeof(who));
	n = snprintf(buf, len, "busiest: %s, %.1f%% of the samples", who,
		     report_pct(pp->samples, total));
	th = busiest_thread(pp);
	if (th && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "; its thread %u (%s), %.1f%%", th->tid,
			 text_clean(name, sizeof(name), profile_thread__label(th)),
			 report_pct(th->samples, total));
	return buf;
}

bool report_is_library(const char *file)
{
	const char *c;

	if (!strncmp(file, "<frozen ", 8))
		return true; /* importlib's bootstrap and other frozen stdlib modules */
	if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
		return true;
	/* the standard library: .../lib/pythonX.Y/ (lib64 on some distributions) */
	for (c = file; (c = strstr(c, "/lib")); c++) {
		const char *v = c + 4;

		if (!strncmp(v, "64", 2))
			v += 2;
		if (strncmp(v, "/python", 7) || v[7] < '0' || v[7] > '9')
			continue;
		for (v += 8; (*v >= '0' && *v <= '9') || *v == '.'; v++)
			;
		if (*v == '/')
			return true;
	}
	return false;
}

void report_json_opt_string(FILE *f, const char *s)
{
	if (s[0])
		json_string(f, s);
	else
		fputs("null", f);
}

void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	/*
	 * Control characters (C0, DEL, C1, bidi controls, line separators) are
	 * escaped, so that printing the file on a terminal is safe; bytes that
	 * are not UTF-8 become U+FFFD, so the file stays valid JSON whatever the
	 * target's strings hold.
	 */
	fputc('"', f);
	for (; *p; p += n) {
		n = 1;
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p);
			continue;
		}
		if (*p == '\n' || *p == '\t') {
			fputs(*p == '\n' ? "\\n" : "\\t", f);
			continue;
		}
		switch (text_next(p, &n)) {
		case TEXT_PRINTABLE:
			fwrite(p, 1, n, f);
			break;
		case TEXT_CONTROL: /* all below U+10000: one escape each */
			fprintf(f, "\\u%04x", (unsigned)text_codepoint(p, n));
			break;
		case TEXT_INVALID:
			fputs("\\ufffd", f);
			break;
		}
	}
	fputc('"', f);
}

void report_script_string(FILE *f, const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	int n;

	fputc('"', f);
	for (; *c; c += n) {
		n = 1;
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c == '<' || *c == '\t')
			fprintf(f, "\\u%04x", *c);
		else if (text_next(c, &n) == TEXT_PRINTABLE)
			fwrite(c, 1, n, f);
		else
			fputc('?', f);
	}
	fputc('"', f);
}

/*
 * s escaped for XML text and attributes, at most max characters: '&', '<',
 * '>' and quotes as entities; control characters, bytes that are not UTF-8
 * and U+FFFE/U+FFFF (which XML does not allow even as references) as '?'.
 */
void report_xml_text(FILE *f, const char *s, size_t max)
{
	const unsigned char *c = (const unsigned char *)s;
	int n;

	for (; *c && max; c += n, max--) {
		enum text_kind k = text_next(c, &n);

		if (k != TEXT_PRINTABLE ||
		    (n == 3 && c[0] == 0xef && c[1] == 0xbf && (c[2] == 0xbe || c[2] == 0xbf))) {
			fputc('?', f);
			continue;
		}
		if (*c == '&')
			fputs("&amp;", f);
		else if (*c == '<')
			fputs("&lt;", f);
		else if (*c == '>')
			fputs("&gt;", f);
		else if (*c == '"')
			fputs("&quot;", f);
		else if (*c == '\'')
			fputs("&apos;", f);
		else
			fwrite(c, 1, n, f);
	}
}

size_t report_lower_bound(const void *base, size_t n, size_t size, uint32_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t k;

		memcpy(&k, (const char *)base + mid * size, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
