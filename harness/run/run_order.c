/* The order a run takes: scenarios that share a topology one after
 * another, so that each topology is built once (under TCG a build and its
 * teardown cost 5-10 s, a scenario's own overhead about one). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* p deletes a device, an address or a link's IPv6: its topology cannot
 * be reset for the next plan (run_topo.c, undo_words). */
static bool breaks_topology(const struct qplab_plan *p)
{
	for (size_t i = 0; i < p->nsteps; i++)
		if (p->steps[i].kind == QPLAB_STEP_DELETE_DEVICE || p->steps[i].kind == QPLAB_STEP_DISABLE_IPV6 ||
		    p->steps[i].kind == QPLAB_STEP_REMOVE_ADDRESS)
			return true;
	return false;
}

void run_order_plans(struct qplab_plan **plans, size_t n)
{
	char (*sig)[1024] = calloc(n ? n : 1, sizeof(*sig));
	struct qplab_plan **out = calloc(n ? n : 1, sizeof(*out));
	bool *taken = calloc(n ? n : 1, sizeof(*taken));
	size_t k = 0;

	if (n && sig && out && taken) { /* else the catalogue order: slower, as correct */
		for (size_t i = 0; i < n; i++)
			run_topo_sig(plans[i], NULL, sig[i], sizeof(sig[i]));
		/* Each group where its first plan stands: first the plans that
		 * leave the topology reusable, then those that do not. */
		for (size_t g = 0; g < n; g++) {
			const char *group = sig[g];

			if (taken[g])
				continue;
			for (int pass = 0; pass < 2; pass++)
				for (size_t i = g; i < n; i++)
					if (!taken[i] && !strcmp(sig[i], group) &&
					    breaks_topology(plans[i]) == (pass == 1)) {
						out[k++] = plans[i];
						taken[i] = true;
					}
		}
		memcpy(plans, out, n * sizeof(*plans));
	}
	free(sig);
	free(out);
	free(taken);
}
