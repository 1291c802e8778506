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
  let buf = "";
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { value, done } = await reader.read();
      if (done) {
        return;
      }
      buf += value;
      let boundary: RegExpExecArray | null;
      while ((boundary = /\r?\n\r?\n/.exec(buf))) {
        const frame = buf.slice(0, boundary.index);
        buf = buf.slice(boundary.index + boundary[0].length);
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
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
