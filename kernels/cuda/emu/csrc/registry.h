// How the emulated driver finds a kernel by name and calls it with the
// argument bytes cuLaunchKernel was given: each kernel is registered with
// its C++ signature, from which a template derives the size of every
// parameter (checked against the .param list of its PTX entry), which ones
// are pointers (checked against the live device allocations), and a
// function that unpacks the kernelParams array into a call.
#pragma once
#include <stddef.h>
#include <type_traits>
#include <utility>

#define EMU_MAX_PARAMS 32

struct emu_kernel {
	const char *name;
	int nparams;
	size_t size[EMU_MAX_PARAMS]; // bytes of each parameter
	bool ptr[EMU_MAX_PARAMS];    // parameter is a pointer (device address)
	void (*fn)();                // the kernel, type-erased
	void (*run)(void (*fn)(), void *const *args);
};

template <typename... A, size_t... I> static void emu_invoke(void (*fn)(), void *const *args, std::index_sequence<I...>) {
	((void (*)(A...))fn)(*(const std::remove_cv_t<A> *)args[I]...);
}

template <typename... A> static void emu_run(void (*fn)(), void *const *args) {
	emu_invoke<A...>(fn, args, std::index_sequence_for<A...>{});
}

template <typename... A> static emu_kernel emu_register(const char *name, void (*fn)(A...)) {
	static_assert(sizeof...(A) <= EMU_MAX_PARAMS, "too many kernel parameters");
	emu_kernel k{name, (int)sizeof...(A), {sizeof(A)...}, {std::is_pointer<A>::value...}, (void (*)())fn, emu_run<A...>};
	return k;
}

#define EMU_KERNEL(name) emu_register(#name, name)

// emu_kernels lists every kernel compiled into the library (kernels.cc).
extern const emu_kernel emu_kernels[];
extern const int emu_nkernels;
