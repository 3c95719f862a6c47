# Sourced by the family-*.sh and html-processes.sh tests after init.sh: a shell
# that forks three children of tests/workloads/family.c with known allocations,
# and its run under memprof run --follow-fork.
#   A: hold 3 x 100000 B until the end (it says so on the FIFO "ready");
#   B: once 2 x 200000 B, then C: once 1 x 500000 B, while A holds its blocks.
# family_run OUT [ARG...]: the run into OUT (its arguments before the program), in mp.
family_run() {
	out=$1; shift
	[ -p ready ] || mkfifo ready go || framework_failure_ "mkfifo"
	cat > family.sh <<'SH'
"$1" hold 3 100000 &
read -r line < ready
"$1" once 2 200000
"$1" once 1 500000
echo go > go
wait
SH
	mp run --follow-fork --memory-interval-ms 2 -o "$out" "$@" bash family.sh "$WORKLOADS/family"
}
