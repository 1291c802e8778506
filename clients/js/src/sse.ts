// Server-Sent Events read from a streaming fetch body (a POST cannot use EventSource): frames
// separated by a blank line, `event:` and `data:` fields (several `data:` lines joined by "\n"),
// comments (`: keepalive`) and other fields skipped, CRLF or LF line ends, UTF-8 split anywhere.

export interface SseFrame {
  event: string;
  data: string;
}

/** Yields each frame that has data, in order, until the body ends. */
export async function* readSse(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<SseFrame> {
  // (The DOM typings' TextDecoderStream takes any BufferSource; a body gives Uint8Arrays.)
  const reader = body
    .pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>)
    .getReader();
  // An abort ends a read in progress too, whatever fetch the body came from.
  const onAbort = () => {
    reader.cancel(signal?.reason).catch(() => {});
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  let buf = "";
  let scanned = 0; // where the search for the next blank line resumes (linear in the body)
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { value, done } = await reader.read();
      if (done) {
        signal?.throwIfAborted();
        return;
      }
      buf += value;
      for (;;) {
        const boundary = /\r?\n\r?\n/g;
        boundary.lastIndex = Math.max(0, scanned - 3);
        const m = boundary.exec(buf);
        if (!m) {
          scanned = buf.length;
          break;
        }
        const frame = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        scanned = 0;
        let event = "message";
        const data: string[] = [];
        for (const line of frame.split(/\r?\n/)) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) {
          yield { event, data: data.join("\n") };
        }
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
