/* How long the runner waits for a datapath reply (pure).  The deadline a
 * datapath step gives the agent applies to each completion the check
 * waits for, and the check runs on every QP of the endpoint, several
 * completions each: the reply can come that much later
 * (qphs_data_check_max_wait_ms), and the runner must not give up first. */
#include "qphs/rdma.h"
#include "cli/cli.h"
#include "run.h"

long run_datapath_wait_ms(int deadline_ms, int nqp, int verb, bool read_only)
{
	struct qphs_data_opts o = {.timeout_ms = deadline_ms, .read_only = read_only, .verb = verb};
	long long w = qphs_data_check_max_wait_ms(&o, nqp > 0 ? nqp : RUN_DEFAULT_QP_PER_EP) +
		      RUN_REPLY_SLACK_MS;

	return w >= QPLAB_MAX_DEADLINE_MS ? QPLAB_MAX_DEADLINE_MS : (long)w;
}
