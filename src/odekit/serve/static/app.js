// The page of `odekit serve`.  It holds no physics: the server integrates with
// odekit and streams frames over one WebSocket (the protocol is in docs/serve.md);
// this module sends the user's settings, keeps the controls in step with the
// settings the server confirms, and draws what the frames say.

import { ARROW, ErrorPlot, PALETTE, SceneView } from './draw.js';
import { StabilityView, absR, drawPowers } from './stability.js';

const $ = (id) => document.getElementById(id);

const THRUST_KEYS = { ArrowUp: 'prograde', ArrowDown: 'retrograde', ArrowLeft: 'radial_in', ArrowRight: 'radial_out' };
const DEFAULT_STABILITY = ['euler', 'heun', 'rk4', 'velocity_verlet'];
const POWER_STEPS = 40;         // |R(z)|^n is animated for n = 0..POWER_STEPS
const POWER_TICK = 75;          // milliseconds per step of that animation
const CONNECT_TIMEOUT = 5000;   // ms a handshake may take before the page says the server does not answer
const HELLO_TIMEOUT = 10000;    // ms between the socket opening and the server's hello before the page says so
const RETRY_DELAYS = [1, 2, 4, 8, 15];   // seconds between attempts to (re)connect; the last is repeated
const TRY_AGAIN_LATER = 1013;   // close code: the server serves its limit of pages, and its `error` said so
// What a close code says happened (browsers give 1006 for a refused handshake and a cut connection alike)
const CLOSED = { 1001: 'the server went away', 1006: 'the connection was refused or cut',
  1009: 'a message was too big', 1011: 'the server failed', 1012: 'the server stopped or restarted' };

// Readouts per scene: [key, heading, description]; the key is one of the frame's
// `readouts`, or energy / energy_error / steps of the runner itself.
const COLUMNS = {
  orbit: [['radius', 'r', 'distance from the planet'], ['speed', '|v|', 'speed'],
    ['r_min', 'r min', 'least distance since the start or the last burn'],
    ['r_max', 'r max', 'greatest distance since the start or the last burn'],
    ['period', 'period', 'period of the ellipse through this state (none when unbound)'],
    ['angular_momentum', 'L', 'angular momentum'], ['eccentricity', 'e', 'eccentricity'],
    ['energy', 'E', 'total energy'], ['energy_error', 'ΔE/E', 'relative change of the energy since the start or the last burn'],
    ['steps', 'steps', 'steps taken']],
  pendulum: [['angle', 'θ', 'angle from the downward vertical (rad)'],
    ['angular_velocity', 'ω', 'angular velocity (rad per second)'],
    ['period', 'period', 'period of the swing from this state (none over the top)'],
    ['energy', 'E', 'total energy'], ['energy_error', 'ΔE/E', 'relative change of the energy since the start or the last burn'],
    ['steps', 'steps', 'steps taken']],
};
const ENERGY_PARTS = [['kinetic', 'kinetic'], ['potential', 'potential'], ['total', 'total']];
const PREVIEW_LIMITS = { thrust_dv: 0.005, planet_radius: 0.05 };   // what the picture needs before the hello

const page = {
  socket: null,
  attempts: 0,              // failed attempts to connect since the last hello
  everConnected: false,     // a hello has come: a close is then a lost connection, not an unreachable server
  hello: null,
  settings: null,           // the settings in force, as the server's last `state` says
  frame: null,              // the last frame
  view: 'orbit',            // the tab shown: orbit, pendulum or stability
  race: false,              // several solvers at once
  userPaused: false,        // the pause button; the stability tab also pauses the run
  restartPending: false,    // the next `state` begins a new run: trails and plots start over
  notice: null,             // a note for the status line once the server has answered
  sentSolvers: null,        // solvers asked for and not yet confirmed: quick clicks build on them
  barScale: 0,              // largest energy seen in this run: the bars' full width
  stability: { methods: [], names: [], data: null, z: null, answered: null, at: null, started: 0 },
  drawPending: false,
  preview: null,            // the scene the address asks for, drawn until the server's settings come
};

const sceneView = new SceneView($('scene'));
const errorPlot = new ErrorPlot($('error-plot'));
const stabilityView = new StabilityView($('plane'));

// --- the socket ------------------------------------------------------------------

// One socket at a time.  A handshake that does not finish within CONNECT_TIMEOUT
// is given up; after a failure or a drop the page says so, and tries again after
// RETRY_DELAYS (the server's settings come back with its next hello).
function connect() {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const socket = new WebSocket(`${scheme}//${location.host}/ws`);
  const attempt = { socket, unanswered: false, answered: false };
  const handshake = setTimeout(() => {
    if (socket.readyState !== WebSocket.CONNECTING) return;
    attempt.unanswered = true;
    socket.close();
  }, CONNECT_TIMEOUT);
  let silence = null;
  socket.addEventListener('open', () => {
    clearTimeout(handshake);
    silence = setTimeout(() => {
      if (!attempt.answered) {
        showStatus(`The server at ${location.host} accepted the connection but has said nothing for `
          + `${HELLO_TIMEOUT / 1000} s; still waiting (reload the page to try again).`, 'error');
      }
    }, HELLO_TIMEOUT);
  });
  socket.addEventListener('message', (event) => {
    attempt.answered = true;
    clearTimeout(silence);
    receive(event.data);
  });
  socket.addEventListener('close', (event) => {
    clearTimeout(handshake);
    clearTimeout(silence);
    onClose(attempt, event);
  });
  page.socket = socket;
}

function onClose(attempt, event) {
  if (attempt.socket !== page.socket) return;
  page.socket = null;
  setConnected(false);
  if (event.code === TRY_AGAIN_LATER) return;       // not retried: a page must close first
  const delay = RETRY_DELAYS[Math.min(page.attempts, RETRY_DELAYS.length - 1)];
  page.attempts += 1;
  const why = attempt.unanswered ? `no answer within ${CONNECT_TIMEOUT / 1000} s`
    : CLOSED[event.code] || `code ${event.code}${event.reason ? `: ${event.reason}` : ''}`;
  const what = page.everConnected ? `Lost the connection to the odekit server at ${location.host}`
    : `Cannot reach the odekit server at ${location.host}`;
  showStatus(`${what} (${why}). Is \`odekit serve\` still running there? `
    + `Trying again in ${delay} s; or reload the page.`, 'error');
  setTimeout(connect, delay * 1000);
}

// The controls send to the server: usable only while it is there.
function setConnected(connected) {
  for (const fieldset of document.querySelectorAll('.controls fieldset')) fieldset.disabled = !connected;
}

const HANDLERS = { hello: onHello, state: onState, frame: onFrame, stability: onStability, error: onError };

function receive(text) {
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    showStatus('the server sent a message that is not JSON', 'error');
    return;
  }
  const handler = HANDLERS[message.type];
  if (handler) handler(message);
}

function send(message) {
  if (!page.socket || page.socket.readyState !== WebSocket.OPEN) {
    showStatus('not connected to the server: the page is trying to reconnect', 'error');
    return;
  }
  page.socket.send(JSON.stringify(message));
}

// The status line is where the server's errors are shown: on the page, not in the console.
function showStatus(text, kind = 'info') {
  const status = $('status');
  status.textContent = text;
  status.dataset.kind = kind;
}

// --- what the server says ----------------------------------------------------------

function onHello(hello) {
  if (page.everConnected) page.notice = ['reconnected to the server: the run started again from the link', 'info'];
  page.hello = hello;
  page.attempts = 0;
  page.everConnected = true;
  setConnected(true);
  setUpLimits(hello.limits);
  applyHash();
}

function onState({ settings }) {
  page.settings = settings;
  if (page.sentSolvers && page.sentSolvers.join() === settings.solvers.join()) page.sentSolvers = null;
  if (page.restartPending) clearRun();
  page.restartPending = false;
  syncControls();
  writeHash();
  if (page.notice) showStatus(...page.notice);
  else showStatus(describe(settings));
  page.notice = null;
}

function onError({ message, field }) {
  page.restartPending = false;
  page.sentSolvers = null;
  showStatus(`The server refused that${field ? ` (${field})` : ''}: ${message}`, 'error');
  // the controls go back to what is in force
  if (page.settings) syncControls(true);
}

function onFrame(frame) {
  if (!page.settings) return;
  if (page.frame && frame.t < page.frame.t) clearRun();   // a reset or a new start
  page.frame = frame;
  sceneView.record(frame, page.settings);
  errorPlot.record(frame);
  renderReadouts(frame);
  renderBars(frame.runners[0]);
  announceStops(frame.runners);
  if (page.view !== 'stability') scheduleDraw();
}

// A run that ends at an event (the satellite hits the planet) is said on the status
// line once: in the one frame that carries that event.  The notes keep saying it.
function announceStops(runners) {
  const stopped = runners.filter((r) => r.status === 'stopped' && r.events.length);
  if (stopped.length) showStatus(stopped.map((r) => `${r.solver} ${r.message}`).join('; '), 'event');
}

function onStability(reply) {
  const st = page.stability;
  st.data = reply.methods;
  st.names = Object.keys(reply.methods);      // in the order asked for
  st.at = reply.at || null;
  st.answered = reply.z || null;              // the point `at` is about (a newer one may be on its way)
  stabilityView.setMethods(st.names, reply.methods);
  stabilityView.point = reply.z || null;
  $('z-value').textContent = reply.z ? `z = ${formatComplex(reply.z)}` : '— (click the plane)';
  renderStabilityResults();
  st.started = performance.now();
  scheduleDraw();
}

// A new run: trails, error curves and the bars' scale start over.  The last
// frame stays (it is what the readouts show) until the next one replaces it; a
// frame of the new run may even have come before the `state` that announced it.
function clearRun() {
  sceneView.clear();
  errorPlot.clear();
  page.barScale = 0;
}

function describe(s) {
  const solvers = s.solvers.join(', ');
  return `${s.scene}: ${solvers} at ${s.rate} evaluations per second, ×${s.speed}${s.paused ? ', paused' : ''}`;
}

// --- the settings in the address -----------------------------------------------------

// The methods the page may ask for in a scene (the damped pendulum has its own list: every
// registered method takes the damping today, but one that could not would be left out of it).
function offered(scene, B) {
  return page.hello.methods[scene === 'pendulum' && B > 0 ? 'pendulum_damped' : scene];
}

function fallbackSolver(scene, B) {
  const names = offered(scene, B);
  return names.find((n) => page.hello.defaults.solvers.includes(n)) || (names.includes('rk4') ? 'rk4' : names[0]);
}

// Read the # part: scene, solvers, rate, speed, e, B, and the stability
// explorer's methods and point.  What is not accepted is left at its default
// and named in `notes`, so a mistyped link says what it ignored.
function readHash() {
  const { limits, defaults, stability_methods: stabilityMethods } = page.hello;
  const params = new URLSearchParams(location.hash.slice(1));
  const notes = [];
  const number = (key, [lo, hi], fallback) => {
    if (!params.has(key)) return fallback;
    const value = Number(params.get(key));
    if (params.get(key) !== '' && value >= lo && value <= hi) return value;
    notes.push(`${key}=${params.get(key)} (accepted: ${lo} to ${hi})`);
    return fallback;
  };
  const names = (key, accepted, fallback) => {
    if (!params.has(key)) return fallback;
    const asked = params.get(key).split(',').filter(Boolean);
    const kept = asked.filter((n, i) => accepted.includes(n) && asked.indexOf(n) === i).slice(0, limits.max_solvers);
    const left = asked.filter((n) => !kept.includes(n));
    if (left.length) notes.push(`${key}: ${left.join(', ')}`);
    return kept.length ? kept : fallback;
  };

  let view = params.get('scene') || defaults.scene;
  if (!['orbit', 'pendulum', 'stability'].includes(view)) {
    notes.push(`scene=${view}`);
    view = defaults.scene;
  }
  const scene = view === 'stability' ? (params.get('sim') === 'pendulum' ? 'pendulum' : 'orbit') : view;
  const B = number('B', limits.B, defaults.B);
  let speed = Number(params.get('speed') || defaults.speed);
  if (!limits.speeds.includes(speed)) {
    notes.push(`speed=${params.get('speed')} (accepted: ${limits.speeds.join(', ')})`);
    speed = defaults.speed;
  }
  const solvers = names('solvers', offered(scene, B), [fallbackSolver(scene, B)]);
  const wall = params.get('wall') === 'none' ? null : number('wall', limits.wall, defaults.wall);
  const run = { scene, solvers, rate: number('rate', limits.rate, defaults.rate), speed, e: number('e', limits.e, defaults.e), B, wall };
  const methods = names('methods', stabilityMethods, DEFAULT_STABILITY.filter((n) => stabilityMethods.includes(n)));
  const z = params.has('z') ? params.get('z').split(',').map(Number) : null;
  const point = z && z.length === 2 && z.every(Number.isFinite) ? z : null;
  if (z && !point) notes.push(`z=${params.get('z')} (accepted: re,im)`);
  return { view, run, methods, z: point, notes };
}

function applyHash() {
  const wanted = readHash();
  if (wanted.notes.length) page.notice = [`ignored in the link: ${wanted.notes.join('; ')}`, 'error'];
  page.view = wanted.view;
  page.race = wanted.run.solvers.length > 1;
  page.stability.methods = wanted.methods;
  page.stability.z = wanted.z;
  renderStabilityList();
  startRun(wanted.run);
  if (page.view === 'stability') requestStability();
}

// Write the settings in force to the # part (replacing, not adding, a history
// entry) and to the share link.  Method names need no escaping: [a-z0-9_].
function writeHash() {
  const s = page.settings;
  const st = page.stability;
  const fields = [['scene', page.view]];
  if (page.view === 'stability') fields.push(['sim', s.scene]);
  fields.push(['solvers', s.solvers.join(',')], ['rate', s.rate], ['speed', s.speed], ['e', s.e], ['B', s.B],
    ['wall', s.wall ?? 'none'], ['methods', st.methods.join(',')]);
  if (st.z) fields.push(['z', st.z.join(',')]);
  const hash = `#${fields.map(([k, v]) => `${k}=${v}`).join('&')}`;
  if (hash !== location.hash) history.replaceState(null, '', hash);
  const link = $('share-link');
  link.href = location.href;
  link.textContent = location.href;
}

// --- asking the server for things ----------------------------------------------------

const effectivePaused = () => page.userPaused || page.view === 'stability';
const runOf = (s) => ({ scene: s.scene, solvers: s.solvers, rate: s.rate, speed: s.speed, e: s.e, B: s.B, wall: s.wall });

function startRun(run) {
  page.restartPending = true;
  page.sentSolvers = run.solvers;
  send({ type: 'start', ...run, paused: effectivePaused() });
}

// Changing solvers, rate or B makes new integrators (from the first solver's state).
function change(fields) {
  if ('solvers' in fields || 'rate' in fields || 'B' in fields) page.restartPending = true;
  if ('solvers' in fields) page.sentSolvers = fields.solvers;
  send({ type: 'set', ...fields });
}

function requestStability() {
  const st = page.stability;
  const message = { type: 'stability', methods: st.methods };
  if (st.z) message.z = st.z;
  send(message);
}

// --- controls ------------------------------------------------------------------------

function setUpLimits(limits) {
  const [lo, hi] = limits.rate;
  Object.assign($('rate-slider'), { min: Math.log10(lo), max: Math.log10(hi) });
  Object.assign($('rate-number'), { min: lo, max: hi });
  Object.assign($('e-slider'), { min: limits.e[0], max: limits.e[1] });
  Object.assign($('b-slider'), { min: limits.B[0], max: limits.B[1] });
  Object.assign($('wall-slider'), { min: limits.wall[0], max: limits.wall[1] });
  $('wall-restitution').textContent = limits.wall_restitution;
  $('max-solvers').textContent = limits.max_solvers;
  $('speed-group').replaceChildren(...limits.speeds.map((speed) => {
    const label = document.createElement('label');
    label.className = 'pill';
    const input = Object.assign(document.createElement('input'), { type: 'radio', name: 'speed', value: speed });
    input.dataset.testid = `speed-${speed}`;
    label.append(input, ` ×${speed}`);
    return label;
  }));
  $('energy-bars').replaceChildren(...ENERGY_PARTS.map(([key, name]) => energyBar(key, name)));
}

function energyBar(key, name) {
  const row = document.createElement('div');
  row.className = 'bar';
  row.innerHTML = `<span class="bar-name">${name}</span><div class="track" role="meter" aria-label="${name} energy">`
    + `<div class="fill ${key}"></div></div><output data-testid="bar-${key}"></output>`;
  row.dataset.key = key;
  return row;
}

// A field the user is editing (it has the focus) is left alone: a `state`
// answering an earlier change must not overwrite what is being typed.  After a
// refusal (`force`) every field goes back to the settings in force.
function setValue(input, value, force) {
  if (force || document.activeElement !== input) input.value = value;
}

// Make every control show the settings in force.
function syncControls(force = false) {
  const s = page.settings;
  showView();
  page.race = page.race || s.solvers.length > 1;
  $('race').checked = page.race;
  renderSolverList(s);
  setValue($('rate-number'), s.rate, force);
  setValue($('rate-slider'), Math.log10(s.rate), force);
  for (const input of document.querySelectorAll('input[name=speed]')) input.checked = Number(input.value) === s.speed;
  $('pause').textContent = page.userPaused ? 'Resume' : 'Pause';
  $('pause').setAttribute('aria-pressed', String(page.userPaused));
  setValue($('e-slider'), s.e, force);
  $('e-value').textContent = Number($('e-slider').value).toFixed(2);
  setValue($('b-slider'), s.B, force);
  $('b-value').textContent = Number($('b-slider').value).toFixed(2);
  $('wall-on').checked = s.wall !== null;
  if (s.wall !== null) setValue($('wall-slider'), s.wall, force);
  $('wall-slider').disabled = s.wall === null;
  $('wall-value').textContent = Number($('wall-slider').value).toFixed(2);
  showScene(s.scene);
  renderStabilityList();
}

// The tab shown, and its panel.
function showView() {
  const stability = page.view === 'stability';
  for (const tab of document.querySelectorAll('[role=tab]')) {
    const selected = tab.dataset.view === page.view;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
  }
  $('sim-panel').hidden = stability;
  $('stability-panel').hidden = !stability;
  if (!stability) $('sim-panel').setAttribute('aria-labelledby', `tab-${page.view}`);
}

// The parts of the panel that depend on the scene: its parameter and its keys.
function showScene(scene) {
  $('orbit-params').hidden = scene !== 'orbit';
  $('pendulum-params').hidden = scene !== 'pendulum';
  $('keys-hint').textContent = scene === 'orbit'
    ? 'Click the picture, then ↑ prograde, ↓ retrograde, ← radially in, → radially out.'
    : 'Click the picture, then ↑ pushes the bob with its swing, ↓ against it.';
}

// Before the server answers, what the address asks for: the tab, the scene's
// planet or pivot, and its parameter (the server's checks come with its hello).
function showPreview() {
  const params = new URLSearchParams(location.hash.slice(1));
  const view = params.get('scene');
  page.view = ['orbit', 'pendulum', 'stability'].includes(view) ? view : 'orbit';
  const scene = page.view === 'stability' ? (params.get('sim') === 'pendulum' ? 'pendulum' : 'orbit') : page.view;
  const e = Number(params.get('e'));
  page.preview = { scene, e: e > 0 && e < 1 ? e : 0 };
  showView();
  showScene(scene);
  scheduleDraw();
}

// One radio (or, racing, one checkbox) per method offered; a chosen one shows its colour.
function renderSolverList(s) {
  const list = $('solver-list');
  const names = offered(s.scene, s.B);
  const type = page.race ? 'checkbox' : 'radio';
  const signature = `${names.join()}|${type}`;
  if (list.dataset.signature !== signature) {
    list.replaceChildren(...names.map((name) => choice(name, type, 'solver')));
    list.dataset.signature = signature;
  }
  markChosen(list, chosenSolvers());
}

// The solvers as the user has chosen them: those sent and not yet confirmed, else those in force.
const chosenSolvers = () => page.sentSolvers || page.settings.solvers;

function choice(name, type, group) {
  const info = page.hello.info[name];
  const label = document.createElement('label');
  label.className = 'choice';
  label.title = info.summary;
  const input = Object.assign(document.createElement('input'), { type, name: group, value: name, id: `${group}-${name}` });
  input.dataset.testid = `${group}-${name}`;
  const swatch = document.createElement('span');
  swatch.className = 'swatch';
  const detail = document.createElement('small');
  const evaluations = info.evaluations_per_step ? ` · ${info.evaluations_per_step} f/step` : '';
  detail.textContent = `p=${info.order}${evaluations}`;
  detail.title = `order ${info.order}${info.evaluations_per_step ? `, ${info.evaluations_per_step} derivative evaluations per step` : ''}`;
  label.append(input, swatch, ` ${name} `);
  if (info.symplectic) {
    const badge = Object.assign(document.createElement('abbr'), { className: 'badge', title: 'symplectic', textContent: 'S' });
    label.append(badge);
  }
  label.append(detail);
  return label;
}

// Check the chosen names, colour them by their place, and stop at the limit.
function markChosen(list, chosen) {
  const full = chosen.length >= page.hello.limits.max_solvers;
  for (const input of list.querySelectorAll('input')) {
    const index = chosen.indexOf(input.value);
    input.checked = index >= 0;
    input.disabled = input.type === 'checkbox' && full && index < 0;
    input.parentElement.style.setProperty('--swatch', index >= 0 ? PALETTE[index] : 'transparent');
  }
}

// The chosen names with one box's change applied: a new one goes last, so that
// a solver keeps its colour when another is added.
function toggled(current, input) {
  const rest = current.filter((n) => n !== input.value);
  return input.checked ? [...rest, input.value] : rest;
}

function onSolverChange(event) {
  if (!page.settings) return;
  const solvers = page.race ? toggled(chosenSolvers(), event.target) : [event.target.value];
  if (!solvers.length) {
    event.target.checked = true;
    showStatus('at least one solver runs', 'error');
    return;
  }
  change({ solvers: solvers.slice(0, page.hello.limits.max_solvers) });
}

function onRaceToggle() {
  page.race = $('race').checked;
  const s = page.settings;
  if (!s) return;
  if (!page.race && chosenSolvers().length > 1) change({ solvers: [chosenSolvers()[0]] });
  renderSolverList(s);
}

// Rates are kept to three significant figures: the slider is logarithmic.
const niceRate = (rate) => Number(rate.toPrecision(3));

function onRate(rate) {
  const [lo, hi] = page.hello.limits.rate;
  if (!Number.isFinite(rate)) {
    showStatus(`the rate must be a number from ${lo} to ${hi}`, 'error');
    syncControls(true);
    return;
  }
  change({ rate: Math.min(hi, Math.max(lo, rate)) });
}

function onDamping() {
  const B = Number($('b-slider').value);
  // a method not offered with damping is dropped here, and the page says so
  const allowed = offered('pendulum', B);
  const dropped = chosenSolvers().filter((n) => !allowed.includes(n));
  let solvers = chosenSolvers().filter((n) => allowed.includes(n));
  if (!solvers.length) solvers = [fallbackSolver('pendulum', B)];
  if (dropped.length) {
    page.notice = [`with damping, ${dropped.join(', ')} cannot run`, 'info'];
  }
  change({ B, solvers });
}

// The wall is part of the scene: a new one starts the run over, as a new e does.
function onWall() {
  startRun({ ...runOf(page.settings), wall: $('wall-on').checked ? Number($('wall-slider').value) : null });
}

function selectView(view) {
  const s = page.settings;
  if (!s || view === page.view) return;
  const wasPaused = effectivePaused();
  page.view = view;
  if (view !== 'stability' && view !== s.scene) {
    const solvers = chosenSolvers().filter((n) => offered(view, s.B).includes(n));
    startRun({ ...runOf(s), scene: view, solvers: solvers.length ? solvers : [fallbackSolver(view, s.B)] });
  } else if (effectivePaused() !== wasPaused) {
    change({ paused: effectivePaused() });
  }
  if (view === 'stability') requestStability();
  syncControls();
  writeHash();
  scheduleDraw();
}

// The tab list as ARIA describes it: Left and Right move between the tabs.
function onTabKey(event) {
  const tabs = [...document.querySelectorAll('[role=tab]')];
  const step = { ArrowLeft: -1, ArrowRight: 1 }[event.key];
  if (!step) return;
  const next = tabs[(tabs.indexOf(event.target) + step + tabs.length) % tabs.length];
  next.focus();
  selectView(next.dataset.view);
}

function onThrustKey(event) {
  const direction = THRUST_KEYS[event.key];
  if (!direction || !page.settings) return;
  event.preventDefault();       // the arrow keys would otherwise scroll the page
  if (page.frame && page.frame.runners.every((r) => r.status !== 'running')) {
    showStatus('nothing left to steer: every run has ended (see the notes); press Reset to start again', 'event');
    return;
  }
  if (page.settings.scene === 'pendulum' && direction.startsWith('radial')) {
    showStatus('the pendulum has no radial thrust: ↑ pushes with the swing, ↓ against it');
    return;
  }
  send({ type: 'thrust', direction });
}

function copyLink() {
  if (!navigator.clipboard) {
    showStatus('this browser cannot copy from here: select the link instead', 'error');
    return;
  }
  navigator.clipboard.writeText(location.href).then(
    () => showStatus('link copied'),
    () => showStatus('the browser refused to copy: select the link instead', 'error'));
}

// --- readouts ------------------------------------------------------------------------

function runnerValue(runner, key) {
  if (key === 'energy') return runner.energy.total;
  if (key === 'energy_error') return runner.energy_error;
  if (key === 'steps') return runner.steps;
  return runner.readouts[key];
}

function format(key, value) {
  if (value === null || value === undefined) return '—';
  if (!Number.isFinite(value)) return String(value);
  if (key === 'steps') return String(value);
  if (key === 'energy_error') return value.toExponential(2);
  return value.toPrecision(6);
}

// A row per runner; the table is rebuilt only when the runners change.  Each
// row carries the state it shows (data-x, data-v), so that a test can check
// the readouts against odekit's invariants at exactly that state.
function renderReadouts(frame) {
  const table = $('readouts');
  const scene = page.settings.scene;
  const columns = COLUMNS[scene];
  const signature = `${scene}|${frame.runners.map((r) => r.solver).join()}`;
  if (table.dataset.signature !== signature) {
    table.tHead.replaceChildren(headerRow(columns));
    table.tBodies[0].replaceChildren(...frame.runners.map((runner, i) => runnerRow(runner, i, columns)));
    table.dataset.signature = signature;
  }
  frame.runners.forEach((runner, i) => {
    const row = table.tBodies[0].rows[i];
    row.dataset.x = JSON.stringify(runner.x);
    row.dataset.v = JSON.stringify(runner.v);
    row.dataset.status = runner.status;
    for (const [key] of columns) row.querySelector(`[data-key=${key}]`).textContent = format(key, runnerValue(runner, key));
  });
  $('sim-time').textContent = `at t = ${frame.t.toFixed(2)}`;
  renderNotes(frame.runners);
}

function headerRow(columns) {
  const row = document.createElement('tr');
  const first = Object.assign(document.createElement('th'), { scope: 'col', textContent: 'solver' });
  row.append(first, ...columns.map(([, heading, description]) => {
    const th = Object.assign(document.createElement('th'), { scope: 'col', title: description });
    th.append(Object.assign(document.createElement('abbr'), { title: description, textContent: heading }));
    return th;
  }));
  return row;
}

function runnerRow(runner, i, columns) {
  const row = document.createElement('tr');
  row.dataset.testid = `runner-${runner.solver}`;
  row.dataset.solver = runner.solver;
  const name = Object.assign(document.createElement('th'), { scope: 'row' });
  name.style.setProperty('--swatch', PALETTE[i]);
  name.innerHTML = '<span class="swatch"></span> ';
  name.append(runner.solver);
  row.append(name, ...columns.map(([key]) => {
    const td = document.createElement('td');
    td.dataset.key = key;
    return td;
  }));
  return row;
}

// A failed or stopped runner's message, and the server's stability warnings (Euler on an
// orbit is unstable at every step: on this page that is the lesson).
function renderNotes(runners) {
  const notes = runners.flatMap((r) => [
    r.status === 'failed' ? `${r.solver} stopped: ${r.message}` : null,
    r.status === 'stopped' ? `${r.solver} ${r.message}` : null,
    r.warning ? `${r.solver}: ${r.warning}` : null]).filter(Boolean);
  const list = $('notes');
  if (list.dataset.text === notes.join('\n')) return;
  list.dataset.text = notes.join('\n');
  list.replaceChildren(...notes.map((text) => Object.assign(document.createElement('li'), { textContent: text })));
}

// Bars from the middle: to the right positive, to the left negative (the
// orbit's potential energy is), scaled to the largest energy of the run.
function renderBars(runner) {
  const energy = runner.energy;
  page.barScale = Math.max(page.barScale, ...ENERGY_PARTS.map(([key]) => (Number.isFinite(energy[key]) ? Math.abs(energy[key]) : 0)));
  $('energy-of').textContent = `of ${runner.solver}`;
  for (const row of $('energy-bars').children) {
    const value = energy[row.dataset.key];      // null when it overflowed (JSON has no inf)
    const share = page.barScale && value !== null ? Math.min(1, Math.abs(value) / page.barScale) * 50 : 0;
    const fill = row.querySelector('.fill');
    fill.style.width = `${share}%`;
    fill.style.left = value >= 0 ? '50%' : `${50 - share}%`;
    const track = row.querySelector('.track');
    if (value !== null) track.setAttribute('aria-valuenow', String(value));
    track.setAttribute('aria-valuemin', String(-page.barScale));
    track.setAttribute('aria-valuemax', String(page.barScale));
    row.querySelector('output').textContent = value === null ? '—' : value.toPrecision(4);
  }
}

// --- the stability explorer -----------------------------------------------------------

function renderStabilityList() {
  const list = $('stability-list');
  if (!page.hello) return;
  if (!list.querySelector('input')) {      // the first time: the methods replace the "listed once" hint
    list.replaceChildren(...page.hello.stability_methods.map((name) => choice(name, 'checkbox', 'method')));
  }
  markChosen(list, page.stability.methods);
}

function onStabilityChange(event) {
  const methods = toggled(page.stability.methods, event.target);
  if (!methods.length) {
    showStatus('choose at least one method', 'error');
    renderStabilityList();
    return;
  }
  page.stability.methods = methods.slice(0, page.hello.limits.max_solvers);
  renderStabilityList();
  requestStability();
  writeHash();
}

function pickPoint(re, im) {
  page.stability.z = [Number(re.toFixed(3)), Number(im.toFixed(3))];
  requestStability();
  writeHash();
}

function onPlaneClick(event) {
  const rect = $('plane').getBoundingClientRect();
  pickPoint(...stabilityView.toPlane(event.clientX - rect.left, event.clientY - rect.top));
}

// Without a mouse: the arrow keys move the point by 0.1.
function onPlaneKey(event) {
  const moves = { ArrowLeft: [-0.1, 0], ArrowRight: [0.1, 0], ArrowUp: [0, 0.1], ArrowDown: [0, -0.1] };
  if (!moves[event.key]) return;
  event.preventDefault();
  const [re, im] = page.stability.z || [-1, 0];
  pickPoint(re + moves[event.key][0], im + moves[event.key][1]);
}

const formatComplex = ([re, im]) => `${re.toFixed(3)} ${im < 0 ? '−' : '+'} ${Math.abs(im).toFixed(3)}i`;

function formatPower(value) {
  if (value === null || !Number.isFinite(value)) return '∞';
  return value !== 0 && (value >= 1e4 || value < 1e-3) ? value.toExponential(2) : value.toPrecision(3);
}

// The server's verdict per method at z; |R(z)|^n is filled in by the animation.
function renderStabilityResults() {
  const st = page.stability;
  const body = $('stability-results').tBodies[0];
  body.replaceChildren(...(st.at ? st.names : []).map((name, i) => {
    const result = st.at[name];
    const row = document.createElement('tr');
    row.dataset.testid = `stability-${name}`;
    row.dataset.stable = String(result.stable);
    const kind = st.data[name].kind === 'oscillator' ? '<abbr title="a splitting method: at hω = |Im z|">†</abbr>' : '';
    // names go in as text, never as markup (they are echoed from what the page asked for)
    row.innerHTML = `<th scope="row"><span class="swatch"></span> <span class="name"></span>${kind}</th>`
      + `<td data-key="abs_R">${formatPower(result.abs_R)}</td>`
      + `<td data-key="verdict" class="${result.stable ? 'stable' : 'unstable'}">${result.stable ? 'stable' : 'unstable'}</td>`
      + '<td data-key="power"></td>';
    row.querySelector('.name').textContent = name;
    row.querySelector('th').style.setProperty('--swatch', PALETTE[i]);
    return row;
  }));
}

// n grows by one every POWER_TICK ms after a point is picked: |R|^n then visibly
// decays (a stable step) or explodes (an unstable one).
function drawStability() {
  const st = page.stability;
  stabilityView.draw();
  const n = st.at ? Math.min(POWER_STEPS, Math.floor((performance.now() - st.started) / POWER_TICK)) : 0;
  const rows = st.at ? st.names.map((name, i) => ({ absR: st.at[name].abs_R, colour: PALETTE[i] })) : [];
  drawPowers($('power-plot'), rows, n, POWER_STEPS);
  $('power-n').textContent = String(n);
  for (const row of $('stability-results').tBodies[0].rows) {
    const value = st.at[row.dataset.testid.slice('stability-'.length)].abs_R;
    row.querySelector('[data-key=power]').textContent = formatPower(value === null ? null : value ** n);
  }
  return st.at && n < POWER_STEPS;       // more to animate
}

// --- drawing ---------------------------------------------------------------------------

function scheduleDraw() {
  if (page.drawPending) return;
  page.drawPending = true;
  requestAnimationFrame(() => {
    page.drawPending = false;
    if (page.view === 'stability') {
      if (drawStability()) scheduleDraw();
    } else {
      sceneView.draw(page.frame, page.settings || page.preview, page.hello ? page.hello.limits : PREVIEW_LIMITS);
      errorPlot.draw();
    }
  });
}

// --- wiring ----------------------------------------------------------------------------

function wire() {
  for (const tab of document.querySelectorAll('[role=tab]')) {
    tab.addEventListener('click', () => selectView(tab.dataset.view));
    tab.addEventListener('keydown', onTabKey);
  }
  $('race').addEventListener('change', onRaceToggle);
  $('solver-list').addEventListener('change', onSolverChange);
  $('rate-slider').addEventListener('input', () => { $('rate-number').value = niceRate(10 ** $('rate-slider').value); });
  $('rate-slider').addEventListener('change', () => onRate(niceRate(10 ** $('rate-slider').value)));
  $('rate-number').addEventListener('change', () => onRate(Number($('rate-number').value)));
  $('speed-group').addEventListener('change', (event) => change({ speed: Number(event.target.value) }));
  $('pause').addEventListener('click', () => {
    page.userPaused = !page.userPaused;
    change({ paused: effectivePaused() });
    syncControls();
  });
  $('reset').addEventListener('click', () => { page.restartPending = true; send({ type: 'reset' }); });
  $('e-slider').addEventListener('input', () => { $('e-value').textContent = Number($('e-slider').value).toFixed(2); });
  $('e-slider').addEventListener('change', () => startRun({ ...runOf(page.settings), e: Number($('e-slider').value) }));
  $('b-slider').addEventListener('input', () => { $('b-value').textContent = Number($('b-slider').value).toFixed(2); });
  $('b-slider').addEventListener('change', onDamping);
  $('wall-on').addEventListener('change', onWall);
  $('wall-slider').addEventListener('input', () => { $('wall-value').textContent = Number($('wall-slider').value).toFixed(2); });
  $('wall-slider').addEventListener('change', onWall);
  $('copy-link').addEventListener('click', copyLink);
  $('scene').addEventListener('click', () => $('scene').focus());
  $('scene').addEventListener('keydown', onThrustKey);
  $('plane').addEventListener('click', onPlaneClick);
  $('plane').addEventListener('keydown', onPlaneKey);
  $('stability-list').addEventListener('change', onStabilityChange);
  window.addEventListener('hashchange', () => { if (page.hello) applyHash(); });
  const resized = new ResizeObserver(() => scheduleDraw());
  for (const id of ['scene', 'error-plot', 'plane', 'power-plot']) resized.observe($(id));
}

// A few read-only hooks for the browser tests (and the curious, in the console).
window.odekitPage = Object.freeze({
  get frame() { return page.frame; },
  get settings() { return page.settings; },
  get view() { return page.view; },
  get stability() { return { names: page.stability.names, z: page.stability.answered, at: page.stability.at }; },
  colours: Object.freeze([...PALETTE]),
  arrows: Object.freeze({ ...ARROW }),
  trailLengths: () => sceneView.trailLengths(),
  planePoint: (re, im) => stabilityView.toCanvas(re, im),
  absR: (name, re, im) => absR(page.stability.data[name], re, im),
});

wire();
setConnected(false);
showPreview();
showStatus(`connecting to the odekit server at ${location.host}…`);
connect();
