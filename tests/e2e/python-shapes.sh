#!/bin/bash
# Python frames in every shape of Python execution: threads, generators,
# coroutines, recursion deeper than --max-depth, Python called back from C
# (sqlite3), a forked child, and --memory-interval-ms short enough that the
# timer thread runs among them; on each CPython 3.11 to 3.13 there is
# (lib-python.sh).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-python.sh"

cat > shapes.py <<'EOF'
import asyncio, os, sqlite3, sys, threading

keep = []


def gen_chunks(n):
    for i in range(n):
        yield bytearray(110000 + i)


def consume():
    for c in gen_chunks(3):
        keep.append(c)


async def coro_alloc():
    await asyncio.sleep(0)
    keep.append(bytearray(130000))


def thread_work():
    keep.append(bytearray(150000))


def recurse(n):
    if n == 0:
        keep.append(bytearray(170000))
        return
    recurse(n - 1)


def sql_cb(x):
    keep.append(bytearray(190000))
    return x


def use_sqlite():
    con = sqlite3.connect(":memory:")
    con.create_function("cb", 1, sql_cb)
    con.execute("select cb(1)").fetchall()
    keep.append(con)


def child_work():
    keep.append(bytearray(210000))


def données_λ():
    keep.append(bytearray(230000))


consume()
asyncio.run(coro_alloc())
threads = [threading.Thread(target=thread_work) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
recurse(int(sys.argv[1]))
use_sqlite()
données_λ()
pid = os.fork()
if pid == 0:
    child_work()
    os._exit(0)
os.waitpid(pid, 0)
print("done")
EOF

for py in $pythons; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	mp run -q -f --follow-fork --memory-interval-ms 1 -o s$v.bin "$py" shapes.py 20
	expect_rc 0 "python $v shapes.py"
	expect_out "done"
	mp transform -f -o s$v.folded folded --leaks s$v.bin
	expect_rc 0 "$v: transform folded"
	f=s$v.folded
	# Each shape's allocation has its Python callers, innermost last, and
	# ends there: the interpreter's frames are folded (none is left
	# anywhere), and so is the evaluation loop.
	for path in '<module>;consume;[^ ]*gen_chunks ' '[^ ]*coro_alloc ' 'thread_work ' \
		'<module>;recurse(;recurse){20} ' ';use_sqlite;[^ ]*sql_cb '; do
		grep -qE -- "$path" "$f" || fail_ "$v: no stack matches '$path' in the leaks"
	done
	grep -q '_PyEval_EvalFrameDefault' "$f" && fail_ "$v: _PyEval_EvalFrameDefault left: $(grep -m1 _PyEval_EvalFrameDefault "$f")"
	grep -qE 'python3\.[0-9]+\+0x|Py_RunMain|_start' "$f" &&
		fail_ "$v: an interpreter frame is left: $(grep -m1 -E 'python3\.[0-9]+\+0x|Py_RunMain|_start' "$f")"
	# sqlite3's C frames stand between use_sqlite and the callback it runs.
	grep -qE ';use_sqlite;[^ ]*sqlite3_step;[^ ]*sql_cb ' "$f" ||
		fail_ "$v: sqlite3's frames are not between use_sqlite and sql_cb"
	# The four threads' allocations, each with its thread's Python frames.
	"$MEMPROF" parse --stacks s$v.bin > p$v || fail_ "$v: parse"
	expect_count 4 '^ALLOC thread=[1-9][0-9]* .*size=15000[01] .*"thread_work"' p$v
	# A name that is not ASCII comes out in UTF-8.
	grep -qE '^ALLOC .*size=23000[01] .*"données_λ","<module>"' p$v ||
		fail_ "$v: the non-ASCII function name: $(grep -m1 'size=23000' p$v)"
	# Deeper than --max-depth: cut at the root, innermost frames kept.
	mp run -q -f --max-depth 40 -o d$v.bin "$py" shapes.py 200
	expect_rc 0 "python $v shapes.py 200 --max-depth 40"
	"$MEMPROF" parse --stacks d$v.bin > q$v || fail_ "$v: parse d.bin"
	grep -qE '^ALLOC .*size=17000[01] .*frames=\[[^]]*("recurse",){20}[^]]*"<stack truncated>"\]' q$v ||
		fail_ "$v: the deep stack is not cut to its innermost frames: $(grep -m1 'size=17000' q$v)"
	# The forked child's capture has its own Python frames.
	child=$(ls s$v.bin.* 2> /dev/null | head -1)
	[ -n "$child" ] || fail_ "$v: no capture of the forked child"
	"$MEMPROF" parse --stacks "$child" > c$v || fail_ "$v: parse the child"
	grep -qE '^ALLOC .*size=21000[01] .*"child_work","<module>"' c$v ||
		fail_ "$v: the child's allocation lacks its Python frames"
	echo "python $v: ok" >&2
done
exit 0
