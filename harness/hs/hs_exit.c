/* `qplab hs send`'s exit codes: 10 + k for failure kind k, one table.
 * Kinds 1-9 came first, 10-13 later; each names the error codes
 * of lib/client that fall under it, so the table below is both the mapping
 * and what --help and docs/hs.md print. */
#include <stdio.h>

#include "cli/cli.h"
#include "qphs.h"

static const struct hs_exit_row {
	int k;
	const char *kind;
	int codes[6];
} rows[] = {
	{1, "connection refused", {QPHS_ERR_CONNECT_REFUSED}},
	{2, "connect timed out", {QPHS_ERR_CONNECT_TIMEOUT}},
	{3, "reply timed out", {QPHS_ERR_REPLY_TIMEOUT}},
	{4, "peer closed without a reply", {QPHS_ERR_PEER_CLOSED}},
	{5, "bad reply frame",
	 {QPHS_ERR_FRAME_ZERO_LENGTH, QPHS_ERR_FRAME_TOO_LONG, QPHS_ERR_FRAME_TRUNCATED,
	  QPHS_ERR_FRAME_BAD_TYPE, QPHS_ERR_FRAME_EMPTY_BODY}},
	{6, "reply type differs from the request's", {QPHS_ERR_REPLY_WRONG_TYPE}},
	{7, "malformed JSON reply",
	 {QPHS_ERR_FRAME_NOT_JSON, QPHS_ERR_FRAME_TRAILING, QPHS_ERR_MALFORMED_JSON}},
	{8, "rejected (non-empty reply_msg)", {QPHS_ERR_REJECT_HANDSHAKE}},
	{9, "name not resolved", {QPHS_ERR_DNS}},
	{10, "old-protocol reply to a typed request", {QPHS_ERR_REPLY_OLD_PROTOCOL}},
	{11, "network unreachable", {QPHS_ERR_UNREACHABLE}},
	{12, "other socket error", {QPHS_ERR_SOCKET, QPHS_ERR_MEMORY}},
	{13, "null reply: the peer has no transport for the request",
	 {QPHS_ERR_PEER_NO_TRANSPORT}},
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

int hs_exit_code(int err)
{
	if (err == 0)
		return QPLAB_EXIT_OK;
	for (size_t i = 0; i < N_ROWS; i++)
		for (size_t j = 0; j < sizeof(rows[i].codes) / sizeof(rows[i].codes[0]); j++)
			if (rows[i].codes[j] == err && err != 0)
				return 10 + rows[i].k;
	return QPLAB_EXIT_FAIL;
}

void hs_exit_table_print(FILE *out)
{
	fprintf(out, "exit status:\n  0   the reply arrived (and, for Connection, reply_msg "
		     "is empty)\n  1   other failure\n  2   usage error\n");
	for (size_t i = 0; i < N_ROWS; i++) {
		fprintf(out, "  %-3d %s:", 10 + rows[i].k, rows[i].kind);
		for (size_t j = 0; j < sizeof(rows[i].codes) / sizeof(rows[i].codes[0]); j++)
			if (rows[i].codes[j])
				fprintf(out, " %s", qphs_errname(rows[i].codes[j]));
		fputc('\n', out);
	}
}
