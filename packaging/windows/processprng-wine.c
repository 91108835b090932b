/* A stand-in for Windows' bcryptprimitives.dll, for running mavboard.exe under wine 8.0 in the tests only
 * (`./packaging/dev.sh test-windows` builds it with mingw and puts it beside the exe in a test copy of the
 * folder; it is never shipped). Rust's standard library (1.78 and later) takes its random bytes from
 * bcryptprimitives.dll's ProcessPrng, which Windows 10 and later have and Debian's wine 8.0 does not: without
 * it the exe does not start. This one exports ProcessPrng and fills the buffer from advapi32's RtlGenRandom
 * (SystemFunction036), which wine has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) {
      return FALSE;
    }
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
