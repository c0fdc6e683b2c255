// datinfo: which dat.conf libdat reads and why, whether each entry can be
// opened here and why not, an IA's attributes, and the environment the
// library reads. See datinfo(1).
//
// The answers come from libdat itself, so they cannot drift from what a
// program's dat_ia_open sees: the entries are opened with dat_ia_open, the
// registry is loaded by dat_registry_list_providers, and the library's own
// log (GODAT_LOG=debug into a private file) says which file it read, which
// lines it skipped as malformed and why an open failed. The log lines read
// here are listed beside core.LoadRegistry and in export/ia.go; this program
// parses dat.conf itself only to show each line's fields.

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dat/udat.h>

#include "env.h"

#define MAX_LINE_FIELDS 16

// ---- the library's log ------------------------------------------------------

struct logline {
	char level[8];
	char *msg;
};

struct loglines {
	struct logline *v;
	size_t n, cap;
};

static int log_fd = -1;
static char log_path[4096];
static char *log_carry; // a partial line read before the library finished it
static size_t log_carry_len;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("datinfo: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		die("out of memory");
	return d;
}

static void log_cleanup(void)
{
	if (log_path[0])
		unlink(log_path);
	free(log_carry);
	log_carry = NULL;
}

// log_setup sends the library's log, at debug level, to a private file.
// It must run before the first DAT call: the library reads its logging
// configuration once.
static void log_setup(void)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(log_path, sizeof log_path, "%s/datinfo-XXXXXX", tmp);
	log_fd = mkstemp(log_path);
	if (log_fd < 0)
		die("cannot create a file in %s for libdat's log: %s", tmp, strerror(errno));
	atexit(log_cleanup);
	setenv("GODAT_LOG", "debug", 1);
	setenv("GODAT_LOG_FILE", log_path, 1);
}

static void loglines_free(struct loglines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].msg);
	free(l->v);
	memset(l, 0, sizeof *l);
}

// log_take appends to out the lines the library wrote since the last call,
// without the "godat: LEVEL: " prefix.
static void log_take(struct loglines *out)
{
	char buf[8192];
	ssize_t k;
	while ((k = read(log_fd, buf, sizeof buf)) > 0) {
		log_carry = xrealloc(log_carry, log_carry_len + (size_t)k);
		memcpy(log_carry + log_carry_len, buf, (size_t)k);
		log_carry_len += (size_t)k;
	}
	size_t start = 0;
	for (size_t i = 0; i < log_carry_len; i++) {
		if (log_carry[i] != '\n')
			continue;
		char *line = xstrndup(log_carry + start, i - start);
		start = i + 1;
		struct logline ll = {{0}, line};
		char *p = line;
		if (strncmp(p, "godat: ", 7) == 0) {
			p += 7;
			char *colon = strstr(p, ": ");
			if (colon && colon - p < (ptrdiff_t)sizeof ll.level) {
				memcpy(ll.level, p, (size_t)(colon - p));
				p = colon + 2;
			}
		}
		memmove(line, p, strlen(p) + 1);
		if (out->n == out->cap) {
			out->cap = out->cap ? 2 * out->cap : 16;
			out->v = xrealloc(out->v, out->cap * sizeof *out->v);
		}
		out->v[out->n++] = ll;
	}
	memmove(log_carry, log_carry + start, log_carry_len - start);
	log_carry_len -= start;
}

// registry_line tells whether a log line is the registry being loaded
// again (every dat_ia_open reads dat.conf): shown once, not per open.
static int registry_line(const char *msg)
{
	return strncmp(msg, "registry: search path ", 22) == 0 ||
	       strncmp(msg, "registry: reading ", 18) == 0 ||
	       strncmp(msg, "registry: skipping malformed line ", 34) == 0;
}

// ---- the registry as the library loads it ---------------------------------

struct problem {
	long line;
	char *why;
};

struct registry {
	char **search; // candidates, in the library's order
	size_t nsearch;
	char *path;       // the file read; NULL when none exists
	char *unreadable; // the error when the file exists but cannot be read
	struct problem *problems;
	size_t nproblems;
	DAT_COUNT nproviders; // what dat_registry_list_providers lists
};

static const char *after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

static void registry_load(struct registry *reg)
{
	struct loglines l = {0};
	memset(reg, 0, sizeof *reg);
	DAT_COUNT n = 0;
	// A list too short for the entries: the library loads the registry,
	// logs it and reports the count.
	dat_registry_list_providers(0, &n, NULL);
	reg->nproviders = n;
	log_take(&l);
	for (size_t i = 0; i < l.n; i++) {
		const char *m = l.v[i].msg, *p;
		if ((p = after(m, "registry: search path "))) {
			reg->search = xrealloc(reg->search, (reg->nsearch + 1) * sizeof *reg->search);
			reg->search[reg->nsearch++] = xstrndup(p, strlen(p));
		} else if ((p = after(m, "registry: reading "))) {
			reg->path = xstrndup(p, strlen(p));
		} else if ((p = after(m, "registry: cannot read "))) {
			for (size_t j = 0; j < reg->nsearch; j++) {
				size_t k = strlen(reg->search[j]);
				if (strncmp(p, reg->search[j], k) == 0 && p[k] == ':') {
					reg->path = xstrndup(reg->search[j], k);
					reg->unreadable = xstrndup(p + k + 2, strlen(p + k + 2));
				}
			}
		} else if ((p = after(m, "registry: skipping malformed line ")) && reg->path) {
			size_t k = strlen(reg->path);
			if (strncmp(p, reg->path, k) != 0 || p[k] != ':')
				continue;
			char *end;
			long line = strtol(p + k + 1, &end, 10);
			if (strncmp(end, ": ", 2) != 0)
				continue;
			reg->problems = xrealloc(reg->problems, (reg->nproblems + 1) * sizeof *reg->problems);
			reg->problems[reg->nproblems++] = (struct problem){line, xstrndup(end + 2, strlen(end + 2))};
		}
	}
	loglines_free(&l);
}

static void registry_free(struct registry *reg)
{
	for (size_t i = 0; i < reg->nsearch; i++)
		free(reg->search[i]);
	for (size_t i = 0; i < reg->nproblems; i++)
		free(reg->problems[i].why);
	free(reg->search);
	free(reg->problems);
	free(reg->path);
	free(reg->unreadable);
	memset(reg, 0, sizeof *reg);
}

static const char *registry_problem(const struct registry *reg, long line)
{
	for (size_t i = 0; i < reg->nproblems; i++)
		if (reg->problems[i].line == line)
			return reg->problems[i].why;
	return NULL;
}

static const char *exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? "exists" : "not found";
}

static void registry_print(const struct registry *reg)
{
	const char *ovr = getenv("DAT_OVERRIDE");
	int override = ovr && *ovr;
	printf("registry: %s\n", reg->path ? reg->path : "none");
	if (override) {
		printf("  because DAT_OVERRIDE is set: it replaces the search of sysconfdir and /etc\n");
		if (!reg->path)
			printf("  DAT_OVERRIDE=%s does not exist\n", ovr);
	} else {
		if (reg->path)
			printf("  because DAT_OVERRIDE is not set and it is the first that exists of:\n");
		else
			printf("  because DAT_OVERRIDE is not set and none of these exists:\n");
		for (size_t i = 0; i < reg->nsearch; i++)
			printf("    %-40s %s%s\n", reg->search[i], exists(reg->search[i]),
			       i == 0 && reg->nsearch > 1 ? " (libdat's sysconfdir)" : "");
	}
	if (reg->unreadable)
		printf("  libdat cannot read it (%s): no IA can be opened\n", reg->unreadable);
	else if (!reg->path)
		printf("  no IA can be opened: dat_ia_open returns DAT_PROVIDER_NOT_FOUND for every name\n");
}

// ---- opening IAs ------------------------------------------------------------

static void print_return(DAT_RETURN r)
{
	const char *major = NULL, *minor = NULL;
	if (dat_strerror(r, &major, &minor) == DAT_SUCCESS && major) {
		printf("%s", major);
		if (minor && *minor && strcmp(minor, "DAT_NO_SUBTYPE") != 0)
			printf(" (%s)", minor);
	} else {
		printf("DAT_RETURN 0x%08x", (unsigned)r);
	}
}

struct opened {
	DAT_RETURN ret;
	DAT_IA_HANDLE ia;
	char *transport, *address; // from the library's "opened" line
	char *file;
	long line;
	struct loglines why; // the library's lines about this open
};

// ia_open opens name, keeping what the library said about it.
static void ia_open(const char *name, struct opened *o)
{
	struct loglines l = {0};
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	memset(o, 0, sizeof *o);
	o->ia = DAT_HANDLE_NULL;
	o->ret = dat_ia_open((const DAT_NAME_PTR)name, 8, &async, &o->ia);
	log_take(&l);
	for (size_t i = 0; i < l.n; i++) {
		char *m = l.v[i].msg;
		const char *p = after(m, "dat_ia_openv: ");
		char *opened = p ? strstr(p, "): opened ") : NULL;
		if (o->ret == DAT_SUCCESS && opened) {
			// "NAME (FILE:LINE): opened TRANSPORT, address ADDR"
			char *open_paren = strstr(p, " (");
			char *colon = opened;
			while (colon > p && colon[0] != ':')
				colon--;
			if (open_paren && colon > open_paren) {
				o->file = xstrndup(open_paren + 2, (size_t)(colon - open_paren - 2));
				o->line = strtol(colon + 1, NULL, 10);
			}
			const char *t = opened + 10;
			const char *comma = strstr(t, ", address ");
			if (comma) {
				o->transport = xstrndup(t, (size_t)(comma - t));
				o->address = xstrndup(comma + 10, strlen(comma + 10));
			}
			continue;
		}
		if (registry_line(m))
			continue;
		if (o->why.n == o->why.cap) {
			o->why.cap = o->why.cap ? 2 * o->why.cap : 8;
			o->why.v = xrealloc(o->why.v, o->why.cap * sizeof *o->why.v);
		}
		o->why.v[o->why.n++] = l.v[i];
		l.v[i].msg = NULL;
	}
	loglines_free(&l);
}

static void ia_close(struct opened *o)
{
	if (o->ret == DAT_SUCCESS)
		dat_ia_close(o->ia, DAT_CLOSE_ABRUPT_FLAG);
	struct loglines l = {0};
	log_take(&l); // the close's own debug lines
	loglines_free(&l);
	loglines_free(&o->why);
	free(o->transport);
	free(o->address);
	free(o->file);
}

static void print_reasons(const struct opened *o, const char *indent)
{
	for (size_t i = 0; i < o->why.n; i++)
		printf("%slibdat %s: %s\n", indent, o->why.v[i].level, o->why.v[i].msg);
}

// print_notes prints what the library said above debug level about an open
// that succeeded (a fallback and its reason).
static void print_notes(const struct opened *o, const char *indent)
{
	for (size_t i = 0; i < o->why.n; i++)
		if (strcmp(o->why.v[i].level, "debug") != 0)
			printf("%slibdat %s: %s\n", indent, o->why.v[i].level, o->why.v[i].msg);
}

// ---- dat.conf as text -----------------------------------------------------

// split_fields splits a dat.conf line as the library does: blanks separate
// fields, double quotes group, '#' outside quotes ends the line. Fields are
// written into buf (as long as the line). Returns the count, or -1 for an
// unterminated quote.
static int split_fields(const char *s, char *buf, char **f, int max)
{
	int n = 0, in_field = 0, in_quote = 0;
	char *w = buf;
	for (; *s; s++) {
		char c = *s;
		if (c == '"') {
			in_quote = !in_quote;
			if (!in_field && n < max)
				f[n] = w;
			in_field = 1;
		} else if (in_quote) {
			*w++ = c;
		} else if (c == '#') {
			break;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
			if (in_field) {
				*w++ = 0;
				n++;
				in_field = 0;
			}
		} else {
			if (!in_field && n < max)
				f[n] = w;
			*w++ = c;
			in_field = 1;
		}
	}
	if (in_quote)
		return -1;
	if (in_field) {
		*w = 0;
		n++;
	}
	return n;
}

// read_lines returns the lines of path (without their newline), or NULL.
static char **read_lines(const char *path, size_t *count)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return NULL;
	char **v = NULL, *line = NULL;
	size_t n = 0, cap = 0;
	ssize_t k;
	while ((k = getline(&line, &cap, fp)) >= 0) {
		if (k > 0 && line[k - 1] == '\n')
			line[--k] = 0;
		v = xrealloc(v, (n + 1) * sizeof *v);
		v[n++] = xstrndup(line, (size_t)k);
	}
	free(line);
	fclose(fp);
	*count = n;
	return v;
}

// ---- datinfo (no arguments) -------------------------------------------------

static int list_registry(const struct registry *reg);

static int list_entries(void)
{
	struct registry reg;
	registry_load(&reg);
	registry_print(&reg);
	int rc = 1;
	if (reg.path && !reg.unreadable)
		rc = list_registry(&reg);
	registry_free(&reg);
	return rc;
}

// list_registry prints every entry of the registry in force.
static int list_registry(const struct registry *reg)
{
	size_t nlines = 0;
	char **lines = read_lines(reg->path, &nlines);
	if (!lines) {
		printf("  datinfo cannot read it: %s\n", strerror(errno));
		return 1;
	}
	printf("\nentries (a DAT %d.%d program opens the first u%d.%d line of a name):\n",
	       DAT_VERSION_MAJOR, DAT_VERSION_MINOR, DAT_VERSION_MAJOR, DAT_VERSION_MINOR);
	int entries = 0, ok = 0, bad = 0, unused = 0, malformed = 0, user = 0;
	char **first_name = xrealloc(NULL, (nlines + 1) * sizeof *first_name);
	long *first_line = xrealloc(NULL, (nlines + 1) * sizeof *first_line);
	int nfirst = 0;
	for (size_t i = 0; i < nlines; i++) {
		long lineno = (long)i + 1;
		const char *why = registry_problem(reg, lineno);
		if (why) {
			printf("%s:%ld: malformed, skipped by libdat: %s\n", reg->path, lineno, why);
			malformed++;
			continue;
		}
		char *buf = xrealloc(NULL, strlen(lines[i]) + 1);
		char *f[MAX_LINE_FIELDS];
		int nf = split_fields(lines[i], buf, f, MAX_LINE_FIELDS);
		if (nf == 0) {
			free(buf);
			continue;
		}
		if (nf != 8) {
			// libdat accepted a line datinfo cannot split: say so
			// rather than guess (the two parsers disagree).
			printf("%s:%ld: datinfo cannot read this line (libdat did not report it)\n", reg->path, lineno);
			free(buf);
			continue;
		}
		entries++;
		const char *name = f[0], *version = f[1];
		unsigned major = 0, minor = 0;
		char kind = version[0];
		if (kind == 'u' || kind == 'k')
			sscanf(version + 1, "%u.%u", &major, &minor);
		if (kind == 'u')
			user++;
		if (kind == 'k') {
			printf("%s:%ld: %s: not for user programs: %s is a kernel (k) entry\n", reg->path, lineno, name, version);
			unused++;
		} else if (major != DAT_VERSION_MAJOR || minor != DAT_VERSION_MINOR) {
			printf("%s:%ld: %s: not for DAT %d.%d programs: API version %s (they open u%d.%d entries only)\n",
			       reg->path, lineno, name, DAT_VERSION_MAJOR, DAT_VERSION_MINOR, version,
			       DAT_VERSION_MAJOR, DAT_VERSION_MINOR);
			unused++;
		} else {
			int seen = -1;
			for (int j = 0; j < nfirst; j++)
				if (strcmp(first_name[j], name) == 0)
					seen = j;
			if (seen >= 0) {
				printf("%s:%ld: %s: not used: line %ld is the first u%d.%d entry for %s\n", reg->path, lineno,
				       name, first_line[seen], DAT_VERSION_MAJOR, DAT_VERSION_MINOR, name);
				unused++;
				free(buf);
				continue;
			}
			first_name[nfirst] = xstrndup(name, strlen(name));
			first_line[nfirst++] = lineno;
			struct opened o;
			ia_open(name, &o);
			if (o.ret == DAT_SUCCESS) {
				printf("%s:%ld: %s: ok: opens (%s, address %s)\n", reg->path, lineno, name,
				       o.transport ? o.transport : "?", o.address ? o.address : "?");
				if (o.file && (strcmp(o.file, reg->path) != 0 || o.line != lineno))
					printf("    but libdat opened %s:%ld for it\n", o.file, o.line);
				// Why a transport=verbs-or-auto entry fell back
				// to the software provider.
				print_notes(&o, "    ");
				ok++;
			} else {
				printf("%s:%ld: %s: cannot open: ", reg->path, lineno, name);
				print_return(o.ret);
				printf("\n");
				print_reasons(&o, "    ");
				bad++;
			}
			ia_close(&o);
		}
		free(buf);
	}
	printf("\n%d entries: %d open, %d cannot be opened, %d not used by DAT %d.%d programs; %d malformed lines\n",
	       entries, ok, bad, unused, DAT_VERSION_MAJOR, DAT_VERSION_MINOR, malformed);
	// dat_registry_list_providers lists the user entries of every
	// version: another count means the two parsers disagree.
	if (user != reg->nproviders)
		printf("note: libdat lists %d user entries, datinfo found %d\n", (int)reg->nproviders, user);
	for (int j = 0; j < nfirst; j++)
		free(first_name[j]);
	free(first_name);
	free(first_line);
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	free(lines);
	return ok > 0 ? 0 : 1;
}

// ---- datinfo -v IA ----------------------------------------------------------

static void put_str(const char *name, const char *v) { printf("  %-38s %s\n", name, v); }
static void put_u(const char *name, unsigned long long v) { printf("  %-38s %llu\n", name, v); }
static void put_i(const char *name, long long v) { printf("  %-38s %lld\n", name, v); }
static void put_x(const char *name, unsigned long long v) { printf("  %-38s 0x%llx\n", name, v); }
static void put_b(const char *name, DAT_BOOLEAN v)
{
	put_str(name, v == DAT_TRUE ? "DAT_TRUE" : v == DAT_FALSE ? "DAT_FALSE" : "(not a DAT_BOOLEAN)");
}

struct flagname {
	unsigned long long bit;
	const char *name;
};

static void put_flags(const char *name, unsigned long long v, const struct flagname *t, const char *zero)
{
	char out[512] = "";
	size_t len = 0;
	unsigned long long rest = v;
	for (; t->name; t++) {
		if (v & t->bit) {
			len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", len ? "|" : "", t->name);
			rest &= ~t->bit;
		}
	}
	if (rest)
		snprintf(out + len, sizeof out - len, "%s0x%llx", len ? "|" : "", rest);
	if (!v)
		snprintf(out, sizeof out, "%s", zero);
	printf("  %-38s %s (0x%llx)\n", name, out, v);
}

static void put_enum(const char *name, unsigned long long v, const struct flagname *t)
{
	for (; t->name; t++) {
		if (t->bit == v) {
			printf("  %-38s %s\n", name, t->name);
			return;
		}
	}
	put_x(name, v);
}

static void put_addr(const char *name, DAT_IA_ADDRESS_PTR a)
{
	char buf[INET6_ADDRSTRLEN] = "(none)";
	if (a && a->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)a)->sin_addr, buf, sizeof buf);
	else if (a && a->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)(void *)a)->sin6_addr, buf, sizeof buf);
	else if (a)
		snprintf(buf, sizeof buf, "(address family %d)", a->sa_family);
	put_str(name, buf);
}

static void put_named(const char *name, DAT_COUNT n, const DAT_NAMED_ATTR *a)
{
	put_i(name, n);
	for (DAT_COUNT i = 0; a && i < n; i++)
		printf("  %-38s %s=%s\n", "", a[i].name ? a[i].name : "", a[i].value ? a[i].value : "");
}

static void print_ia_attr(const DAT_IA_ATTR *a)
{
	printf("DAT_IA_ATTR\n");
	put_str("adapter_name", a->adapter_name);
	put_str("vendor_name", a->vendor_name);
	put_u("hardware_version_major", a->hardware_version_major);
	put_u("hardware_version_minor", a->hardware_version_minor);
	put_u("firmware_version_major", a->firmware_version_major);
	put_u("firmware_version_minor", a->firmware_version_minor);
	put_addr("ia_address_ptr", a->ia_address_ptr);
	put_i("max_eps", a->max_eps);
	put_i("max_dto_per_ep", a->max_dto_per_ep);
	put_i("max_rdma_read_per_ep_in", a->max_rdma_read_per_ep_in);
	put_i("max_rdma_read_per_ep_out", a->max_rdma_read_per_ep_out);
	put_i("max_evds", a->max_evds);
	put_i("max_evd_qlen", a->max_evd_qlen);
	put_i("max_iov_segments_per_dto", a->max_iov_segments_per_dto);
	put_i("max_lmrs", a->max_lmrs);
	put_u("max_lmr_block_size", a->max_lmr_block_size);
	put_x("max_lmr_virtual_address", a->max_lmr_virtual_address);
	put_i("max_pzs", a->max_pzs);
	put_u("max_message_size", a->max_message_size);
	put_u("max_rdma_size", a->max_rdma_size);
	put_i("max_rmrs", a->max_rmrs);
	put_x("max_rmr_target_address", a->max_rmr_target_address);
	put_i("max_srqs", a->max_srqs);
	put_i("max_ep_per_srq", a->max_ep_per_srq);
	put_i("max_recv_per_srq", a->max_recv_per_srq);
	put_i("max_iov_segments_per_rdma_read", a->max_iov_segments_per_rdma_read);
	put_i("max_iov_segments_per_rdma_write", a->max_iov_segments_per_rdma_write);
	put_i("max_rdma_read_in", a->max_rdma_read_in);
	put_i("max_rdma_read_out", a->max_rdma_read_out);
	put_b("max_rdma_read_per_ep_in_guaranteed", a->max_rdma_read_per_ep_in_guaranteed);
	put_b("max_rdma_read_per_ep_out_guaranteed", a->max_rdma_read_per_ep_out_guaranteed);
	put_named("num_transport_attr", a->num_transport_attr, a->transport_attr);
	put_named("num_vendor_attr", a->num_vendor_attr, a->vendor_attr);
}

static const struct flagname completion_flags[] = {
	{DAT_COMPLETION_SUPPRESS_FLAG, "DAT_COMPLETION_SUPPRESS_FLAG"},
	{DAT_COMPLETION_SOLICITED_WAIT_FLAG, "DAT_COMPLETION_SOLICITED_WAIT_FLAG"},
	{DAT_COMPLETION_UNSIGNALLED_FLAG, "DAT_COMPLETION_UNSIGNALLED_FLAG"},
	{DAT_COMPLETION_BARRIER_FENCE_FLAG, "DAT_COMPLETION_BARRIER_FENCE_FLAG"},
	{DAT_COMPLETION_EVD_THRESHOLD_FLAG, "DAT_COMPLETION_EVD_THRESHOLD_FLAG"},
	{0, NULL},
};
static const struct flagname qos_flags[] = {
	{DAT_QOS_HIGH_THROUGHPUT, "DAT_QOS_HIGH_THROUGHPUT"},
	{DAT_QOS_LOW_LATENCY, "DAT_QOS_LOW_LATENCY"},
	{DAT_QOS_ECONOMY, "DAT_QOS_ECONOMY"},
	{DAT_QOS_PREMIUM, "DAT_QOS_PREMIUM"},
	{0, NULL},
};
static const struct flagname iov_ownership[] = {
	{DAT_IOV_CONSUMER, "DAT_IOV_CONSUMER"},
	{DAT_IOV_PROVIDER_NOMOD, "DAT_IOV_PROVIDER_NOMOD"},
	{DAT_IOV_PROVIDER_MOD, "DAT_IOV_PROVIDER_MOD"},
	{0, NULL},
};
static const struct flagname ep_creator[] = {
	{DAT_PSP_CREATES_EP_NEVER, "DAT_PSP_CREATES_EP_NEVER"},
	{DAT_PSP_CREATES_EP_IFASKED, "DAT_PSP_CREATES_EP_IFASKED"},
	{DAT_PSP_CREATES_EP_ALWAYS, "DAT_PSP_CREATES_EP_ALWAYS"},
	{0, NULL},
};
static const struct flagname pz_support[] = {
	{DAT_PZ_UNIQUE, "DAT_PZ_UNIQUE"},
	{DAT_PZ_SHAREABLE, "DAT_PZ_SHAREABLE"},
	{0, NULL},
};

static void print_provider_attr(const DAT_PROVIDER_ATTR *a)
{
	static const char *streams[6] = {"SOFTWARE", "CR", "DTO", "CONNECTION", "RMR_BIND", "ASYNC"};
	printf("DAT_PROVIDER_ATTR\n");
	put_str("provider_name", a->provider_name);
	put_u("provider_version_major", a->provider_version_major);
	put_u("provider_version_minor", a->provider_version_minor);
	put_u("dapl_version_major", a->dapl_version_major);
	put_u("dapl_version_minor", a->dapl_version_minor);
	// DAT_MEM_TYPE values are 0, 1, 2, not bits: the reference
	// providers OR them into this field all the same.
	put_x("lmr_mem_types_supported", (unsigned long long)a->lmr_mem_types_supported);
	put_enum("iov_ownership_on_return", a->iov_ownership_on_return, iov_ownership);
	put_flags("dat_qos_supported", a->dat_qos_supported, qos_flags, "DAT_QOS_BEST_EFFORT");
	put_flags("completion_flags_supported", a->completion_flags_supported, completion_flags,
		  "DAT_COMPLETION_DEFAULT_FLAG");
	put_b("is_thread_safe", a->is_thread_safe);
	put_i("max_private_data_size", a->max_private_data_size);
	put_b("supports_multipath", a->supports_multipath);
	put_enum("ep_creator", a->ep_creator, ep_creator);
	put_enum("pz_support", a->pz_support, pz_support);
	put_u("optimal_buffer_alignment", a->optimal_buffer_alignment);
	int all = 1;
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 6; j++)
			all &= a->evd_stream_merging_supported[i][j] == DAT_TRUE;
	if (all) {
		put_str("evd_stream_merging_supported", "DAT_TRUE for every pair of streams");
	} else {
		for (int i = 0; i < 6; i++) {
			char row[128];
			int len = snprintf(row, sizeof row, "%-10s", streams[i]);
			for (int j = 0; j < 6 && len > 0 && (size_t)len < sizeof row; j++)
				len += snprintf(row + len, sizeof row - (size_t)len, " %d",
						a->evd_stream_merging_supported[i][j] == DAT_TRUE);
			put_str(i == 0 ? "evd_stream_merging_supported" : "", row);
		}
	}
	put_b("srq_supported", a->srq_supported);
	put_i("srq_watermarks_supported", a->srq_watermarks_supported);
	put_b("srq_ep_pz_difference_supported", a->srq_ep_pz_difference_supported);
	put_i("srq_info_supported", a->srq_info_supported);
	put_i("ep_recv_info_supported", a->ep_recv_info_supported);
	put_b("lmr_sync_req", a->lmr_sync_req);
	put_b("dto_async_return_guaranteed", a->dto_async_return_guaranteed);
	put_b("rdma_write_for_rdma_read_req", a->rdma_write_for_rdma_read_req);
	put_named("num_provider_specific_attr", a->num_provider_specific_attr, a->provider_specific_attr);
}

// malformed_entries_of points at the lines libdat skipped that look like
// entries for name (their first field), the usual cause of "not found".
static void malformed_entries_of(const struct registry *reg, const char *name)
{
	if (!reg->path || reg->unreadable)
		return;
	size_t nlines = 0;
	char **lines = read_lines(reg->path, &nlines);
	if (!lines)
		return;
	size_t len = strlen(name);
	for (size_t i = 0; i < nlines; i++) {
		const char *why = registry_problem(reg, (long)i + 1);
		const char *p = lines[i] + strspn(lines[i], " \t");
		if (why && strncmp(p, name, len) == 0 && (p[len] == ' ' || p[len] == '\t'))
			printf("  %s:%zu: an entry for %s, skipped by libdat as malformed: %s\n", reg->path, i + 1,
			       name, why);
		free(lines[i]);
	}
	free(lines);
}

static int show_opened(const struct registry *reg, const char *name);

static int show_ia(const char *name)
{
	struct registry reg;
	registry_load(&reg);
	registry_print(&reg);
	printf("\n");
	int rc = show_opened(&reg, name);
	registry_free(&reg);
	return rc;
}

// show_opened opens name and prints its attributes, or why it does not open.
static int show_opened(const struct registry *reg, const char *name)
{
	struct opened o;
	ia_open(name, &o);
	if (o.ret != DAT_SUCCESS) {
		printf("IA %s: cannot open: ", name);
		print_return(o.ret);
		printf("\n");
		print_reasons(&o, "  ");
		malformed_entries_of(reg, name);
		ia_close(&o);
		return 1;
	}
	printf("IA %s\n", name);
	if (o.file)
		printf("  %-38s %s:%ld\n", "entry", o.file, o.line);
	put_str("transport", o.transport ? o.transport : "?");
	put_str("address", o.address ? o.address : "?");
	print_notes(&o, "  ");
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR prov_attr;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	memset(&ia_attr, 0, sizeof ia_attr);
	memset((void *)&prov_attr, 0, sizeof prov_attr);
	DAT_RETURN r = dat_ia_query(o.ia, &async, DAT_IA_FIELD_ALL, &ia_attr, DAT_PROVIDER_FIELD_ALL, &prov_attr);
	if (r != DAT_SUCCESS) {
		printf("dat_ia_query: ");
		print_return(r);
		printf("\n");
		ia_close(&o);
		return 1;
	}
	printf("\n");
	print_ia_attr(&ia_attr);
	printf("\n");
	print_provider_attr(&prov_attr);
	ia_close(&o);
	return 0;
}

// ---- datinfo --env ------------------------------------------------------------

static int show_env(void)
{
	printf("environment variables libdat reads:\n");
	for (size_t i = 0; i < sizeof godat_env / sizeof godat_env[0]; i++) {
		const struct godat_env *e = &godat_env[i];
		const char *now = getenv(e->name);
		printf("\n%s\n", e->name);
		printf("    default: %s\n", *e->def ? e->def : "(unset)");
		if (now)
			printf("    set here: \"%s\"\n", now);
		else
			printf("    set here: no\n");
		printf("    %s\n", e->help);
	}
	return 0;
}

static void usage(FILE *to)
{
	fprintf(to, "usage: datinfo            list the dat.conf in force and whether each entry opens\n"
		    "       datinfo -v IA      open IA and print its attributes\n"
		    "       datinfo --env      list the environment variables libdat reads\n");
}

int main(int argc, char **argv)
{
	if (argc == 1) {
		log_setup();
		return list_entries();
	}
	if (argc == 3 && strcmp(argv[1], "-v") == 0) {
		log_setup();
		return show_ia(argv[2]);
	}
	if (argc == 2 && strcmp(argv[1], "--env") == 0)
		return show_env();
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
