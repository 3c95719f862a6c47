/* Names of ELF machines, for messages and dumps. */
#ifndef MEMPROF_LIB_UTIL_MACHINE_H
#define MEMPROF_LIB_UTIL_MACHINE_H

/* The name of an ELF e_machine ("x86_64", "aarch64"...), or NULL when not one we name. */
const char *mp_elf_machine(unsigned long machine);

#endif
