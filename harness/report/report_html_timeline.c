/* A scenario's timeline in report.html: an SVG sequence diagram, one lane
 * per host, time flowing down (geometry in report_html.h).
 *
 * Each step is a band from its started_ms to its ended_ms (results without
 * them: laid back to back from time_ms.step, and said so).  Where a step's
 * host facts carry "events" ({what, start_ms, end_ms, peer}), they are
 * drawn at their times: a request and a tcp_connect as a pair of arrows
 * (out when it began, back when it ended), any other event with a peer
 * (ready_ack) as one arrow from the host when it began to the peer when it
 * ended, an event without a peer (reset, init, rtr, rts) as a box on the
 * host's lane.  Where a host has no events, the durations its facts carry
 * (time_ms) are horizontal bars inside a connect or connect_both step,
 * labelled as durations: when within the step each happened is not
 * known (and a later step's report repeats them: not drawn there).  An
 * event repeated by a later step's report is drawn once.  Topology and agent
 * steps (the injected faults) are marks on the lane of the host they hit. */
#include <math.h>
#include <string.h>

#include "report_html.h"

#define TL_MAX_HOSTS 16
#define TL_MAX_STEPS 512

static const char *const dur_keys[] = {"tcp_connect", "handshake", "reset", "init", "rtr", "rts", "ready_ack"};
#define NDUR (sizeof(dur_keys) / sizeof(dur_keys[0]))

struct tl {
	FILE *f;
	const char *host[TL_MAX_HOSTS];
	size_t nh;
	json_object *steps;
	size_t ns;
	double start[TL_MAX_STEPS], end[TL_MAX_STEPS];
	bool estimated;   /* no started_ms: laid back to back */
	double span, scale, maxdur;
	double label_y;   /* the last step label's baseline (gutter) */
	double lane_y[TL_MAX_HOSTS]; /* the last event label's baseline per lane */
};

static double lane_x(const struct tl *t, size_t i)
{
	return TL_LEFT + (TL_WIDTH - TL_LEFT - TL_GUTTER) * ((double)i + 0.5) / (double)t->nh;
}

static double lane_w(const struct tl *t)
{
	return (TL_WIDTH - TL_LEFT - TL_GUTTER) / (double)t->nh;
}

static double ty(const struct tl *t, double ms)
{
	return TL_TOP + ms * t->scale;
}

static int lane_of(const struct tl *t, const char *name)
{
	for (size_t i = 0; name && i < t->nh; i++)
		if (!strcmp(t->host[i], name))
			return (int)i;
	return -1;
}

/* The hosts: the final facts' keys (plan order), else every step's. */
static void collect_hosts(struct tl *t, json_object *sc)
{
	json_object *hosts = jobj(sc, "hosts");

	if (hosts) {
		json_object_object_foreach(hosts, name, v) {
			(void)v;
			if (t->nh < TL_MAX_HOSTS)
				t->host[t->nh++] = name;
		}
	}
	for (size_t s = 0; s < t->ns; s++) {
		json_object *sh = jobj(json_object_array_get_idx(t->steps, s), "hosts");

		if (!sh)
			continue;
		json_object_object_foreach(sh, name, v) {
			(void)v;
			if (lane_of(t, name) < 0 && t->nh < TL_MAX_HOSTS)
				t->host[t->nh++] = name;
		}
	}
}

static json_object *facts_of(const struct tl *t, size_t s, size_t h)
{
	return jobj(jobj(json_object_array_get_idx(t->steps, s), "hosts"), t->host[h]);
}

/* A step's own duration when started_ms is missing: the longest
 * time_ms.step any host recorded. */
static double step_dur(const struct tl *t, size_t s)
{
	long d = 0;

	for (size_t h = 0; h < t->nh; h++) {
		long v = jint(jobj(facts_of(t, s, h), "time_ms"), "step", 0);
		d = v > d ? v : d;
	}
	return (double)d;
}

static void event_span(struct tl *t, json_object *ev)
{
	double e = jnum(ev, "end_ms", jnum(ev, "start_ms", 0));

	t->span = e > t->span ? e : t->span;
}

/* Step times, the span, the scale, the longest duration bar. */
static void layout(struct tl *t)
{
	double at = 0;

	for (size_t s = 0; s < t->ns; s++) {
		json_object *st = json_object_array_get_idx(t->steps, s);

		if (jnum(st, "started_ms", -1) < 0 || jnum(st, "ended_ms", -1) < 0)
			t->estimated = true;
	}
	for (size_t s = 0; s < t->ns; s++) {
		json_object *st = json_object_array_get_idx(t->steps, s);

		t->start[s] = t->estimated ? at : jnum(st, "started_ms", 0);
		t->end[s] = t->estimated ? at + step_dur(t, s) : jnum(st, "ended_ms", 0);
		t->end[s] = t->end[s] < t->start[s] ? t->start[s] : t->end[s];
		at = t->end[s];
		t->span = t->end[s] > t->span ? t->end[s] : t->span;
		for (size_t h = 0; h < t->nh; h++) {
			json_object *fa = facts_of(t, s, h), *evs = jarr(fa, "events");

			for (size_t e = 0; evs && e < json_object_array_length(evs); e++)
				event_span(t, json_object_array_get_idx(evs, e));
			for (size_t k = 0; k < NDUR; k++) {
				double d = (double)jint(jobj(fa, "time_ms"), dur_keys[k], -1);
				t->maxdur = d > t->maxdur ? d : t->maxdur;
			}
		}
	}
	t->span = t->span < 1 ? 1 : t->span;
	t->maxdur = t->maxdur < 1 ? 1 : t->maxdur;
	t->scale = TL_PLOT / t->span < TL_MAX_SCALE ? TL_PLOT / t->span : TL_MAX_SCALE;
	t->label_y = 0;
	for (size_t h = 0; h < TL_MAX_HOSTS; h++)
		t->lane_y[h] = 0;
}

static void fmt_ms(char *buf, size_t len, double ms)
{
	if (ms >= 1000)
		snprintf(buf, len, "%.*f s", ms >= 10000 ? 0 : 1, ms / 1000.0);
	else
		snprintf(buf, len, "%.0f ms", ms);
}

/* Ticks at 1, 2 or 5 times a power of ten, about six of them. */
static void axis(struct tl *t)
{
	double raw = t->span / 6, mag = pow(10, floor(log10(raw > 0 ? raw : 1))), step = mag;

	if (raw / mag > 5)
		step = 10 * mag;
	else if (raw / mag > 2)
		step = 5 * mag;
	else if (raw / mag > 1)
		step = 2 * mag;
	for (double ms = 0; ms <= t->span + 0.001; ms += step) {
		char lab[32];

		fmt_ms(lab, sizeof(lab), ms);
		fprintf(t->f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			      "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			TL_LEFT - 4, ty(t, ms), TL_WIDTH - TL_GUTTER, ty(t, ms), TL_LEFT - 6, ty(t, ms) + 3, lab);
	}
}

static void lanes(struct tl *t)
{
	double bottom = ty(t, t->span);

	for (size_t h = 0; h < t->nh; h++) {
		fprintf(t->f, "<line class=\"life\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			      "<text class=\"hn\" x=\"%.1f\" y=\"%.1f\">",
			lane_x(t, h), TL_TOP - 6, lane_x(t, h), bottom, lane_x(t, h), TL_TOP - 12);
		html_str(t->f, t->host[h]);
		fputs("</text>\n", t->f);
	}
}

static const char *step_word(json_object *st)
{
	return jstr(st, "do") ? jstr(st, "do") : "step";
}

/* The band's tooltip: the step, its times, each host's durations. */
static void band_title(struct tl *t, size_t s, json_object *st)
{
	fprintf(t->f, "<title>step %zu %s", s + 1, step_word(st));
	if (jstr(st, "name")) {
		fputs(" \"", t->f);
		html_str(t->f, jstr(st, "name"));
		fputc('"', t->f);
	}
	fprintf(t->f, ": %.0f to %.0f ms%s", t->start[s], t->end[s], t->estimated ? " (laid back to back)" : "");
	for (size_t h = 0; h < t->nh; h++) {
		json_object *tm = jobj(facts_of(t, s, h), "time_ms");
		bool any = false;

		for (size_t k = 0; k < NDUR; k++) {
			long d = jint(tm, dur_keys[k], -1);

			if (d < 0)
				continue;
			if (!any) {
				fputs("\n", t->f);
				html_str(t->f, t->host[h]);
				fputc(':', t->f);
			}
			fprintf(t->f, " %s %ld ms", dur_keys[k], d);
			any = true;
		}
	}
	fputs("</title>", t->f);
}

/* The band and its label in the gutter, pushed down past the previous
 * label, with a leader line when it moved. */
static void band(struct tl *t, size_t s)
{
	json_object *st = json_object_array_get_idx(t->steps, s);
	double y0 = ty(t, t->start[s]), h = ty(t, t->end[s]) - y0, ly = y0 + 8;

	fprintf(t->f, "<rect class=\"band%s\" data-step=\"%zu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">",
		s % 2 ? " odd" : "", s, TL_LEFT, y0, TL_WIDTH - TL_GUTTER - TL_LEFT, h < 0.5 ? 0.5 : h);
	band_title(t, s, st);
	fputs("</rect>\n", t->f);
	ly = ly < t->label_y + 9 ? t->label_y + 9 : ly;
	if (ly - y0 > 9)
		fprintf(t->f, "<line class=\"lead\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			TL_WIDTH - TL_GUTTER, y0, TL_WIDTH - TL_GUTTER + 4, ly - 3);
	fprintf(t->f, "<text class=\"sl\" x=\"%.1f\" y=\"%.1f\">%zu %s", TL_WIDTH - TL_GUTTER + 6, ly, s + 1,
		step_word(st));
	if (jstr(st, "name")) {
		fputc(' ', t->f);
		html_str(t->f, jstr(st, "name"));
	}
	fputs("</text>\n", t->f);
	t->label_y = ly;
}

static void arrow(struct tl *t, const char *cls, const char *what, size_t from, size_t to, double y1, double y2,
		  const char *label)
{
	double x1 = lane_x(t, from), x2 = lane_x(t, to), dx = x2 - x1, dy = y2 - y1, len = sqrt(dx * dx + dy * dy);
	double ux = len > 0 ? dx / len : 1, uy = len > 0 ? dy / len : 0;

	fprintf(t->f, "<line class=\"arrow %s\" data-what=\"", cls);
	html_str(t->f, what);
	fputs("\" data-host=\"", t->f);
	html_str(t->f, t->host[from]);
	fputs("\" data-peer=\"", t->f);
	html_str(t->f, t->host[to]);
	fprintf(t->f, "\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x1, y1, x2, y2);
	fprintf(t->f, "<polygon class=\"head %s\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>", cls, x2, y2,
		x2 - 6 * ux - 3 * uy, y2 - 6 * uy + 3 * ux, x2 - 6 * ux + 3 * uy, y2 - 6 * uy - 3 * ux);
	fprintf(t->f, "<text class=\"al\" x=\"%.1f\" y=\"%.1f\">", (x1 + x2) / 2, (y1 + y2) / 2 - 2);
	html_str(t->f, label);
	fputs("</text>\n", t->f);
}

static void box(struct tl *t, size_t h, const char *what, double s, double e)
{
	double x = lane_x(t, h), y0 = ty(t, s), y1 = ty(t, e), ly = y0 + 6;

	fputs("<rect class=\"box\" data-host=\"", t->f);
	html_str(t->f, t->host[h]);
	fputs("\" data-what=\"", t->f);
	html_str(t->f, what);
	fprintf(t->f, "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>", x - TL_BOX_W / 2, y0, TL_BOX_W,
		y1 - y0 < 1.5 ? 1.5 : y1 - y0);
	html_str(t->f, t->host[h]);
	fputc(' ', t->f);
	html_str(t->f, what);
	fprintf(t->f, " %.1f to %.1f ms</title></rect>", s, e);
	ly = ly < t->lane_y[h] + 8 ? t->lane_y[h] + 8 : ly;
	fprintf(t->f, "<text class=\"bl\" x=\"%.1f\" y=\"%.1f\">", x + TL_BOX_W / 2 + 2, ly);
	html_str(t->f, what);
	fputs("</text>\n", t->f);
	t->lane_y[h] = ly;
}

static void event(struct tl *t, size_t h, json_object *ev)
{
	const char *what = jstr(ev, "what") ? jstr(ev, "what") : "event";
	double s = jnum(ev, "start_ms", 0), e = jnum(ev, "end_ms", s);
	int p = lane_of(t, jstr(ev, "peer"));

	e = e < s ? s : e;
	if (p < 0 || (size_t)p == h) {
		box(t, h, what, s, e);
	} else if (!strcmp(what, "request") || !strcmp(what, "tcp_connect")) {
		bool req = !strcmp(what, "request");

		arrow(t, "out", what, h, (size_t)p, ty(t, s), ty(t, s), req ? "request" : "connect");
		arrow(t, "back", what, (size_t)p, h, ty(t, e), ty(t, e), req ? "reply" : "accepted");
	} else {
		arrow(t, "one", what, h, (size_t)p, ty(t, s), ty(t, e), what);
	}
}

/* Durations without positions: one bar per time_ms value, as long as the
 * duration (against the figure's longest), stacked inside the band. */
static void bars(struct tl *t, size_t s, size_t h, json_object *tm)
{
	double y0 = ty(t, t->start[s]), bh = ty(t, t->end[s]) - y0, left = lane_x(t, h) - lane_w(t) / 2 + 3;
	size_t n = 0, k2 = 0;
	double th;

	for (size_t k = 0; k < NDUR; k++)
		n += jint(tm, dur_keys[k], -1) >= 0;
	th = n ? (bh - 2) / (double)n : 0;
	th = th > 9 ? 9 : th;
	if (n == 0 || th < 1.5)
		return;
	for (size_t k = 0; k < NDUR; k++) {
		long d = jint(tm, dur_keys[k], -1);
		double w = (double)d / t->maxdur * (lane_w(t) - 6), y;

		if (d < 0)
			continue;
		y = y0 + 1 + (double)k2++ * th;
		fputs("<rect class=\"dur\" data-host=\"", t->f);
		html_str(t->f, t->host[h]);
		fprintf(t->f, "\" data-what=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>",
			dur_keys[k], left, y, w < 1 ? 1 : w, th * 0.8);
		html_str(t->f, t->host[h]);
		fprintf(t->f, ": %s took %ld ms (a duration: when in the step is not recorded)</title></rect>",
			dur_keys[k], d);
		if (th >= 7)
			fprintf(t->f, "<text class=\"dl\" x=\"%.1f\" y=\"%.1f\">%s %ld ms</text>", left + 1, y + th * 0.8 - 1,
				dur_keys[k], d);
		fputc('\n', t->f);
	}
}

static bool is_fault(const char *w)
{
	static const char *const kinds[] = {"link_down", "link_up", "netem_on", "netem_off", "set_mtu",
					    "blackhole", "unblackhole", "delete_device", "kill_agent",
					    "start_agent", "restart_agent"};

	for (size_t i = 0; w && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(w, kinds[i]))
			return true;
	return false;
}

/* A topology or agent step: a mark on the lane of the host it hit. */
static void fault(struct tl *t, size_t s, json_object *st)
{
	json_object *on = jarr(st, "on");
	json_object *first = on && json_object_array_length(on) ? json_object_array_get_idx(on, 0) : NULL;
	int h = first && json_object_is_type(first, json_type_string) ? lane_of(t, json_object_get_string(first)) : -1;
	double x, y = ty(t, t->start[s]);

	if (h < 0)
		return;
	x = lane_x(t, (size_t)h);
	fputs("<path class=\"fault\" data-host=\"", t->f);
	html_str(t->f, t->host[h]);
	fprintf(t->f, "\" data-what=\"%s\" d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"><title>", step_word(st), x,
		y - 5, x + 5, y, x, y + 5, x - 5, y);
	html_str(t->f, step_word(st));
	fputs(" on ", t->f);
	html_str(t->f, t->host[h]);
	fputs("</title></path>\n", t->f);
}

/* Whether ev (of host h) was drawn already: a report after a later step
 * carries the same last setup's events again, at the same times. */
static bool seen_before(const struct tl *t, size_t s, size_t h, json_object *ev)
{
	const char *str = json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN);

	for (size_t p = 0; p < s; p++) {
		json_object *evs = jarr(facts_of(t, p, h), "events");

		for (size_t e = 0; evs && e < json_object_array_length(evs); e++)
			if (!strcmp(json_object_to_json_string_ext(json_object_array_get_idx(evs, e),
								   JSON_C_TO_STRING_PLAIN), str))
				return true;
	}
	return false;
}

/* The steps that set endpoints up: the only ones whose time_ms durations
 * belong to them (a later step's report repeats the last setup's). */
static bool sets_up(const char *w)
{
	return w && (!strcmp(w, "connect") || !strcmp(w, "connect_both"));
}

static void step_contents(struct tl *t, size_t s)
{
	json_object *st = json_object_array_get_idx(t->steps, s);

	if (is_fault(jstr(st, "do")))
		fault(t, s, st);
	for (size_t h = 0; h < t->nh; h++) {
		json_object *fa = facts_of(t, s, h), *evs = jarr(fa, "events");

		if (evs && json_object_array_length(evs)) {
			for (size_t e = 0; e < json_object_array_length(evs); e++)
				if (!seen_before(t, s, h, json_object_array_get_idx(evs, e)))
					event(t, h, json_object_array_get_idx(evs, e));
		} else if (fa && sets_up(jstr(st, "do"))) {
			bars(t, s, h, jobj(fa, "time_ms"));
		}
	}
}

void html_timeline(FILE *f, json_object *sc)
{
	struct tl t = {.f = f, .steps = jarr(sc, "steps")};
	double height;

	t.ns = t.steps ? json_object_array_length(t.steps) : 0;
	t.ns = t.ns > TL_MAX_STEPS ? TL_MAX_STEPS : t.ns;
	if (t.ns == 0)
		return;
	collect_hosts(&t, sc);
	if (t.nh == 0)
		return;
	layout(&t);
	height = ty(&t, t.span) + TL_BOTTOM + (t.estimated ? 10 : 0);
	fprintf(f, "<svg class=\"tl\" viewBox=\"0 0 %.0f %.1f\" "
		   "width=\"%.0f\" height=\"%.1f\" data-span-ms=\"%.0f\" data-scale=\"%.4f\">\n",
		TL_WIDTH, height, TL_WIDTH, height, t.span, t.scale);
	for (size_t s = 0; s < t.ns; s++)
		band(&t, s);
	axis(&t);
	lanes(&t);
	for (size_t s = 0; s < t.ns; s++)
		step_contents(&t, s);
	if (t.estimated)
		fprintf(f, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\">no step start times in these results: steps laid "
			   "back to back</text>\n", TL_LEFT, height - 4);
	fputs("</svg>\n", f);
}
