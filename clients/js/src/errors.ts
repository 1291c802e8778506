// Errors as Weir answers them: the HTTP status and the envelope
// {"error":{"code","message","details"}} every refusal carries (docs/protocols.md), so a caller
// can branch on a stable code instead of parsing messages.

/** A request Weir refused (4xx/5xx with its error envelope), or one that failed on its way. */
export class WeirError extends Error {
  /** The stable error code, e.g. `request.invalid_field`, `space.not_found`; `network` when no answer came. */
  readonly code: string;
  /** The HTTP status (0 when no answer came). */
  readonly status: number;
  /** The envelope's `details`, when it had some. */
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, status: number, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "WeirError";
    this.code = code;
    this.status = status;
    this.details = details;
  }

  /** Whether sending the same request again later may succeed (overload, unavailability, drain). */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status === 503 || this.status >= 500;
  }
}

/** Reads a refused response into a WeirError (the envelope when there is one). */
export async function errorFrom(res: Response): Promise<WeirError> {
  let body: unknown = null;
  const text = await res.text().catch(() => "");
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the status says it
  }
  const e = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  if (e && typeof e.code === "string") {
    return new WeirError(
      e.code,
      typeof e.message === "string" ? e.message : e.code,
      res.status,
      e.details && typeof e.details === "object" ? (e.details as Record<string, unknown>) : {},
    );
  }
  return new WeirError(`http.${res.status}`, text || `HTTP ${res.status}`, res.status);
}
