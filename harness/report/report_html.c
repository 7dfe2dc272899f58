/* report.html: the page around the scenario rows — what ran, the summary
 * by topic, the filters — in one self-contained file (report_html.h). */
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "report.h"
#include "report_html.h"

/* One scenario id across the runs: sc[r] its entry in run r, or NULL. */
struct row {
	const char *id;
	json_object **sc;
	bool bad; /* failed or errored in some run */
};

struct topic {
	char name[128];
	int *counts; /* nruns * 4, by enum qplab_status */
	long ms;
};

struct page {
	json_object *runs;
	size_t nruns;
	struct row *rows;
	size_t nrows;
	struct topic *topics;
	size_t ntopics;
};

static int status_index(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (s && !strcmp(s, qplab_status_name((enum qplab_status)i)))
			return i;
	return QPLAB_ERROR;
}

static struct row *row_of(struct page *pg, const char *id)
{
	struct row *r;

	for (size_t i = 0; i < pg->nrows; i++)
		if (!strcmp(pg->rows[i].id, id))
			return &pg->rows[i];
	r = &pg->rows[pg->nrows];
	r->sc = calloc(pg->nruns, sizeof(*r->sc));
	if (!r->sc)
		return NULL;
	r->id = id;
	pg->nrows++;
	return r;
}

static struct topic *topic_of(struct page *pg, const char *id)
{
	char name[128];

	html_topic(id, name, sizeof(name));
	for (size_t i = 0; i < pg->ntopics; i++)
		if (!strcmp(pg->topics[i].name, name))
			return &pg->topics[i];
	pg->topics[pg->ntopics].counts = calloc(pg->nruns * 4, sizeof(int));
	if (!pg->topics[pg->ntopics].counts)
		return NULL;
	snprintf(pg->topics[pg->ntopics].name, sizeof(name), "%s", name);
	return &pg->topics[pg->ntopics++];
}

/* Failures first, then by id; topics by name. */
static int by_badness(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->bad != y->bad)
		return x->bad ? -1 : 1;
	return strcmp(x->id, y->id);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct topic *)a)->name, ((const struct topic *)b)->name);
}

static int page_collect(struct page *pg, json_object *doc)
{
	size_t cap = 0;

	pg->runs = jarr(doc, "runs");
	pg->nruns = pg->runs ? json_object_array_length(pg->runs) : 0;
	for (size_t r = 0; r < pg->nruns; r++) {
		json_object *scs = jarr(json_object_array_get_idx(pg->runs, r), "scenarios");
		cap += scs ? json_object_array_length(scs) : 0;
	}
	pg->rows = calloc(cap + 1, sizeof(*pg->rows));
	pg->topics = calloc(cap + 1, sizeof(*pg->topics));
	if (!pg->rows || !pg->topics)
		return QPHS_ERR_MEMORY;
	for (size_t r = 0; r < pg->nruns; r++) {
		json_object *scs = jarr(json_object_array_get_idx(pg->runs, r), "scenarios");

		for (size_t i = 0; scs && i < json_object_array_length(scs); i++) {
			json_object *sc = json_object_array_get_idx(scs, i);
			const char *id = jstr(sc, "id"), *st = jstr(sc, "status");
			struct row *row = row_of(pg, id ? id : "(no id)");
			struct topic *t = topic_of(pg, id ? id : "(no id)");

			if (!row || !t)
				return QPHS_ERR_MEMORY;
			row->sc[r] = sc;
			row->bad |= status_index(st) == QPLAB_FAIL || status_index(st) == QPLAB_ERROR;
			t->counts[r * 4 + status_index(st)]++;
			t->ms += jint(sc, "elapsed_ms", 0);
		}
	}
	qsort(pg->rows, pg->nrows, sizeof(*pg->rows), by_badness);
	qsort(pg->topics, pg->ntopics, sizeof(*pg->topics), by_name);
	return 0;
}

static void page_free(struct page *pg)
{
	for (size_t i = 0; pg->rows && i < pg->nrows; i++)
		free(pg->rows[i].sc);
	for (size_t i = 0; pg->topics && i < pg->ntopics; i++)
		free(pg->topics[i].counts);
	free(pg->rows);
	free(pg->topics);
}

static void counts_of(json_object *run, int c[5])
{
	json_object *s = jobj(run, "summary");

	for (int i = 0; i < 4; i++)
		c[i] = (int)jint(s, qplab_status_name((enum qplab_status)i), 0);
	c[4] = (int)jint(s, "total", 0);
}

/* "6 pass 1 fail": the non-zero counts, each a badge. */
static void badges(FILE *f, const int c[4])
{
	bool any = false;

	for (int i = 0; i < 4; i++) {
		if (!c[i])
			continue;
		fprintf(f, "<span class=\"n %s\">%d %s</span> ", qplab_status_name((enum qplab_status)i), c[i],
			qplab_status_name((enum qplab_status)i));
		any = true;
	}
	if (!any)
		fputs("<span class=\"n\">none</span>", f);
}

static void header(FILE *f, const struct page *pg)
{
	int tot[4] = {0}, fails = 0;

	for (size_t r = 0; r < pg->nruns; r++) {
		int c[5];

		counts_of(json_object_array_get_idx(pg->runs, r), c);
		for (int i = 0; i < 4; i++)
			tot[i] += c[i];
	}
	fails = tot[QPLAB_FAIL] + tot[QPLAB_ERROR];
	fprintf(f, "<title>qplab report: %d failed</title>\n<style>%s</style>\n</head>\n<body>\n", fails, html_css);
	fprintf(f, "<header><h1>qplab report</h1><p class=\"total\">%zu scenarios on %zu kernel%s: ", pg->nrows,
		pg->nruns, pg->nruns == 1 ? "" : "s");
	if (pg->nruns > 1)
		fputs("<span class=\"runs-note\">(counted once per kernel)</span> ", f);
	badges(f, tot);
	fputs("</p>\n<ul class=\"runs\">\n", f);
	for (size_t r = 0; r < pg->nruns; r++) {
		json_object *run = json_object_array_get_idx(pg->runs, r);
		int c[5];

		counts_of(run, c);
		fputs("<li><b>", f);
		html_str(f, jstr(run, "kernel"));
		fputs("</b> ", f);
		html_str(f, jstr(run, "backend"));
		fputs(", ", f);
		html_str(f, jstr(run, "driver"));
		fputs(", started ", f);
		html_str(f, jstr(run, "started"));
		fprintf(f, ", %.1f s: ", (double)jint(run, "elapsed_ms", 0) / 1000.0);
		badges(f, c);
		fputs("</li>\n", f);
	}
	fputs("</ul></header>\n", f);
}

/* The failed scenarios as links to their rows. */
static void failed_list(FILE *f, const struct page *pg)
{
	size_t n = 0;

	for (size_t i = 0; i < pg->nrows && pg->rows[i].bad; i++) {
		fputs(n++ ? ", " : "<p class=\"failed\">Failed: ", f);
		fprintf(f, "<a href=\"#sc-%zu\">", i);
		html_str(f, pg->rows[i].id);
		fputs("</a>", f);
	}
	fputs(n ? "</p>\n" : "<p class=\"allgood\">Nothing failed.</p>\n", f);
}

static void kernel_heads(FILE *f, const struct page *pg)
{
	for (size_t r = 0; r < pg->nruns; r++) {
		fputs("<span class=\"k\">", f);
		html_str(f, jstr(json_object_array_get_idx(pg->runs, r), "kernel"));
		fputs("</span>", f);
	}
}

static void topic_table(FILE *f, const struct page *pg)
{
	fprintf(f, "<section class=\"topics\" style=\"--k:%zu\"><h2>By topic</h2>\n"
		   "<div class=\"trow head\"><span>topic</span>", pg->nruns);
	kernel_heads(f, pg);
	fputs("<span class=\"t\">time</span></div>\n", f);
	for (size_t i = 0; i < pg->ntopics; i++) {
		const struct topic *t = &pg->topics[i];

		fputs("<div class=\"trow\"><span><a href=\"#\" class=\"topic\" data-topic=\"", f);
		html_str(f, t->name);
		fputs("\">", f);
		html_str(f, t->name);
		fputs("</a></span>", f);
		for (size_t r = 0; r < pg->nruns; r++) {
			fputs("<span class=\"k\">", f);
			badges(f, &t->counts[r * 4]);
			fputs("</span>", f);
		}
		fprintf(f, "<span class=\"t\">%.1f s</span></div>\n", (double)t->ms / 1000.0);
	}
	fputs("</section>\n", f);
}

static void filters(FILE *f, const struct page *pg)
{
	fputs("<section class=\"filters\"><label>topic <select id=\"f-topic\"><option value=\"\">all</option>", f);
	for (size_t i = 0; i < pg->ntopics; i++) {
		fputs("<option value=\"", f);
		html_str(f, pg->topics[i].name);
		fputs("\">", f);
		html_str(f, pg->topics[i].name);
		fputs("</option>", f);
	}
	fputs("</select></label>\n", f);
	for (int i = 0; i < 4; i++)
		fprintf(f, "<label class=\"v %s\"><input type=\"checkbox\" class=\"f-v\" value=\"%s\" checked> %s</label>\n",
			qplab_status_name((enum qplab_status)i), qplab_status_name((enum qplab_status)i),
			qplab_status_name((enum qplab_status)i));
	fputs("<label>id <input type=\"search\" id=\"f-q\" placeholder=\"part of an id\"></label>"
	      "<button type=\"button\" id=\"f-open\">open all</button>"
	      "<button type=\"button\" id=\"f-close\">close all</button>"
	      " <span id=\"f-shown\"></span></section>\n", f);
}

int qplab_html_write(FILE *out, json_object *doc)
{
	struct page pg = {0};
	int rc = page_collect(&pg, doc);

	if (rc) {
		page_free(&pg);
		return rc;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n", out);
	header(out, &pg);
	failed_list(out, &pg);
	topic_table(out, &pg);
	filters(out, &pg);
	fprintf(out, "<section class=\"list\" style=\"--k:%zu\">\n<div class=\"row head\"><span>scenario</span>",
		pg.nruns);
	kernel_heads(out, &pg);
	fputs("<span class=\"t\">time</span></div>\n", out);
	for (size_t i = 0; i < pg.nrows; i++)
		html_scenario_row(out, pg.runs, pg.rows[i].sc, pg.nruns, (int)i);
	fprintf(out, "</section>\n<script>%s</script>\n</body>\n</html>\n", html_js);
	page_free(&pg);
	return ferror(out) ? QPHS_ERR_INVALID_ARGUMENT : 0;
}

int qplab_html_save(const char *path, json_object *doc)
{
	return qplab_report_save_with(path, doc, qplab_html_write);
}
