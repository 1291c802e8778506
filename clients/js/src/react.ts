// @weir/client/react: a live window as React state. Thin on purpose: useWindow runs
// subscribeWindow (the recovery loop, the window kept in sort order) in an effect, keyed by the
// request's JSON text, and aborts it when the component unmounts or the request changes. React
// is a peer dependency of this entry point only; the main entry point does not import it.

import { useEffect, useRef, useState } from "react";

import type { WeirClient } from "./index.js";
import type { WeirError } from "./errors.js";
import type { SubscribeWindowOptions, WindowEnd, WindowRequest, WindowState } from "./window.js";

/** What useWindow returns; each render sees the latest. */
export interface UseWindowResult {
  /** The window after its last snapshot or change; undefined until the first snapshot. */
  window: WindowState | undefined;
  /** What ended the subscription when it could not go on (an error the loop does not retry). */
  error: unknown;
  /** How the subscription ended, when it did without an error. */
  ended: WindowEnd | undefined;
  /** The last failed attempt that is being retried, cleared by the next snapshot. */
  retrying: WeirError | undefined;
}

export type UseWindowOptions = Omit<SubscribeWindowOptions, "signal">;

/**
 * A live window of `space` for `request` (the windowed subscribe API). A new subscription starts
 * when the space, the request (compared by its JSON text), `apply` or `accountId` changes; the
 * callbacks in `options` are read when called, so passing new functions does not restart it.
 */
export function useWindow(client: WeirClient, space: string, request: WindowRequest, options: UseWindowOptions = {}): UseWindowResult {
  const [state, setState] = useState<UseWindowResult>(empty);
  const latest = useRef(options);
  latest.current = options;
  const key = JSON.stringify([space, request, options.apply ?? "docs", options.accountId ?? null]);
  useEffect(() => {
    const ac = new AbortController();
    const [s, r] = JSON.parse(key) as [string, WindowRequest];
    setState(empty);
    const subscribeOptions: SubscribeWindowOptions = {
      signal: ac.signal,
      onClosed: (reason) => latest.current.onClosed?.(reason),
      onRetry: (error, delayMs) => {
        if (!ac.signal.aborted) setState((prev) => ({ ...prev, retrying: error }));
        latest.current.onRetry?.(error, delayMs);
      },
    };
    if (latest.current.apply !== undefined) subscribeOptions.apply = latest.current.apply;
    if (latest.current.accountId !== undefined) subscribeOptions.accountId = latest.current.accountId;
    if (latest.current.minRetryMs !== undefined) subscribeOptions.minRetryMs = latest.current.minRetryMs;
    if (latest.current.maxRetryMs !== undefined) subscribeOptions.maxRetryMs = latest.current.maxRetryMs;
    client
      .subscribeWindow(s, r, (w) => {
        // A copy: the loop hands over its own object, and React compares by identity.
        if (!ac.signal.aborted) setState((prev) => ({ ...prev, window: { ...w, records: [...w.records] }, retrying: w.live ? undefined : prev.retrying }));
      }, subscribeOptions)
      .then(
        (ended) => {
          if (!ac.signal.aborted) setState((prev) => ({ ...prev, ended }));
        },
        (error: unknown) => {
          if (!ac.signal.aborted) setState((prev) => ({ ...prev, error }));
        },
      );
    return () => ac.abort();
  }, [client, key]);
  return state;
}

const empty: UseWindowResult = { window: undefined, error: undefined, ended: undefined, retrying: undefined };
