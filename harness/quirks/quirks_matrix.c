/* The probe results for people: the markdown matrix (a column per
 * kernel/driver) and the text table of one run.  Pure formatting. */
#include <stdio.h>
#include <string.h>

#include "quirks.h"

/* '|' would split a markdown cell; newlines would end the row. */
static void scrub(char *s)
{
	for (; *s; s++)
		if (*s == '|' || *s == '\n' || *s == '\r')
			*s = '/';
}

void quirks_cell(const struct qphs_probe_row *r, char *out, size_t len)
{
	if (!r) {
		snprintf(out, len, "n/a");
	} else if (!r->ran) {
		snprintf(out, len, "skip");
	} else {
		snprintf(out, len, "%s -> %s%s%s", r->ret ? r->err : "ok", r->state,
			 r->completion[0] ? "; " : "", r->completion);
	}
	scrub(out);
}

static const struct qphs_probe_row *find(const struct quirks_column *c, const char *name)
{
	for (size_t i = 0; i < c->nrows; i++)
		if (!strcmp(c->rows[i].name, name))
			return &c->rows[i];
	return NULL;
}

/* The row names: the library's order first, then names only the columns
 * know (a newer build's probes in an older document, or the reverse). */
static size_t row_names(const struct quirks_column *cols, size_t ncols, const char **out,
			size_t max)
{
	const char *const *lib = qphs_probe_names();
	size_t n = 0;

	for (size_t i = 0; lib[i] && n < max; i++)
		out[n++] = lib[i];
	for (size_t c = 0; c < ncols; c++)
		for (size_t i = 0; i < cols[c].nrows && n < max; i++) {
			size_t k = 0;

			while (k < n && strcmp(out[k], cols[c].rows[i].name))
				k++;
			if (k == n)
				out[n++] = cols[c].rows[i].name;
		}
	return n;
}

static void print_row(FILE *out, const char *name, const struct quirks_column *cols, size_t ncols)
{
	char cell[QUIRKS_MAX_COLUMNS][160];
	const char *first = NULL;
	int differs = 0;

	/* A failed run says nothing about the probe: it does not count as a
	 * difference. */
	for (size_t c = 0; c < ncols; c++) {
		if (cols[c].failed[0]) {
			snprintf(cell[c], sizeof(cell[c]), "run failed");
			continue;
		}
		quirks_cell(find(&cols[c], name), cell[c], sizeof(cell[c]));
		differs |= first && strcmp(cell[c], first);
		first = first ? first : cell[c];
	}
	fprintf(out, differs ? "| **%s** |" : "| %s |", name);
	for (size_t c = 0; c < ncols; c++)
		fprintf(out, " %s |", cell[c]);
	fputc('\n', out);
}

void quirks_matrix_print(FILE *out, const struct quirks_column *cols, size_t ncols)
{
	const char *names[QPHS_PROBE_MAX_ROWS * (QUIRKS_MAX_COLUMNS + 1)];
	size_t n;
	char label[192];

	if (ncols > QUIRKS_MAX_COLUMNS)
		ncols = QUIRKS_MAX_COLUMNS;
	n = row_names(cols, ncols, names, sizeof(names) / sizeof(names[0]));
	fputs("| probe |", out);
	for (size_t c = 0; c < ncols; c++) {
		snprintf(label, sizeof(label), "%s", cols[c].label);
		scrub(label);
		fprintf(out, " %s |", label);
	}
	fputs("\n| --- |", out);
	for (size_t c = 0; c < ncols; c++)
		fputs(" --- |", out);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++)
		print_row(out, names[i], cols, ncols);
}

void quirks_table_print(FILE *out, const char *kernel, const struct qphs_probe_info *in,
			const struct qphs_probe_row *rows, size_t n)
{
	fprintf(out,
		"# kernel %s, device %s (%s%s%s) port %d gid %d, peer %s gid %d; active_mtu %d, "
		"max_mtu %d, max_qp_rd_atom %d, max_qp_init_rd_atom %d; timeout %d, deadline %d ms\n",
		kernel, in->device, in->driver, in->quirk[0] ? ", quirk " : "", in->quirk, in->port,
		in->gid_index, in->peer_device, in->peer_gid_index, in->active_mtu, in->max_mtu,
		in->max_qp_rd_atom, in->max_qp_init_rd_atom, in->qp_timeout, in->deadline_ms);
	fprintf(out, "%-26s %4s %-12s %-6s %-24s %9s  %s\n", "probe", "ret", "errno", "state",
		"completion", "ms", "note");
	for (size_t i = 0; i < n; i++) {
		const struct qphs_probe_row *r = &rows[i];

		if (!r->ran) {
			fprintf(out, "%-26s %4s %-12s %-6s %-24s %9s  %s\n", r->name, "-", "-", "-",
				"-", "-", r->note);
			continue;
		}
		fprintf(out, "%-26s %4d %-12s %-6s %-24s %9.2f  %s\n", r->name, r->ret,
			r->ret ? r->err : "-", r->state, r->completion[0] ? r->completion : "-",
			r->ms, r->note);
	}
}
