/* The undo registry's text (registry.h): pure, no I/O. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

static const char header[] = "# qplab undo registry ";

/* "obj KIND NAME" (the line without its end) into r; -1 when malformed. */
static int obj_line(const char *line, size_t n, struct run_reg *r)
{
	const char *kind = line + 4, *sp = memchr(kind, ' ', n - 4), *name;
	size_t kl, nl;

	if (!sp)
		return -1;
	name = sp + 1;
	kl = (size_t)(sp - kind);
	nl = n - (size_t)(name - line);
	if (!kl || !nl || kl >= sizeof(r->objs[0].kind) || nl >= sizeof(r->objs[0].name) ||
	    memchr(name, ' ', nl))
		return -1;
	if (r->nobjs == RUN_REG_MAX_OBJS) {
		r->truncated = true;
		return 0;
	}
	memcpy(r->objs[r->nobjs].kind, kind, kl);
	r->objs[r->nobjs].kind[kl] = '\0';
	memcpy(r->objs[r->nobjs].name, name, nl);
	r->objs[r->nobjs].name[nl] = '\0';
	r->nobjs++;
	return 0;
}

/* "owner PID" / "pid PID": the number, or -1. */
static long pid_of(const char *s, size_t n)
{
	char buf[24], *end;
	long v;

	if (!n || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	v = strtol(buf, &end, 10);
	return *end || v <= 0 ? -1 : v;
}

int run_reg_parse(const char *text, struct run_reg *r)
{
	const char *p = text;

	memset(r, 0, sizeof(*r));
	r->owner = r->pid = -1;
	if (strncmp(text, header, sizeof(header) - 1))
		return -1;
	while (*p) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n > 4 && !strncmp(p, "obj ", 4) && obj_line(p, n, r))
			return -1;
		else if (n > 6 && !strncmp(p, "owner ", 6))
			r->owner = pid_of(p + 6, n - 6);
		else if (n > 4 && !strncmp(p, "pid ", 4))
			r->pid = pid_of(p + 4, n - 4);
		p += n + (end != NULL);
	}
	return 0;
}

bool run_reg_names(const struct run_reg *r, const char *kind, const char *name)
{
	for (size_t i = 0; i < r->nobjs; i++)
		if (!strcmp(r->objs[i].kind, kind) && !strcmp(r->objs[i].name, name))
			return true;
	return false;
}
