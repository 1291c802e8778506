// The windowed-subscribe client loop of seed 002 ("Client example: fetch streaming, no
// EventSource"), unmodified except where the seed leaves blanks for the user: the constants come
// from the environment, and windowChanged() prints the window (sorted by -_ver.id, as the seed's
// comment asks) as one JSON line per change for the test that runs this against a Weir node
// (tests/integration/seed_client_test.cpp). Runs on Node.js 18+ with no packages.
const API = process.env.WEIR_API;            // e.g. "http://127.0.0.1:7001/v1"
const SPACE = process.env.WEIR_SPACE, CHAT = process.env.WEIR_CHAT,
      ACCOUNT = process.env.WEIR_ACCOUNT ?? "";
const stop = new AbortController();
let messages = new Map();

function windowChanged() {
  const ids = [...messages.values()]
    .sort((a, b) => (a._ver.id < b._ver.id ? 1 : a._ver.id > b._ver.id ? -1 : 0))
    .map((m) => m.id);
  console.log(JSON.stringify({ size: messages.size, ids }));
}

async function requireOK(res) {
  if (res.ok) return res;
  const body = await res.json().catch(() => null);
  throw Object.assign(new Error(body?.error?.code ?? `HTTP ${res.status}`),
    { status: res.status });
}

async function expectedAccount(signal) {
  const res = await fetch(`${API}/auth`, { signal });
  const auth = await (await requireOK(res)).json();
  if (!auth.authorized) {
    throw Object.assign(new Error("Waiting for the original account to be authorized."), { status: 401 });
  }
  return auth.accountId === ACCOUNT;
}

function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const aborted = () => { clearTimeout(timer); reject(signal.reason); };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", aborted);
      resolve();
    }, ms);
    signal.addEventListener("abort", aborted, { once: true });
  });
}

// Returns after `closed` or clean EOF. Both return to the same retry loop.
async function subscribe(url, body, onFrame, signal) {
  const res = await requireOK(await fetch(url, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body), signal,
  }));
  if (!res.body) throw new Error("Subscription response has no body");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let boundary;
      while ((boundary = /\r?\n\r?\n/.exec(buf))) {
        const frame = buf.slice(0, boundary.index);
        buf = buf.slice(boundary.index + boundary[0].length);
        let event = "message";
        const data = [];
        for (const line of frame.split(/\r?\n/)) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          // Keepalive comments and fields this client does not use are ignored.
        }
        if (!data.length) continue;
        const payload = JSON.parse(data.join("\n"));
        onFrame(event, payload);
        if (event === "closed") return;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function onFrame(event, data) {
  if (event === "closed" && data.reason === "deauthorized") {
    messages.clear();
  } else if (event === "snapshot") {
    messages = new Map((data.records ?? []).map(r => [r.id, r]));
  } else if (event === "changes") {
    for (const ev of data) {
      for (const r of ev.added ?? []) messages.set(r.id, r.doc);
      for (const r of ev.updated ?? []) messages.set(r.id, r.doc);
      for (const r of ev.removed ?? []) messages.delete(r.id);
    }
  } else return;
  windowChanged();
}

async function run(signal) {
  while (!signal.aborted) {
    try {
      if (!await expectedAccount(signal)) {
        messages.clear();
        windowChanged();
        return;                            // another account is authorized
      }
      await subscribe(`${API}/spaces/${SPACE}/query/subscribe`,
        { objectId: CHAT, dataset: "chat_messages", sort: ["-_ver.id"], limit: 50 },
        onFrame, signal);
    } catch (e) {
      if (signal.aborted) return;
      if (e.status === 401) { messages.clear(); windowChanged(); }
      // Retry transport/server failures, 401 and 429; other client errors need a fix.
      if (e instanceof SyntaxError ||
          (e.status >= 400 && e.status < 500 && ![401, 429].includes(e.status))) throw e;
      console.warn("Subscription interrupted:", e.message);
    }
    await pause(1000, signal);
  }
}

run(stop.signal).catch(e => { if (!stop.signal.aborted) console.error(e); });
// When the view closes: stop.abort();
