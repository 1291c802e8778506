// The retry pacing both live streams use: a delay that doubles per failure in a row up to a
// bound, with jitter (half to all of it) so that clients cut off together do not come back
// together, and a pause that an AbortSignal ends early.

/** The delay before retry number `failures` (0-based). */
export function backoffDelay(failures: number, minMs: number, maxMs: number): number {
  return Math.min(maxMs, minMs * 2 ** failures) * (0.5 + Math.random() / 2);
}

/** Waits `ms`; resolves false at once (or as soon as) `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve(false);
      return;
    }
    const aborted = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", aborted);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", aborted, { once: true });
  });
}
