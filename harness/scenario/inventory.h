/*
 * inventory.h — the hosts backend's inventory (docs/inventory.md): which
 * machine plays which scenario host, how ssh reaches it, what the lab may
 * do to it.  A pure parser with FILE:LINE errors (the scenario parser's
 * line machinery), the fault rules, and the ssh command line, built as
 * words: nothing an inventory holds is ever read by a local shell, and
 * every word of the remote command is quoted for the remote one.
 */
#ifndef QPLAB_INVENTORY_H
#define QPLAB_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario.h"

#define QPLAB_INV_MAX_OPTIONS 16
#define QPLAB_INV_NAME_MAX 64     /* device, netdev, alias, option names */
#define QPLAB_INV_PATH_MAX 256
#define QPLAB_INV_VALUE_MAX 256   /* destination, address, option values */

/* The faults an inventory may allow (its `faults` array). */
enum qplab_inv_fault {
	QPLAB_INV_FAULT_LINK = 1 << 0,          /* link down and up */
	QPLAB_INV_FAULT_NETEM = 1 << 1,         /* loss, delay */
	QPLAB_INV_FAULT_MTU = 1 << 2,           /* set the netdev MTU */
	QPLAB_INV_FAULT_BLACKHOLE = 1 << 3,     /* route a peer to blackhole */
	QPLAB_INV_FAULT_DELETE_DEVICE = 1 << 4, /* rdma link del */
};

struct qplab_inv_option {
	char name[QPLAB_INV_NAME_MAX];
	char value[QPLAB_INV_VALUE_MAX];
};

struct qplab_inv_ssh {
	char destination[QPLAB_INV_VALUE_MAX]; /* "" when alias is used */
	char alias[QPLAB_INV_NAME_MAX];
	char config[QPLAB_INV_PATH_MAX];       /* "" = ssh's default */
	int port;                              /* 0 = ssh's default */
	char identity[QPLAB_INV_PATH_MAX];
	struct qplab_inv_option options[QPLAB_INV_MAX_OPTIONS];
	size_t noptions;
};

struct qplab_inv_host {
	char name[QPLAB_NAME_MAX];             /* the scenario host it plays */
	int line;
	struct qplab_inv_ssh ssh;
	char qplab[QPLAB_INV_PATH_MAX];
	char device[QPLAB_INV_NAME_MAX];
	int port;                              /* 1..255, default 1 */
	char netdev[QPLAB_INV_NAME_MAX];
	char address[QPLAB_INV_VALUE_MAX];
	bool ipv6;                             /* address is an IPv6 address */
	bool lab_host;
	char ssh_netdev[QPLAB_INV_NAME_MAX];   /* "" = not given */
	unsigned faults;                       /* enum qplab_inv_fault bits */
};

struct qplab_inventory {
	char *file;
	struct qplab_inv_host hosts[QPLAB_MAX_HOSTS];
	size_t nhosts;
};

/* Parses an inventory (text, len bytes; file names it in messages).
 * Returns 0 with *out (qplab_inventory_free it), or
 * QPHS_ERR_INVALID_ARGUMENT / QPHS_ERR_MALFORMED_JSON / QPHS_ERR_MEMORY
 * with "FILE:LINE: message" lines appended to errs, in line order. */
int qplab_inventory_parse(const char *file, const char *text, size_t len,
			  struct qplab_inventory **out, struct qplab_errors *errs);
/* Reads and parses the file at path. */
int qplab_inventory_load(const char *path, struct qplab_inventory **out,
			 struct qplab_errors *errs);
void qplab_inventory_free(struct qplab_inventory *inv);

/* The host that plays scenario host name, or NULL. */
const struct qplab_inv_host *qplab_inventory_host(const struct qplab_inventory *inv,
						  const char *name);

/* "link", "netem", ...: the fault's word in the inventory. */
const char *qplab_inv_fault_name(enum qplab_inv_fault f);

/* Whether fault f may run on h; when not, why (reason, len bytes).  A
 * fault runs only on a lab host that allows it and whose ssh session does
 * not use the lab netdev. */
bool qplab_inv_fault_allowed(const struct qplab_inv_host *h, enum qplab_inv_fault f,
			     char *reason, size_t len);

/* Whether plan p can run on inv: every host it names is in the inventory,
 * and every fault it makes (steps, host MTUs and the links' netem) is
 * allowed where it runs.  false with the SKIP reason otherwise. */
bool qplab_inventory_fits(const struct qplab_inventory *inv, const struct qplab_plan *p,
			  char *reason, size_t len);

/* The ssh command that runs remote (NULL-ended words) on h: "ssh", the
 * runner's own options first (BatchMode=yes, ServerAlive*: ssh keeps the
 * first value it is given, so an inventory cannot turn them off), then
 * the inventory's, the destination after "--", and the remote words
 * single-quoted for the remote shell as one argument.  Returns a
 * NULL-ended argv (free with qplab_inv_argv_free), or NULL (no memory). */
char **qplab_inv_ssh_argv(const struct qplab_inv_host *h, const char *const *remote);
void qplab_inv_argv_free(char **argv);

/* s quoted for a POSIX shell ('...', a ' as '\''), malloc'd; NULL on no
 * memory. */
char *qplab_inv_shell_quote(const char *s);

#endif
