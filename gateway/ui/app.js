// Weir's admin page: follows /ui/events (an `event: stats` document every second, see
// docs/operations.md#admin-page) and draws it. Rates are differences of cumulative counters
// between two documents, divided by the time between them (`at`), so a document the server
// skipped for a slow reader costs nothing but resolution. Everything is written with
// textContent and SVG attributes: nothing from the server is ever parsed as markup.
"use strict";

const HISTORY = 60; // samples in a chart: the last minute at one document per second
const SVG = "http://www.w3.org/2000/svg";

const $ = (id) => document.getElementById(id);
const state = {
  previous: null, // the last document, for rates
  writes: [], // cluster writes/s, oldest first
  frames: [],
  source: null,
  retry: null,
};

const number = new Intl.NumberFormat("en-US");
function count(v) {
  return v === null || v === undefined ? "–" : number.format(v);
}
function rate(v) {
  if (v === null || v === undefined) return "–";
  return v < 10 ? v.toFixed(1) : number.format(Math.round(v));
}

/// Per member: how much `field` grew since the previous document, per second. Members that
/// have no figure in either document (never answered) are left out; a counter that went down
/// (the member restarted) counts from zero.
function rates(doc, field) {
  const out = new Map();
  const prev = state.previous;
  if (!prev || doc.at <= prev.at) return out;
  const seconds = (doc.at - prev.at) / 1000;
  const before = new Map(prev.members.map((m) => [m.id, m[field]]));
  for (const m of doc.members) {
    const now = m[field];
    const then = before.get(m.id);
    if (now === null || now === undefined || then === null || then === undefined) continue;
    out.set(m.id, (now >= then ? now - then : now) / seconds);
  }
  return out;
}

function sum(members, field) {
  let total = 0;
  let any = false;
  for (const m of members) {
    if (typeof m[field] === "number") {
      total += m[field];
      any = true;
    }
  }
  return any ? total : null;
}

function cell(row, text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  row.appendChild(td);
  return td;
}

function stateBadge(td, m) {
  td.textContent = "";
  const badge = document.createElement("span");
  const label = m.draining ? "draining" : m.state;
  badge.className = "badge badge-" + label;
  badge.textContent = label;
  td.appendChild(badge);
}

function drawMembers(doc, writeRates, frameRates) {
  const table = $("members");
  const elastic = doc.members.some((m) => m.owner !== undefined);
  table.classList.toggle("elastic", elastic);
  const body = table.tBodies[0];
  const rows = [];
  for (const m of doc.members) {
    const tr = document.createElement("tr");
    tr.dataset.member = m.id;
    if (m.self) tr.className = "self";
    const name = cell(tr, m.id === "" ? "this node" : m.id);
    if (m.self) {
      const you = document.createElement("span");
      you.className = "you";
      you.textContent = "this node";
      if (m.id !== "") name.appendChild(you);
    }
    stateBadge(cell(tr, ""), m);
    cell(tr, m.owner === undefined ? "" : m.owner ? "owner" : "—", "owner-col");
    cell(tr, count(m.units), "num");
    cell(tr, count(m.queryKeys), "num");
    cell(tr, count(m.connections), "num");
    cell(tr, count(m.subscriptions), "num");
    cell(tr, rate(writeRates.get(m.id)), "num");
    cell(tr, count(m.writesTotal), "num");
    cell(tr, rate(frameRates.get(m.id)), "num");
    rows.push(tr);
  }
  body.replaceChildren(...rows);
}

function drawSlowest(doc) {
  const rows = doc.slowest.map((c) => {
    const tr = document.createElement("tr");
    cell(tr, c.member === "" ? "this node" : c.member);
    cell(tr, c.connection, "mono");
    cell(tr, c.transport);
    cell(tr, count(c.queuedBytes), "num");
    cell(tr, count(c.framesSent), "num");
    return tr;
  });
  $("slowest").tBodies[0].replaceChildren(...rows);
  $("slowest").classList.toggle("hidden", rows.length === 0);
  $("slowest-empty").classList.toggle("hidden", rows.length !== 0);
}

/// A sparkline of `values` (oldest first) in `svg`'s 240×48 box: the line, the area under it,
/// and the latest point. The scale starts at 0 and ends at the largest value shown (at least 1),
/// which `peak` names, since a chart without a scale says only "more" or "less".
function drawChart(svg, peak, values) {
  const w = 240;
  const h = 48;
  const pad = 3;
  const max = Math.max(1, ...values);
  const step = w / (HISTORY - 1);
  const x0 = w - (values.length - 1) * step;
  const points = values.map((v, i) => [x0 + i * step, h - pad - (v / max) * (h - 2 * pad)]);
  const line = points.map(([x, y]) => x.toFixed(1) + "," + y.toFixed(1)).join(" ");
  const parts = [];
  const grid = document.createElementNS(SVG, "line");
  grid.setAttribute("class", "grid");
  grid.setAttribute("x1", "0");
  grid.setAttribute("x2", String(w));
  grid.setAttribute("y1", String(h - pad));
  grid.setAttribute("y2", String(h - pad));
  parts.push(grid);
  if (points.length > 1) {
    const area = document.createElementNS(SVG, "polygon");
    area.setAttribute("class", "area");
    const first = points[0][0].toFixed(1);
    const last = points[points.length - 1][0].toFixed(1);
    area.setAttribute("points", `${first},${h - pad} ${line} ${last},${h - pad}`);
    parts.push(area);
    const path = document.createElementNS(SVG, "polyline");
    path.setAttribute("class", "line");
    path.setAttribute("points", line);
    parts.push(path);
  }
  if (points.length > 0) {
    const [x, y] = points[points.length - 1];
    const dot = document.createElementNS(SVG, "circle");
    dot.setAttribute("class", "dot");
    dot.setAttribute("cx", x.toFixed(1));
    dot.setAttribute("cy", y.toFixed(1));
    dot.setAttribute("r", "2.5");
    parts.push(dot);
  }
  svg.replaceChildren(...parts);
  peak.textContent = values.length ? `peak ${rate(Math.max(...values))} · last 60 s` : "";
}

function push(series, value) {
  series.push(value);
  if (series.length > HISTORY) series.shift();
}

function sumRates(map) {
  let total = 0;
  for (const v of map.values()) total += v;
  return total;
}

function draw(doc) {
  const writeRates = rates(doc, "writesTotal");
  const frameRates = rates(doc, "framesTotal");
  $("node").textContent = doc.node === "" ? "single node" : "node " + doc.node;
  const up = doc.members.filter((m) => m.state === "up").length;
  $("members-up").textContent = `${up} / ${doc.members.length}`;
  const suspect = doc.members.filter((m) => m.state === "suspect").length;
  const down = doc.members.filter((m) => m.state === "down").length;
  const draining = doc.members.filter((m) => m.draining).length;
  const detail = [];
  if (suspect) detail.push(`${suspect} suspect`);
  if (down) detail.push(`${down} down`);
  if (draining) detail.push(`${draining} draining`);
  $("members-detail").textContent = detail.length ? detail.join(" · ") : "all answering";
  $("total-connections").textContent = count(sum(doc.members, "connections"));
  $("total-subscriptions").textContent = count(sum(doc.members, "subscriptions"));
  $("total-querykeys").textContent = count(sum(doc.members, "queryKeys")) + " query keys";
  const writes = sum(doc.members, "writesTotal");
  const frames = sum(doc.members, "framesTotal");
  $("total-writes").textContent = count(writes);
  $("total-writes").dataset.value = writes === null ? "" : String(writes);
  $("total-frames").textContent = count(frames);
  $("total-frames").dataset.value = frames === null ? "" : String(frames);
  if (state.previous) {
    const w = sumRates(writeRates);
    const f = sumRates(frameRates);
    push(state.writes, w);
    push(state.frames, f);
    $("writes-rate").textContent = rate(w);
    $("frames-rate").textContent = rate(f);
  }
  drawChart($("writes-chart"), $("writes-peak"), state.writes);
  drawChart($("frames-chart"), $("frames-peak"), state.frames);
  drawMembers(doc, writeRates, frameRates);
  drawSlowest(doc);
  $("updated").textContent = "updated " + new Date(doc.at).toLocaleTimeString("en-GB");
  state.previous = doc;
}

function setLink(text, kind) {
  const pill = $("link");
  pill.textContent = text;
  pill.className = "pill pill-" + kind;
}

function notice(text) {
  $("notice").textContent = text;
  $("notice").classList.toggle("hidden", text === "");
}

/// Why the stream was refused: EventSource does not say, so the same request is made as a
/// HEAD, which answers the status alone.
async function explain() {
  try {
    const r = await fetch("/ui/events", { method: "HEAD", credentials: "same-origin" });
    if (r.status === 401) {
      notice("Sign in to see the data: this node requires a token with the admin role " +
             "(auth.adminRole), sent as its auth.jwt cookie.");
      setLink("signed out", "bad");
    } else if (r.status === 403) {
      notice("Your token lacks the admin role this node requires (auth.adminRole).");
      setLink("forbidden", "bad");
    } else if (r.status === 503) {
      notice("This node is shutting down.");
      setLink("draining", "warn");
    } else {
      setLink("reconnecting", "warn");
    }
  } catch {
    notice("This node does not answer.");
    setLink("offline", "bad");
  }
}

function connect() {
  clearTimeout(state.retry);
  const source = new EventSource("/ui/events");
  state.source = source;
  source.addEventListener("open", () => {
    setLink("live", "ok");
    notice("");
  });
  source.addEventListener("stats", (e) => {
    setLink("live", "ok");
    draw(JSON.parse(e.data));
  });
  source.addEventListener("closed", () => {
    notice("This node is shutting down; reconnecting when it is back.");
    setLink("draining", "warn");
  });
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.CLOSED) {
      // Refused (EventSource gives up on any answer but 200): find out why, and try again
      // later in case the operator signs in or the node comes back.
      source.close();
      explain();
      state.retry = setTimeout(connect, 5000);
    } else {
      setLink("reconnecting", "warn");
    }
  });
}

connect();
