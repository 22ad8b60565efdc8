#include "protfs_crypto.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

int protfs_cpu_has_aes_gcm(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_AES) && (ecx & bit_PCLMUL);
}
#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <asm/hwcap.h>

int protfs_cpu_has_aes_gcm(void) {
    unsigned long caps = getauxval(AT_HWCAP);
    return (caps & HWCAP_AES) && (caps & HWCAP_PMULL);
}
#else
int protfs_cpu_has_aes_gcm(void) { return 0; }
#endif
