"use strict";
// The ops dashboard: polls the matchmaking report with the ops token and draws it.
// Plain DOM and SVG, no libraries: the page must work on a cluster with no way out.

const API = "/v1/ops/matchmaking";
// The running release and its database's migration level, which every instance tells.
const HEALTH = "/healthz";
const TOKEN_KEY = "cryptid-ops-token";
// `?refresh=N` (1 to 300 seconds) changes how often the page polls; 10 s otherwise.
const REFRESH_MS = refreshSeconds(new URLSearchParams(location.search).get("refresh")) * 1000;
const FETCH_TIMEOUT_MS = 8000;
const SVG_NS = "http://www.w3.org/2000/svg";
const RUNGS = [
  ["same_round_100", "±100"],
  ["same_round_200", "±200"],
  ["same_round_400", "±400"],
  ["same_round_any", "any"],
  ["previous_round", "prev"],
  ["next_round", "next"],
  ["bot", "bot"],
];
const FALLBACK_RUNGS = ["previous_round", "next_round", "bot"];
const ALERT_TEXT = {
  thin_pool: "thin pool",
  high_bot_rate: "high bot rate",
  slow_queue: "slow queue",
  bot_filled: "bot filled",
};
const BACKUP_ALERTS = {
  stale_base_backup: ["base", "The newest base backup"],
  stale_wal_archive: ["wal", "The newest archived WAL segment"],
};

const $ = (selector) => document.querySelector(selector);
const state = { timer: null, inFlight: false, lastOk: null };

// ---- small helpers -------------------------------------------------------------------------

function refreshSeconds(asked) {
  const seconds = Number(asked);
  return Number.isInteger(seconds) && seconds >= 1 && seconds <= 300 ? seconds : 10;
}

function build(ns, tag, attrs, children) {
  const node = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(child instanceof Node ? child : String(child));
    }
  }
  return node;
}
const h = (tag, attrs, ...children) => build(null, tag, attrs, children);
const s = (tag, attrs, ...children) => build(SVG_NS, tag, attrs, children);

const pad = (n) => String(n).padStart(2, "0");
const clock = (d) => `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
const hourLabel = (iso) => `${pad(new Date(iso).getHours())}:00`;
const dash = "–";

function pct(value) {
  if (value === null || value === undefined) return dash;
  const p = value * 100;
  return `${p === 0 || p >= 10 ? Math.round(p) : p.toFixed(1)}%`;
}
function num(value, digits = 0, unit = "") {
  if (value === null || value === undefined) return dash;
  return `${Number(value).toFixed(digits)}${unit}`;
}
const sum = (items, pick) => items.reduce((total, item) => total + pick(item), 0);

// A span of seconds as an operator reads it: 40 s, 12 min, 3 h 5 min, 2.5 d.
function span(seconds) {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} min`;
  if (minutes < 48 * 60) {
    const rest = minutes % 60;
    return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ""}`;
  }
  return `${num(minutes / 1440, 1)} d`;
}

// ---- token ---------------------------------------------------------------------------------

function showLogin(message) {
  stop();
  $("#board").hidden = true;
  $("#login").hidden = false;
  $("#signout").hidden = true;
  $("#refresh").hidden = true;
  $("#updated").textContent = "signed out";
  const error = $("#token-error");
  error.textContent = message || "";
  error.hidden = !message;
  $("#token").value = "";
  $("#token").focus();
}

function showBoard() {
  $("#login").hidden = true;
  $("#board").hidden = false;
  $("#signout").hidden = false;
  $("#refresh").hidden = false;
}

// ---- fetching ------------------------------------------------------------------------------

function stop() {
  clearTimeout(state.timer);
  state.timer = null;
}

function schedule() {
  stop();
  if (!document.hidden && sessionStorage.getItem(TOKEN_KEY)) {
    state.timer = setTimeout(load, REFRESH_MS);
  }
}

async function describe(response) {
  try {
    const body = await response.json();
    return `${response.status} ${body.error.code}: ${body.error.message}`;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

// The release line is a courtesy: the board shows without it when /healthz does not answer.
async function release() {
  try {
    const response = await fetch(HEALTH, {
      headers: { Accept: "application/json" },
      cache: "no-store",
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

async function load() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return showLogin("");
  if (state.inFlight) return;
  state.inFlight = true;
  stop();
  try {
    const [response, health] = await Promise.all([
      fetch(API, {
        headers: { "X-Ops-Token": token, Accept: "application/json" },
        cache: "no-store",
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      }),
      release(),
    ]);
    if (response.status === 401 || response.status === 403) {
      sessionStorage.removeItem(TOKEN_KEY);
      const why = response.status === 403 ? "was rejected" : "is missing";
      return showLogin(`The ops token ${why} (${response.status}). Enter the current token.`);
    }
    if (!response.ok) throw new Error(`The API answered ${await describe(response)}`);
    render(await response.json(), health);
    state.lastOk = new Date();
    failed(null);
  } catch (error) {
    const reason = error.name === "TimeoutError" ? "The API did not answer in time" : error.message;
    failed(reason.startsWith("The API") ? reason : `Cannot reach the service: ${reason}`);
  } finally {
    state.inFlight = false;
    schedule();
  }
}

function stamp() {
  const paused = document.hidden ? " · paused" : "";
  $("#updated").textContent = `updated ${clock(state.lastOk)}${paused}`;
}

function failed(message) {
  const banner = $("#error");
  const updated = $("#updated");
  $("#board").classList.toggle("stale", Boolean(message));
  banner.hidden = !message;
  updated.classList.toggle("bad", Boolean(message));
  if (!message) {
    stamp();
    return;
  }
  const since = state.lastOk ? ` Showing data from ${clock(state.lastOk)}.` : "";
  banner.replaceChildren(
    h("strong", {}, "Update failed. "),
    `${message}.${since} Retrying every ${REFRESH_MS / 1000} s.`,
  );
  updated.textContent = `update failed ${clock(new Date())}`;
}

// ---- rendering -----------------------------------------------------------------------------

function releaseLine(health) {
  if (!health || !health.version) return "";
  const ahead = health.migration > health.migration_known
    ? ` (ahead: this release knows ${health.migration_known})` : "";
  return `release ${health.version} · database at migration ${health.migration}${ahead} · `;
}

function render(report, health) {
  const { thresholds, rounds, timeline, games } = report;
  const ttlHours = report.snapshot_ttl_seconds / 3600;
  const ttl = ttlHours >= 48 ? `${num(ttlHours / 24, 0)} d` : `${num(ttlHours, 0)} h`;
  $("#meta").textContent =
    `${releaseLine(health)}ruleset ${report.ruleset} · snapshots live ${ttl}`;
  $("#thresholds").replaceChildren(
    "Red when ",
    h("span", { class: "badge", "data-threshold": "thin_pool" }, "thin pool"),
    ` under ${thresholds.thin_pool} fresh snapshots · `,
    h("span", { class: "badge", "data-threshold": "high_bot_rate" }, "high bot rate"),
    ` over ${pct(thresholds.high_bot_rate)} of last hour's pairings to bots`,
  );
  renderKpis(rounds);
  renderBackups(report.backups);
  renderRounds(rounds);
  $("#chart-pairings").replaceChildren(pairingsChart(timeline));
  $("#chart-rates").replaceChildren(ratesChart(timeline, thresholds.high_bot_rate));
  renderGames(games);
  renderQueues(report.queues, thresholds);
}

function renderKpis(rounds) {
  const hour = sum(rounds, (r) => r.total_hour);
  const bots = sum(rounds, (r) => r.pairings_hour.bot || 0);
  const fallbacks = sum(rounds, (r) => sum(FALLBACK_RUNGS, (k) => r.pairings_hour[k] || 0));
  const alerting = rounds.filter((r) => r.alerts.length).length;
  const kpi = (key, label, value, bad) =>
    h("div", { class: bad ? "kpi bad" : "kpi", "data-kpi": key },
      h("span", { class: "kpi-label" }, label), h("span", { class: "kpi-value" }, value));
  $("#kpis").replaceChildren(
    kpi("pairings_hour", "Pairings, last hour", hour),
    kpi("pairings_day", "Pairings, 24 h", sum(rounds, (r) => r.total_day)),
    kpi("bot_rate_hour", "Bot rate, last hour", hour ? pct(bots / hour) : dash),
    kpi("fallback_rate_hour", "Fallback rate, last hour", hour ? pct(fallbacks / hour) : dash),
    kpi("pool", "Snapshots in pool", sum(rounds, (r) => r.pool_depth)),
    kpi("alerting", "Rounds alerting", `${alerting} of ${rounds.length}`, alerting > 0),
  );
}

function renderBackups(backups) {
  const alert = $("#backup-alert");
  if (!backups) {
    $("#backup-thresholds").textContent = "";
    alert.hidden = true;
    $("#backup-ages").replaceChildren(h("p", { class: "legend", "data-backup": "unwatched" },
      "This instance sees no backups: its database is external and BACKUP_DIR is not set " +
      "(on Kubernetes, CloudNativePG reports its own)."));
    return;
  }
  $("#backup-thresholds").textContent =
    `red when the base backup is older than ${span(backups.base_max_age_seconds)}` +
    ` or the WAL archive older than ${span(backups.wal_max_age_seconds)}`;
  const tile = (key, label, age, at, bad) =>
    h("div", { class: bad ? "kpi bad" : "kpi", "data-backup": key, title: at || "never" },
      h("span", { class: "kpi-label" }, label),
      h("span", { class: "kpi-value" }, age === null ? "never" : `${span(age)} ago`));
  const has = (name) => backups.alerts.includes(name);
  $("#backup-ages").replaceChildren(
    tile("base", "Last base backup", backups.base_age_seconds, backups.last_base_at,
      has("stale_base_backup")),
    tile("wal", "Last WAL segment archived", backups.wal_age_seconds, backups.last_wal_at,
      has("stale_wal_archive")),
  );
  const lines = backups.alerts.map((name) => {
    const [key, what] = BACKUP_ALERTS[name] || [name, name];
    const age = backups[`${key}_age_seconds`];
    const limit = backups[`${key}_max_age_seconds`];
    const when = age === null || age === undefined ? "does not exist" : `is ${span(age)} old`;
    return h("span", { class: "alert-line", "data-alert": name },
      `${what} ${when}`, limit ? ` (limit ${span(limit)}).` : ".");
  });
  alert.replaceChildren(...lines);
  alert.hidden = lines.length === 0;
}

function rungCell(byRung) {
  const total = sum(RUNGS, ([key]) => byRung[key] || 0);
  const bar = s("svg", { class: "rungbar", viewBox: "0 0 100 8", preserveAspectRatio: "none",
    "aria-hidden": "true" });
  let x = 0;
  for (const [key] of RUNGS) {
    const width = total ? ((byRung[key] || 0) / total) * 100 : 0;
    if (width > 0) bar.append(s("rect", { class: `rung-${key}`, x, y: 0, width, height: 8 }));
    x += width;
  }
  const parts = RUNGS.filter(([key]) => byRung[key]).map(([key, label]) => `${label} ${byRung[key]}`);
  const full = RUNGS.map(([key, label]) => `${label}: ${byRung[key] || 0}`).join("\n");
  return h("td", { class: "rungs", title: full },
    total ? bar : null, h("span", { class: "rung-text" }, parts.join(" · ") || dash));
}

function renderRounds(rounds) {
  const body = $("#rounds tbody");
  if (!rounds.length) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: 14, class: "empty" },
      "No snapshots or pairings in the last 24 hours.")));
    return;
  }
  body.replaceChildren(...rounds.map((r) => {
    const has = (alert) => r.alerts.includes(alert);
    const flagged = (alert, text) =>
      h("td", { class: has(alert) ? "num bad" : "num", "data-alert": has(alert) ? alert : null }, text);
    const status = r.alerts.length
      ? r.alerts.map((a) => h("span", { class: "badge", "data-alert": a }, ALERT_TEXT[a] || a))
      : [h("span", { class: "ok" }, "ok")];
    return h("tr", { "data-round": r.round, "data-alerts": r.alerts.join(" "),
      class: r.alerts.length ? "alert" : null },
      h("th", { scope: "row" }, r.round),
      flagged("thin_pool", r.pool_depth),
      h("td", { class: "num" }, r.total_hour),
      h("td", { class: "num" }, r.total_day),
      rungCell(r.pairings_day),
      flagged("high_bot_rate", pct(r.bot_rate_hour)),
      h("td", { class: "num" }, pct(r.bot_rate_day)),
      h("td", { class: "num" }, pct(r.fallback_rate_hour)),
      h("td", { class: "num" }, pct(r.fallback_rate_day)),
      h("td", { class: "num" }, num(r.rating_gap_p50)),
      h("td", { class: "num" }, num(r.rating_gap_p90)),
      h("td", { class: "num" }, num(r.pairing_ms_p50, 1, " ms")),
      h("td", { class: "num" }, num(r.pairing_ms_p99, 1, " ms")),
      h("td", { class: "verdict" }, ...status),
    );
  }));
}

function renderGames(games) {
  const body = $("#games tbody");
  if (!games.length) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: 7, class: "empty" }, "No games.")));
    return;
  }
  body.replaceChildren(...games.map((g) => h("tr", { "data-game": g.game },
    h("th", { scope: "row" }, g.game),
    h("td", { class: "num" }, g.active_matches),
    h("td", { class: "num" }, g.waiting_matches),
    h("td", { class: "num" }, g.waiting_seats),
    h("td", { class: "num" }, num(g.median_turn_seconds, 1, " s")),
    h("td", { class: g.timeouts_day ? "num warn" : "num" }, g.timeouts_day),
    h("td", { class: "num" }, g.actions_hour),
  )));
}

function renderQueues(queues, thresholds) {
  $("#queue-thresholds").textContent =
    `red when the p95 wait is over ${num(thresholds.slow_queue_seconds, 0, " s")}` +
    ` or over ${pct(thresholds.high_queue_bot_share)} of matches take bots`;
  const body = $("#queues tbody");
  if (!queues.length) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: 8, class: "empty" }, "No tickets.")));
    return;
  }
  body.replaceChildren(...queues.map((q) => h("tr", {
    "data-game": q.game, "data-alerts": q.alerts.join(" "), class: q.alerts.length ? "alert" : null,
  },
    h("th", { scope: "row" }, q.game),
    h("td", { class: "num" }, q.searching),
    h("td", { class: "num" }, q.matched_hour),
    h("td", { class: "num" }, [num(q.wait_seconds_p50, 1), num(q.wait_seconds_p95, 1),
      num(q.wait_seconds_p99, 1)].join(" / ") + " s"),
    h("td", { class: "num" }, pct(q.bot_share_hour)),
    h("td", { class: "num" }, `${num(q.rating_spread_p50, 1)} / ${num(q.rating_spread_max, 1)}`),
    h("td", { class: "num" }, q.cancelled_hour),
    h("td", {}, ...(q.alerts.length
      ? q.alerts.map((a) => h("span", { class: "badge", "data-alert": a }, ALERT_TEXT[a] || a))
      : [h("span", { class: "ok" }, "ok")])),
  )));
}

// ---- charts --------------------------------------------------------------------------------

const W = 560;
const H = 210;
const M = { left: 56, right: 14, top: 14, bottom: 40 };
const plotW = W - M.left - M.right;
const plotH = H - M.top - M.bottom;

// A round step (1, 2 or 5 times a power of ten) that splits `max` into about four ticks.
function niceStep(max) {
  const raw = Math.max(max, 1) / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((c) => c >= raw);
  return Math.max(1, step);
}

function frame(kind, label, yMax, ticks, format, timeline, yTitle) {
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg", role: "img",
    "aria-label": label, "data-chart": kind });
  const y = (v) => M.top + plotH - (v / yMax) * plotH;
  for (const tick of ticks) {
    svg.append(
      s("line", { class: "grid-line", x1: M.left, x2: W - M.right, y1: y(tick), y2: y(tick) }),
      s("text", { class: "tick", x: M.left - 6, y: y(tick) + 4, "text-anchor": "end" }, format(tick)),
    );
  }
  const slot = plotW / timeline.length;
  timeline.forEach((point, i) => {
    if (i % 3 === 0 || i === timeline.length - 1) {
      const x = M.left + slot * (i + 0.5);
      svg.append(s("text", { class: "tick", x, y: H - M.bottom + 15, "text-anchor": "middle" },
        hourLabel(point.hour)));
    }
  });
  svg.append(
    s("line", { class: "axis", x1: M.left, x2: W - M.right, y1: y(0), y2: y(0) }),
    s("line", { class: "axis", x1: M.left, x2: M.left, y1: M.top, y2: y(0) }),
    s("text", { class: "axis-title", x: M.left + plotW / 2, y: H - 4, "text-anchor": "middle" },
      "hour (local time)"),
    s("text", { class: "axis-title", x: 12, y: M.top + plotH / 2, "text-anchor": "middle",
      transform: `rotate(-90 12 ${M.top + plotH / 2})` }, yTitle),
  );
  return { svg, y, slot };
}

function pairingsChart(timeline) {
  const max = Math.max(0, ...timeline.map((p) => p.pairings));
  const step = niceStep(max);
  const yMax = Math.max(step, Math.ceil(max / step) * step);
  const ticks = [];
  for (let t = 0; t <= yMax; t += step) ticks.push(t);
  const { svg, y, slot } = frame("pairings", "Pairings per hour, last 24 hours", yMax, ticks,
    String, timeline, "pairings");
  timeline.forEach((point, i) => {
    const top = y(point.pairings);
    svg.append(s("rect", { class: "bar", "data-hour": point.hour, "data-value": point.pairings,
      x: M.left + slot * i + slot * 0.15, width: slot * 0.7, y: top, height: y(0) - top },
      s("title", {}, `${hourLabel(point.hour)}: ${point.pairings} pairings`)));
  });
  return svg;
}

function ratesChart(timeline, highBotRate) {
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  const { svg, y, slot } = frame("rates", "Bot and fallback rate per hour, last 24 hours", 1,
    ticks, pct, timeline, "share of pairings");
  const limit = y(highBotRate);
  svg.append(s("line", { class: "limit", x1: M.left, x2: W - M.right, y1: limit, y2: limit }),
    s("text", { class: "limit-text", x: W - M.right - 2, y: limit - 4, "text-anchor": "end" },
      `alert > ${pct(highBotRate)}`));
  for (const series of ["fallback_rate", "bot_rate"]) {
    const name = series.replace("_rate", "");
    let d = "";
    let pen = "M";
    const dots = [];
    timeline.forEach((point, i) => {
      const value = point[series];
      if (value === null) {
        pen = "M"; // no pairings that hour: a gap, not a zero
        return;
      }
      const x = M.left + slot * (i + 0.5);
      d += `${pen}${x.toFixed(1)},${y(value).toFixed(1)} `;
      pen = "L";
      dots.push(s("circle", { class: `point series-${name}`, "data-series": name,
        "data-hour": point.hour, cx: x, cy: y(value), r: 3.5 },
        s("title", {}, `${hourLabel(point.hour)}: ${pct(value)} ${name}`)));
    });
    if (d) svg.append(s("path", { class: `line series-${name}`, d: d.trim() }));
    svg.append(...dots);
  }
  return svg;
}

// ---- wiring --------------------------------------------------------------------------------

$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = $("#token").value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  showBoard();
  $("#updated").textContent = "loading…";
  load();
});
$("#refresh").addEventListener("click", load);
$("#signout").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showLogin("");
});
document.addEventListener("visibilitychange", () => {
  if (document.hidden) {
    stop();
    if (state.lastOk && $("#error").hidden) stamp();
  } else if (sessionStorage.getItem(TOKEN_KEY)) {
    load();
  }
});

if (sessionStorage.getItem(TOKEN_KEY)) {
  showBoard();
  load();
} else {
  showLogin("");
}
