/* flame — stack folding and an SVG flame graph for `make bench PROFILE=1`
 * (Debian ships no flame-graph tool).
 *
 *   flame fold  < SCRIPT > FOLDED    `perf script -F comm,ip,sym,dso` text
 *                                    in, one "comm;root;...;leaf COUNT" line
 *                                    per distinct stack out
 *   flame svg TITLE < FOLDED > SVG   the graph: one box per frame, width =
 *                                    its share of the samples, callers
 *                                    below callees; hover shows the count
 *   flame top N < FOLDED             the N costliest functions, by samples
 *                                    on CPU in them (self) and under them
 *                                    (total)
 *   flame split OWN [N [CPUS]] < FOLDED  the samples by whose code was on CPU
 *                                    (the kernel, our own functions: the
 *                                    names listed in file OWN, json-c, other
 *                                    user code) and by what the thread was
 *                                    doing (the outermost frame that names
 *                                    a kind of work: QP creation, TCP, ...);
 *                                    with N, each kind also as CPU ms per
 *                                    connection (samples / N: one sample is
 *                                    1 ms with perf record -c 1000000 on
 *                                    cpu-clock); with CPUS too, the work
 *                                    the comparison's rules fix (QP
 *                                    create, mmap and modify, the TCP
 *                                    calls) and the least time per
 *                                    connection it takes on CPUS CPUs
 *
 * Samples are counted, not weighted: record with a fixed period (perf
 * record -c), so every sample stands for the same CPU time.  Kernel
 * frames carry a " [k]" suffix.  Everything is bounded by the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 8192
#define MAX_DEPTH 256

static void *xalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		fprintf(stderr, "flame: out of memory\n");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xalloc(n), s, n);
}

/* ---- fold ---- */

struct stack {
	char *key;
	unsigned long n;
	struct stack *next;
};

#define BUCKETS 65536
static struct stack *table[BUCKETS];

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void count_stack(const char *key)
{
	struct stack **b = &table[hash(key) % BUCKETS], *s;

	for (s = *b; s; s = s->next)
		if (!strcmp(s->key, key)) {
			s->n++;
			return;
		}
	s = xalloc(sizeof(*s));
	s->key = xstrdup(key);
	s->n = 1;
	s->next = *b;
	*b = s;
}

/* "   addr sym+0x1f (dso)" -> "sym" (or "[dso]" when perf has no symbol),
 * " [k]" appended for the kernel.  Semicolons would split the frame. */
static void frame_name(char *line, char *out, size_t outlen)
{
	char *p = line, *dso = strrchr(line, '('), *end, *plus;
	int kernel = dso && strstr(dso, "kernel");

	while (*p == ' ' || *p == '\t')
		p++;
	while (*p && *p != ' ') /* the address */
		p++;
	while (*p == ' ')
		p++;
	end = dso && dso > p ? dso : p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\n'))
		end--;
	*end = '\0';
	plus = strrchr(p, '+');
	if (plus && plus[1] == '0' && plus[2] == 'x')
		*plus = '\0';
	if (!strcmp(p, "[unknown]") && dso) {
		char *slash = strrchr(dso, '/'), *close = strrchr(dso, ')');
		if (close)
			*close = '\0';
		p = slash ? slash + 1 : dso + 1;
		snprintf(out, outlen, p[0] == '[' ? "%s" : "[%s]", p);
	} else {
		/* A name cut to fit keeps its kernel mark. */
		size_t mark = kernel ? strlen(" [k]") : 0, n = strlen(p);

		if (n + mark >= outlen)
			n = outlen - 1 - mark;
		memcpy(out, p, n);
		memcpy(out + n, " [k]", mark);
		out[n + mark] = '\0';
	}
	for (char *c = out; *c; c++)
		if (*c == ';')
			*c = ':';
}

static void flush_sample(char *comm, char frames[][256], int depth)
{
	char key[MAX_DEPTH * 64];
	size_t off;

	if (!comm[0])
		return;
	off = (size_t)snprintf(key, sizeof(key), "%s", comm);
	for (int i = depth - 1; i >= 0 && off < sizeof(key); i--)
		off += (size_t)snprintf(key + off, sizeof(key) - off, ";%s", frames[i]);
	count_stack(key);
}

static int cmp_stack(const void *a, const void *b)
{
	return strcmp((*(struct stack *const *)a)->key, (*(struct stack *const *)b)->key);
}

static int fold(void)
{
	static char frames[MAX_DEPTH][256];
	char line[MAX_LINE], comm[256] = "";
	struct stack **all;
	size_t n = 0, i = 0;
	int depth = 0;

	while (fgets(line, sizeof(line), stdin)) {
		if (line[0] == '\n' || line[0] == '#') {
			flush_sample(comm, frames, depth);
			comm[0] = '\0';
			depth = 0;
		} else if (line[0] != ' ' && line[0] != '\t') {
			flush_sample(comm, frames, depth);
			snprintf(comm, sizeof(comm), "%.255s", line);
			for (char *e = comm + strlen(comm); e > comm && (e[-1] == ' ' || e[-1] == '\n');)
				*--e = '\0';
			for (char *c = comm; *c; c++)
				if (*c == ';' || *c == ' ')
					*c = '_';
			depth = 0;
		} else if (depth < MAX_DEPTH) {
			frame_name(line, frames[depth], sizeof(frames[depth]));
			depth++;
		}
	}
	flush_sample(comm, frames, depth);
	for (size_t b = 0; b < BUCKETS; b++)
		for (struct stack *s = table[b]; s; s = s->next)
			n++;
	all = xalloc((n + 1) * sizeof(*all));
	for (size_t b = 0; b < BUCKETS; b++)
		for (struct stack *s = table[b]; s; s = s->next)
			all[i++] = s;
	qsort(all, n, sizeof(*all), cmp_stack);
	for (i = 0; i < n; i++)
		printf("%s %lu\n", all[i]->key, all[i]->n);
	free(all);
	return 0;
}

/* ---- the tree of folded stacks ---- */

struct node {
	char *name;
	unsigned long total, self;
	struct node *kids, *sibling;
};

static struct node *child(struct node *parent, const char *name)
{
	struct node *k;

	for (k = parent->kids; k; k = k->sibling)
		if (!strcmp(k->name, name))
			return k;
	k = xalloc(sizeof(*k));
	k->name = xstrdup(name);
	k->sibling = parent->kids;
	parent->kids = k;
	return k;
}

/* Frees the nodes under root (the root itself is the caller's). */
static void free_kids(struct node *root)
{
	struct node *k = root->kids, *next;

	for (; k; k = next) {
		next = k->sibling;
		free_kids(k);
		free(k->name);
		free(k);
	}
	root->kids = NULL;
}

/* Reads FOLDED into root; returns 0 or -1 on a malformed line. */
static int read_folded(struct node *root)
{
	char line[MAX_LINE * 4];
	unsigned long lineno = 0;

	while (fgets(line, sizeof(line), stdin)) {
		char *sp = strrchr(line, ' '), *end, *frame, *save = NULL;
		struct node *n = root;
		unsigned long c;

		lineno++;
		if (!sp || (c = strtoul(sp + 1, &end, 10)) == 0 || (*end && *end != '\n')) {
			fprintf(stderr, "flame: line %lu is not \"stack count\"\n", lineno);
			return -1;
		}
		*sp = '\0';
		root->total += c;
		for (frame = strtok_r(line, ";", &save); frame; frame = strtok_r(NULL, ";", &save)) {
			n = child(n, frame);
			n->total += c;
		}
		n->self += c;
	}
	return 0;
}

static int cmp_node_name(const void *a, const void *b)
{
	return strcmp((*(struct node *const *)a)->name, (*(struct node *const *)b)->name);
}

/* ---- svg ---- */

#define SVG_W 1200.0
#define ROW 16
#define PAD 24

static void xml_text(const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", stdout); break;
		case '>': fputs("&gt;", stdout); break;
		case '&': fputs("&amp;", stdout); break;
		case '"': fputs("&quot;", stdout); break;
		default:
			if ((unsigned char)*s >= 0x20)
				putchar(*s);
		}
	}
}

static int max_depth(const struct node *n)
{
	int m = 0;

	for (const struct node *k = n->kids; k; k = k->sibling) {
		int d = 1 + max_depth(k);
		if (d > m)
			m = d;
	}
	return m;
}

/* Kernel frames orange, ours (qphs_, qplab) blue, the rest red-yellow;
 * the shade from the name, so a function keeps its colour. */
static void colour(const char *name, char *out, size_t len)
{
	unsigned v = (unsigned)(hash(name) % 60);

	if (strstr(name, " [k]"))
		snprintf(out, len, "rgb(230,%u,40)", 110 + v);
	else if (!strncmp(name, "qphs", 4) || !strncmp(name, "hs_", 3) || !strncmp(name, "qplab", 5))
		snprintf(out, len, "rgb(%u,%u,230)", 70 + v, 130 + v);
	else
		snprintf(out, len, "rgb(225,%u,%u)", 60 + 2 * v, 50 + v / 2);
}

static void draw(const struct node *n, double x, int depth, int height, unsigned long all)
{
	double w = SVG_W * (double)n->total / (double)all, y = PAD + (height - depth - 1) * ROW;
	struct node **kids;
	size_t nk = 0, i = 0;
	char fill[40];

	if (w < 0.3)
		return;
	colour(n->name, fill, sizeof(fill));
	printf("<g><title>");
	xml_text(n->name);
	printf(" (%lu samples, %.2f%%)</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
	       "height=\"%d\" fill=\"%s\" rx=\"2\"/>",
	       n->total, 100.0 * (double)n->total / (double)all, x, y, w, ROW - 1, fill);
	if (w > 21) {
		char label[256];
		size_t fit = (size_t)(w / 7);
		snprintf(label, sizeof(label), "%s", n->name);
		if (strlen(label) > fit && fit >= 3)
			strcpy(label + fit - 2, "..");
		printf("<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + ROW - 4);
		if (strlen(label) <= fit)
			xml_text(label);
		printf("</text>");
	}
	printf("</g>\n");
	for (const struct node *k = n->kids; k; k = k->sibling)
		nk++;
	kids = xalloc((nk + 1) * sizeof(*kids));
	for (struct node *k = n->kids; k; k = k->sibling)
		kids[i++] = k;
	qsort(kids, nk, sizeof(*kids), cmp_node_name);
	for (i = 0; i < nk; i++) {
		draw(kids[i], x, depth + 1, height, all);
		x += SVG_W * (double)kids[i]->total / (double)all;
	}
	free(kids);
}

static int svg(const char *title)
{
	struct node root = {.name = (char *)"all"};
	int height;

	if (read_folded(&root) != 0) {
		free_kids(&root);
		return 1;
	}
	if (!root.total) {
		fprintf(stderr, "flame: no samples\n");
		return 1;
	}
	height = max_depth(&root) + 1;
	printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%d\" "
	       "font-family=\"monospace\" font-size=\"11\">\n"
	       "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n<text x=\"4\" y=\"16\" "
	       "font-size=\"14\">",
	       SVG_W, PAD + height * ROW + 4);
	xml_text(title);
	printf(" (%lu samples)</text>\n", root.total);
	draw(&root, 0, 0, height, root.total);
	printf("</svg>\n");
	free_kids(&root);
	return 0;
}

/* ---- top ---- */

struct fn {
	char *name;
	unsigned long self, total;
	unsigned mark; /* the stack that last counted it in total */
};

static struct fn *fns;
static size_t nfns, capfns;

static struct fn *fn_of(const char *name)
{
	for (size_t i = 0; i < nfns; i++)
		if (!strcmp(fns[i].name, name))
			return &fns[i];
	if (nfns == capfns) {
		capfns = capfns ? 2 * capfns : 256;
		fns = realloc(fns, capfns * sizeof(*fns));
		if (!fns) {
			fprintf(stderr, "flame: out of memory\n");
			exit(1);
		}
	}
	memset(&fns[nfns], 0, sizeof(*fns));
	fns[nfns].name = xstrdup(name);
	return &fns[nfns++];
}

/* Walks every root-to-node path; a function counts once per path in total
 * (recursion is not counted twice), the node's own samples in self. */
static unsigned stamp;

static void tally(const struct node *n, const struct node **path, int depth)
{
	path[depth] = n;
	if (n->self) {
		stamp++;
		for (int i = 1; i <= depth; i++) { /* [0] is the comm */
			struct fn *f = fn_of(path[i]->name);
			if (f->mark != stamp) {
				f->mark = stamp;
				f->total += n->self;
			}
		}
		if (depth >= 1)
			fn_of(n->name)->self += n->self;
	}
	for (const struct node *k = n->kids; k && depth + 1 < MAX_DEPTH * 4; k = k->sibling)
		tally(k, path, depth + 1);
}

static int cmp_self(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	return x->self < y->self ? 1 : x->self > y->self ? -1 : 0;
}

static int cmp_total(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static int top(int n)
{
	static const struct node *path[MAX_DEPTH * 4 + 1];
	struct node root = {.name = (char *)"all"};

	if (read_folded(&root) != 0 || !root.total) {
		free_kids(&root);
		return 1;
	}
	for (const struct node *k = root.kids; k; k = k->sibling)
		tally(k, path, 0);
	qsort(fns, nfns, sizeof(*fns), cmp_self);
	printf("# %lu samples; self = on CPU in the function itself\n", root.total);
	for (size_t i = 0; i < nfns && (int)i < n; i++)
		printf("self  %6.2f%%  %s\n", 100.0 * (double)fns[i].self / (double)root.total,
		       fns[i].name);
	qsort(fns, nfns, sizeof(*fns), cmp_total);
	printf("# total = on CPU in the function or anything it called\n");
	for (size_t i = 0; i < nfns && (int)i < n; i++)
		printf("total %6.2f%%  %s\n", 100.0 * (double)fns[i].total / (double)root.total,
		       fns[i].name);
	free_kids(&root);
	return 0;
}

/* ---- split ---- */

/* What a sample's thread was doing: the first kind in this table's order
 * one of whose functions is anywhere on its stack (so a QP creation inside
 * the verbs ioctl is a QP creation, and a softirq run inside a TCP send is
 * that send's).  Kernel function names of Linux 6.x/7.x (x86_64). */
static const struct kind {
	const char *name;
	const char *fns[10];
	/* Work that the comparison's frozen rules fix for a setup of ours:
	 * the QPs of Mooncake's shape created, mapped and taken to RTS, and
	 * the kernel's side of the protocol's TCP calls (floor, below). */
	int fixed;
} kinds[] = {
	{"QP create (verbs ioctl: rxe's queues allocated and zeroed)",
	 {"ib_uverbs_handler_UVERBS_METHOD_QP_CREATE", "rxe_create_qp"}, 1},
	{"QP modify", {"ib_uverbs_modify_qp", "ib_uverbs_ex_modify_qp", "rxe_modify_qp"}, 1},
	{"QP destroy", {"ib_uverbs_handler_UVERBS_METHOD_QP_DESTROY", "rxe_destroy_qp"}, 0},
	{"mmap/munmap (the provider maps rxe's queues)", {"ksys_mmap_pgoff", "__vm_munmap"}, 1},
	{"other verbs calls", {"ib_uverbs_ioctl", "ib_uverbs_write"}, 0},
	/* rdma_cm's calls (rdma-core's cmtime, the yardstick): its write()s
	 * on /dev/infiniband/rdma_cm; the teardown ones apart. */
	{"rdma_cm: disconnect, destroy id", {"ucma_disconnect", "ucma_destroy_id"}, 0},
	{"rdma_cm: other calls (resolve, connect, accept, events)", {"ucma_write"}, 0},
	{"rdma_cm: CM and MAD work (workqueues)", {"cm_work_handler", "cma_work_handler",
						   "ib_mad_completion_handler", "ib_mad_send_done",
						   "timeout_sends", "ib_mad_recv_done"}, 0},
	{"TCP: connect", {"__sys_connect"}, 1},
	{"TCP: accept", {"__sys_accept4"}, 1},
	{"TCP: send", {"__sys_sendto", "__sys_sendmsg"}, 1},
	{"TCP: recv", {"__sys_recvfrom", "__sys_recvmsg"}, 1},
	{"TCP: socket, close", {"__sys_socket", "sock_close"}, 1},
	{"TCP: options", {"__sys_setsockopt", "__sys_getsockopt"}, 0},
	{"epoll", {"do_epoll_wait", "do_epoll_ctl"}, 0},
	/* cmtime's main thread yields in a loop until every connection of a
	 * step completed (rdma-core 44, librdmacm/examples/cmtime.c,
	 * run_client): busy on the CPU, waiting in effect. */
	{"waiting: sched_yield loop", {"__x64_sys_sched_yield", "do_sched_yield"}, 0},
	{"threads, page faults, madvise", {"__x64_sys_clone", "__x64_sys_clone3", "__x64_sys_exit",
					   "asm_exc_page_fault", "__x64_sys_madvise",
					   "__x64_sys_mprotect"}, 0},
	{"waiting (futex, poll, sleep)", {"__x64_sys_futex", "__x64_sys_poll", "__x64_sys_ppoll",
					  "__x64_sys_nanosleep", "__x64_sys_clock_nanosleep"}, 0},
	{"softirq (network, rxe, timers)", {"handle_softirqs", "run_ksoftirqd"}, 0},
	{"kernel workqueues", {"worker_thread"}, 0},
	{"idle", {"do_idle"}, 0},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static int frame_is(const char *frame, const char *fn)
{
	size_t n = strlen(fn);

	return !strncmp(frame, fn, n) && (!frame[n] || !strcmp(frame + n, " [k]"));
}

/* The kind of a stack of n frames: the index in kinds, NKINDS when none
 * matches and no frame is the kernel's (user code running), NKINDS + 1
 * otherwise. */
static size_t kind_of(char *const *frames, int n)
{
	int kernel = 0;

	for (size_t k = 0; k < NKINDS; k++)
		for (int f = 0; f < n; f++)
			for (int i = 0; i < 10 && kinds[k].fns[i]; i++)
				if (frame_is(frames[f], kinds[k].fns[i]))
					return k;
	for (int f = 0; f < n && !kernel; f++)
		kernel = strlen(frames[f]) > 4 && !strcmp(frames[f] + strlen(frames[f]) - 4, " [k]");
	return kernel ? NKINDS + 1 : NKINDS;
}

/* Waiting for a kernel lock that another thread holds (mmap's lock when
 * many threads map queues at once, a spinlock): paid because the calls
 * run concurrently, so the floor below leaves it out. */
static const char *const lock_waits[] = {
	"rwsem_down_write_slowpath", "rwsem_down_read_slowpath", "rwsem_spin_on_owner",
	"osq_lock", "mutex_spin_on_owner", "__mutex_lock", "native_queued_spin_lock_slowpath",
	"__pv_queued_spin_lock_slowpath"};

static int waits_for_lock(char *const *frames, int n)
{
	for (int f = 0; f < n; f++)
		for (size_t i = 0; i < sizeof(lock_waits) / sizeof(lock_waits[0]); i++)
			if (frame_is(frames[f], lock_waits[i]))
				return 1;
	return 0;
}

/* OWN: one function name per line (nm's names of our library). */
static char **own;
static size_t nown;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_own(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t cap = 0;

	if (!f) {
		fprintf(stderr, "flame: %s: cannot read\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0])
			continue;
		if (nown == cap) {
			char **n = realloc(own, (cap = cap ? 2 * cap : 256) * sizeof(*own));
			if (!n) {
				fclose(f);
				return -1;
			}
			own = n;
		}
		own[nown++] = xstrdup(line);
	}
	fclose(f);
	qsort(own, nown, sizeof(*own), cmp_str);
	return 0;
}

enum { W_KERNEL, W_OWN, W_JSONC, W_USER, W_COUNT };
static const char *const whose_name[W_COUNT] = {
	"the kernel", "our own functions (OWN)", "json-c", "other user code (libc, libibverbs, "
	"the rxe provider, the program; [unknown] frames)"};

static int whose(const char *leaf)
{
	size_t n = strlen(leaf);

	if (n > 4 && !strcmp(leaf + n - 4, " [k]"))
		return W_KERNEL;
	if (nown && bsearch(&leaf, own, nown, sizeof(*own), cmp_str))
		return W_OWN;
	if (!strncmp(leaf, "json_", 5) || !strncmp(leaf, "lh_", 3) || !strncmp(leaf, "printbuf_", 9) ||
	    !strncmp(leaf, "array_list_", 11))
		return W_JSONC;
	return W_USER;
}

/* per > 0: each kind also as CPU ms per connection; cpus > 0 as well: the
 * fixed work's floor, the least time per connection that this much CPU
 * takes on that many CPUs, whatever else the setup does. */
static int split(const char *own_path, long per, long cpus)
{
	unsigned long by_whose[W_COUNT] = {0}, by_kind[NKINDS + 2] = {0}, all = 0, fixed_lock = 0;
	static char *frames[MAX_DEPTH];
	char line[MAX_LINE * 4];
	unsigned long lineno = 0;

	if (read_own(own_path))
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		char *sp = strrchr(line, ' '), *end, *frame, *save = NULL;
		unsigned long c;
		int n = 0;

		lineno++;
		if (!sp || (c = strtoul(sp + 1, &end, 10)) == 0 || (*end && *end != '\n')) {
			fprintf(stderr, "flame: line %lu is not \"stack count\"\n", lineno);
			return 1;
		}
		*sp = '\0';
		/* The first frame is the thread's name (comm): not a function. */
		frame = strtok_r(line, ";", &save);
		while ((frame = strtok_r(NULL, ";", &save)) && n < MAX_DEPTH)
			frames[n++] = frame;
		size_t k = kind_of(frames, n);

		all += c;
		by_kind[k] += c;
		if (k < NKINDS && kinds[k].fixed && waits_for_lock(frames, n))
			fixed_lock += c;
		by_whose[n ? whose(frames[n - 1]) : W_USER] += c;
	}
	if (!all)
		return 1;
	printf("# %lu samples; whose code was on CPU\n", all);
	for (int w = 0; w < W_COUNT; w++)
		printf("whose %6.2f%%  %s\n", 100.0 * (double)by_whose[w] / (double)all, whose_name[w]);
	printf("# what the thread was doing (the first kind, in this order, on its stack)\n");
	for (size_t k = 0; k < NKINDS + 2; k++) {
		const char *name = k < NKINDS	 ? kinds[k].name
				   : k == NKINDS ? "user code, no kernel frame"
						 : "other kernel work (interrupts, scheduling, ...)";
		if (!by_kind[k])
			continue;
		if (per > 0)
			printf("what  %6.2f%%  %7.3f ms/conn  %s\n",
			       100.0 * (double)by_kind[k] / (double)all,
			       (double)by_kind[k] / (double)per, name);
		else
			printf("what  %6.2f%%  %s\n", 100.0 * (double)by_kind[k] / (double)all, name);
	}
	if (per > 0 && cpus > 0) {
		unsigned long fixed = 0;

		for (size_t k = 0; k < NKINDS; k++)
			fixed += kinds[k].fixed ? by_kind[k] : 0;
		printf("# fixed by the rules: QP create, mmap, QP modify, TCP connect, accept, send,"
		       " recv, socket, close; less the waits for kernel locks in them\n");
		printf("fixed %6.2f%%  %7.3f ms/conn of CPU (%.3f of it waiting for locks); on %ld "
		       "CPUs at least %.3f ms per connection\n",
		       100.0 * (double)fixed / (double)all, (double)fixed / (double)per,
		       (double)fixed_lock / (double)per, cpus,
		       (double)(fixed - fixed_lock) / (double)per / (double)cpus);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "fold"))
		return fold();
	if (argc == 3 && !strcmp(argv[1], "svg"))
		return svg(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "top") && atoi(argv[2]) > 0)
		return top(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "split"))
		return split(argv[2], 0, 0);
	if (argc == 4 && !strcmp(argv[1], "split") && atol(argv[3]) > 0)
		return split(argv[2], atol(argv[3]), 0);
	if (argc == 5 && !strcmp(argv[1], "split") && atol(argv[3]) > 0 && atol(argv[4]) > 0)
		return split(argv[2], atol(argv[3]), atol(argv[4]));
	fprintf(stderr,
		"usage: flame fold | flame svg TITLE | flame top N | flame split OWN [N [CPUS]]\n");
	return 2;
}
