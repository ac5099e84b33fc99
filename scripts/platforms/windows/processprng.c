/* bcryptprimitives.dll for wine 8, which lacks ProcessPrng: Rust >= 1.78
 * imports it for its random numbers (HashMap keys), so without this every
 * Rust binary built here exits at load. It forwards to RtlGenRandom
 * (advapi32's SystemFunction036), which wine has. Test setup only: never
 * shipped, never built into the addon. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
