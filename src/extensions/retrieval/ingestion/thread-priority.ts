/**
 * Called first in an extraction thread: on Linux the thread lowers its own scheduling priority
 * (nice 10), so on a busy machine the host's event loop gets a core before any document does —
 * the extraction waits, the other tenants do not. Lowering is always allowed; elsewhere (no
 * /proc/thread-self) the thread keeps the process's priority.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

export const EXTRACTION_NICE = 10;

export function lowerThreadPriority(): void {
  try {
    // "/proc/thread-self" → "<pid>/task/<tid>"; setpriority() on a thread id affects that thread only.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, EXTRACTION_NICE);
  } catch {
    // Not Linux, or no /proc: the thread runs at the process's priority.
  }
}
