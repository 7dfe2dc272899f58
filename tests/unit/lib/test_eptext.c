/*
 * An endpoint's texts (lib/setup/endpoint.c): the error, the warning and
 * the reply_msg sent and received live in a block allocated when the first
 * of them is written.  No device is needed: the functions touch only the
 * endpoint struct, so a zeroed one stands for an endpoint that has not
 * failed yet.
 */
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "qphs/rdma.h"
#include "setup/setup_int.h"
#include "unit.h"

static struct qphs_endpoint *fresh(void)
{
	struct qphs_endpoint *ep = calloc(1, sizeof(*ep));

	ck_assert_ptr_nonnull(ep);
	return ep;
}

static void drop(struct qphs_endpoint *ep)
{
	free(ep->tx);
	free(ep);
}

START_TEST(eptext_empty_until_written)
{
	struct qphs_endpoint *ep = fresh();

	ck_assert_ptr_null(ep->tx);
	ck_assert_str_eq(qphs_endpoint_errstr(ep), "");
	ck_assert_str_eq(qphs__ep_text(ep, QPHS__EP_WARNING), "");
	ck_assert_str_eq(qphs__ep_text(ep, QPHS__EP_REPLY_SENT), "");
	ck_assert_str_eq(qphs__ep_text(ep, QPHS__EP_REPLY_RECEIVED), "");
	ck_assert_ptr_null(ep->tx); /* reading allocates nothing */
	drop(ep);
}
END_TEST

START_TEST(eptext_error_sets_code_and_text)
{
	struct qphs_endpoint *ep = fresh();

	qphs__ep_set_err(ep, QPHS_ERR_REJECT_HANDSHAKE, "QP count mismatch [%d != %d]", 2, 3);
	ck_assert_int_eq(ep->last_error, QPHS_ERR_REJECT_HANDSHAKE);
	ck_assert_str_eq(qphs_endpoint_errstr(ep), "QP count mismatch [2 != 3]");
	ck_assert_str_eq(qphs__ep_text(ep, QPHS__EP_ERRSTR), "QP count mismatch [2 != 3]");
	qphs__ep_set_err(ep, QPHS_ERR_ENDPOINT, "%s", "second");
	ck_assert_str_eq(qphs_endpoint_errstr(ep), "second");
	drop(ep);
}
END_TEST

START_TEST(eptext_texts_are_separate)
{
	struct qphs_endpoint *ep = fresh();

	qphs__ep_set_text(ep, QPHS__EP_REPLY_RECEIVED, "%s", "refused by b");
	qphs__ep_set_text(ep, QPHS__EP_WARNING, "[Handshake] w%d", 1);
	qphs__ep_set_text(ep, QPHS__EP_REPLY_SENT, "sent %s", "x");
	ck_assert_str_eq(qphs__ep_text(ep, QPHS__EP_REPLY_RECEIVED), "refused by b");
	ck_assert_str_eq(qphs__ep_text(ep, QPHS__EP_WARNING), "[Handshake] w1");
	ck_assert_str_eq(qphs__ep_text(ep, QPHS__EP_REPLY_SENT), "sent x");
	ck_assert_str_eq(qphs_endpoint_errstr(ep), ""); /* no error written */
	ck_assert_int_eq(ep->last_error, 0);
	drop(ep);
}
END_TEST

/* A text longer than its slot is cut to the slot, NUL-terminated: the
 * error and warning hold 639 characters, the reply_msg ones 511. */
START_TEST(eptext_long_text_is_cut_to_its_slot)
{
	struct qphs_endpoint *ep = fresh();
	size_t n = 3000;
	char *big = malloc(n + 1);

	ck_assert_ptr_nonnull(big);
	memset(big, 'x', n);
	big[n] = '\0';
	qphs__ep_set_err(ep, QPHS_ERR_ENDPOINT, "%s", big);
	qphs__ep_set_text(ep, QPHS__EP_WARNING, "%s", big);
	qphs__ep_set_text(ep, QPHS__EP_REPLY_SENT, "%s", big);
	qphs__ep_set_text(ep, QPHS__EP_REPLY_RECEIVED, "%s", big);
	ck_assert_uint_eq(strlen(qphs_endpoint_errstr(ep)), 639);
	ck_assert_uint_eq(strlen(qphs__ep_text(ep, QPHS__EP_WARNING)), 639);
	ck_assert_uint_eq(strlen(qphs__ep_text(ep, QPHS__EP_REPLY_SENT)), 511);
	ck_assert_uint_eq(strlen(qphs__ep_text(ep, QPHS__EP_REPLY_RECEIVED)), 511);
	free(big);
	drop(ep);
}
END_TEST

Suite *suite_eptext(void)
{
	Suite *s = suite_create("eptext");
	TCase *tc = unit_tcase(s, "eptext", 10);

	tcase_add_test(tc, eptext_empty_until_written);
	tcase_add_test(tc, eptext_error_sets_code_and_text);
	tcase_add_test(tc, eptext_texts_are_separate);
	tcase_add_test(tc, eptext_long_text_is_cut_to_its_slot);
	return s;
}
