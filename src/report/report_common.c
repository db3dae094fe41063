// SPDX-License-Identifier: GPL-2.0-only
/*
 * The helpers report writers share: estimated seconds, percentages, line
 * numbers, frame and process labels, the honest counts, JSON strings.
 */
#include <stdio.h>
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

	snprintf(buf, len,
		 "%llu samples (%llu dropped, %llu truncated, %llu unresolved, "
		 "%llu partial)",
		 (unsigned long long)t.samples, (unsigned long long)p->counts.dropped,
		 (unsigned long long)t.truncated, (unsigned long long)t.unresolved,
		 (unsigned long long)t.partial);
	return buf;
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
