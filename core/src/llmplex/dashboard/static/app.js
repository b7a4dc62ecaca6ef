// The llmplex call log dashboard: fetches its JSON API (relative URLs, so it works at / and under /ui/)
// and draws the charts as SVG itself; no library, nothing from the network. Logged text is only ever
// set as textContent, never parsed as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const PER_PAGE = 25;
const state = { page: 1, total: 0, filter: {} };

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function usd(value) {
  if (value === null || value === undefined) return "unknown";
  const number = Number(value);
  return "$" + number.toFixed(number !== 0 && Math.abs(number) < 1 ? 4 : 2);
}

function count(value) {
  return value === null || value === undefined ? "-" : Number(value).toLocaleString("en-US");
}

async function getJSON(path) {
  const response = await fetch(path, { headers: { accept: "application/json" }, credentials: "same-origin" });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.status + " " + response.statusText);
  return data;
}

function showError(error) {
  const box = document.getElementById("error");
  box.textContent = error ? String(error.message || error) : "";
  box.hidden = !error;
}

function query(extra) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...state.filter, ...extra })) {
    if (value !== "" && value !== undefined && value !== null) params.set(name, value);
  }
  return params.toString();
}

// A bar chart: one bar per row, over time (vertical bars) or by group (horizontal bars with their figure).
function barChart(figure, rows, value, format, vertical) {
  const box = figure.querySelector(".chart");
  box.replaceChildren();
  const values = rows.map((row) => Math.max(0, Number(value(row)) || 0));
  if (!rows.length) {
    box.append(el("p", { class: "empty" }, "no calls yet"));
    return;
  }
  const top = Math.max(...values) || 1;
  const width = 560;
  let chart;
  if (vertical) {
    const height = 180, left = 60, bottom = 22, plot = height - bottom - 8;
    const step = (width - left) / rows.length, barWidth = Math.max(1, step * 0.8);
    chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img" });
    chart.append(svg("text", { x: left - 6, y: 12, "text-anchor": "end" }, format(top)));
    chart.append(svg("text", { x: left - 6, y: 8 + plot, "text-anchor": "end" }, format(0)));
    chart.append(svg("line", { x1: left, x2: width, y1: 8 + plot, y2: 8 + plot, stroke: "#d9dee5" }));
    rows.forEach((row, i) => {
      const h = (values[i] / top) * plot;
      const bar = svg("rect", {
        class: "bar", x: left + i * step, y: 8 + plot - h, width: barWidth, height: h,
        "data-label": row.group, "data-value": value(row) ?? "",
      });
      bar.append(svg("title", {}, `${row.group}: ${format(value(row))}`));
      chart.append(bar);
    });
    chart.append(svg("text", { x: left, y: height - 4 }, rows[0].group));
    if (rows.length > 1) chart.append(svg("text", { x: width, y: height - 4, "text-anchor": "end" }, rows[rows.length - 1].group));
  } else {
    const shown = rows.slice(0, 12), line = 24, left = 190, right = 90;
    const height = shown.length * line + 4;
    chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img" });
    shown.forEach((row, i) => {
      const w = (values[i] / top) * (width - left - right);
      const y = 2 + i * line;
      const name = row.group.length > 30 ? row.group.slice(0, 29) + "…" : row.group;
      chart.append(svg("text", { x: left - 6, y: y + 15, "text-anchor": "end" }, name));
      const bar = svg("rect", {
        class: "bar", x: left, y: y + 3, width: Math.max(w, 0.5), height: line - 7,
        "data-label": row.group, "data-value": value(row) ?? "",
      });
      bar.append(svg("title", {}, `${row.group}: ${format(value(row))} (${count(row.calls)} calls)`));
      chart.append(bar);
      chart.append(svg("text", { class: "value", x: left + w + 5, y: y + 15 }, format(value(row))));
    });
  }
  box.append(chart);
}

function renderTotals(totals) {
  const box = document.getElementById("totals");
  box.replaceChildren();
  const figures = totals ? [
    ["calls", count(totals.calls)], ["failed", count(totals.errors)], ["spend", usd(totals.cost_usd)],
    ["unpriced", count(totals.unpriced)], ["input tokens", count(totals.input_tokens)],
    ["output tokens", count(totals.output_tokens)],
  ] : [["calls", "none logged yet"]];
  for (const [name, text] of figures) {
    const pair = el("div", { "data-total": name });
    pair.append(el("dt", {}, name), el("dd", {}, text));
    box.append(pair);
  }
}

async function loadSummary() {
  const data = await getJSON("api/summary");
  renderTotals(data.totals);
  const cost = (row) => row.cost_usd;
  barChart(document.getElementById("chart-spend"), data.by_day, cost, usd, true);
  barChart(document.getElementById("chart-calls"), data.by_day, (row) => row.calls, count, true);
  barChart(document.getElementById("chart-model"), data.by_model, cost, usd, false);
  barChart(document.getElementById("chart-provider"), data.by_provider, cost, usd, false);
  const keys = document.getElementById("chart-key");
  keys.hidden = !data.by_key.length;
  if (data.by_key.length) barChart(keys, data.by_key, cost, usd, false);
}

// The model groups (the gateway's /ui): how the logged calls split over each deployment, and which cools now.
async function loadGroups() {
  const data = await getJSON("api/groups");
  const section = document.getElementById("groups");
  section.hidden = !data.groups.length;
  const rows = document.getElementById("group-rows");
  rows.replaceChildren();
  for (const group of data.groups) {
    group.deployments.forEach((deployment, index) => {
      const row = el("tr", { "data-group": group.group, "data-deployment": deployment.deployment });
      const share = deployment.share === null ? "-" : (100 * deployment.share).toFixed(1) + " %";
      const health = deployment.cooling_seconds > 0 ? "cooling " + deployment.cooling_seconds.toFixed(1) + " s" : "ok";
      row.append(
        el("td", {}, index === 0 ? group.group + " (" + group.strategy + ")" : ""),
        el("td", {}, deployment.deployment),
        el("td", { class: "num" }, deployment.weight),
        el("td", { class: "num" }, count(deployment.calls)),
        el("td", { class: "num" }, share),
        el("td", { class: deployment.cooling_seconds > 0 ? "cooling" : "" }, health),
        el("td", { class: "num" }, count(deployment.in_flight)),
      );
      rows.append(row);
    });
  }
}

function tokens(row) {
  if (row.input_tokens === null && row.output_tokens === null) return "-";
  return count((row.input_tokens || 0) + (row.output_tokens || 0));
}

async function loadCalls() {
  const data = await getJSON("api/calls?" + query({ page: state.page, per_page: PER_PAGE }));
  state.total = data.total;
  const body = document.getElementById("rows");
  body.replaceChildren();
  for (const call of data.calls) {
    const row = el("tr", { "data-id": call.id, class: call.status });
    let answer = call.status === "error" ? "error: " + (call.error_type || "") : call.answer || "";
    if (call.tool_call) answer = `${answer} [tool call: ${call.tool_call}]`.trim();
    const link = el("td");
    link.append(el("a", { href: "#call-" + call.id }, call.id));  // reachable from the keyboard too
    row.append(
      link, el("td", {}, (call.created_at || "").slice(0, 19).replace("T", " ")),
      el("td", { title: call.model_asked }, `${call.provider}:${call.model}`),
      el("td", {}, call.prompt || ""), el("td", {}, answer),
      el("td", { class: "num" }, tokens(call)), el("td", { class: "num" }, usd(call.cost_usd)),
      el("td", { class: "num" }, call.latency === null ? "-" : Number(call.latency).toFixed(2) + " s"),
    );
    row.addEventListener("click", () => { location.hash = "call-" + call.id; });
    body.append(row);
  }
  const first = data.total ? (state.page - 1) * PER_PAGE + 1 : 0;
  const last = (state.page - 1) * PER_PAGE + data.calls.length;
  document.getElementById("page-info").textContent = `${count(first)}–${count(last)} of ${count(data.total)}`;
  document.getElementById("newer").disabled = state.page <= 1;
  document.getElementById("older").disabled = last >= data.total;
  body.dataset.render = String(Number(body.dataset.render || 0) + 1);  // tells a watcher the table is redrawn
}

function contentNodes(content) {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return [el("pre", {}, content)];
  return content.map((part) => {
    if (typeof part === "string") return el("pre", {}, part);
    if (part.type === "text") return el("pre", {}, part.text || "");
    const where = part.url ? part.url : `${count(part.size)} bytes, sha256 ${(part.sha256 || "").slice(0, 12)}`;
    return el("pre", { class: "part" }, `[${part.type} ${part.media_type || ""}: ${where}]`);
  });
}

function messageNode(message, label) {
  const item = el("li", { class: "message " + message.role });
  let head = label || message.role;
  if (message.role === "tool") head = `tool result${message.name ? " of " + message.name : ""} (${message.tool_call_id || ""})`;
  item.append(el("div", { class: "role" }, head));
  item.append(...contentNodes(message.content));
  for (const part of message.reasoning || []) {
    if (part.text) item.append(el("div", { class: "reasoning" }, "reasoning: " + part.text));
  }
  for (const call of message.tool_calls || []) {
    item.append(el("div", { class: "tool-call", "data-tool": call.name }, `tool call ${call.id}: ${call.name}(${call.arguments})`));
  }
  if (message.refusal) item.append(el("pre", { class: "refusal" }, "refused: " + message.refusal));
  return item;
}

function meta(call) {
  const usage = call.usage || {};
  return [
    ["time (UTC)", call.created_at], ["model asked", call.model_asked], ["answered by", `${call.provider}:${call.model}`],
    ["status", call.status + (call.error_type ? ` (${call.error_type})` : "")], ["finish", call.finish_reason],
    ["tokens", `${count(usage.input_tokens)} in, ${count(usage.output_tokens)} out, ${count(usage.cached_tokens)} cached, ${count(usage.reasoning_tokens)} reasoning`],
    ["cost", usd(usage.cost_usd) + (usage.cost_note ? ` (${usage.cost_note})` : "")],
    ["latency", call.latency === null ? "-" : Number(call.latency).toFixed(2) + " s"], ["attempts", call.attempts],
    ["conversation", call.conversation_id], ["key", call.key_name],
  ].filter(([, value]) => value !== null && value !== undefined && value !== "");
}

async function showCall(id) {
  const section = document.getElementById("conversation");
  const call = await getJSON("api/calls/" + encodeURIComponent(id));
  document.getElementById("call-id").textContent = String(call.id);
  const list = document.getElementById("call-meta");
  list.replaceChildren();
  for (const [name, value] of meta(call)) list.append(el("dt", {}, name), el("dd", {}, value));
  const turns = document.getElementById("turns");
  turns.replaceChildren();
  if (call.conversation.length > 1) {
    for (const turn of call.conversation) {
      const link = el("a", { href: "#call-" + turn.id, class: turn.id === call.id ? "current" : "" }, `#${turn.id} ${turn.model}`);
      const item = el("li");
      item.append(link);
      turns.append(item);
    }
  }
  const messages = document.getElementById("messages");
  messages.replaceChildren();
  if (call.messages === null) {
    messages.append(el("li", { class: "message" }, "This call was logged without its messages ([log] bodies = false)."));
  } else {
    for (const message of call.messages) messages.append(messageNode(message));
    if (call.answer) messages.append(messageNode({ role: "assistant", ...call.answer }, "answer"));
    else if (call.status === "error") messages.append(el("li", { class: "message error" }, "failed: " + call.error_type));
  }
  section.hidden = false;
  section.scrollIntoView({ block: "start" });
}

async function route() {
  const match = /^#call-(\d+)$/.exec(location.hash);
  if (!match) {
    document.getElementById("conversation").hidden = true;
    return;
  }
  try { await showCall(match[1]); showError(null); } catch (error) { showError(error); }
}

async function refreshCalls() {
  try { await loadCalls(); showError(null); } catch (error) { showError(error); }
}

function start() {
  document.getElementById("search").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    state.filter = { q: form.get("q").trim(), model: form.get("model").trim(), status: form.get("status") };
    state.page = 1;
    refreshCalls();
  });
  document.getElementById("newer").addEventListener("click", () => { state.page -= 1; refreshCalls(); });
  document.getElementById("older").addEventListener("click", () => { state.page += 1; refreshCalls(); });
  document.getElementById("close").addEventListener("click", () => { history.pushState(null, "", location.pathname); route(); });
  window.addEventListener("hashchange", route);
  Promise.all([loadSummary(), loadCalls(), loadGroups()])
    .then(() => { document.body.dataset.ready = "true"; })
    .catch((error) => { showError(error); document.body.dataset.ready = "error"; });
  route();
}

document.addEventListener("DOMContentLoaded", start);
