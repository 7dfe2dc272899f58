/*
 * report_html.h — the pieces of report.html (report_html*.c): one
 * self-contained page generated from a results document (docs/results.md),
 * with inline CSS and script and nothing fetched from anywhere.
 *
 * Every string that comes from the document (reply_msg texts, log lines,
 * scenario descriptions, host names: anything a peer, a log or a scenario
 * file put there) goes through html_text() or html_href(), never raw: the
 * page must stay inert whatever the results hold.  The script is static
 * and reads only the page's own data-* attributes.
 *
 * The timeline (report_html_timeline.c) is an inline SVG sequence diagram:
 * one vertical lane per host, time flowing down.  Its geometry is fixed
 * here so tests can compute where things must be:
 *
 *   lane i of n:  x = TL_LEFT + (TL_WIDTH - TL_LEFT - TL_GUTTER) * (i + 0.5) / n
 *   time t (ms):  y = TL_TOP + t * scale,
 *                 scale = min(TL_PLOT / span_ms, TL_MAX_SCALE)
 *
 * where span_ms is the latest step end or event end (at least 1).
 * Coordinates are written with one decimal.
 */
#ifndef QPLAB_REPORT_HTML_H
#define QPLAB_REPORT_HTML_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#define TL_WIDTH 420.0    /* viewBox width */
#define TL_LEFT 44.0      /* the time axis's labels */
#define TL_GUTTER 100.0   /* the steps' labels, right of the lanes */
#define TL_TOP 30.0       /* the hosts' names */
#define TL_BOTTOM 14.0
#define TL_PLOT 360.0     /* the plot's height when the scale is not capped */
#define TL_MAX_SCALE 2.0  /* px per ms at most: a 10 ms scenario is 20 px tall */
#define TL_BOX_W 16.0     /* a transition's box on its lane */

/* Text for element content and attribute values: & < > " ' escaped,
 * invalid UTF-8 and control characters (but tab and newline) each become
 * U+FFFD.  s: n bytes, NUL bytes included. */
void html_text(FILE *f, const char *s, size_t n);
/* A NUL-terminated string; NULL writes nothing. */
void html_str(FILE *f, const char *s);
/* A JSON value as text: a string's own bytes, null as "", anything else
 * as its compact JSON. */
void html_json(FILE *f, json_object *v);
/* A relative link target: every byte outside [A-Za-z0-9._~/-] is
 * percent-encoded, so no scheme (javascript:, http:) and no quote can
 * appear; an absolute path or one with ".." segments becomes "#". */
void html_href(FILE *f, const char *path);

/* Typed getters (docs/results.md; STYLE: no converting getters).  NULL or
 * dflt when the key is absent or of another type. */
const char *jstr(json_object *o, const char *key);
long jint(json_object *o, const char *key, long dflt);
/* An integer or a fraction (times in ms may come either way). */
double jnum(json_object *o, const char *key, double dflt);
json_object *jarr(json_object *o, const char *key);
json_object *jobj(json_object *o, const char *key);

/* A scenario's topic: its id up to the first '/', into buf. */
void html_topic(const char *id, char *buf, size_t len);

/* One scenario's row: the summary line (one verdict column per run) and
 * its details.  sc[r] is the scenario in run r, NULL where that run did
 * not have it; runs is the document's runs array. */
void html_scenario_row(FILE *f, json_object *runs, json_object **sc, size_t nruns, int index);

/* The timeline of one scenario entry as an <svg> element (nothing when it
 * has no steps). */
void html_timeline(FILE *f, json_object *scenario);

/* The page's inline stylesheet and script (report_html_assets.c). */
extern const char html_css[];
extern const char html_js[];

#endif
