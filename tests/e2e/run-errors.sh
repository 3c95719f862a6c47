#!/bin/bash
# Programs memprof refuses, before running anything, with a shell-like status.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

mp run nosuchprogram-xyz
expect_rc 127 "a missing program"
expect_err "memprof: 'nosuchprogram-xyz': no such file"
expect_one_line_err
mp run ./missing
expect_rc 127 "a missing path"
expect_err "memprof: './missing': no such file"

echo 'data' > notexec; chmod 644 notexec
mp run ./notexec
expect_rc 126 "a file without execute permission"
expect_err "memprof: './notexec': permission denied"
mkdir adir
mp run ./adir
expect_rc 126 "a directory"
expect_err "memprof: './adir': is a directory"

# A statically linked program (when the static C library is installed).
printf 'int main(void){return 0;}\n' > s.c
if cc -static -o static s.c 2>/dev/null; then
	mp run ./static
	expect_rc 1 "a static program"
	expect_err "'./static' is statically linked"
	expect_one_line_err
fi
# A program of another ELF class.
cp "$WORKLOADS/allocs" class32
printf '\001' | dd of=class32 bs=1 seek=4 conv=notrunc status=none
mp run ./class32
expect_rc 1 "a 32-bit program"
expect_err "'./class32' is a 32-bit program; memprof's tracker is 64-bit"
expect_not_out "allocs done"
# A set-user-ID program owned by another user.
if [ "$(id -u)" -eq 0 ]; then
	cp "$WORKLOADS/allocs" suid
	chown nobody suid && chmod 4755 suid
	mp run ./suid
	expect_rc 1 "a set-user-ID program"
	expect_err "'./suid' is set-user-ID: the loader ignores LD_PRELOAD for it"
	expect_not_out "allocs done"
fi
# Scripts: the interpreter is tracked; "#!/usr/bin/env NAME" runs NAME itself.
printf '#!/usr/bin/env bash\necho "script $1"\n' > s.sh; chmod +x s.sh
mp run -q -o s.bin ./s.sh arg
expect_rc 0 "an env script"
expect_out "script arg"
"$MEMPROF" parse s.bin | grep -q "exe=\"$(readlink -f "$(command -v bash)")\"" || fail_ "bash was not the tracked process"
printf '#!/usr/bin/env nosuchinterp\n' > bad.sh; chmod +x bad.sh
mp run ./bad.sh
expect_rc 127 "a missing interpreter"
expect_err "'./bad.sh': interpreter 'nosuchinterp' not found"
# No capture is left behind by a refused program.
ls memprof-*.bin 2>/dev/null && fail_ "a refused run left a capture"
exit 0
