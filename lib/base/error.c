/* The error table's functions: names, texts and fault names. */
#include <string.h>

#include "qphs/error.h"

struct err_row {
	int code;
	const char *name;
	const char *fault;
	const char *text;
};

static const struct err_row err_rows[] = {
#define ROW(name, code, fault, text) {(code), #name, (fault), (text)},
	QPHS_ERRNO_MAP(ROW)
#undef ROW
};

static const struct err_row *find_row(int code)
{
	for (size_t i = 0; i < sizeof(err_rows) / sizeof(err_rows[0]); i++)
		if (err_rows[i].code == code)
			return &err_rows[i];
	return NULL;
}

const char *qphs_errname(int code)
{
	const struct err_row *row = find_row(code);
	return row ? row->name : "UNKNOWN";
}

const char *qphs_strerror(int code)
{
	const struct err_row *row = find_row(code);
	return row ? row->text : "unknown error";
}

const char *qphs_errfault(int code)
{
	const struct err_row *row = find_row(code);
	return row ? row->fault : "";
}

int qphs_errcode_by_name(const char *name, int *code)
{
	if (!name || !*name)
		return 0;
	for (size_t i = 0; i < sizeof(err_rows) / sizeof(err_rows[0]); i++) {
		if (strcmp(err_rows[i].name, name) == 0 ||
		    (err_rows[i].fault[0] && strcmp(err_rows[i].fault, name) == 0)) {
			*code = err_rows[i].code;
			return 1;
		}
	}
	return 0;
}
