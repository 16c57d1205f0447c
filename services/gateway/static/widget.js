/*
 * ragway chat widget: <script src="https://HOST/widget.js" data-key="PUBLIC_KEY" defer></script>
 *
 * Plain JavaScript, no dependency, no eval, no inline script or style attribute, so it runs
 * under a strict Content-Security-Policy (docs/widget.md): script-src and connect-src must
 * allow the gateway's origin. Everything lives in a Shadow DOM so the host page's CSS and
 * ours never meet. Every piece of model or document text is set with textContent.
 *
 * Streaming uses fetch + ReadableStream (EventSource cannot send Authorization). The run id,
 * the last event id and what is shown are kept in sessionStorage: after a dropped connection
 * or a reload the stream resumes with Last-Event-ID, so the text is exact, none twice.
 *
 * Conversations: the conversation id the first answer returns is kept in sessionStorage beside
 * the runs and sent with every later question, so the gateway asks a follow-up ("and on
 * Business?") as a standalone query; when it did, the answer shows "Searched for: …" (from
 * the retrieval.completed event). "New conversation" forgets the id and the history.
 *
 * After an answer, thumbs up/down send POST /v1/runs/{id}/feedback (sending again replaces it).
 * Accessibility: every control is a labelled <button> or <textarea>; each answer is its own
 * polite live region, aria-busy while it streams so a screen reader reads it once, whole.
 */
(() => {
  "use strict";

  const script = document.currentScript ||
    document.querySelector('script[src*="widget.js"][data-key]');
  if (!script || window.__ragwayWidget) return;
  window.__ragwayWidget = true;

  const BASE = new URL(script.src, location.href).origin;
  const KEY = script.dataset.key || "";
  const TITLE = script.dataset.title || "Ask the docs";
  const PLACEHOLDER = script.dataset.placeholder || "Ask a question…";
  const THEME = ["light", "dark"].includes(script.dataset.theme) ? script.dataset.theme : "auto";
  const POSITION = script.dataset.position === "left" ? "left" : "right";
  const DOCS_BASE = script.dataset.docsBase || "";
  const STORE_KEY = "ragway-widget:" + BASE;

  const BACKOFF_START_MS = 500;
  const BACKOFF_MAX_MS = 8000;
  const MAX_RETRIES = 8;
  const STALL_MS = 45000; // heartbeats come every 15 s: silence this long is a dead link

  const CSS = `
:host { all: initial; }
.root {
  --rw-bg: #ffffff; --rw-fg: #1b1f24; --rw-muted: #57606a; --rw-border: #d0d7de;
  --rw-accent: #0b5cad; --rw-accent-fg: #ffffff; --rw-bubble: #eef3f8; --rw-warn: #9a6700;
  --rw-error: #b42318; --rw-focus: #1f6feb;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--rw-fg);
  position: fixed; bottom: 16px; z-index: 2147483000;
  display: flex; flex-direction: column; align-items: flex-end;
}
.root.left { align-items: flex-start; }
.root.right { right: 16px; } .root.left { left: 16px; }
.root.dark {
  --rw-bg: #16191d; --rw-fg: #e6edf3; --rw-muted: #9ba6b1; --rw-border: #3a424b;
  --rw-accent: #4c9aff; --rw-accent-fg: #0d1117; --rw-bubble: #222830; --rw-warn: #e3b341;
  --rw-error: #ff7b72; --rw-focus: #79c0ff;
}
@media (prefers-color-scheme: dark) {
  .root.auto {
    --rw-bg: #16191d; --rw-fg: #e6edf3; --rw-muted: #9ba6b1; --rw-border: #3a424b;
    --rw-accent: #4c9aff; --rw-accent-fg: #0d1117; --rw-bubble: #222830; --rw-warn: #e3b341;
    --rw-error: #ff7b72; --rw-focus: #79c0ff;
  }
}
button, textarea { font: inherit; color: inherit; }
:focus-visible { outline: 3px solid var(--rw-focus); outline-offset: 2px; }
.launcher {
  border: 0; border-radius: 999px; padding: 12px 18px; cursor: pointer;
  background: var(--rw-accent); color: var(--rw-accent-fg); font-weight: 600;
  box-shadow: 0 4px 14px rgba(0,0,0,.25);
}
.panel {
  display: flex; flex-direction: column; box-sizing: border-box;
  width: min(400px, calc(100vw - 32px)); height: min(600px, calc(100vh - 96px));
  margin-bottom: 12px; background: var(--rw-bg); border: 1px solid var(--rw-border);
  border-radius: 12px; box-shadow: 0 8px 30px rgba(0,0,0,.3); overflow: hidden;
}
.panel[hidden] { display: none; }
header { display: flex; align-items: center; gap: 8px; padding: 10px 12px;
  border-bottom: 1px solid var(--rw-border); }
header h2 { flex: 1; margin: 0; font-size: 15px; }
.icon { border: 1px solid var(--rw-border); background: transparent; border-radius: 6px;
  padding: 2px 8px; cursor: pointer; }
.icon.new { font-size: 12px; }
.icon:disabled { cursor: default; opacity: .6; }
.log { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 12px; }
.q { align-self: flex-end; max-width: 85%; background: var(--rw-accent); color: var(--rw-accent-fg);
  padding: 6px 10px; border-radius: 10px; white-space: pre-wrap; overflow-wrap: anywhere; }
.a { background: var(--rw-bubble); padding: 8px 10px; border-radius: 10px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.searched { color: var(--rw-muted); font-size: 12px; margin: 0 0 4px; overflow-wrap: anywhere; }
.searched[hidden] { display: none; }
.state { color: var(--rw-muted); font-size: 12px; margin-top: 4px; }
.exchange[data-state=reconnecting] .state { color: var(--rw-warn); }
.exchange[data-state=error] .state, .refusal { color: var(--rw-error); }
.refusal { font-weight: 600; }
.sources { margin: 6px 0 0; padding-left: 18px; font-size: 12px; }
.sources a { color: var(--rw-accent); }
.sources .meta { color: var(--rw-muted); }
.feedback { display: flex; align-items: center; gap: 6px; margin-top: 6px; font-size: 12px; }
.feedback[hidden] { display: none; }
.feedback .label { color: var(--rw-muted); }
.thumb { border: 1px solid var(--rw-border); background: var(--rw-bg); border-radius: 6px;
  padding: 1px 8px; cursor: pointer; font-size: 14px; }
.thumb[aria-pressed=true] { background: var(--rw-accent); color: var(--rw-accent-fg);
  border-color: var(--rw-accent); }
form { display: flex; gap: 6px; padding: 10px; border-top: 1px solid var(--rw-border); }
textarea { flex: 1; resize: none; min-height: 38px; max-height: 120px; box-sizing: border-box;
  border: 1px solid var(--rw-border); border-radius: 8px; padding: 8px; background: var(--rw-bg); }
.send, .stop { border: 0; border-radius: 8px; padding: 0 14px; cursor: pointer; font-weight: 600; }
.send { background: var(--rw-accent); color: var(--rw-accent-fg); }
.stop { background: var(--rw-error); color: #fff; }
.stop[hidden], .send[hidden] { display: none; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

  /* ---------- DOM (built with createElement + textContent only) ---------- */

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else node.setAttribute(k, v);
    }
    if (text != null) node.textContent = text;
    return node;
  }

  const host = el("div", { id: "ragway-widget" });
  if (document.documentElement.lang) host.setAttribute("lang", document.documentElement.lang);
  const shadow = host.attachShadow({ mode: "open" });
  if ("adoptedStyleSheets" in shadow && typeof CSSStyleSheet === "function" && "replaceSync" in CSSStyleSheet.prototype) {
    // Constructed sheets are not inline styles: no 'unsafe-inline' needed in style-src.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    shadow.adoptedStyleSheets = [sheet];
  } else {
    shadow.appendChild(el("style", {}, CSS));
  }

  const root = el("div", { class: "root " + POSITION + " " + THEME });
  const panel = el("section", { class: "panel", id: "rw-panel", role: "dialog", "aria-labelledby": "rw-title", hidden: "" });
  const header = el("header");
  header.append(el("h2", { id: "rw-title" }, TITLE));
  // Forgets the conversation: the next question stands alone and starts a new one.
  const fresh = el("button", { class: "icon new", type: "button" }, "New conversation");
  const close = el("button", { class: "icon close", type: "button", "aria-label": "Close chat" }, "×");
  header.append(fresh, close);
  // A labelled region, not role=log: role=log is itself a live region, and each answer has
  // its own. Focusable, so a keyboard user can scroll it.
  const log = el("div", { class: "log", role: "region", "aria-label": "Conversation", tabindex: "0" });
  const form = el("form", { "aria-label": "Ask a question" });
  const input = el("textarea", { id: "rw-input", rows: "1", "aria-label": "Your question", placeholder: PLACEHOLDER, maxlength: "2000" });
  const send = el("button", { class: "send", type: "submit" }, "Send");
  const stop = el("button", { class: "stop", type: "button", hidden: "" }, "Stop");
  form.append(input, send, stop);
  panel.append(header, log, form);
  const launcher = el("button", { class: "launcher", type: "button", "aria-expanded": "false", "aria-controls": "rw-panel" }, TITLE);
  root.append(panel, launcher);
  shadow.append(root);

  /* ---------- state kept across reloads (sessionStorage) ---------- */

  let saved = { open: false, exchanges: [], conversationId: null };
  try {
    const raw = sessionStorage.getItem(STORE_KEY);
    if (raw) saved = Object.assign(saved, JSON.parse(raw));
  } catch (_) { /* storage blocked or corrupt: start afresh */ }

  function persist() {
    try { sessionStorage.setItem(STORE_KEY, JSON.stringify(saved)); } catch (_) { /* full or blocked */ }
  }

  /* ---------- rendering one exchange ---------- */

  const views = new Map(); // exchange object -> its DOM nodes

  function view(ex) {
    let v = views.get(ex);
    if (v) return v;
    const box = el("div", { class: "exchange" });
    const answer = el("div", { class: "a" });
    // One live region per answer, not the whole log: a screen reader hears this answer only.
    const text = el("div", { class: "text", "aria-live": "polite", "aria-atomic": "false" });
    // What the gateway searched for when it rewrote a follow-up: not part of the live answer.
    const searched = el("p", { class: "searched", hidden: "" });
    const refusal = el("p", { class: "refusal", hidden: "" });
    const sources = el("ol", { class: "sources", "aria-label": "Sources", hidden: "" });
    const feedback = el("div", { class: "feedback", role: "group", "aria-label": "Was this answer helpful?", hidden: "" });
    const up = el("button", { class: "thumb up", type: "button", "aria-label": "Yes, helpful", "aria-pressed": "false" }, "Yes");
    const down = el("button", { class: "thumb down", type: "button", "aria-label": "No, not helpful", "aria-pressed": "false" }, "No");
    up.addEventListener("click", () => sendFeedback(ex, "up"));
    down.addEventListener("click", () => sendFeedback(ex, "down"));
    feedback.append(el("span", { class: "label", "aria-hidden": "true" }, "Helpful?"), up, down);
    const state = el("div", { class: "state", role: "status" });
    answer.append(searched, text, refusal, sources, feedback, state);
    box.append(el("div", { class: "q" }, ex.question), answer);
    log.append(box);
    v = { box, searched, text, refusal, sources, feedback, up, down, state };
    views.set(ex, v);
    return v;
  }

  const STATE_TEXT = {
    sending: "Sending…", waiting: "Searching…", streaming: "Answering…",
    reconnecting: "Reconnecting…", done: "", cancelled: "Stopped.", error: "",
  };

  function render(ex) {
    const v = view(ex);
    v.box.dataset.state = ex.state;
    // Busy while it streams: a screen reader then reads the answer once, when it is whole.
    v.text.setAttribute("aria-busy", isTerminal(ex) ? "false" : "true");
    // A page's own "[5, 25, 50]" comes escaped ("\\[5, 25, 50]") so that it never reads as
    // a citation; people see the bracket (ragway/citations.py).
    const shown = ex.text.replace(/\\\[/g, "[");
    if (v.text.textContent !== shown) v.text.textContent = shown;
    v.searched.hidden = !ex.searched;
    v.searched.textContent = ex.searched ? "Searched for: " + ex.searched : "";
    v.refusal.hidden = !ex.refusal;
    v.refusal.textContent = ex.refusal ? "No answer: " + ex.refusal : "";
    v.state.textContent = ex.state === "error" ? ex.error : (ex.note || STATE_TEXT[ex.state] || ex.notice || "");
    renderSources(v.sources, ex.citations || []);
    v.feedback.hidden = ex.state !== "done" || !ex.runId;
    v.up.setAttribute("aria-pressed", String(ex.feedback === "up"));
    v.down.setAttribute("aria-pressed", String(ex.feedback === "down"));
    log.scrollTop = log.scrollHeight;
  }

  function safeHref(url) {
    try {
      const u = DOCS_BASE ? new URL(url, DOCS_BASE) : new URL(url);
      return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
    } catch (_) { return null; }
  }

  // Built from the API's citation records (title, section, version, url), never the answer text.
  function renderSources(list, citations) {
    if (list.childElementCount === citations.length) return;
    list.replaceChildren();
    for (const c of citations) {
      const item = el("li", { class: "source" });
      const href = c.url ? safeHref(c.url) : null;
      const label = c.title || c.document_id || "source";
      item.append(href ? el("a", { href, target: "_blank", rel: "noopener noreferrer" }, label) : el("span", {}, label));
      const meta = [c.section, c.version ? "v" + c.version : ""].filter(Boolean).join(" · ");
      if (meta) item.append(el("span", { class: "meta" }, " — " + meta));
      list.append(item);
    }
    list.hidden = citations.length === 0;
  }

  function setBusy(busy) {
    stop.hidden = !busy;
    send.hidden = busy;
    fresh.disabled = busy; // one answer at a time: it ends (or is stopped) first
    input.disabled = false;
  }

  /* ---------- API ---------- */

  class Fatal extends Error {}

  function authHeaders(extra) {
    return Object.assign({ Authorization: "Bearer " + KEY }, extra || {});
  }

  async function apiErrorInfo(res) {
    try {
      const body = await res.json();
      if (body && body.error && body.error.message) return { code: body.error.code || "", message: body.error.message };
    } catch (_) { /* not JSON */ }
    return { code: "", message: "HTTP " + res.status };
  }

  async function apiError(res) { return (await apiErrorInfo(res)).message; }

  function retryable(status) { return status >= 500 || status === 408 || status === 429; }

  function sleep(ms, signal) {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
    });
  }

  function parseId(id) {
    const m = /^(\d+)-(\d+)$/.exec(id || "");
    return m ? [Number(m[1]), Number(m[2])] : null;
  }

  function newer(a, b) { return !b || a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]); }

  // Fetch chunks split anywhere, even mid-line: keep the tail, act on whole lines.
  function sseParser(onEvent) {
    let buf = "", data = [], type = "", id = null;
    function line(l) {
      if (l === "") {
        if (data.length) onEvent({ id, type: type || "message", data: data.join("\n") });
        data = []; type = ""; id = null;
        return;
      }
      if (l[0] === ":") return; // heartbeat
      const i = l.indexOf(":");
      const field = i === -1 ? l : l.slice(0, i);
      let value = i === -1 ? "" : l.slice(i + 1);
      if (value[0] === " ") value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") type = value;
      else if (field === "id") id = value;
    }
    return (chunk) => {
      buf += chunk;
      let m;
      while ((m = /\r\n|\r|\n/.exec(buf)) && !(m[0] === "\r" && m.index === buf.length - 1)) {
        line(buf.slice(0, m.index));
        buf = buf.slice(m.index + m[0].length);
      }
    };
  }

  let live = null; // { ex, controller }

  function apply(ex, ev) {
    const parsed = parseId(ev.id);
    if (parsed) {
      if (!newer(parsed, parseId(ex.lastId))) return; // a replayed event already shown
      ex.lastId = ev.id;
    }
    let d = {};
    try { d = ev.data ? JSON.parse(ev.data) : {}; } catch (_) { d = {}; }
    switch (ev.type) {
      case "run.started":
        if (d.restarted) { ex.text = ""; ex.citations = []; ex.versions = {}; ex.searched = ""; }
        ex.state = "waiting"; break;
      case "retrieval.completed":
        ex.searched = typeof d.query === "string" ? d.query : ""; // only for a rewritten follow-up
        ex.versions = {};
        for (const s of d.sources || []) ex.versions[s.number] = s.version;
        break;
      case "answer.delta": ex.text += d.text || ""; ex.state = "streaming"; break;
      case "answer.reset": ex.text = ""; break;
      case "answer.completed":
        if (typeof d.answer === "string" && !d.refused) ex.text = d.answer;
        ex.citations = (d.citations || []).map((c) => ({
          title: c.title, section: c.section, url: c.url, document_id: c.document_id,
          version: (ex.versions || {})[c.number] || "",
        }));
        if (d.refused) ex.refusal = d.refusal_detail || d.refusal_reason || "the knowledge base has no answer";
        break;
      case "run.completed": ex.state = "done"; break;
      case "run.cancelled": ex.state = "cancelled"; break;
      case "run.failed":
        ex.state = "error";
        ex.error = "The answer failed: " + ((d.error && d.error.message) || "unknown error");
        break;
      default: return; // stream.closing or a newer event type: nothing to show
    }
    ex.note = "";
    persist();
    render(ex);
  }

  async function readStream(ex, signal) {
    const conn = new AbortController();
    const forward = () => conn.abort();
    signal.addEventListener("abort", forward);
    let watchdog = 0;
    const arm = () => { clearTimeout(watchdog); watchdog = setTimeout(() => conn.abort(), STALL_MS); };
    const headers = authHeaders({ Accept: "text/event-stream" });
    if (ex.lastId) headers["Last-Event-ID"] = ex.lastId;
    try {
      arm();
      const res = await fetch(BASE + "/v1/runs/" + encodeURIComponent(ex.runId) + "/events",
        { headers, signal: conn.signal, cache: "no-store" });
      if (!res.ok) {
        const msg = await apiError(res);
        throw retryable(res.status) ? new Error(msg) : new Fatal(msg);
      }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const push = sseParser((ev) => apply(ex, ev));
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm();
        push(decoder.decode(value, { stream: true }));
        if (isTerminal(ex)) { reader.cancel().catch(() => {}); break; }
      }
    } finally {
      clearTimeout(watchdog);
      signal.removeEventListener("abort", forward);
    }
  }

  function isTerminal(ex) { return ["done", "cancelled", "error"].includes(ex.state); }

  // Until a terminal event: each reconnect sends the last id, so only what was missed comes.
  async function follow(ex) {
    const controller = new AbortController();
    live = { ex, controller };
    setBusy(true);
    let failures = 0;
    try {
      while (!isTerminal(ex) && !controller.signal.aborted) {
        const before = ex.lastId;
        let problem = "the stream ended early";
        try {
          await readStream(ex, controller.signal);
        } catch (err) {
          if (controller.signal.aborted) break;
          if (err instanceof Fatal) { fail(ex, err.message); break; }
          problem = err.message || "network error";
        }
        if (isTerminal(ex) || controller.signal.aborted) break;
        failures = ex.lastId !== before ? 1 : failures + 1;
        if (failures > MAX_RETRIES) { fail(ex, "Lost the connection (" + problem + ")."); break; }
        // Exponential backoff with full jitter, so many widgets do not reconnect in step.
        const cap = Math.min(BACKOFF_START_MS * 2 ** (failures - 1), BACKOFF_MAX_MS);
        const delay = cap / 2 + Math.random() * cap / 2;
        ex.state = "reconnecting";
        ex.note = "Reconnecting… (try " + failures + " of " + MAX_RETRIES + ")";
        render(ex);
        await sleep(delay, controller.signal);
      }
    } finally {
      if (live && live.ex === ex) live = null;
      setBusy(false);
    }
  }

  function fail(ex, message) {
    ex.state = "error";
    ex.error = message;
    ex.note = "";
    persist();
    render(ex);
  }

  async function ask(question) {
    const ex = { question, text: "", citations: [], state: "sending", runId: null, lastId: null };
    saved.exchanges.push(ex);
    saved.exchanges = saved.exchanges.slice(-20);
    persist();
    render(ex);
    setBusy(true);
    let res;
    try {
      res = await submit(question, saved.conversationId);
      if (res.status === 404 && saved.conversationId) {
        const info = await apiErrorInfo(res);
        if (info.code !== "conversation_not_found") { setBusy(false); fail(ex, info.message); return; }
        // Expired (or begun with another key): the question starts a new conversation.
        saved.conversationId = null;
        ex.notice = "The earlier conversation had expired: this question started a new one.";
        res = await submit(question, null);
      }
    } catch (_) {
      setBusy(false);
      fail(ex, "Could not reach the answer service.");
      return;
    }
    if (!res.ok) {
      setBusy(false);
      const info = await apiErrorInfo(res);
      fail(ex, info.code.startsWith("conversation_")
        ? "This conversation is full. Press “New conversation” and ask again." : info.message);
      return;
    }
    const accepted = await res.json();
    ex.runId = accepted.run_id;
    if (accepted.conversation_id) saved.conversationId = accepted.conversation_id;
    ex.state = "waiting";
    persist();
    render(ex);
    await follow(ex);
  }

  function submit(question, conversationId) {
    const body = { question };
    if (conversationId) body.conversation_id = conversationId;
    return fetch(BASE + "/v1/runs", {
      method: "POST",
      headers: authHeaders({ "Content-Type": "application/json" }),
      body: JSON.stringify(body),
    });
  }

  // The history goes with the conversation: what is shown is what the next question builds on.
  function newConversation() {
    if (live) return;
    saved.exchanges = [];
    saved.conversationId = null;
    persist();
    views.clear();
    log.replaceChildren();
    input.focus();
  }

  async function cancelLive() {
    if (!live || !live.ex.runId) return;
    const ex = live.ex;
    ex.note = "Stopping…";
    render(ex);
    try {
      const res = await fetch(BASE + "/v1/runs/" + encodeURIComponent(ex.runId) + "/cancel",
        { method: "POST", headers: authHeaders() });
      // 409: it finished first; the stream shows how. Anything else: stop listening.
      if (!res.ok && res.status !== 409) { live.controller.abort(); fail(ex, await apiError(res)); }
    } catch (_) {
      live.controller.abort();
      fail(ex, "Could not reach the answer service to stop the answer.");
    }
  }

  // One feedback per run on the server: a second click replaces the first (last write wins).
  async function sendFeedback(ex, rating) {
    if (!ex.runId || ex.state !== "done") return;
    let note;
    try {
      const res = await fetch(BASE + "/v1/runs/" + encodeURIComponent(ex.runId) + "/feedback", {
        method: "POST",
        headers: authHeaders({ "Content-Type": "application/json" }),
        body: JSON.stringify({ rating }),
      });
      if (res.ok) { ex.feedback = rating; note = "Thanks for your feedback."; }
      else note = "Feedback not sent: " + await apiError(res);
    } catch (_) {
      note = "Feedback not sent: could not reach the answer service.";
    }
    ex.note = note;
    persist();
    render(ex);
  }

  /* ---------- interaction ---------- */

  function openPanel(focus) {
    panel.hidden = false;
    launcher.setAttribute("aria-expanded", "true");
    saved.open = true;
    persist();
    if (focus) input.focus();
  }

  function closePanel() {
    panel.hidden = true;
    launcher.setAttribute("aria-expanded", "false");
    saved.open = false;
    persist();
    launcher.focus();
  }

  launcher.addEventListener("click", () => (panel.hidden ? openPanel(true) : closePanel()));
  close.addEventListener("click", closePanel);
  fresh.addEventListener("click", newConversation);
  panel.addEventListener("keydown", (e) => { if (e.key === "Escape") closePanel(); });
  stop.addEventListener("click", cancelLive);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); form.requestSubmit(); }
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const question = input.value.trim();
    if (!question || !stop.hidden) return; // one answer at a time
    input.value = "";
    ask(question);
  });

  function start() {
    document.body.append(host);
    for (const ex of saved.exchanges) {
      // A reload before the run was accepted lost it: say so rather than wait forever.
      if (!ex.runId && !isTerminal(ex)) { ex.state = "error"; ex.error = "Interrupted before it started."; }
      render(ex);
    }
    if (saved.open) openPanel(false);
    const last = saved.exchanges[saved.exchanges.length - 1];
    if (last && last.runId && !isTerminal(last)) follow(last); // resume after a reload
  }

  if (document.body) start(); else document.addEventListener("DOMContentLoaded", start);
})();
