/* `qplab run --jobs N`: the worker->runner frames, the worker count,
 * topology names per worker, results in catalogue order, and the workers
 * themselves on scenarios this lab-less test machine skips. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qphs.h"
#include "run/run_jobs.h"
#include "unit.h"

static struct run_job_msg msg(int kind, int index)
{
	struct run_job_msg m;

	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.index = index;
	return m;
}

/* Three frames, fed in chunks of every size in the table: the same three
 * come out, whole, in order. */
static const size_t chunks[] = {1, 3, 7, sizeof(struct run_job_msg) - 1, sizeof(struct run_job_msg) + 5, 1 << 20};

START_TEST(run_job_frames_survive_any_split)
{
	struct run_job_msg in[3] = {msg(RUN_JOB_START, 4), msg(RUN_JOB_RESULT, 4), msg(RUN_JOB_DONE, 0)};
	const char *json[3] = {NULL, "{\"id\":\"basic/connect\",\"status\":\"pass\"}", NULL};
	char *all = NULL;
	size_t len = 0, got = 0;
	struct run_job_reader rd = {0};

	in[1].out.status = QPLAB_ERROR;
	in[1].out.steps_ms = 1234.5;
	snprintf(in[1].out.reason, sizeof(in[1].out.reason), "agent a did not start");
	in[2].built = 3;
	in[2].left = 1;
	for (int i = 0; i < 3; i++) {
		char *f;
		size_t n;

		ck_assert_int_eq(run_job_encode(&in[i], json[i], &f, &n), 0);
		all = realloc(all, len + n);
		memcpy(all + len, f, n);
		len += n;
		free(f);
	}
	for (size_t off = 0; off < len; off += chunks[_i]) {
		struct run_job_msg m;
		char *j;

		ck_assert_int_eq(run_job_feed(&rd, all + off, len - off < chunks[_i] ? len - off : chunks[_i]), 0);
		while (run_job_take(&rd, &m, &j) == 1) {
			ck_assert_uint_lt(got, 3);
			ck_assert_int_eq(m.kind, in[got].kind);
			ck_assert_int_eq(m.index, in[got].index);
			if (json[got])
				ck_assert_str_eq(j, json[got]);
			else
				ck_assert_ptr_null(j);
			free(j);
			got++;
			if (m.kind == RUN_JOB_RESULT) {
				ck_assert_int_eq(m.out.status, QPLAB_ERROR);
				ck_assert_double_eq(m.out.steps_ms, 1234.5);
				ck_assert_str_eq(m.out.reason, "agent a did not start");
			}
			if (m.kind == RUN_JOB_DONE)
				ck_assert(m.built == 3 && m.left == 1);
		}
	}
	ck_assert_uint_eq(got, 3);
	ck_assert_uint_eq(rd.len, 0);
	run_job_reader_free(&rd);
	free(all);
}
END_TEST

/* A header that cannot be a frame is refused as soon as the header is in,
 * before any body is waited for or allocated. */
START_TEST(run_job_reader_refuses_what_is_not_a_frame)
{
	static const struct {
		int kind;
		uint32_t len;
	} bad[] = {{0, 0}, {RUN_JOB_DONE + 1, 0}, {RUN_JOB_RESULT, RUN_JOB_MAX_JSON + 1}, {RUN_JOB_START, 10}};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_job_msg m = msg(bad[i].kind, 0), out;
		struct run_job_reader rd = {0};
		char *j = (char *)"x";

		m.len = bad[i].len;
		ck_assert_int_eq(run_job_feed(&rd, &m, sizeof(m)), 0);
		ck_assert_int_eq(run_job_take(&rd, &out, &j), -1);
		ck_assert_ptr_null(j);
		run_job_reader_free(&rd);
	}
}
END_TEST

START_TEST(run_job_encode_refuses_oversized_json)
{
	struct run_job_msg m = msg(RUN_JOB_RESULT, 0);
	char *big = malloc(RUN_JOB_MAX_JSON + 2), *f = NULL;
	size_t n = 0;

	memset(big, 'x', RUN_JOB_MAX_JSON + 1);
	big[RUN_JOB_MAX_JSON + 1] = '\0';
	ck_assert_int_eq(run_job_encode(&m, big, &f, &n), -1);
	ck_assert_ptr_null(f);
	free(big);
}
END_TEST

/* The worker's facts pointers mean nothing in the runner. */
START_TEST(run_job_take_drops_the_workers_pointers)
{
	struct run_job_msg m = msg(RUN_JOB_RESULT, 1), out;
	struct run_job_reader rd = {0};
	char *f, *j;
	size_t n;

	m.out.have_facts = true;
	m.out.facts.final = (struct qplab_facts *)&m;
	ck_assert_int_eq(run_job_encode(&m, "{}", &f, &n), 0);
	ck_assert_int_eq(run_job_feed(&rd, f, n), 0);
	ck_assert_int_eq(run_job_take(&rd, &out, &j), 1);
	ck_assert(!out.out.have_facts);
	ck_assert_ptr_null(out.out.facts.final);
	free(j);
	free(f);
	run_job_reader_free(&rd);
}
END_TEST

START_TEST(run_jobs_workers_never_exceed_scenarios)
{
	static const struct {
		int jobs;
		size_t n;
		int want;
	} t[] = {{4, 50, 4}, {4, 2, 2}, {1, 50, 1}, {3, 0, 1}, {0, 5, 1}, {64, 64, 64}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(run_jobs_workers(t[i].jobs, t[i].n) == t[i].want, "jobs %d, %zu scenarios", t[i].jobs,
			      t[i].n);
}
END_TEST

static bool valid_topo_id(const char *id)
{
	size_t n = strlen(id);

	return n >= 1 && n <= 8 && strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789") == n;
}

/* Every worker's names are valid `topo --name` IDs and no two workers
 * (nor two live topologies of one worker) share one. */
START_TEST(run_topo_names_are_valid_and_unique_per_worker)
{
	struct run_ctx c;
	char id[16], first[16];
	static char seen[64 * 4][16];
	size_t n = 0;

	memset(&c, 0, sizeof(c));
	run_topo_name(&c, 7, id, sizeof(id));
	ck_assert_str_eq(id, "r7"); /* serial runs keep their names */
	c.jobs = 64;
	for (c.job = 0; c.job < 64; c.job++)
		for (int seq = 0; seq < 4; seq++) {
			run_topo_name(&c, seq == 3 ? 999 : seq, id, sizeof(id));
			ck_assert_msg(valid_topo_id(id), "'%s'", id);
			for (size_t k = 0; k < n; k++)
				ck_assert_msg(strcmp(seen[k], id), "'%s' twice", id);
			snprintf(seen[n++], sizeof(seen[0]), "%s", id);
		}
	c.job = 1;
	run_topo_name(&c, 0, first, sizeof(first));
	run_topo_name(&c, 1000, id, sizeof(id));
	ck_assert_str_eq(id, first); /* wraps like the serial counter */
}
END_TEST

static json_object *entry(const char *id, const char *status)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "status", json_object_new_string(status));
	return o;
}

static const struct qplab_runinfo RUN = {.backend = "netns", .kernel = "7.2.0", .driver = "rxe",
					 .time_multiplier = 1};

/* Results arrive in completion order; results.json holds them in
 * catalogue order, holes (interrupted) left out. */
START_TEST(run_jobs_assemble_keeps_catalogue_order)
{
	json_object *run = qplab_results_run(&RUN, "2026-11-30T04:00:00Z"), *res[5] = {0}, *scs, *sum, *v;
	static const char *const want[] = {"a/one", "b/two", "d/four"};

	res[3] = entry("d/four", "fail"); /* arrived first */
	res[0] = entry("a/one", "pass");
	res[1] = entry("b/two", "skip");
	ck_assert_uint_eq(run_jobs_assemble(run, res, 5), 3);
	ck_assert(json_object_object_get_ex(run, "scenarios", &scs));
	ck_assert_uint_eq(json_object_array_length(scs), 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert(json_object_object_get_ex(json_object_array_get_idx(scs, i), "id", &v));
		ck_assert_str_eq(json_object_get_string(v), want[i]);
	}
	ck_assert(json_object_object_get_ex(run, "summary", &sum));
	ck_assert(json_object_object_get_ex(sum, "fail", &v) && json_object_get_int(v) == 1);
	for (int i = 0; i < 5; i++)
		json_object_put(res[i]);
	json_object_put(run);
}
END_TEST

/* The real workers (processes, pipes, shared counter) on scenarios that
 * skip here (no capabilities: nothing is built): every scenario reported
 * once, TAP numbered 1..N, results.json in catalogue order. */
START_TEST(run_jobs_workers_report_every_scenario_once)
{
	const char *paths[] = {"scenarios/gid/ipv6-only-auto.json", "scenarios/gid/netdev-no-address.json",
			       "scenarios/rocepath/netem-loss-20.json", "scenarios/transport/silent-peer.json",
			       "tests/lab/agent-addresses.json", "tests/lab/steps-topo.json"};
	const char *caps[] = {NULL};
	struct qplab_catalogue cat = {0};
	struct qplab_errors errs = {0};
	struct run_ctx proto;
	struct qplab_runinfo ri = RUN;
	struct qplab_tap tap;
	struct run_totals tot = {0};
	char dir[] = "/tmp/qplab-jobs-XXXXXX", line[512];
	json_object *run, *scs, *v;
	FILE *out = tmpfile();
	int n = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(qplab_catalogue_load(paths, 6, NULL, 0, &cat, &errs), 0);
	memset(&proto, 0, sizeof(proto));
	proto.caps = caps;
	ri.caps = caps;
	run = qplab_results_run(&ri, NULL);
	qplab_tap_begin(&tap, out, (int)cat.n);
	ck_assert_int_eq(run_jobs(&proto, &cat, &ri, 3, dir, &tap, run, &tot), 0);
	ck_assert_int_eq(tap.done, 6);
	ck_assert_int_eq(tap.counts[QPLAB_SKIP], 6);
	ck_assert(tot.built == 0 && tot.left == 0);
	rewind(out);
	while (fgets(line, sizeof(line), out))
		if (!strncmp(line, "ok ", 3)) {
			ck_assert_int_eq(atoi(line + 3), ++n);
			ck_assert_ptr_nonnull(strstr(line, " # SKIP "));
		}
	ck_assert_int_eq(n, 6);
	ck_assert(json_object_object_get_ex(run, "scenarios", &scs));
	ck_assert_uint_eq(json_object_array_length(scs), 6);
	for (size_t i = 0; i < 6; i++) {
		ck_assert(json_object_object_get_ex(json_object_array_get_idx(scs, i), "id", &v));
		ck_assert_str_eq(json_object_get_string(v), cat.plans[i]->id);
	}
	qplab_tap_end(&tap);
	fclose(out);
	json_object_put(run);
	qplab_catalogue_free(&cat);
	snprintf(line, sizeof(line), "rm -rf %s", dir);
	ck_assert_int_eq(system(line), 0);
}
END_TEST

Suite *suite_run_jobs(void)
{
	Suite *s = suite_create("run_jobs");
	TCase *tc = unit_tcase(s, "frames", 10);

	tcase_add_loop_test(tc, run_job_frames_survive_any_split, 0, sizeof(chunks) / sizeof(chunks[0]));
	tcase_add_test(tc, run_job_reader_refuses_what_is_not_a_frame);
	tcase_add_test(tc, run_job_encode_refuses_oversized_json);
	tcase_add_test(tc, run_job_take_drops_the_workers_pointers);
	tc = unit_tcase(s, "plan", 10);
	tcase_add_test(tc, run_jobs_workers_never_exceed_scenarios);
	tcase_add_test(tc, run_topo_names_are_valid_and_unique_per_worker);
	tcase_add_test(tc, run_jobs_assemble_keeps_catalogue_order);
	tc = unit_tcase(s, "workers", 20);
	tcase_add_test(tc, run_jobs_workers_report_every_scenario_once);
	return s;
}
