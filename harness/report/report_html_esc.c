/* Escaping for report.html (text, attributes, links) and the typed JSON
 * getters the page generator reads the results document with. */
#include <stdint.h>
#include <string.h>

#include "report_html.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0: overlong
 * forms, surrogates and code points above U+10FFFF are invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void html_text(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);
		unsigned char c = p[i];

		if (len == 0 || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
			fputs(replacement, f);
			i++;
			continue;
		}
		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c == '\'')
			fputs("&#39;", f);
		else
			fwrite(p + i, 1, len, f);
		i += len;
	}
}

void html_str(FILE *f, const char *s)
{
	if (s)
		html_text(f, s, strlen(s));
}

void html_json(FILE *f, json_object *v)
{
	const char *s;

	if (!v)
		return;
	if (json_object_is_type(v, json_type_string)) {
		html_text(f, json_object_get_string(v), (size_t)json_object_get_string_len(v));
		return;
	}
	s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	html_str(f, s);
}

void html_href(FILE *f, const char *path)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~/-";

	if (!path || !path[0] || path[0] == '/' || !strncmp(path, "../", 3) || strstr(path, "/../") ||
	    !strcmp(path, "..")) {
		fputc('#', f);
		return;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (strchr(safe, *p))
			fputc(*p, f);
		else
			fprintf(f, "%%%02X", *p);
	}
}

const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

long jint(json_object *o, const char *key, long dflt)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return dflt;
	return (long)json_object_get_int64(v);
}

double jnum(json_object *o, const char *key, double dflt)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return dflt;
	return json_object_get_double(v);
}

json_object *jarr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

json_object *jobj(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_object))
		return NULL;
	return v;
}

void html_topic(const char *id, char *buf, size_t len)
{
	size_t n = id ? strcspn(id, "/") : 0;

	snprintf(buf, len, "%.*s", (int)n, id ? id : "");
}
