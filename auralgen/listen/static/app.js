// auralgen listen: the participant's page. Everything it shows comes from api/state; it never
// receives an answer, a level or an item before it has answered (practice feedback comes after).
"use strict";
const screen = document.getElementById("screen");
const sound = document.getElementById("sound");
let playedAt = null;

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

async function api(path, body) {
  const opts = body === undefined ? { method: "GET" } : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const resp = await fetch(path, Object.assign(opts, { credentials: "same-origin", cache: "no-store" }));
  if (!resp.ok) throw new Error(await resp.text());
  return resp.json();
}

function para(text) { return el("p", {}, text); }

function show(state) {
  screen.replaceChildren();
  delete screen.dataset.trial;
  screen.dataset.screen = state.screen;
  ({ consent, volume, trial, end })[state.screen](state);
}

function consent(s) {
  screen.append(el("h2", {}, "Before you start"), para(s.instructions), para(s.consent),
    el("p", { class: "pid", id: "participant" }, "Your participant id: " + s.participant));
  const go = el("button", { id: "agree", class: "primary" }, "I agree, start");
  go.onclick = async () => show(await api("api/consent", {}));
  screen.append(go);
}

function playButton(src, onPlay) {
  sound.src = src;
  const play = el("button", { id: "play", class: "primary" }, "▶ Play");
  play.onclick = () => {
    sound.currentTime = 0;
    const p = sound.play();
    if (p && p.catch) p.catch(() => {});  // no audio device (a headless test): the page goes on
    onPlay();
  };
  return play;
}

function volume(s) {
  screen.append(el("h2", {}, "Set the volume"), para(s.text));
  const next = el("button", { id: "continue", disabled: "" }, "The volume is set, continue");
  next.onclick = async () => show(await api("api/volume", {}));
  screen.append(playButton(s.audio, () => next.removeAttribute("disabled")), next);
}

function trial(s) {
  screen.dataset.trial = s.id;
  const label = { screening: "Headphone check", practice: "Practice", test: "Test" }[s.part];
  screen.append(el("p", { class: "part", id: "part" }, label + " · trial " + s.number + (s.of ? " of " + s.of : "")));
  screen.append(el("p", { class: "question", id: "question" }, s.question));
  const options = el("div", { class: "options" });
  const buttons = s.options.map((text, i) => {
    const b = el("button", { class: "option", "data-choice": String(i), disabled: "" }, text);
    b.onclick = () => answer(s, i, buttons);
    return b;
  });
  playedAt = null;
  const play = playButton(s.audio, () => {
    if (playedAt === null) playedAt = performance.now();
    buttons.forEach((b) => b.removeAttribute("disabled"));
  });
  options.append(...buttons);
  screen.append(play, options);
}

async function answer(s, choice, buttons) {
  buttons.forEach((b) => b.setAttribute("disabled", ""));
  sound.pause();
  const rt = playedAt === null ? null : performance.now() - playedAt;
  const r = await api("api/answer", { id: s.id, choice: choice, rt_ms: rt });
  if (!r.feedback) return show(r.state);
  screen.replaceChildren();
  delete screen.dataset.trial;
  screen.dataset.screen = "feedback";
  const f = r.feedback;
  screen.append(el("p", { class: "feedback " + (f.correct ? "right" : "wrong"), id: "feedback" },
    f.correct ? "Correct." : "Not quite: the answer was “" + f.answer + "”."));
  const next = el("button", { id: "next", class: "primary" }, "Next");
  next.onclick = () => show(r.state);
  screen.append(next);
}

function end(s) {
  screen.append(el("h2", {}, "End of the session"), el("p", { id: "message" }, s.message),
    el("p", { class: "pid" }, "Your participant id: " + s.participant));
  if (s.finish_url) {
    const a = el("a", { href: s.finish_url, id: "finish" }, "Continue to complete the study");
    screen.append(el("p").appendChild(a).parentNode);
  }
}

api("api/state").then(show).catch((e) => { screen.textContent = "Error: " + e.message; });
