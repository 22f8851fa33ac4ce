// Modules and libraries, and kernels written in Go. The fake compiles
// nothing: it loads an image (PTX text, a cubin, a fatbin) that a driver
// would parse, and resolves an entry name to the Go function a test
// registered under that name (fakecuda_kernel_register); a launch of it
// runs that function on the stream's worker, through the callback the Go
// side installed (fakecuda_set_kernel_runner). PTX says which entries a
// module has and their parameters (the .param list gives
// cuFuncGetParamInfo's layout); of a binary image only the headers are
// read: every registered name resolves in it, with the parameter sizes
// given at registration, if any.
//
// What a driver refuses is refused with its result: PTX whose first
// directives are not .version MAJOR.MINOR and .target NAME
// (CUDA_ERROR_INVALID_PTX); an ELF that is not a sane ELF64 for EM_CUDA,
// or whose section and program header tables or sections lie outside
// the image, and a fatbin whose header is not sane or whose entries do
// not tile it (CUDA_ERROR_INVALID_IMAGE); a fatbin of no entries
// (CUDA_ERROR_NO_BINARY_FOR_GPU). cuModuleLoadData takes no length: as
// the driver, the fake takes a binary image's size from its headers, and
// reads them without faulting where they point outside mapped memory.
// Simpler than the driver: the entries of a fatbin (compressed, mostly)
// and the sections of an ELF are not read. Where the Go side installed a
// PTX checker (fakecuda_set_ptx_checker), it reads a module's whole PTX
// as it loads, and its answer (CUDA_ERROR_INVALID_PTX for malformed text)
// is the load's; before the first launch of an entry of PTX it compiles
// the entry, and an entry it cannot run fails that launch, leaving the
// context usable.
//
// A Go kernel reaches device memory through accessors that call
// fakecuda_kernel_pin (the range must lie in one live allocation, which
// then stays mapped until the kernel's op completes, whatever the host
// frees meanwhile) and fakecuda_note_access (the race detector's input).
// A kernel that fails (an access outside every allocation, a panic) leaves
// its context with a sticky error, as a faulting kernel does on a GPU:
// synchronizing calls report it until the context is destroyed or reset.
#include "fake.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

// ---- the registry of Go kernels (by name) ----

struct reg {
	struct reg *next;
	char *name;
	int nsizes; // -1: sizes not given
	unsigned *sizes;
};

static struct reg *g_regs; // under g_mu

static struct reg *reg_find(const char *name) {
	for (struct reg *r = g_regs; r != NULL; r = r->next)
		if (strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

static void reg_free(struct reg *r) {
	free(r->name);
	free(r->sizes);
	free(r);
}

// reg_remove unlinks and frees name's entry, and reports whether it had one.
static int reg_remove(const char *name) {
	for (struct reg **p = &g_regs; *p != NULL; p = &(*p)->next) {
		if (strcmp((*p)->name, name) == 0) {
			struct reg *old = *p;
			*p = old->next;
			reg_free(old);
			return 1;
		}
	}
	return 0;
}

// fakecuda_kernel_register makes name resolvable in every module that
// has such an entry, and in every binary image; nsizes >= 0 gives the
// parameter sizes for binary images (PTX's own list wins). A name
// registered again takes the new sizes. It returns 0, or -1 for bad
// arguments.
EXPORT int fakecuda_kernel_register(const char *name, int nsizes, const unsigned *sizes) {
	if (name == NULL || *name == 0 || (nsizes > 0 && sizes == NULL))
		return -1;
	for (int i = 0; i < nsizes; i++)
		if (sizes[i] == 0)
			return -1;
	struct reg *r = calloc(1, sizeof *r);
	if (r == NULL || (r->name = strdup(name)) == NULL)
		abort();
	r->nsizes = nsizes < 0 ? -1 : nsizes;
	if (nsizes > 0) {
		r->sizes = xrealloc(NULL, (size_t)nsizes * sizeof *r->sizes);
		memcpy(r->sizes, sizes, (size_t)nsizes * sizeof *sizes);
	}
	lock();
	reg_remove(name);
	r->next = g_regs;
	g_regs = r;
	unlock();
	return 0;
}

// fakecuda_kernel_unregister forgets name: lookups fail from now on;
// functions already resolved stay, and their launches fail when they run
// if the Go side has no kernel of that name then. It returns 0, or -1 if
// name was not registered.
EXPORT int fakecuda_kernel_unregister(const char *name) {
	lock();
	int found = reg_remove(name) ? 0 : -1;
	unlock();
	return found;
}

// ---- PTX: entries and their parameters ----

struct entry {
	char *name;
	unsigned n;
	unsigned *sizes, *aligns;
};

struct module {
	uint64_t h;
	struct ctx *ctx; // NULL for a library
	int binary;      // a cubin or fatbin: its entries are not listed
	int ptx_version;
	struct entry *entries;
	size_t nentries;
	struct func **funcs; // resolved, freed with the module
	size_t nfuncs;
	struct ptx_text *ptx; // the PTX of a module loaded from text
};

static uint64_t g_ptx_ids; // under the lock

void ptx_text_unref(struct ptx_text *t) {
	if (--t->refs == 0)
		free(t);
}

static int ident_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '%'; }

// strip_comments copies the PTX with its comments blanked, leaving string
// literals (file names of .file) alone.
static char *strip_comments(const char *src, size_t n) {
	char *s = xrealloc(NULL, n + 1);
	memcpy(s, src, n);
	s[n] = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"') {
			for (i++; i < n && s[i] != '"' && s[i] != '\n'; i++)
				if (s[i] == '\\' && i + 1 < n)
					i++;
		} else if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
			for (; i < n && s[i] != '\n'; i++)
				s[i] = ' ';
		} else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
			s[i] = s[i + 1] = ' ';
			for (i += 2; i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'); i++)
				if (s[i] != '\n')
					s[i] = ' ';
			if (i < n)
				s[i] = s[i + 1] = ' ';
			i++;
		}
	}
	return s;
}

// type_size is the size of a PTX fundamental type (".u32"), 0 if t is none.
static unsigned type_size(const char *t, size_t n) {
	static const struct {
		const char *name;
		unsigned size;
	} types[] = {
		{".b8", 1}, {".u8", 1}, {".s8", 1}, {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2},
		{".bf16", 2}, {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4}, {".f16x2", 4},
		{".bf16x2", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}, {".b128", 16},
		{".texref", 8}, {".samplerref", 8}, {".surfref", 8},
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strlen(types[i].name) == n && strncmp(types[i].name, t, n) == 0)
			return types[i].size;
	return 0;
}

// parse_param reads one declaration of a .param list, "[.param] [.align
// A] .type [.ptr [space] [.align P]] name[[N]]", into its size and
// alignment; -1 if it is none.
static int parse_param(const char *p, const char *end, unsigned *size, unsigned *align) {
	unsigned tsize = 0, al = 0, count = 1;
	int after_type = 0;
	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end)
			break;
		const char *t = p;
		if (*p == '[') {
			count = (unsigned)strtoul(p + 1, NULL, 10);
			while (p < end && *p != ']')
				p++;
			p++;
			continue;
		}
		while (p < end && (ident_char((unsigned char)*p) || *p == '.'))
			p++;
		if (p == t)
			return -1;
		size_t n = (size_t)(p - t);
		if (n == 6 && strncmp(t, ".align", 6) == 0) {
			unsigned v = (unsigned)strtoul(p, (char **)&p, 10);
			if (!after_type)
				al = v; // after .ptr: the pointee's alignment
		} else if (type_size(t, n) != 0 && !after_type) {
			tsize = type_size(t, n);
			after_type = 1;
		}
	}
	if (tsize == 0 || count == 0)
		return -1;
	*size = tsize * count;
	*align = al ? al : tsize;
	return 0;
}

// directive reports whether p starts with the directive d ended by a
// blank, and moves p past it and the blanks after it on its line.
static int directive(const char **p, const char *d) {
	size_t n = strlen(d);
	if (strncmp(*p, d, n) != 0 || ((*p)[n] != ' ' && (*p)[n] != '\t'))
		return 0;
	for (*p += n; **p == ' ' || **p == '\t';)
		(*p)++;
	return 1;
}

// ptx_header reads the directives every PTX module begins with, ".version
// MAJOR.MINOR" and ".target NAME[, ...]", from s, its comments blanked,
// and returns the version as 10*MAJOR+MINOR, or -1.
static int ptx_header(const char *s) {
	const char *p = s;
	while (isspace((unsigned char)*p))
		p++;
	if (!directive(&p, ".version") || !isdigit((unsigned char)*p))
		return -1;
	unsigned long major = strtoul(p, (char **)&p, 10);
	if (*p++ != '.' || !isdigit((unsigned char)*p))
		return -1;
	unsigned long minor = strtoul(p, (char **)&p, 10);
	if (major == 0 || major > 99 || minor > 9 || (*p != 0 && !isspace((unsigned char)*p)))
		return -1;
	while (isspace((unsigned char)*p))
		p++;
	if (!directive(&p, ".target") || !ident_char((unsigned char)*p))
		return -1;
	return (int)(major * 10 + minor);
}

// parse_ptx lists the .entry directives of text and their parameters. It
// returns -1 for text whose header does not parse.
static int parse_ptx(struct module *m, const char *text, size_t len) {
	char *s = strip_comments(text, len);
	m->ptx_version = ptx_header(s);
	if (m->ptx_version < 0) {
		free(s);
		return -1;
	}
	for (char *p = s; (p = strstr(p, ".entry")) != NULL;) {
		int bounded = (p == s || !ident_char((unsigned char)p[-1])) && !ident_char((unsigned char)p[6]);
		p += 6;
		if (!bounded)
			continue;
		while (isspace((unsigned char)*p))
			p++;
		char *name = p;
		while (ident_char((unsigned char)*p))
			p++;
		if (p == name)
			continue;
		struct entry e = {0};
		e.name = strndup(name, (size_t)(p - name));
		if (e.name == NULL)
			abort();
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '(') {
			char *close = strchr(p, ')');
			if (close == NULL)
				close = p + strlen(p);
			for (char *q = p + 1; q < close;) {
				char *comma = memchr(q, ',', (size_t)(close - q));
				char *stop = comma ? comma : close;
				unsigned size, align;
				if (parse_param(q, stop, &size, &align) == 0) {
					e.sizes = xrealloc(e.sizes, (e.n + 1) * sizeof *e.sizes);
					e.aligns = xrealloc(e.aligns, (e.n + 1) * sizeof *e.aligns);
					e.sizes[e.n] = size;
					e.aligns[e.n++] = align;
				}
				q = stop + 1;
			}
			p = close;
		}
		int dup = 0;
		for (size_t i = 0; i < m->nentries; i++)
			dup |= strcmp(m->entries[i].name, e.name) == 0;
		if (dup) { // a declaration and its definition
			free(e.name);
			free(e.sizes);
			free(e.aligns);
			continue;
		}
		m->entries = xrealloc(m->entries, (m->nentries + 1) * sizeof *m->entries);
		m->entries[m->nentries++] = e;
	}
	free(s);
	return 0;
}

// ---- binary images ----

// Sizes in the headers beyond this are taken for garbage, not read.
#define IMAGE_MAX ((uint64_t)1 << 32)

enum {
	MAGIC_ELF = 0x464c457f,
	MAGIC_FATBIN = 0xba55ed50,
	MAGIC_WRAPPER = 0x466243b1, // nvcc's __fatbinwrap, which points to a fatbin
	EM_CUDA = 190,
	ELF_EHDR = 64,
	ELF_SHDR = 64,
	ELF_PHDR = 56,
	SHT_NULL = 0,
	SHT_STRTAB = 3,
	SHT_NOBITS = 8,
	FATBIN_HDR = 16,
	FATBIN_ENTRY = 16, // the fields read: kind, version, header size, payload size
};

// peek copies the n bytes at image+off into buf, and reports whether it
// could: a header's offsets may point anywhere, and
// process_vm_readv fails where memcpy would fault. Where the system
// refuses process_vm_readv, it reads directly, as the driver does.
static int peek(const void *image, uint64_t off, void *buf, size_t n) {
	static int direct;
	const char *p = (const char *)image + off;
	if (!__atomic_load_n(&direct, __ATOMIC_RELAXED)) {
		struct iovec l = {buf, n}, r = {(void *)p, n};
		ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
		if (got == (ssize_t)n)
			return 1;
		if (got >= 0 || (errno != ENOSYS && errno != EPERM))
			return 0;
		__atomic_store_n(&direct, 1, __ATOMIC_RELAXED);
	}
	memcpy(buf, p, n);
	return 1;
}

static uint16_t le16(const unsigned char *b) { return (uint16_t)(b[0] | b[1] << 8); }
static uint32_t le32(const unsigned char *b) { return (uint32_t)le16(b) | (uint32_t)le16(b + 2) << 16; }
static uint64_t le64(const unsigned char *b) { return (uint64_t)le32(b) | (uint64_t)le32(b + 4) << 32; }

// within reports whether [off, off+n) lies in [0, limit).
static int within(uint64_t off, uint64_t n, uint64_t limit) { return off <= limit && n <= limit - off; }

// elf_check checks a cubin: an ELF64 header, little-endian, for EM_CUDA,
// an object or executable; a section table after the header, of 64-byte
// entries, starting with the null section, whose names' section is a
// string table holding every name; program headers of 56 bytes; and the
// tables, the sections' contents and the segments within limit bytes.
static CUresult elf_check(const void *image, uint64_t limit) {
	unsigned char h[ELF_EHDR];
	if (limit < ELF_EHDR || !peek(image, 0, h, ELF_EHDR))
		return CUDA_ERROR_INVALID_IMAGE;
	uint16_t type = le16(h + 16), machine = le16(h + 18), ehsize = le16(h + 52);
	uint64_t phoff = le64(h + 32), shoff = le64(h + 40);
	uint16_t phentsize = le16(h + 54), phnum = le16(h + 56);
	uint16_t shentsize = le16(h + 58), shnum = le16(h + 60), shstrndx = le16(h + 62);
	if (h[4] != 2 || h[5] != 1 || h[6] != 1 || (type != 1 && type != 2) || machine != EM_CUDA || ehsize != ELF_EHDR)
		return CUDA_ERROR_INVALID_IMAGE;
	if (shnum == 0 || shentsize != ELF_SHDR || shstrndx == 0 || shstrndx >= shnum || shoff < ELF_EHDR ||
		!within(shoff, (uint64_t)shnum * ELF_SHDR, limit))
		return CUDA_ERROR_INVALID_IMAGE;
	if (phnum > 0 && (phentsize != ELF_PHDR || phoff < ELF_EHDR || !within(phoff, (uint64_t)phnum * ELF_PHDR, limit)))
		return CUDA_ERROR_INVALID_IMAGE;
	size_t shbytes = (size_t)shnum * ELF_SHDR, phbytes = (size_t)phnum * ELF_PHDR;
	unsigned char *t = xrealloc(NULL, shbytes + phbytes);
	CUresult r = CUDA_ERROR_INVALID_IMAGE;
	if (!peek(image, shoff, t, shbytes) || (phnum > 0 && !peek(image, phoff, t + shbytes, phbytes)))
		goto out;
	if (le32(t + 4) != SHT_NULL)
		goto out;
	for (uint16_t i = 1; i < shnum; i++) {
		const unsigned char *sh = t + (size_t)i * ELF_SHDR;
		uint64_t off = le64(sh + 24), size = le64(sh + 32);
		if (le32(sh + 4) != SHT_NOBITS && size > 0 && (off < ELF_EHDR || !within(off, size, limit)))
			goto out;
	}
	const unsigned char *names = t + (size_t)shstrndx * ELF_SHDR;
	uint64_t noff = le64(names + 24), nsize = le64(names + 32);
	unsigned char last;
	if (le32(names + 4) != SHT_STRTAB || nsize == 0 || !peek(image, noff + nsize - 1, &last, 1) || last != 0)
		goto out;
	for (uint16_t i = 0; i < shnum; i++)
		if (le32(t + (size_t)i * ELF_SHDR) >= nsize)
			goto out;
	for (uint16_t i = 0; i < phnum; i++) {
		const unsigned char *ph = t + shbytes + (size_t)i * ELF_PHDR;
		if (!within(le64(ph + 8), le64(ph + 32), limit))
			goto out;
	}
	r = CUDA_SUCCESS;
out:
	free(t);
	return r;
}

// fatbin_check checks a fatbin: its header (version 1, a header of at
// least its 16 bytes, the entries' size), and entries, each a header of
// at least the fields read and a payload, that tile the size exactly,
// within limit bytes.
static CUresult fatbin_check(const void *image, uint64_t limit) {
	unsigned char h[FATBIN_HDR];
	if (limit < FATBIN_HDR || !peek(image, 0, h, FATBIN_HDR))
		return CUDA_ERROR_INVALID_IMAGE;
	uint16_t hsize = le16(h + 6);
	uint64_t size = le64(h + 8);
	if (le16(h + 4) != 1 || hsize < FATBIN_HDR || !within(hsize, size, limit))
		return CUDA_ERROR_INVALID_IMAGE;
	if (size == 0)
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	for (uint64_t off = 0; off < size;) {
		unsigned char e[FATBIN_ENTRY];
		if (size - off < FATBIN_ENTRY || !peek(image, hsize + off, e, FATBIN_ENTRY))
			return CUDA_ERROR_INVALID_IMAGE;
		uint32_t ehsize = le32(e + 4);
		uint64_t payload = le64(e + 8);
		if (ehsize < FATBIN_ENTRY || !within(ehsize, payload, size - off))
			return CUDA_ERROR_INVALID_IMAGE;
		off += ehsize + payload;
	}
	return CUDA_SUCCESS;
}

// image_check checks a binary image (one starting with an ELF, fatbin or
// wrapper magic) within limit bytes, and reports whether it is one in
// *binary.
static CUresult image_check(const void *image, uint64_t limit, int *binary) {
	unsigned char m[4];
	*binary = 1;
	if (limit >= 4 && peek(image, 0, m, 4)) {
		switch (le32(m)) {
		case MAGIC_ELF:
			return elf_check(image, limit);
		case MAGIC_FATBIN:
			return fatbin_check(image, limit);
		case MAGIC_WRAPPER: {
			// { int magic, version; const unsigned long long *data; void *filename_or_fatbins; }
			unsigned char w[16];
			if (limit < 16 || !peek(image, 0, w, 16) || (le32(w + 4) != 1 && le32(w + 4) != 2) || le64(w + 8) == 0)
				return CUDA_ERROR_INVALID_IMAGE;
			return fatbin_check((const void *)(uintptr_t)le64(w + 8), IMAGE_MAX);
		}
		}
	}
	*binary = 0;
	return CUDA_SUCCESS;
}

// ---- the Go side's checks of PTX ----

static fakecuda_ptx_checker g_checker; // atomic

// fakecuda_set_ptx_checker installs the Go side's callback, which reads a
// module's PTX as it loads and compiles an entry before its first launch,
// so that text the driver would refuse is refused by the load, and an
// entry the Go side cannot run fails its launch, not a later synchronize.
EXPORT void fakecuda_set_ptx_checker(fakecuda_ptx_checker fn) { __atomic_store_n(&g_checker, fn, __ATOMIC_RELEASE); }

struct check_job {
	fakecuda_ptx_checker fn;
	struct fakecuda_ptx_check call;
	int r;
};

static void *check_thread(void *arg) {
	struct check_job *j = arg;
	j->r = j->fn(&j->call);
	return NULL;
}

// ptx_check runs the checker on t (entry NULL: the whole text) and
// returns its answer; without a checker, everything passes. The checker
// runs on a thread of its own, the caller waiting: the calls that reach
// here (loads, launches) may come from cgo calls marked nocallback, on
// whose thread a call into Go is fatal. Not under the lock; t must stay
// referenced meanwhile.
static CUresult ptx_check(const struct ptx_text *t, const char *entry) {
	struct check_job j = {
		.fn = __atomic_load_n(&g_checker, __ATOMIC_ACQUIRE),
		.call = {.ptx = t->text, .ptx_len = t->len, .ptx_id = t->id, .entry = entry},
	};
	if (j.fn == NULL)
		return CUDA_SUCCESS;
	pthread_t th;
	if (pthread_create(&th, NULL, check_thread, &j) != 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_join(th, NULL);
	return (CUresult)j.r;
}

CUresult func_ready(uint64_t h) {
	if (driver_ready() != CUDA_SUCCESS)
		return CUDA_SUCCESS;
	lock();
	struct func *f = handle_get(h, K_FUNC);
	if (f == NULL || f->ptx == NULL || f->ptx_ok) {
		unlock();
		return CUDA_SUCCESS;
	}
	f->refs++; // f, its name and its PTX outlive an unload meanwhile
	unlock();
	CUresult r = ptx_check(f->ptx, f->name);
	lock();
	if (r == CUDA_SUCCESS)
		f->ptx_ok = 1;
	func_unref(f);
	unlock();
	return r;
}

// ---- modules ----

static void module_free(struct module *m);

// module_parse makes the module of image, of at most limit bytes, or
// returns the driver's refusal of it.
static CUresult module_parse(const void *image, uint64_t limit, struct module **out) {
	int binary;
	CUresult r = image_check(image, limit, &binary);
	if (r != CUDA_SUCCESS)
		return r;
	struct module *m = calloc(1, sizeof *m);
	if (m == NULL)
		abort();
	m->binary = binary;
	if (!binary && parse_ptx(m, image, strlen(image)) != 0) {
		free(m->entries);
		free(m);
		return CUDA_ERROR_INVALID_PTX;
	}
	if (!binary) {
		size_t n = strlen(image);
		struct ptx_text *t = malloc(sizeof *t + n + 1);
		if (t == NULL)
			abort();
		t->refs = 1;
		t->len = n;
		memcpy(t->text, image, n + 1);
		lock();
		t->id = ++g_ptx_ids;
		unlock();
		m->ptx = t;
		if ((r = ptx_check(t, NULL)) != CUDA_SUCCESS) {
			module_free(m);
			return r;
		}
	}
	*out = m;
	return CUDA_SUCCESS;
}

static void module_free(struct module *m) {
	for (size_t i = 0; i < m->nfuncs; i++) {
		handle_free(m->funcs[i]->h);
		func_unref(m->funcs[i]);
	}
	for (size_t i = 0; i < m->nentries; i++) {
		free(m->entries[i].name);
		free(m->entries[i].sizes);
		free(m->entries[i].aligns);
	}
	free(m->entries);
	free(m->funcs);
	if (m->ptx != NULL)
		ptx_text_unref(m->ptx);
	if (m->h != 0)
		handle_free(m->h);
	free(m);
}

// read_file reads a whole file, NUL-terminated (PTX is text), and gives
// its length.
static CUresult read_file(const char *path, char **out, size_t *len) {
	if (path == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return CUDA_ERROR_FILE_NOT_FOUND;
	size_t n = 0, cap = 1 << 16;
	char *buf = xrealloc(NULL, cap + 1);
	for (size_t got; (got = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
	}
	fclose(f);
	buf[n] = 0;
	if (n < 4) {
		free(buf);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	*out = buf;
	*len = n;
	return CUDA_SUCCESS;
}

// load makes a module (library: a library) of image, of at most limit
// bytes, in the current context; module loads, unlike library loads,
// need one.
static CUresult load(uint64_t *out, const void *image, uint64_t limit, int library) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL || image == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct module *m;
	if ((r = module_parse(image, limit, &m)) != CUDA_SUCCESS)
		return r;
	lock();
	struct ctx *c = NULL;
	if (!library)
		r = current_ctx(&c);
	if (r != CUDA_SUCCESS)
		module_free(m);
	else {
		m->ctx = c;
		m->h = handle_new(library ? K_LIBRARY : K_MODULE, m);
		g_live[L_MODULES]++;
		*out = m->h;
	}
	unlock();
	return r;
}

static CUresult load_file(uint64_t *out, const char *path, int library) {
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	char *image;
	size_t len;
	CUresult r = read_file(path, &image, &len);
	if (r != CUDA_SUCCESS)
		return r;
	r = load(out, image, len, library);
	free(image);
	return r;
}

// The JIT options of cuModuleLoadDataEx are accepted and ignored: the log
// buffers stay as the caller made them (the cuda package's are zeroed, so
// its logs read empty).
EXPORT CUresult cuModuleLoadData(uint64_t *module, const void *image) {
	ENTER(cuModuleLoadData);
	return load(module, image, IMAGE_MAX, 0);
}

EXPORT CUresult cuModuleLoadDataEx(uint64_t *module, const void *image, unsigned numOptions, int *options, void **values) {
	ENTER(cuModuleLoadDataEx);
	if (numOptions > 0 && (options == NULL || values == NULL))
		return CUDA_ERROR_INVALID_VALUE;
	return load(module, image, IMAGE_MAX, 0);
}

EXPORT CUresult cuModuleLoad(uint64_t *module, const char *fname) {
	ENTER(cuModuleLoad);
	return load_file(module, fname, 0);
}

EXPORT CUresult cuLibraryLoadData(uint64_t *library, const void *code, int *jitOptions, void **jitValues,
	unsigned numJitOptions, int *libOptions, void **libValues, unsigned numLibOptions) {
	ENTER(cuLibraryLoadData);
	(void)jitOptions, (void)jitValues, (void)numJitOptions, (void)libOptions, (void)libValues, (void)numLibOptions;
	return load(library, code, IMAGE_MAX, 1);
}

EXPORT CUresult cuLibraryLoadFromFile(uint64_t *library, const char *fileName, int *jitOptions, void **jitValues,
	unsigned numJitOptions, int *libOptions, void **libValues, unsigned numLibOptions) {
	ENTER(cuLibraryLoadFromFile);
	(void)jitOptions, (void)jitValues, (void)numJitOptions, (void)libOptions, (void)libValues, (void)numLibOptions;
	return load_file(library, fileName, 1);
}

static CUresult unload(uint64_t h, enum kind k) {
	struct module *m;
	CUresult r = locked_handle(h, k, CUDA_ERROR_INVALID_HANDLE, (void **)&m);
	if (r != CUDA_SUCCESS)
		return r;
	g_live[L_MODULES]--;
	module_free(m);
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(uint64_t h) {
	ENTER(cuModuleUnload);
	return unload(h, K_MODULE);
}

EXPORT CUresult cuLibraryUnload(uint64_t h) {
	ENTER(cuLibraryUnload);
	return unload(h, K_LIBRARY);
}

static void reap_module(void *obj, void *arg) {
	struct module *m = obj;
	if (m->ctx == arg) {
		g_live[L_MODULES]--;
		g_live[L_REAPED]++;
		module_free(m);
	}
}

void module_reap(struct ctx *c) { handle_each(K_MODULE, reap_module, c); }

// resolve finds name in m, or makes its function: an entry of m (any
// name, in a binary image) that a Go kernel is registered under. The same
// name gives the same function. Under the lock.
static CUresult resolve(struct module *m, const char *name, uint64_t *out) {
	for (size_t i = 0; i < m->nfuncs; i++) {
		if (strcmp(m->funcs[i]->name, name) == 0) {
			*out = m->funcs[i]->h;
			return CUDA_SUCCESS;
		}
	}
	const struct entry *e = NULL;
	for (size_t i = 0; i < m->nentries; i++)
		if (strcmp(m->entries[i].name, name) == 0)
			e = &m->entries[i];
	if (e == NULL && !m->binary)
		return CUDA_ERROR_NOT_FOUND;
	const struct reg *r = reg_find(name);
	if (r == NULL && e != NULL && m->ptx != NULL) {
		// no Go kernel: the Go side interprets the entry's PTX
		struct func *f = func_new();
		f->go = 1;
		f->regs = 32;
		f->ptx_version = m->ptx_version;
		f->name = strdup(name);
		if (f->name == NULL)
			abort();
		func_layout(f, e->n, e->sizes, e->aligns);
		f->ptx = m->ptx;
		m->ptx->refs++;
		f->h = handle_new(K_FUNC, f);
		m->funcs = xrealloc(m->funcs, (m->nfuncs + 1) * sizeof *m->funcs);
		m->funcs[m->nfuncs++] = f;
		*out = f->h;
		return CUDA_SUCCESS;
	}
	if (r == NULL) {
		fprintf(stderr, "fakecuda: the module has an entry %s, but no Go kernel is registered under that name "
			"(cudatest.RegisterKernel): CUDA_ERROR_NOT_FOUND\n", name);
		return CUDA_ERROR_NOT_FOUND;
	}
	struct func *f = func_new();
	f->go = 1;
	f->regs = 32;
	f->ptx_version = m->ptx_version;
	f->name = strdup(name);
	if (f->name == NULL)
		abort();
	if (e != NULL)
		func_layout(f, e->n, e->sizes, e->aligns);
	else if (r->nsizes >= 0)
		func_layout(f, (unsigned)r->nsizes, r->sizes, NULL);
	f->h = handle_new(K_FUNC, f);
	m->funcs = xrealloc(m->funcs, (m->nfuncs + 1) * sizeof *m->funcs);
	m->funcs[m->nfuncs++] = f;
	*out = f->h;
	return CUDA_SUCCESS;
}

static CUresult get_function(uint64_t *out, uint64_t h, enum kind k, const char *name) {
	if (out == NULL || name == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct module *m;
	CUresult r = locked_handle(h, k, CUDA_ERROR_INVALID_HANDLE, (void **)&m);
	if (r != CUDA_SUCCESS)
		return r;
	r = resolve(m, name, out);
	unlock();
	return r;
}

EXPORT CUresult cuModuleGetFunction(uint64_t *hfunc, uint64_t hmod, const char *name) {
	ENTER(cuModuleGetFunction);
	return get_function(hfunc, hmod, K_MODULE, name);
}

// A library's kernel (CUkernel) is its function: the fake has one per
// name, whichever context launches it, and cuLaunchKernel takes either.
EXPORT CUresult cuLibraryGetKernel(uint64_t *kernel, uint64_t lib, const char *name) {
	ENTER(cuLibraryGetKernel);
	return get_function(kernel, lib, K_LIBRARY, name);
}

EXPORT CUresult cuKernelGetFunction(uint64_t *hfunc, uint64_t kernel) {
	ENTER(cuKernelGetFunction);
	if (hfunc == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct func *f;
	CUresult r = locked_handle(kernel, K_FUNC, CUDA_ERROR_INVALID_HANDLE, (void **)&f);
	if (r != CUDA_SUCCESS)
		return r;
	*hfunc = f->h;
	unlock();
	return CUDA_SUCCESS;
}

// ---- running Go kernels ----

static fakecuda_kernel_runner g_runner; // atomic

// fakecuda_set_kernel_runner installs the Go side's callback, which runs
// a launch of a Go kernel and returns CUDA_SUCCESS or the error that the
// launch leaves sticky in its context.
EXPORT void fakecuda_set_kernel_runner(fakecuda_kernel_runner fn) { __atomic_store_n(&g_runner, fn, __ATOMIC_RELEASE); }

void kernel_run(struct op *op) {
	struct klaunch *k = op->k;
	lock();
	CUresult sticky = k->ctx->sticky;
	struct fakecuda_kernel_call call = {
		.op = op,
		.name = k->f->name,
		.shmem = k->shmem,
		.params_known = k->params_known,
		.nparams = k->nparams,
		.psize = k->f->psize,
		.poff = k->f->poff,
		.params = k->params,
		.bytes = k->bytes,
		.stream = k->stream,
		.ctx = k->ctx->h,
		.ptx = k->f->ptx != NULL ? k->f->ptx->text : NULL,
		.ptx_len = k->f->ptx != NULL ? k->f->ptx->len : 0,
		.ptx_id = k->f->ptx != NULL ? k->f->ptx->id : 0,
		.cooperative = k->cooperative,
	};
	unlock();
	if (sticky != CUDA_SUCCESS) // a GPU runs nothing more in a faulted context
		return;
	memcpy(call.grid, k->grid, sizeof call.grid);
	memcpy(call.block, k->block, sizeof call.block);
	fakecuda_kernel_runner fn = __atomic_load_n(&g_runner, __ATOMIC_ACQUIRE);
	CUresult r;
	if (fn == NULL) {
		fprintf(stderr, "fakecuda: kernel %s launched, but no Go side runs kernels in this process (cudatest sets it up)\n",
			k->f->name);
		r = CUDA_ERROR_LAUNCH_FAILED;
	} else
		r = fn(&call);
	if (r != CUDA_SUCCESS) {
		lock();
		if (k->ctx->sticky == CUDA_SUCCESS)
			k->ctx->sticky = r;
		unlock();
	}
}

void kernel_release(struct op *op) {
	klaunch_unref(op->k);
	op->k = NULL;
	for (size_t i = 0; i < op->npins; i++)
		alloc_put(op->pins[i]);
	if (op->pins != op->pin_buf)
		free(op->pins);
	op->pins = NULL;
	op->npins = op->cappins = 0;
}

// fakecuda_kernel_pin checks that the running kernel op may reach
// [ptr, ptr+n): it lies in one live allocation, which stays mapped until
// op completes. It gives that allocation's bounds, for the Go side to
// check later accesses against without calling here, and returns 0, or
// -1 if the range is in no allocation.
EXPORT int fakecuda_kernel_pin(void *token, unsigned long long ptr, size_t n, unsigned long long *base, size_t *size) {
	struct op *op = token;
	lock();
	struct alloc *a = alloc_find((const void *)(uintptr_t)ptr, n ? n : 1);
	if (a != NULL) {
		size_t i = 0;
		while (i < op->npins && op->pins[i] != a)
			i++;
		if (i == op->npins) {
			if (op->cappins == 0) {
				op->pins = op->pin_buf;
				op->cappins = sizeof op->pin_buf / sizeof op->pin_buf[0];
			} else if (op->npins == op->cappins) {
				struct alloc **old = op->pins;
				op->cappins *= 2;
				op->pins = xrealloc(old == op->pin_buf ? NULL : old, op->cappins * sizeof *op->pins);
				if (old == op->pin_buf)
					memcpy(op->pins, old, op->npins * sizeof *op->pins);
			}
			op->pins[op->npins++] = a;
			a->pending++;
		}
		*base = (unsigned long long)(uintptr_t)a->base;
		*size = a->size;
	}
	unlock();
	return a != NULL ? 0 : -1;
}
