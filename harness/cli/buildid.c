/* `qplab build-id`: the linker's GNU build ID of this very binary (the
 * .note.gnu.build-id note, a hash of its contents), so the hosts backend
 * can tell two builds of one VERSION apart (`qplab doctor --inventory`). */
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct found {
	char hex[2 * 64 + 1];
};

/* The main program is the first object dl_iterate_phdr reports. */
static int scan(struct dl_phdr_info *info, size_t size, void *data)
{
	struct found *f = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		size_t off = 0;

		if (ph->p_type != PT_NOTE)
			continue;
		while (off + sizeof(ElfW(Nhdr)) <= ph->p_memsz) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(p + off);
			size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
			const unsigned char *d = p + off + sizeof(*n) + name;

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + off + sizeof(*n), "GNU", 4) && n->n_descsz <= 64) {
				for (size_t k = 0; k < n->n_descsz; k++)
					snprintf(f->hex + 2 * k, 3, "%02x", d[k]);
				return 1;
			}
			off += sizeof(*n) + name + desc;
		}
	}
	return 1; /* only the first object: the program itself */
}

const char *qplab_build_id(void)
{
	static struct found f;

	if (!f.hex[0]) {
		dl_iterate_phdr(scan, &f);
		if (!f.hex[0])
			snprintf(f.hex, sizeof(f.hex), "none");
	}
	return f.hex;
}

int cmd_build_id(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: qplab build-id\n\nPrints the GNU build ID of this qplab binary (\"none\" when it was linked without one).\n");
		return QPLAB_EXIT_OK;
	}
	if (argc > 1)
		return qplab_usage_error("build-id: no arguments");
	printf("%s\n", qplab_build_id());
	return QPLAB_EXIT_OK;
}
