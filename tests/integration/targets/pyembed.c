/* An application that embeds CPython the way plugins hosts do: it is not
 * linked against libpython but loads it with dlopen() at run time, so the
 * interpreter's USDT probes live in a library mapped after the process
 * started (tests/build-pythons.sh builds it in a Debian root).
 *
 *   pyembed [-w] CODE      runs CODE as __main__ and exits with its status
 *
 * -w waits for a line on standard input before loading libpython, so a test
 * can start the profiler on a process that has no libpython mapped yet.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(PYEMBED_LIBPYTHON) || !defined(PYEMBED_HOME)
#error "build with -DPYEMBED_LIBPYTHON=\"/path/to/libpythonX.Y.so.1.0\" -DPYEMBED_HOME=\"prefix\""
#endif

/* The few entry points needed, resolved by name: no Python header. */
typedef void (*initialize_fn)(int);
typedef int (*run_fn)(const char *);
typedef int (*finalize_fn)(void);

static void *need(void *lib, const char *sym)
{
	void *p = dlsym(lib, sym);

	if (!p) {
		fprintf(stderr, "pyembed: %s has no %s\n", PYEMBED_LIBPYTHON, sym);
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	const char *code;
	char line[64];
	void *lib;
	int rc;

	if (argc == 3 && strcmp(argv[1], "-w") == 0) {
		if (!fgets(line, sizeof(line), stdin))
			return 2;
		code = argv[2];
	} else if (argc == 2) {
		code = argv[1];
	} else {
		fprintf(stderr, "usage: pyembed [-w] CODE\n");
		return 2;
	}
	/*
	 * The library's own stdlib: from our path CPython would guess its home
	 * by looking for a landmark above this executable.
	 */
	setenv("PYTHONHOME", PYEMBED_HOME, 0);
	lib = dlopen(PYEMBED_LIBPYTHON, RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		fprintf(stderr, "pyembed: %s\n", dlerror());
		return 2;
	}
	((initialize_fn)need(lib, "Py_InitializeEx"))(0);
	rc = ((run_fn)need(lib, "PyRun_SimpleString"))(code);
	if (((finalize_fn)need(lib, "Py_FinalizeEx"))() < 0 && rc == 0)
		rc = 120;
	return rc ? 1 : 0;
}
