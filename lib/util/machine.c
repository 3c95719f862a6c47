/* Names of ELF machines. */
#include <config.h>
#include "lib/util/machine.h"

#include <elf.h>
#include <stddef.h>

const char *mp_elf_machine(unsigned long machine)
{
	switch (machine) {
	case EM_X86_64: return "x86_64";
	case EM_386: return "i386";
	case EM_AARCH64: return "aarch64";
	case EM_ARM: return "arm";
	case EM_RISCV: return "riscv";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390";
	default: return NULL;
	}
}
