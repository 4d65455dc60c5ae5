/* Stand-in for Windows' bcryptprimitives.dll, for running under Wine 8 only (Debian 12's),
 * which lacks it: Rust's standard library imports ProcessPrng from it (Windows 10 and later
 * have it). Forwards to RtlGenRandom (advapi32's SystemFunction036), which Wine has.
 * Never shipped: scripts/windows-test.sh builds it beside the test programs. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x7fffffffu ? 0x7fffffffu : (ULONG)len;
        if (!RtlGenRandom(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
