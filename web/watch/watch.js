// The replay viewer: fetches a replay, re-simulates it with resim.js to verify every roll's
// hash, and plays the replay's own events back on two rows of cards. A finished turn-based
// match (/watch/matches/{id}) plays back as a timeline of its events, leg by leg, beside its table
// at the end, both drawn by the web client's renderer (match-view.js, built from web/play/src/table).
// Plain DOM, no libraries: the page works on a cluster with no way out.

import { boardHash, parseReplay, splitRolls, verify } from "./resim.js";

const TOKEN_KEY = "cryptid-player-token";
const FETCH_TIMEOUT_MS = 8000;
const STEP_MS = 700; // one event at 1×; a roll's throw waits twice as long
const SIDES = ["a", "b"];

const $ = (selector) => document.querySelector(selector);
const view = {
  mode: null, // "battle", "simulate", "paste" or "match"
  replay: null, // for a match: {events} of its replay, so that playback is the same
  match: null,
  matchView: null, // for a match: its table and its events in words (match-view.js)
  content: null,
  verdict: null,
  rollStarts: [], // index in events of each roll's `roll` event (a match: of each action's)
  pos: 0, // events applied so far
  timer: null,
};

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
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

// ---- where the replay comes from ------------------------------------------------------------

function route() {
  const parts = location.pathname.replace(/\/+$/, "").split("/").slice(2);
  const query = new URLSearchParams(location.search);
  if (parts.length === 1) return { mode: "battle", id: decodeURIComponent(parts[0]) };
  if (parts.length === 2 && parts[0] === "matches") {
    return { mode: "match", id: decodeURIComponent(parts[1]) };
  }
  if (query.has("seed")) return { mode: "simulate", query };
  return { mode: "paste" };
}

// `a=trauco.1.1,chupacabra.1.1`: species.ability.level per slot, as the simulate link writes.
function warbandParam(text) {
  return (text || "").split(",").filter(Boolean).map((item) => {
    const [species, ability, level] = item.split(".");
    return { species, ability: Number(ability), level: Number(level) };
  });
}

async function describe(response) {
  try {
    const body = await response.json();
    return `${response.status} ${body.error.code}: ${body.error.message}`;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

async function api(path, options = {}) {
  const headers = { Accept: "application/json", ...(options.headers || {}) };
  if (options.auth) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (!token) throw new NeedToken("");
    headers.Authorization = `Bearer ${token}`;
  }
  const response = await fetch(path, {
    method: options.method || "GET",
    headers,
    body: options.body,
    cache: "no-store",
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (response.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    throw new NeedToken(`The token was refused (${await describe(response)}).`);
  }
  if (!response.ok) throw new Error(`The API answered ${await describe(response)}`);
  return parseReplay(await response.text());
}

class NeedToken extends Error {}

async function fetchReplay(where) {
  if (where.mode === "battle") {
    if (!/^\d{1,18}$/.test(where.id)) throw new Error(`No battle ${where.id}`);
    $("#title").textContent = `battle ${where.id}`;
    return api(`/v1/battles/${where.id}/replay`, { auth: true });
  }
  const q = where.query;
  const body = { seed: Number(q.get("seed")), a: { cryptids: warbandParam(q.get("a")) },
    b: { cryptids: warbandParam(q.get("b")) } };
  if (q.get("ruleset")) body.ruleset = q.get("ruleset");
  // The seed is written as its own digits: a Number would round seeds past 2^53.
  const text = JSON.stringify(body).replace(/"seed":[^,]*/, `"seed":${BigInt(q.get("seed"))}`);
  $("#title").textContent = `a simulated battle, seed ${q.get("seed")}`;
  const answer = await api("/v1/battles/simulate", {
    method: "POST", auth: true, body: text, headers: { "Content-Type": "application/json" },
  });
  return answer.replay;
}

async function start(replay) {
  const content = await api(`/v1/content/cryptids?ruleset=${encodeURIComponent(replay.ruleset)}`);
  view.replay = replay;
  view.content = content;
  view.verdict = verify(content, replay);
  view.rollStarts = [];
  replay.events.forEach((event, i) => { if (event[0] === "roll") view.rollStarts.push(i); });
  view.pos = 0;
  $("#login").hidden = true;
  $("#load").hidden = true;
  $("#stage").hidden = false;
  $("#scrubber").max = String(view.rollStarts.length);
  showVerdict();
  render();
}

async function open() {
  failed(null);
  const where = route();
  view.mode = where.mode;
  $("#signout").hidden = where.mode === "paste";
  if (where.mode === "paste") {
    $("#load").hidden = false;
    return;
  }
  if (!sessionStorage.getItem(TOKEN_KEY)) return showLogin("");
  try {
    if (where.mode === "match") await startMatch(where.id);
    else await start(await fetchReplay(where));
  } catch (error) {
    if (error instanceof NeedToken) return showLogin(error.message);
    failed(error.name === "TimeoutError" ? "The API did not answer in time" : error.message);
  }
}

function showLogin(message) {
  pause();
  $("#stage").hidden = true;
  $("#login").hidden = false;
  const error = $("#token-error");
  error.textContent = message;
  error.hidden = !message;
  $("#token").value = "";
  $("#token").focus();
}

function failed(message) {
  $("#error").hidden = !message;
  $("#error").textContent = message || "";
}

// ---- the board, rebuilt from the replay's events --------------------------------------------

function cryptid(uid, side, slot, kind, level) {
  return {
    uid, side, slot, kind: kind.id, name: kind.name, level,
    health: kind.health, maxHealth: kind.health, threat: kind.threat,
    shield: 0, poison: 0, stun: 0, dead: false,
  };
}

function initialBoard(replay, content) {
  const species = new Map(content.species.map((s) => [s.id, s]));
  const size = content.battle.board_size;
  const board = {
    rows: [new Array(size).fill(null), new Array(size).fill(null)],
    units: new Map(), fallen: [], roll: 0, dice: null, sum: null, bonus: 0,
    active: null, rerolled: false, end: null,
  };
  [replay.a, replay.b].forEach((warband, side) => {
    warband.forEach(([id, , level], slot) => {
      const u = cryptid(side * size + slot, side, slot, species.get(id), level);
      board.rows[side][slot] = u;
      board.units.set(u.uid, u);
    });
  });
  return board;
}

// Step 6 ends with the survivors closing up to the left; the viewer does it when the next roll
// (or the end) comes, so the dead stay in sight until their roll is over.
function closeUp(board) {
  board.rows = board.rows.map((row) => {
    const kept = row.filter((u) => u !== null);
    kept.forEach((u, slot) => { u.slot = slot; });
    return kept.concat(new Array(row.length - kept.length).fill(null));
  });
  board.fallen = [];
}

function apply(board, event, content) {
  const [kind] = event;
  const unit = (uid) => board.units.get(uid);
  board.active = null;
  switch (kind) {
    case "roll":
      closeUp(board);
      [, board.roll] = event;
      board.dice = [event[2], event[3]];
      board.sum = event[2] + event[3];
      board.bonus = 0;
      board.rerolled = false;
      break;
    case "sudden_death": [, board.bonus] = event; break;
    case "tick": unit(event[1]).poison = event[2] - 1; break;
    case "trigger": board.active = event[1]; break;
    case "skip": unit(event[1]).stun -= 1; board.active = event[1]; break;
    case "sum": [, , , board.sum] = event; break;
    case "reroll": board.rerolled = true; break;
    case "damage": {
      const t = unit(event[2]);
      t.shield -= event[4];
      [, , , , , t.health] = event;
      break;
    }
    case "heal": [, , , , unit(event[2]).health] = event; break;
    case "shield": case "poison": case "stun": case "threat":
      unit(event[2])[kind] = event[4];
      break;
    case "max_health": {
      const t = unit(event[2]);
      t.maxHealth = event[4];
      t.health += event[3];
      break;
    }
    case "summon": {
      const [, src, uid, tokenId, slot] = event;
      const token = content.tokens.find((t) => t.id === tokenId);
      const u = cryptid(uid, unit(src).side, slot, token, 1);
      board.rows[u.side][slot] = u;
      board.units.set(uid, u);
      break;
    }
    case "death": {
      const u = unit(event[1]);
      u.dead = true;
      board.rows[u.side][u.slot] = null;
      board.fallen.push(u);
      break;
    }
    case "end": closeUp(board); board.end = event; break;
    default: break; // summon_failed and chain_limit change nothing on the board
  }
}

function boardAt(pos) {
  const board = initialBoard(view.replay, view.content);
  for (let i = 0; i < pos; i++) apply(board, view.replay.events[i], view.content);
  return board;
}

const compactRows = (board) => board.rows.map((row) => row.filter((u) => u !== null));

// ---- drawing --------------------------------------------------------------------------------

function card(u, flags = {}) {
  const pct = u.maxHealth ? Math.round((100 * u.health) / u.maxHealth) : 0;
  const badge = (name, value, always) =>
    value || always ? h("span", { class: `badge ${name}`, "data-stat": name }, `${name} ${value}`) : null;
  const classes = ["card", u.dead ? "dead" : "", flags.active ? "active" : "",
    flags.diff ? "diff" : ""].filter(Boolean).join(" ");
  return h("div", { class: classes, "data-uid": u.uid, "data-kind": u.kind },
    h("div", { class: "name" }, h("strong", {}, u.name), h("span", { class: "level" }, `Lv ${u.level}`)),
    h("div", { class: "health", title: `${u.health} of ${u.maxHealth} health` },
      h("div", { class: "bar" }, h("span", { class: "fill", "data-pct": pct })),
      h("span", { class: "hp", "data-stat": "health" }, `${u.health}/${u.maxHealth}`)),
    h("div", { class: "stats" }, badge("threat", u.threat, true), badge("shield", u.shield),
      badge("poison", u.poison), badge("stun", u.stun)),
  );
}

function row(board, side, flags = () => ({})) {
  const size = view.content.battle.board_size;
  const slots = [];
  for (let slot = 0; slot < size; slot++) {
    const u = board.rows[side][slot] || board.fallen.find((x) => x.side === side && x.slot === slot);
    slots.push(u ? card(u, flags(u)) : h("div", { class: "card empty", "aria-hidden": "true" }));
  }
  return slots;
}

// The bar widths come from data attributes: the CSP allows no inline style attributes.
function sizeBars(root) {
  for (const fill of root.querySelectorAll(".fill")) fill.style.width = `${fill.dataset.pct}%`;
}

function name(uid) {
  if (uid === -1) return "poison";
  const u = view.board.units.get(uid);
  return u ? `${u.name} (${SIDES[u.side].toUpperCase()})` : `#${uid}`;
}

function words(event) {
  const [kind, x, y, z, w, v] = event;
  switch (kind) {
    case "roll": return `Roll ${x}: ${y} and ${z}`;
    case "sudden_death": return `Sudden death: +${x} to every hit`;
    case "tick": return `${name(x)} takes ${y} poison`;
    case "trigger": return `${name(x)} acts`;
    case "skip": return `${name(x)} is stunned and skips`;
    case "sum": return `${name(x)} adds ${y}: the sum is ${z}`;
    case "reroll": return `${name(x)} re-rolls`;
    case "damage": return `${name(x)} hits ${name(y)} for ${z}${w ? ` (${w} absorbed)` : ""}: ${v} left`;
    case "heal": return `${name(x)} heals ${name(y)} by ${z}: ${w}`;
    case "max_health": return `${name(x)} gives ${name(y)} +${z} max health: ${w}`;
    case "shield": case "poison": case "stun": case "threat":
      return `${name(x)} gives ${name(y)} ${kind} +${z}: ${w}`;
    case "summon": return `${name(x)} summons ${name(y)} into slot ${w}`;
    case "summon_failed": return `${name(x)} cannot summon ${y}: the board is full`;
    case "death": return `${name(x)} dies`;
    case "chain_limit": return x === -1 ? "Death chain cut" : `${name(x)}'s reaction is cut`;
    case "end": return `${outcome(event)}`;
    default: return JSON.stringify(event);
  }
}

function outcome([, winner, reason, a, b]) {
  const who = winner === "draw" ? "Draw" : `${winner.toUpperCase()} wins`;
  return `${who} by ${reason.replace("_", " ")}, ${a} to ${b}`;
}

// A number floating up from the card an event changed: damage, heal, status, summon, death.
function floater(event) {
  const [kind, , uid, amount] = event;
  const texts = {
    damage: [`−${amount}`, "hurt"], heal: [`+${amount}`, "healed"],
    shield: [`+${amount} shield`, "buff"], poison: [`+${amount} poison`, "hurt"],
    stun: [`+${amount} stun`, "hurt"], threat: [`+${amount} threat`, "buff"],
    max_health: [`+${amount} max`, "healed"],
  };
  if (kind === "tick") return [event[1], `poison ${event[2]}`, "hurt"];
  if (kind === "summon") return [event[2], "summoned", "buff"];
  if (kind === "death") return [event[1], "✝", "hurt"];
  return texts[kind] ? [uid, ...texts[kind]] : null;
}

function render() {
  if (view.mode === "match") return renderMatch();
  const board = boardAt(view.pos);
  view.board = board;
  const last = view.pos ? view.replay.events[view.pos - 1] : null;
  for (const side of [0, 1]) {
    const el = $(`#side-${SIDES[side]}`);
    el.replaceChildren(h("h2", { class: "side-name" }, `Side ${SIDES[side].toUpperCase()}`),
      h("div", { class: "cards" }, ...row(board, side, (u) => ({ active: u.uid === board.active }))));
    sizeBars(el);
  }
  const float = last && floater(last);
  if (float) {
    const target = document.querySelector(`.card[data-uid="${float[0]}"]`);
    if (target) target.append(h("span", { class: `float ${float[2]}` }, float[1]));
  }
  const dice = board.dice || [null, null];
  const extras = [
    board.bonus ? h("span", { class: "bonus" }, `sudden death +${board.bonus}`) : null,
    board.rerolled ? h("span", { class: "bonus" }, "re-roll") : null,
  ];
  $("#dice").replaceChildren(
    ...dice.map((d, i) => h("span", { class: "die", "data-die": i + 1 }, d ?? "–")),
    h("span", { class: "sum" }, board.sum === null ? "" : `sum ${board.sum}`),
    ...extras.filter(Boolean),
  );
  $("#status").textContent = board.end ? outcome(board.end) : last ? words(last) : "Ready";
  $("#status").classList.toggle("over", Boolean(board.end));
  renderLog(board);
  const rolls = view.rollStarts.length;
  $("#scrubber").value = String(board.roll);
  $("#position").textContent =
    `roll ${board.roll} of ${rolls} · event ${view.pos} of ${view.replay.events.length}`;
  $("#play").textContent = view.timer ? "Pause" : "Play";
}

function renderLog(board) {
  const events = view.replay.events;
  const start = board.roll ? view.rollStarts[board.roll - 1] : 0;
  // The last roll runs to the `end` event, which is listed once the battle is over.
  const end = board.roll < view.rollStarts.length ? view.rollStarts[board.roll] : events.length - 1;
  $("#log-title").textContent = board.roll ? `Roll ${board.roll}` : "Before the first roll";
  const items = [];
  for (let i = start; i < (board.roll ? end : 0); i++) {
    const classes = [i < view.pos ? "done" : "", i === view.pos - 1 ? "current" : ""];
    items.push(h("li", { class: classes.filter(Boolean).join(" "), "data-kind": events[i][0] },
      words(events[i])));
  }
  if (board.end) items.push(h("li", { class: "current", "data-kind": "end" }, words(board.end)));
  $("#log").replaceChildren(...items);
  const current = $("#log li.current");
  if (current) current.scrollIntoView({ block: "nearest" });
}

function showVerdict() {
  const v = view.verdict;
  const el = $("#verdict");
  el.hidden = false;
  el.classList.toggle("ok", v.ok);
  el.classList.toggle("bad", !v.ok);
  if (v.ok) {
    el.textContent = `verified: ${v.matching} of ${v.rolls} rolls match`;
    $("#compare").hidden = true;
    return;
  }
  const roll = v.firstMismatch ?? v.rolls;
  el.textContent = v.firstMismatch
    ? `mismatch: roll ${roll} differs (${v.matching} of ${v.rolls} rolls match)`
    : `mismatch: the end differs (${v.matching} of ${v.rolls} rolls match)`;
  showComparison(roll);
}

// The replay's board after the roll that differs, beside the board re-simulated here.
function showComparison(roll) {
  const rolls = splitRolls(view.replay.events);
  const upTo = rolls.slice(0, roll).reduce((n, r) => n + r.length, 0);
  const theirs = boardAt(upTo);
  closeUp(theirs);
  const mineRoll = view.verdict.mine.rolls[roll - 1];
  const mine = mineRoll ? mineRoll.sides : [[], []];
  const key = (u) => `${u.uid}:${u.health}:${u.maxHealth}:${u.threat}:${u.shield}:${u.poison}:${u.stun}`;
  const mineKeys = new Set(mine.flat().map(key));
  const theirKeys = new Set(compactRows(theirs).flat().map(key));
  const levels = new Map(compactRows(theirs).flat().map((u) => [u.uid, u.level]));
  const draw = (sides, others) => sides.map((units, side) => h("div", { class: "cards mini" },
    h("span", { class: "side-name" }, SIDES[side].toUpperCase()),
    ...units.map((u) => card({ level: levels.get(u.uid) ?? 1, ...u }, { diff: !others.has(key(u)) }))));
  const theirHash = boardHash(compactRows(theirs));
  $("#compare-title").textContent = `Roll ${roll}: the replay's hash ${view.replay.hashes[roll - 1] ?? "–"}` +
    ` (its events give ${theirHash}), re-simulated ${mineRoll ? mineRoll.hash : "–"}`;
  $("#compare-theirs").replaceChildren(...draw(compactRows(theirs), mineKeys));
  $("#compare-mine").replaceChildren(...draw(mine, theirKeys));
  for (const el of [$("#compare-theirs"), $("#compare-mine")]) sizeBars(el);
  $("#compare").hidden = false;
}

// ---- a turn-based match --------------------------------------------------------------------

async function startMatch(id) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new Error(`No match ${id}`);
  const match = await api(`/v1/matches/${id}/replay`, { auth: true });
  const [content, { games }, { matchView }] = await Promise.all([
    api(`/v1/content/${encodeURIComponent(match.game)}?ruleset=${encodeURIComponent(match.ruleset)}`),
    api("/v1/games", { auth: true }),
    import("./match-view.js"),
  ]);
  // The web client's table renderer (web/play/src/table), built for this page with its stylesheet.
  if (!document.querySelector("link[data-match-view]")) {
    document.head.append(h("link", { rel: "stylesheet", href: "/watch/assets/match-view.css", "data-match-view": "" }));
  }
  const game = games.find((g) => g.id === match.game);
  view.matchView = matchView(match, content, game ? game.name : match.game);
  view.match = match;
  view.replay = { events: match.events };
  view.rollStarts = [];
  match.events.forEach((event, i) => {
    if (i === 0 || event.version !== match.events[i - 1].version) view.rollStarts.push(i);
  });
  view.pos = 0;
  $("#title").textContent = `${view.matchView.name} match ${match.match_id.slice(0, 8)}`;
  $("#login").hidden = true;
  $("#stage").hidden = false;
  $("#stage").classList.add("match");
  // The table at the end stands where a battle's events are listed.
  $("#log").closest("section").hidden = true;
  $("#match-table")?.remove();
  $("#stage").append(h("section", { id: "match-table", class: "panel", "aria-labelledby": "match-table-title" },
    h("h2", { id: "match-table-title" }, "The table at the end, every card revealed"), view.matchView.table));
  $("#prev-roll").textContent = "« action";
  $("#next-roll").textContent = "action »";
  $("#scrubber").max = String(view.rollStarts.length);
  const verdict = $("#verdict");
  verdict.hidden = false;
  verdict.classList.add("ok");
  verdict.textContent = `finished: ${match.events.length} events, every hidden card revealed`;
  render();
}

const seatName = (seat) => `seat ${seat}`;

function matchOutcome(outcome) {
  if (!outcome) return "Finished";
  const winners = outcome.winners.map(seatName).join(", ");
  return outcome.winners.length ? `${winners} won` : "No winner";
}

function matchEvent(event, i) {
  const hidden = event.visible_to !== null;
  const classes = [i < view.pos ? "done" : "", i === view.pos - 1 ? "current" : "",
    hidden ? "private" : ""].filter(Boolean).join(" ");
  return h("li", { class: classes, "data-kind": event.kind, "data-seq": event.seq },
    hidden ? h("span", { class: "badge revealed" },
      `seen by ${event.visible_to.map(seatName).join(", ") || "nobody"} · revealed`) : null,
    view.matchView.event(event.kind, event.data));
}

function renderMatch() {
  const match = view.match;
  const events = match.events;
  // Legs: a series announces each with `leg_started`; a plain match is one leg.
  const legs = [];
  events.forEach((event, i) => {
    if (!legs.length || event.kind === "leg_started") {
      legs.push({ title: event.kind === "leg_started" ? `Leg ${event.data.leg}` : "The match", items: [] });
    }
    legs[legs.length - 1].items.push(matchEvent(event, i));
  });
  $("#side-b").replaceChildren(h("h2", { class: "side-name" }, "Seats"),
    h("div", { class: "cards" }, ...match.seats.map((seat) =>
      h("div", { class: "card seat", "data-seat": seat.seat },
        h("div", { class: "name" }, h("strong", {}, seatName(seat.seat)),
          h("span", { class: "level" }, seat.bot ? "bot" : "player")),
        h("span", { class: "data" }, view.matchView.loadout(match.loadouts[seat.seat])))),
    ));
  $("#side-a").replaceChildren(...legs.map((leg) => h("section", { class: "leg" },
    h("h2", { class: "side-name" }, leg.title), h("ol", { class: "timeline" }, ...leg.items))));
  const last = view.pos ? events[view.pos - 1] : null;
  const over = view.pos === events.length;
  $("#dice").replaceChildren();
  $("#status").textContent = over ? matchOutcome(match.outcome)
    : last ? `${last.kind} (action ${last.version})` : "Ready";
  $("#status").classList.toggle("over", over);
  const current = $("#side-a li.current");
  if (current) current.scrollIntoView({ block: "nearest" });
  $("#scrubber").value = String(segmentAt(view.pos));
  $("#position").textContent = `action ${segmentAt(view.pos)} of ${view.rollStarts.length}` +
    ` · event ${view.pos} of ${events.length}`;
  $("#play").textContent = view.timer ? "Pause" : "Play";
}

// ---- playback -------------------------------------------------------------------------------

function go(pos) {
  view.pos = Math.max(0, Math.min(view.replay.events.length, pos));
  render();
}

function pause() {
  clearTimeout(view.timer);
  view.timer = null;
  $("#play").textContent = "Play";
}

function tick() {
  view.pos += 1;
  const events = view.replay.events;
  if (view.pos >= events.length) {
    view.pos = events.length;
    pause();
    return render();
  }
  const wait = (events[view.pos][0] === "roll" ? 2 * STEP_MS : STEP_MS) / Number($("#speed").value);
  view.timer = setTimeout(tick, wait);
  render();
}

function play() {
  if (view.timer) return pause();
  if (view.pos >= view.replay.events.length) view.pos = 0;
  view.timer = setTimeout(tick, 0);
  render();
}

// Position at the end of roll n (0: before the first roll).
function rollEnd(n) {
  if (n <= 0) return 0;
  return n < view.rollStarts.length ? view.rollStarts[n] : view.replay.events.length;
}

// The roll (a match: the action) the position is in: how many have started before it.
const segmentAt = (pos) => view.rollStarts.filter((i) => i < pos).length;

function stepRoll(delta) {
  pause();
  const roll = segmentAt(view.pos);
  const atEnd = view.pos === rollEnd(roll);
  go(rollEnd(delta > 0 ? roll + (atEnd || !roll ? 1 : 0) : roll - 1));
}

$("#play").addEventListener("click", play);
$("#step").addEventListener("click", () => { pause(); go(view.pos + 1); });
$("#back").addEventListener("click", () => { pause(); go(view.pos - 1); });
$("#next-roll").addEventListener("click", () => stepRoll(1));
$("#prev-roll").addEventListener("click", () => stepRoll(-1));
$("#scrubber").addEventListener("input", (event) => {
  pause();
  go(rollEnd(Number(event.target.value)));
});
document.addEventListener("keydown", (event) => {
  if (!view.replay || event.target.matches("input, textarea, select")) return;
  const keys = { " ": play, ArrowRight: () => $("#step").click(), ArrowLeft: () => $("#back").click() };
  if (keys[event.key]) {
    event.preventDefault();
    keys[event.key]();
  }
});

$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = $("#token").value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $("#login").hidden = true;
  open();
});
$("#signout").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showLogin("");
});
$("#replay-file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  if (file) $("#replay-text").value = await file.text();
});
$("#replay-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  failed(null);
  try {
    const parsed = parseReplay($("#replay-text").value);
    const replay = parsed.replay || parsed; // a simulate answer holds its replay
    if (!Array.isArray(replay.events) || !Array.isArray(replay.hashes)) {
      throw new Error("not a replay: it needs events and hashes");
    }
    $("#title").textContent = `a replay, seed ${replay.seed}`;
    await start(replay);
  } catch (error) {
    failed(`Cannot watch this: ${error.message}`);
  }
});

open();
