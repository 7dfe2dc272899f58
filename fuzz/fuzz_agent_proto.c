/* Fuzz both ends of the agent protocol's JSON: the runner decoding an
 * agent's line into a message and its facts (harness/run/agent_msg.c,
 * agent_facts.c), and the agent reading its --config (harness/agent/
 * agent_cfg.c).  The first byte picks the side and, for replies, the peer
 * the facts are for; the rest is the line.  Every refusal must say why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "run/agent_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void said_why(int rc, const char *err)
{
	if (rc && !err[0])
		abort();
	if (memchr(err, '\0', 512) == NULL)
		abort();
}

static void reply_side(const char *line, size_t len, const char *peer)
{
	struct qplab_agent_msg m;
	struct qplab_facts f;
	char err[512] = "";
	int rc = qplab_agent_parse_line(line, len, &m, err, sizeof(err));

	said_why(rc, err);
	if (rc)
		return;
	/* op may be null: the reply to a line the agent could not read. */
	if (m.type == QPLAB_AGENT_REPLY && (!m.code || !m.error))
		abort();
	qplab_facts_init(&f);
	err[0] = '\0';
	rc = qplab_facts_from_reply(&m, peer, &f, err, sizeof(err));
	said_why(rc, err);
	qplab_facts_free(&f);
	qplab_agent_msg_free(&m);
}

static void config_side(const char *text)
{
	struct agent a;
	char err[512] = "";
	int rc;

	memset(&a, 0, sizeof(a));
	qphs_config_init(&a.cfg);
	rc = agent_apply_config(&a, text, err, sizeof(err));
	said_why(rc, err);
	/* What it took must be what the library takes. */
	if (!rc && qphs_config_validate(&a.cfg, err, sizeof(err)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const peers[] = {NULL, "p", "10.199.0.2:12001@rxe0"};
	char *text;

	if (size < 1 || size > QPLAB_AGENT_LINE_MAX)
		return 0;
	/* agent_apply_config takes a C string; the reply decoder a length. */
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (data[0] & 0x80)
		config_side(text);
	else
		reply_side(text, size - 1, peers[data[0] % 3]);
	free(text);
	return 0;
}
