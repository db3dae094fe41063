# shellcheck shell=bash
# Sourced by the scripts of the README's commands: as_root CMD... runs CMD
# as root, through sudo when the caller is not root (minimal images and
# containers run as root and have no sudo; a workstation user has sudo).
# The variables the tests read are passed on: sudo resets the environment.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
		return
	fi
	if ! command -v sudo >/dev/null; then
		echo "$(basename "$0"): needs root: run it as root (sudo is not installed)" >&2
		return 1
	fi
	local keep=() v
	for v in PYBPFPROF PYBPFPROF_ROOTS PYBPFPROF_MIRROR PYBPFPROF_SPEEDSCOPE_CACHE \
		SPEEDSCOPE_VERSION PYENV_ROOT http_proxy https_proxy ASAN_OPTIONS UBSAN_OPTIONS \
		LSAN_OPTIONS; do
		[ -n "${!v:-}" ] && keep+=("$v=${!v}")
	done
	sudo env "${keep[@]}" "$@"
}
