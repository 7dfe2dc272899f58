/* Differential: qphs_hs_desc_encode's shortcut for plain strings
 * (lib/codec/descwrite.c) against the general writer, on descriptors made
 * from the input: 8 bytes of flags, LID, QP count and MTU, the QP numbers,
 * then the five strings separated by NUL bytes.  Whatever the shortcut
 * writes, the general writer must write byte for byte, and the public
 * encoder must always match the general writer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/jsonw.h"
#include "qphs/body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next string of the input up to a NUL, or NULL (the field left NULL,
 * which the writers read as ""). */
static char *next_string(const uint8_t **p, const uint8_t *end, int as_null)
{
	const uint8_t *nul = *p < end ? memchr(*p, 0, (size_t)(end - *p)) : NULL;
	size_t n = (size_t)((nul ? nul : end) - *p);
	char *s;

	if (as_null) {
		*p += n + (nul != NULL);
		return NULL;
	}
	s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, *p, n);
	s[n] = '\0';
	*p += n + (nul != NULL);
	return s;
}

static int same_text(int rc1, const char *a, size_t na, int rc2, const char *b, size_t nb)
{
	return rc1 == rc2 && (rc1 || (na == nb && !memcmp(a, b, na) && !a[na] && !b[nb]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct qphs_hs_desc d = {0};
	char **field[5] = {&d.local_gid, &d.local_nic_path, &d.payload, &d.peer_nic_path,
			   &d.reply_msg};
	char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	int32_t mtu;
	int rc1, rc2;

	if (size < 8)
		return 0;
	d.has_ready_ack = p[0] & 1;
	d.ready_ack = p[0] & 2;
	d.local_lid = (uint16_t)(p[1] | p[2] << 8);
	d.qp_count = p[3];
	memcpy(&mtu, p + 4, sizeof(mtu));
	d.path_mtu = mtu;
	p += 8;
	if (d.qp_count > (size_t)(end - p) / 4)
		d.qp_count = (size_t)(end - p) / 4;
	if (d.qp_count) {
		d.qp_num = malloc(d.qp_count * sizeof(*d.qp_num));
		if (!d.qp_num)
			abort();
		memcpy(d.qp_num, p, d.qp_count * sizeof(*d.qp_num));
		p += d.qp_count * sizeof(*d.qp_num);
	}
	for (int i = 0; i < 5; i++)
		*field[i] = next_string(&p, end, data[0] & (4 << i));
	rc1 = qphs__hs_desc_encode_plain(&d, &a, &na);
	rc2 = qphs__hs_desc_encode_general(&d, &b, &nb);
	if (rc2)
		abort(); /* the general writer fails only without memory */
	if (rc1 == 1 && !same_text(0, a, na, 0, b, nb))
		abort();
	free(a);
	a = NULL;
	if (!same_text(qphs_hs_desc_encode(&d, &a, &na), a, na, 0, b, nb))
		abort();
	free(a);
	free(b);
	for (int i = 0; i < 5; i++)
		free(*field[i]);
	free(d.qp_num);
	return 0;
}
