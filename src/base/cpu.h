/*
 * cpu.h - the spin-wait hint: lets the sibling hardware thread run and
 * saves power while a loop polls shared memory.
 */
#ifndef FMPL_CPU_H
#define FMPL_CPU_H

static inline void fmpl_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
