// An emulated CUDA device for tests: the driver API functions and the cuBLAS
// functions toy's backend binds (kernels/cuda/driver.go), with the same
// names and C signatures, on host memory. Kernels run on the CPU from the
// same sources nvcc compiles (kernels.cc); each thread of a block is a
// fiber with its own small stack, so __syncthreads and warp shuffles are
// real barriers. Blocks run one after another on the calling OS thread.
//
// What it checks beyond running the code: the current context of the
// calling thread (as the driver, per OS thread), every device pointer a
// copy, a kernel argument or a GEMM operand names lies in a live
// allocation, launch geometry limits, kernel parameter sizes against the
// PTX entry, barrier divergence and deadlock, shuffles from a partial warp
// or with a partial mask. A fault inside a kernel fails cuLaunchKernel with
// CUDA_ERROR_LAUNCH_FAILED and, as on a GPU, every later call too; the
// detail is in cuGetErrorString's text.
#include <chrono>
#include <map>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <sys/mman.h>
#include <vector>

#include "emu.h"
#include "registry.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
	CUDA_ERROR_LAUNCH_FAILED = 719,
};

// ---- failure reporting ----------------------------------------------------

static std::string g_detail;    // what the last failure was, for cuGetErrorString
static CUresult g_detail_code;  // and its code
static CUresult g_sticky = 0;   // a kernel fault, returned by every later call
static char g_errbuf[2048];     // cuGetErrorString's text for a detailed failure

static CUresult fail(CUresult code, const char *fmt, ...) {
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	g_detail = buf;
	g_detail_code = code;
	if (getenv("TOY_CUDA_EMU_VERBOSE")) fprintf(stderr, "toy cuda emulator: %s\n", buf);
	return code;
}

// ---- fibers ---------------------------------------------------------------

#if defined(__x86_64__)
// emu_swap saves the callee-saved registers on the current stack, stores
// the stack pointer in *save and continues on the stack load (which holds
// the same frame). A new fiber's stack starts with such a frame whose
// return address is emu_fiber_entry. MXCSR and the x87 control word are
// not switched: the kernels never change them, so every fiber runs with
// the launching thread's (round to nearest).
extern "C" void emu_swap(void **save, void *load);
extern "C" void emu_fiber_entry();
extern "C" __attribute__((used, visibility("hidden"))) void emu_fiber_main();
asm(R"(
	.text
	.p2align 4
	.type emu_swap,@function
emu_swap:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size emu_swap, .-emu_swap
	.type emu_fiber_entry,@function
emu_fiber_entry:
	call emu_fiber_main
	ud2
	.size emu_fiber_entry, .-emu_fiber_entry
)");

struct Context {
	void *sp;
};

static void ctx_init(Context *c, char *stack, size_t size) {
	uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
	uint64_t *f = (uint64_t *)(top - 72); // r15 r14 r13 r12 rbx rbp, return address
	memset(f, 0, 48);
	f[6] = (uint64_t)(uintptr_t)emu_fiber_entry; // at top−24: after ret, rsp = top−16
	c->sp = f;
}

static void ctx_swap(Context *from, Context *to) { emu_swap(&from->sp, to->sp); }
#else
#include <ucontext.h>
extern "C" void emu_fiber_main();

struct Context {
	ucontext_t uc;
};

static void ctx_init(Context *c, char *stack, size_t size) {
	getcontext(&c->uc);
	c->uc.uc_stack.ss_sp = stack;
	c->uc.uc_stack.ss_size = size;
	c->uc.uc_link = nullptr;
	makecontext(&c->uc, (void (*)())emu_fiber_main, 0);
}

static void ctx_swap(Context *from, Context *to) { swapcontext(&from->uc, &to->uc); }
#endif

// ---- the block scheduler ----------------------------------------------------

enum ThreadState { RUNNING, AT_WARP_BARRIER, AT_BLOCK_BARRIER, EXITED };

struct Thread {
	Context ctx;
	emu_dim3 idx;
	int linear;
	ThreadState state;
};

struct Warp {
	int lanes;             // threads in this warp (32 unless the block's size is not a multiple of 32)
	int waiting;           // lanes at the current exchange
	unsigned gen;          // exchanges completed
	uint64_t slot[2][32];  // the values of exchange gen (slot[gen&1])
	const char *what;      // the intrinsic the first waiting lane called
};

static const size_t STACK = 32 << 10;
static char *g_stacks;        // STACK bytes per thread, a guard page below each
static size_t g_nstacks;
static std::vector<Thread> g_threads;
static std::vector<Warp> g_warps;
static int g_block_waiting, g_exited;
static Thread *g_cur;
static Context g_sched;
static const emu_kernel *g_kernel;
static void *const *g_args;
static bool g_fault;

emu_dim3 emu_grid_dim, emu_block_dim, emu_block_idx;
const emu_dim3 *emu_thread_idx;

extern "C" char __start_emu_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_emu_shared[] __attribute__((weak, visibility("hidden")));

int emu_lane() { return g_cur->linear % 32; }

// kernel_fault stops the block: the scheduler abandons its fibers and the
// launch fails.
static void kernel_fault(const char *fmt, ...) {
	char buf[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fail(CUDA_ERROR_LAUNCH_FAILED, "%s block (%u,%u,%u) thread %d: %s", g_kernel->name, emu_block_idx.x, emu_block_idx.y,
	     emu_block_idx.z, g_cur ? g_cur->linear : -1, buf);
	g_fault = true;
	Thread *t = g_cur;
	ctx_swap(&t->ctx, &g_sched); // never resumed
	abort();
}

// switch_from suspends thread t (waiting or exited) and runs the next
// runnable lane of its warp, or the scheduler when there is none; it
// returns when t is resumed.
static void switch_from(Thread *t) {
	int lanes = g_warps[t->linear / 32].lanes, base = t->linear - t->linear % 32, lane = t->linear - base;
	for (int k = 1; k < lanes; k++) {
		Thread *u = &g_threads[base + (lane + k) % lanes];
		if (u->state == RUNNING) {
			g_cur = u, emu_thread_idx = &u->idx;
			ctx_swap(&t->ctx, &u->ctx);
			return;
		}
	}
	ctx_swap(&t->ctx, &g_sched);
}

// block_until_released suspends the running thread until a barrier
// releases it.
static void block_until_released() { switch_from(g_cur); }

void emu_syncthreads() {
	Thread *t = g_cur;
	int n = (int)g_threads.size();
	if (++g_block_waiting == n) { // every thread arrived: release them
		g_block_waiting = 0;
		for (auto &u : g_threads)
			if (u.state == AT_BLOCK_BARRIER) u.state = RUNNING;
		return;
	}
	t->state = AT_BLOCK_BARRIER;
	block_until_released();
}

uint64_t emu_warp_exchange(unsigned mask, uint64_t v, int src, const char *what) {
	Thread *t = g_cur;
	Warp &w = g_warps[t->linear / 32];
	if (mask != 0xffffffffu) kernel_fault("%s with mask %#x: the emulator supports full-warp masks only", what, mask);
	if (w.lanes != 32)
		kernel_fault("%s with a full mask in a warp of %d threads (blockDim %u×%u×%u is not a multiple of 32)", what, w.lanes,
		             emu_block_dim.x, emu_block_dim.y, emu_block_dim.z);
	if (w.waiting == 0) {
		w.what = what;
	} else if (w.what != what && strcmp(w.what, what) != 0) {
		kernel_fault("lane %d calls %s while other lanes of its warp wait in %s", t->linear % 32, what, w.what);
	}
	unsigned g = w.gen;
	int lane = t->linear % 32;
	w.slot[g & 1][lane] = v;
	if (++w.waiting == w.lanes) {
		w.waiting = 0;
		w.gen++;
		int base = t->linear - lane;
		for (int i = 0; i < w.lanes; i++)
			if (g_threads[base + i].state == AT_WARP_BARRIER) g_threads[base + i].state = RUNNING;
	} else {
		t->state = AT_WARP_BARRIER;
		block_until_released();
	}
	return src >= 0 && src < 32 ? w.slot[g & 1][src] : v;
}

extern "C" void emu_fiber_main() {
	g_kernel->run(g_kernel->fn, g_args);
	Thread *t = g_cur;
	t->state = EXITED;
	g_exited++;
	switch_from(t); // never returns
	abort();
}

static bool ensure_stacks(size_t n) {
	if (n <= g_nstacks) return true;
	if (g_stacks) munmap(g_stacks, g_nstacks * (STACK + 4096));
	size_t bytes = n * (STACK + 4096);
	void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		g_stacks = nullptr, g_nstacks = 0;
		return false;
	}
	g_stacks = (char *)p, g_nstacks = n;
	for (size_t i = 0; i < n; i++) mprotect(g_stacks + i * (STACK + 4096), 4096, PROT_NONE);
	return true;
}

static const char *state_name(ThreadState s) {
	switch (s) {
	case RUNNING:
		return "running";
	case AT_WARP_BARRIER:
		return "in a warp shuffle";
	case AT_BLOCK_BARRIER:
		return "in __syncthreads";
	default:
		return "exited";
	}
}

// run_block runs every thread of block emu_block_idx to its end; false on
// a fault or a deadlock (g_detail says which).
static bool run_block() {
	int n = (int)g_threads.size();
	char *sh0 = __start_emu_shared, *sh1 = __stop_emu_shared;
	if (sh0 != sh1) memset(sh0, 0xff, sh1 - sh0);
	for (int i = 0; i < n; i++) {
		Thread &t = g_threads[i];
		t.state = RUNNING;
		// The stack tops are staggered so that the threads' hot frames do not
		// all fall in the same cache sets.
		ctx_init(&t.ctx, g_stacks + i * (STACK + 4096) + 4096, STACK - (i * 704) % 4096);
	}
	for (auto &w : g_warps) w.waiting = 0, w.gen = 0;
	g_block_waiting = 0, g_exited = 0, g_fault = false;
	for (;;) {
		bool progress = false;
		for (size_t wi = 0; wi < g_warps.size(); wi++) {
			int base = (int)wi * 32, lanes = g_warps[wi].lanes;
			for (bool again = true; again;) { // a warp runs until it waits at __syncthreads or ends
				again = false;
				for (int i = base; i < base + lanes; i++) {
					Thread &t = g_threads[i];
					if (t.state != RUNNING) continue;
					g_cur = &t;
					emu_thread_idx = &t.idx;
					ctx_swap(&g_sched, &t.ctx);
					g_cur = nullptr;
					if (g_fault) return false;
					progress = again = true;
				}
			}
		}
		if (progress) continue;
		if (g_exited == n) return true;
		// Nothing can run: threads wait at a barrier that some thread of the
		// block (or warp) exited before, or at mismatched barriers.
		std::string s;
		int shown = 0;
		for (int i = 0; i < n && shown < 8; i++) {
			if (i > 0 && i % 32 != 0 && g_threads[i].state == g_threads[i - 1].state) continue;
			char buf[96];
			snprintf(buf, sizeof buf, "%sthread %d %s", shown ? ", " : "", i, state_name(g_threads[i].state));
			s += buf;
			shown++;
		}
		fail(CUDA_ERROR_LAUNCH_FAILED, "%s block (%u,%u,%u): deadlock at a barrier (divergence): %s…", g_kernel->name, emu_block_idx.x,
		     emu_block_idx.y, emu_block_idx.z, s.c_str());
		return false;
	}
}

// ---- driver state -----------------------------------------------------------

struct Module {
	std::vector<const emu_kernel *> kernels;
};

static bool g_init;
static int g_ctx_token; // the one (primary) context's handle is its address
static thread_local void *t_current; // the calling OS thread's current context
static std::map<CUdeviceptr, size_t> g_allocs;
static size_t g_used;
static const size_t TOTAL_MEM = (size_t)8 << 30;
static int g_stream_token, g_event_count;
static std::vector<Module *> g_modules;

#define CHECK_INIT()                                                                                                        \
	do {                                                                                                                \
		if (!g_init) return fail(CUDA_ERROR_NOT_INITIALIZED, "%s before cuInit", __func__);                         \
		if (g_sticky) return g_sticky;                                                                              \
	} while (0)
#define CHECK_CTX()                                                                                                         \
	do {                                                                                                                \
		CHECK_INIT();                                                                                               \
		if (t_current != &g_ctx_token) return fail(CUDA_ERROR_INVALID_CONTEXT, "%s on a thread with no current context", __func__); \
	} while (0)

// in_alloc reports whether [p, p+n) lies inside one live allocation.
static bool in_alloc(CUdeviceptr p, size_t n) {
	auto it = g_allocs.upper_bound(p);
	if (it == g_allocs.begin()) return false;
	--it;
	return p >= it->first && p - it->first <= it->second && n <= it->second - (p - it->first);
}

static bool valid_stream(void *s) { return s == nullptr || s == &g_stream_token; }

EXPORT CUresult cuInit(unsigned flags) {
	if (flags != 0) return fail(CUDA_ERROR_INVALID_VALUE, "cuInit flags %u", flags);
	g_init = true;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v) {
	if (!v) return CUDA_ERROR_INVALID_VALUE;
	*v = 12020; // what driver 535 reports
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorString(CUresult code, const char **s) {
	const char *name;
	switch (code) {
	case 0: name = "no error"; break;
	case 1: name = "invalid argument"; break;
	case 2: name = "out of memory"; break;
	case 3: name = "initialization error"; break;
	case 100: name = "no CUDA-capable device is detected"; break;
	case 101: name = "invalid device ordinal"; break;
	case 200: name = "device kernel image is invalid"; break;
	case 201: name = "invalid device context"; break;
	case 218: name = "a PTX JIT compilation failed"; break;
	case 400: name = "invalid resource handle"; break;
	case 500: name = "named symbol not found"; break;
	case 700: name = "an illegal memory access was encountered"; break;
	case 701: name = "too many resources requested for launch"; break;
	case 719: name = "unspecified launch failure"; break;
	default: *s = nullptr; return CUDA_ERROR_INVALID_VALUE;
	}
	if (code == g_detail_code && !g_detail.empty()) {
		snprintf(g_errbuf, sizeof g_errbuf, "%s; emulator: %s", name, g_detail.c_str());
		*s = g_errbuf;
	} else {
		*s = name;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n) {
	CHECK_INIT();
	*n = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(int *dev, int ordinal) {
	CHECK_INIT();
	if (ordinal != 0) return fail(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet(%d): the emulator has device 0 only", ordinal);
	*dev = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, int dev) {
	CHECK_INIT();
	if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
	if (len <= 0) return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, len, "toy CUDA emulator (CPU)");
	return CUDA_SUCCESS;
}

// emu_cc is the emulated compute capability, 10·major + minor: 9.0 (the
// H100's and H200's), or TOY_CUDA_EMU_CC ("7.0": a GPU older than toy's
// tensor-core kernels, which PTX for sm_80 then fails to load on).
static int emu_cc() {
	const char *e = getenv("TOY_CUDA_EMU_CC");
	int major, minor;
	if (e && sscanf(e, "%d.%d", &major, &minor) == 2 && major >= 1 && minor >= 0 && minor <= 9) return 10 * major + minor;
	return 90;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
	CHECK_INIT();
	if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
	switch (attr) {
	case 75: *v = emu_cc() / 10; break; // compute capability
	case 76: *v = emu_cc() % 10; break;
	case 16: *v = 1; break;  // multiprocessors
	case 1: *v = 1024; break; // max threads per block
	case 10: *v = 32; break; // warp size
	default: *v = 0;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev) {
	CHECK_INIT();
	if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
	*bytes = TOTAL_MEM;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
	CHECK_INIT();
	if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
	*ctx = &g_ctx_token;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(void *ctx) { // works after a fault too, so later calls can report it
	if (!g_init) return fail(CUDA_ERROR_NOT_INITIALIZED, "cuCtxSetCurrent before cuInit");
	if (ctx != nullptr && ctx != &g_ctx_token) return fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent(%p): not a context", ctx);
	t_current = ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize() {
	CHECK_CTX();
	return CUDA_SUCCESS;
}

// ---- modules: PTX text in, kernels compiled into this library out ------------

static const emu_kernel *find_kernel(const std::string &name) {
	for (int i = 0; i < emu_nkernels; i++)
		if (name == emu_kernels[i].name) return &emu_kernels[i];
	return nullptr;
}

// param_size is the size of a PTX .param declaration: ".param .u64 name",
// ".param .align 8 .b8 name[16]".
static size_t param_size(const std::string &decl) {
	size_t lb = decl.find('[');
	if (lb != std::string::npos) return strtoul(decl.c_str() + lb + 1, nullptr, 10);
	for (const char *t : {".u64", ".s64", ".b64", ".f64"})
		if (decl.find(t) != std::string::npos) return 8;
	for (const char *t : {".u32", ".s32", ".b32", ".f32"})
		if (decl.find(t) != std::string::npos) return 4;
	for (const char *t : {".u16", ".s16", ".b16", ".f16"})
		if (decl.find(t) != std::string::npos) return 2;
	return 1;
}

static CUresult load_module(void **mod, const char *ptx) {
	if (!mod || !ptx) return CUDA_ERROR_INVALID_VALUE;
	std::string s(ptx);
	if (s.find(".version") == std::string::npos || s.find(".target") == std::string::npos)
		return fail(CUDA_ERROR_INVALID_IMAGE, "cuModuleLoadData: not PTX text (no .version/.target)");
	// The driver refuses PTX for a newer GPU than the one it has.
	size_t tg = s.find(".target sm_");
	int target = tg == std::string::npos ? 0 : atoi(s.c_str() + tg + 11);
	if (target > emu_cc())
		return fail(CUDA_ERROR_NO_BINARY_FOR_GPU, "cuModuleLoadData: the PTX targets sm_%d, the emulated GPU is compute %d.%d", target,
		            emu_cc() / 10, emu_cc() % 10);
	Module *m = new Module;
	for (size_t at = 0; (at = s.find(".entry ", at)) != std::string::npos;) {
		at += 7;
		size_t open = s.find('(', at), close = s.find(')', open);
		if (open == std::string::npos || close == std::string::npos) break;
		std::string name = s.substr(at, open - at);
		while (!name.empty() && (name.back() == ' ' || name.back() == '\t' || name.back() == '\n')) name.pop_back();
		const emu_kernel *k = find_kernel(name);
		if (!k) {
			delete m;
			return fail(CUDA_ERROR_INVALID_PTX, "the PTX defines kernel %s, which the emulator was not built with (add it to kernels.cc)", name.c_str());
		}
		std::vector<size_t> sizes;
		std::string params = s.substr(open + 1, close - open - 1);
		for (size_t p = 0; (p = params.find(".param", p)) != std::string::npos;) {
			size_t end = params.find_first_of(",", p);
			sizes.push_back(param_size(params.substr(p, end == std::string::npos ? std::string::npos : end - p)));
			p += 6;
		}
		bool ok = (int)sizes.size() == k->nparams;
		for (int i = 0; ok && i < k->nparams; i++) ok = sizes[i] == k->size[i];
		if (!ok) {
			std::string want, got;
			for (size_t z : sizes) want += std::to_string(z) + " ";
			for (int i = 0; i < k->nparams; i++) got += std::to_string(k->size[i]) + " ";
			delete m;
			return fail(CUDA_ERROR_INVALID_PTX, "kernel %s: the PTX takes parameters of bytes [%s], the compiled source [%s]", name.c_str(),
			            want.c_str(), got.c_str());
		}
		m->kernels.push_back(k);
		at = close;
	}
	g_modules.push_back(m);
	*mod = m;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoadData(void **mod, const void *image) {
	CHECK_CTX();
	return load_module(mod, (const char *)image);
}

EXPORT CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals) {
	CHECK_CTX();
	if (n > 0 && (!opts || !vals)) return CUDA_ERROR_INVALID_VALUE;
	// The options are C enums, 4 bytes each; the driver refuses a value out
	// of range for its option (an array of 8-byte options read as 4-byte
	// ones gives option 0, CU_JIT_MAX_REGISTERS, with a size for its value).
	for (unsigned i = 0; i < n; i++)
		if (opts[i] != 5 && opts[i] != 6)
			return fail(CUDA_ERROR_INVALID_VALUE, "cuModuleLoadDataEx: option %d (value %p) is not one the emulator takes", opts[i], vals[i]);
	CUresult r = load_module(mod, (const char *)image);
	for (unsigned i = 0; i < n; i++) { // CU_JIT_ERROR_LOG_BUFFER(5) with its size (6): the failure's text
		if (opts[i] != 5 || r == CUDA_SUCCESS) continue;
		size_t size = 0;
		for (unsigned j = 0; j < n; j++)
			if (opts[j] == 6) size = (size_t)(uintptr_t)vals[j];
		if (size > 0) snprintf((char *)vals[i], size, "%s", g_detail.c_str());
	}
	return r;
}

EXPORT CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
	CHECK_CTX();
	bool known = false;
	for (Module *m : g_modules) known |= m == mod;
	if (!known) return fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetFunction: %p is not a module", mod);
	for (const emu_kernel *k : ((Module *)mod)->kernels)
		if (strcmp(k->name, name) == 0) {
			*fn = (void *)k;
			return CUDA_SUCCESS;
		}
	return fail(CUDA_ERROR_NOT_FOUND, "cuModuleGetFunction: the module has no kernel %s", name);
}

// ---- launches -----------------------------------------------------------------

static bool valid_function(void *f) {
	for (int i = 0; i < emu_nkernels; i++)
		if (f == &emu_kernels[i]) return true;
	return false;
}

EXPORT CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                               void *stream, void **params, void **extra) {
	CHECK_CTX();
	if (!valid_function(f)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuLaunchKernel: %p is not a function", f);
	const emu_kernel *k = (const emu_kernel *)f;
	if (!valid_stream(stream)) return fail(CUDA_ERROR_INVALID_HANDLE, "%s: stream %p is not a stream", k->name, stream);
	if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || gx > 0x7fffffffu || gy > 65535 || gz > 65535 || bx > 1024 ||
	    by > 1024 || bz > 64 || (unsigned long long)bx * by * bz > 1024)
		return fail(CUDA_ERROR_INVALID_VALUE, "%s: grid %u×%u×%u of blocks %u×%u×%u is out of the limits", k->name, gx, gy, gz, bx, by, bz);
	if (shmem != 0) return fail(CUDA_ERROR_INVALID_VALUE, "%s: %u bytes of dynamic shared memory (the emulator has none)", k->name, shmem);
	if (extra) return fail(CUDA_ERROR_INVALID_VALUE, "%s: extra launch options are not emulated", k->name);
	if (k->nparams > 0 && !params) return fail(CUDA_ERROR_INVALID_VALUE, "%s: no kernelParams", k->name);
	// Copy the arguments now, as the driver does (the launch is asynchronous
	// on a GPU), and check that every non-null pointer is a device address.
	uint64_t storage[EMU_MAX_PARAMS][2] = {};
	void *args[EMU_MAX_PARAMS];
	for (int i = 0; i < k->nparams; i++) {
		if (k->size[i] > sizeof storage[i]) return fail(CUDA_ERROR_INVALID_VALUE, "%s: parameter %d of %zu bytes is not emulated", k->name, i, k->size[i]);
		memcpy(storage[i], params[i], k->size[i]);
		args[i] = storage[i];
		if (k->ptr[i]) {
			CUdeviceptr p = storage[i][0];
			if (p != 0 && !in_alloc(p, 0))
				return g_sticky = fail(CUDA_ERROR_ILLEGAL_ADDRESS, "%s: argument %d (%#llx) is not in any device allocation", k->name, i, p);
		}
	}
	unsigned n = bx * by * bz;
	if (!ensure_stacks(n)) return fail(CUDA_ERROR_OUT_OF_MEMORY, "%s: no memory for %u fiber stacks", k->name, n);
	g_threads.assign(n, Thread{});
	for (unsigned i = 0; i < n; i++) g_threads[i].linear = i, g_threads[i].idx = emu_dim3{i % bx, i / bx % by, i / (bx * by)};
	g_warps.assign((n + 31) / 32, Warp{});
	for (size_t w = 0; w < g_warps.size(); w++) g_warps[w].lanes = (int)std::min<size_t>(32, n - w * 32);
	g_kernel = k, g_args = args;
	emu_grid_dim = emu_dim3{gx, gy, gz}, emu_block_dim = emu_dim3{bx, by, bz};
	for (unsigned z = 0; z < gz; z++)
		for (unsigned y = 0; y < gy; y++)
			for (unsigned x = 0; x < gx; x++) {
				emu_block_idx = emu_dim3{x, y, z};
				if (!run_block()) {
					g_kernel = nullptr, g_args = nullptr;
					return g_sticky = CUDA_ERROR_LAUNCH_FAILED;
				}
			}
	g_kernel = nullptr, g_args = nullptr;
	return CUDA_SUCCESS;
}

// ---- memory -------------------------------------------------------------------------

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
	CHECK_CTX();
	if (n == 0) return CUDA_ERROR_INVALID_VALUE;
	if (g_used + n > TOTAL_MEM) return CUDA_ERROR_OUT_OF_MEMORY;
	void *q = aligned_alloc(256, (n + 255) & ~(size_t)255);
	if (!q) return CUDA_ERROR_OUT_OF_MEMORY;
	memset(q, 0xa5, n); // fresh device memory holds garbage, not zeros
	*p = (CUdeviceptr)(uintptr_t)q;
	g_allocs[*p] = n;
	g_used += n;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
	CHECK_CTX();
	auto it = g_allocs.find(p);
	if (it == g_allocs.end()) return fail(CUDA_ERROR_INVALID_VALUE, "cuMemFree(%#llx): not an allocation", p);
	g_used -= it->second;
	g_allocs.erase(it);
	free((void *)(uintptr_t)p);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *freeb, size_t *total) {
	CHECK_CTX();
	*freeb = TOTAL_MEM - g_used, *total = TOTAL_MEM;
	return CUDA_SUCCESS;
}

static CUresult check_range(const char *call, CUdeviceptr p, size_t n) {
	if (!in_alloc(p, n)) return fail(CUDA_ERROR_INVALID_VALUE, "%s: bytes [%#llx, +%zu) are not inside one device allocation", call, p, n);
	return CUDA_SUCCESS;
}

static CUresult htod(const char *call, CUdeviceptr dst, const void *src, size_t n, void *stream) {
	CHECK_CTX();
	if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
	if (CUresult r = check_range(call, dst, n)) return r;
	memcpy((void *)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

static CUresult dtoh(const char *call, void *dst, CUdeviceptr src, size_t n, void *stream) {
	CHECK_CTX();
	if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
	if (CUresult r = check_range(call, src, n)) return r;
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

static CUresult dtod(const char *call, CUdeviceptr dst, CUdeviceptr src, size_t n, void *stream) {
	CHECK_CTX();
	if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
	if (CUresult r = check_range(call, dst, n)) return r;
	if (CUresult r = check_range(call, src, n)) return r;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { return htod("cuMemcpyHtoD", d, s, n, nullptr); }
EXPORT CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { return dtoh("cuMemcpyDtoH", d, s, n, nullptr); }
EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return dtod("cuMemcpyDtoD", d, s, n, nullptr); }
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) { return htod("cuMemcpyHtoDAsync", d, s, n, st); }
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st) { return dtoh("cuMemcpyDtoHAsync", d, s, n, st); }
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) { return dtod("cuMemcpyDtoDAsync", d, s, n, st); }

EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *stream) {
	CHECK_CTX();
	if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
	if (CUresult r = check_range("cuMemsetD8Async", d, n)) return r;
	memset((void *)(uintptr_t)d, v, n);
	return CUDA_SUCCESS;
}

// ---- streams and events: work runs when it is issued, so both are markers ----------

EXPORT CUresult cuStreamCreate(void **s, unsigned flags) {
	CHECK_CTX();
	(void)flags;
	*s = &g_stream_token;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(void *s) {
	CHECK_CTX();
	return valid_stream(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

struct Event {
	std::chrono::steady_clock::time_point at;
	bool recorded;
};

EXPORT CUresult cuEventCreate(void **e, unsigned flags) {
	CHECK_CTX();
	(void)flags;
	*e = new Event{{}, false};
	g_event_count++;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(void *e) {
	CHECK_CTX();
	if (!e) return CUDA_ERROR_INVALID_HANDLE;
	delete (Event *)e;
	g_event_count--;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(void *e, void *s) {
	CHECK_CTX();
	if (!e || !valid_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
	((Event *)e)->at = std::chrono::steady_clock::now();
	((Event *)e)->recorded = true;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(void *e) {
	CHECK_CTX();
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
	CHECK_CTX();
	if (!a || !b || !ms) return CUDA_ERROR_INVALID_HANDLE;
	Event *x = (Event *)a, *y = (Event *)b;
	if (!x->recorded || !y->recorded) return 600; // CUDA_ERROR_NOT_READY
	*ms = std::chrono::duration<float, std::milli>(y->at - x->at).count();
	return CUDA_SUCCESS;
}

// ---- cuBLAS ---------------------------------------------------------------------------

typedef int cublasStatus_t;
enum {
	CUBLAS_STATUS_SUCCESS = 0,
	CUBLAS_STATUS_NOT_INITIALIZED = 1,
	CUBLAS_STATUS_INVALID_VALUE = 7,
	CUBLAS_STATUS_EXECUTION_FAILED = 13,
	CUBLAS_STATUS_NOT_SUPPORTED = 15,
};

struct BlasHandle {
	void *stream;
	int mathMode;
};

static cublasStatus_t blas_fail(cublasStatus_t code, const char *fmt, ...) {
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fail(0, "%s", buf);
	return code;
}

EXPORT cublasStatus_t cublasCreate_v2(BlasHandle **h) {
	if (!g_init || t_current != &g_ctx_token) return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasCreate with no current context");
	*h = new BlasHandle{nullptr, 0};
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetStream_v2(BlasHandle *h, void *s) {
	if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!valid_stream(s)) return CUBLAS_STATUS_INVALID_VALUE;
	h->stream = s;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetMathMode(BlasHandle *h, int mode) {
	if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
	if (mode != 0 && mode != 1 && mode != 2 && mode != 3 && mode != 16) return CUBLAS_STATUS_INVALID_VALUE;
	h->mathMode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

enum { R_32F = 0, R_16F = 2, R_16BF = 14, COMPUTE_32F = 68, COMPUTE_32F_FAST_TF32 = 77 };

static size_t type_size(int t) { return t == R_32F ? 4 : 2; }

static float load_elem(const void *p, int t, size_t i) {
	switch (t) {
	case R_16F: return __half2float(__ushort_as_half(((const uint16_t *)p)[i]));
	case R_16BF: return __uint_as_float((uint32_t)((const uint16_t *)p)[i] << 16);
	default: return ((const float *)p)[i];
	}
}

// tf32 rounds f to TF32 (10 mantissa bits, to nearest), as tensor cores
// read float32 operands in TF32 mode.
static float tf32(float f) {
	uint32_t u = __float_as_uint(f);
	if ((u & 0x7f800000u) == 0x7f800000u) return f;
	u += 0xfffu + ((u >> 13) & 1);
	return __uint_as_float(u & 0xffffe000u);
}

// gemm: C = α·op(A)·op(B) + β·C in column-major order, op(A) m×k, op(B)
// k×n, C m×n with leading dimensions lda, ldb, ldc; the operands in types
// at, bt (R_32F, R_16F, R_16BF), C in float32. Sums in float32 with FMA in
// k order (cuBLAS's order is its own: results agree to rounding). With
// β = 0, C is not read (NaN in it does not propagate), as BLAS specifies.
static cublasStatus_t gemm(const char *call, BlasHandle *h, int ta, int tb, int m, int n, int k, float alpha, const void *A, int at, int lda,
                           const void *B, int bt, int ldb, float beta, float *C, int ldc, bool tf) {
	if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!g_init || t_current != &g_ctx_token) return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "%s with no current context", call);
	if (g_sticky) return CUBLAS_STATUS_EXECUTION_FAILED;
	if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
		return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: transa %d, transb %d (N = 0, T = 1)", call, ta, tb);
	int arows = ta == 0 ? m : k, acols = ta == 0 ? k : m, brows = tb == 0 ? k : n, bcols = tb == 0 ? n : k;
	if (m < 0 || n < 0 || k < 0 || lda < std::max(1, arows) || ldb < std::max(1, brows) || ldc < std::max(1, m))
		return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: m=%d n=%d k=%d lda=%d ldb=%d ldc=%d (need lda ≥ %d, ldb ≥ %d, ldc ≥ %d)", call, m, n,
		                 k, lda, ldb, ldc, arows, brows, m);
	if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
	auto span = [](int rows, int cols, int ld, size_t es) { return ((size_t)(cols - 1) * ld + rows) * es; };
	if (k > 0 && (!in_alloc((CUdeviceptr)(uintptr_t)A, span(arows, acols, lda, type_size(at))) ||
	              !in_alloc((CUdeviceptr)(uintptr_t)B, span(brows, bcols, ldb, type_size(bt)))))
		return blas_fail(CUBLAS_STATUS_EXECUTION_FAILED, "%s: an operand (A %p, B %p) reaches past its device allocation", call, A, B);
	if (!in_alloc((CUdeviceptr)(uintptr_t)C, span(m, n, ldc, 4)))
		return blas_fail(CUBLAS_STATUS_EXECUTION_FAILED, "%s: C %p (%d×%d, ldc %d) reaches past its device allocation", call, C, m, n, ldc);
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			float s = 0;
			for (int l = 0; l < k; l++) {
				float a = load_elem(A, at, ta == 0 ? i + (size_t)l * lda : l + (size_t)i * lda);
				float b = load_elem(B, bt, tb == 0 ? l + (size_t)j * ldb : j + (size_t)l * ldb);
				if (tf) a = tf32(a), b = tf32(b);
				s = fmaf(a, b, s);
			}
			float *c = &C[i + (size_t)j * ldc];
			*c = beta == 0 ? alpha * s : alpha * s + beta * *c;
		}
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSgemm_v2(BlasHandle *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *A, int lda, const float *B,
                                     int ldb, const float *beta, float *C, int ldc) {
	if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
	return gemm("cublasSgemm", h, ta, tb, m, n, k, *alpha, A, R_32F, lda, B, R_32F, ldb, *beta, C, ldc, h && h->mathMode == 3);
}

EXPORT cublasStatus_t cublasGemmEx(BlasHandle *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int at, int lda,
                                   const void *B, int bt, int ldb, const void *beta, void *C, int ct, int ldc, int compute, int algo) {
	if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
	if (compute != COMPUTE_32F && compute != COMPUTE_32F_FAST_TF32)
		return blas_fail(CUBLAS_STATUS_NOT_SUPPORTED, "cublasGemmEx: compute type %d is not emulated (68, 77 are)", compute);
	bool typesOK = ct == R_32F && (at == bt) && (at == R_32F || at == R_16F || at == R_16BF);
	if (!typesOK) return blas_fail(CUBLAS_STATUS_NOT_SUPPORTED, "cublasGemmEx: A/B/C types %d/%d/%d are not emulated", at, bt, ct);
	if (!(algo == -1 || (algo >= 0 && algo <= 23) || (algo >= 99 && algo <= 115)))
		return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "cublasGemmEx: algo %d", algo);
	bool tf = at == R_32F && (compute == COMPUTE_32F_FAST_TF32 || (h && h->mathMode == 3));
	return gemm("cublasGemmEx", h, ta, tb, m, n, k, *(const float *)alpha, A, at, lda, B, bt, ldb, *(const float *)beta, (float *)C, ldc, tf);
}
