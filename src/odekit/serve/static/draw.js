// Drawing the simulation: the scene (orbit or pendulum) with trails and arrows,
// and the plot of each solver's relative energy error.  Nothing here computes
// physics: every position, velocity and acceleration comes from a server frame.

// One colour per solver, in the order of the race.  None is close to the
// arrows' green, blue and yellow, so a trail is never mistaken for an arrow.
export const PALETTE = ['#ff6b8b', '#22d3ee', '#a78bfa', '#fb923c', '#f1f5f9', '#e879f9', '#d4a373', '#84cc16'];
export const ARROW = { velocity: '#22c55e', accel: '#3b82f6', thrust: '#facc15' };
export const BACKGROUND = '#0b1020';
const INK = '#94a3b8';          // axes and labels
const TRAIL_LIMIT = 4000;       // points kept per solver: several orbits at 30 frames a second
const ERROR_LIMIT = 2000;
const CABLE = 1.25;             // pixels each later solver's trail and body are wider

// Size the canvas's pixels to its box on screen (times the device's pixel ratio)
// and return a context that draws in CSS pixels.
export function fitCanvas(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(1, Math.round(canvas.clientWidth * ratio));
  const height = Math.max(1, Math.round(canvas.clientHeight * ratio));
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width;
    canvas.height = height;
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return { ctx, w: canvas.clientWidth, h: canvas.clientHeight };
}

// An arrow from (x, y) by (dx, dy) pixels, its head scaled to its length.
export function arrow(ctx, x, y, dx, dy, colour) {
  const length = Math.hypot(dx, dy);
  if (length < 2) return;
  const head = Math.min(9, 0.4 * length);
  const ux = dx / length, uy = dy / length;
  ctx.strokeStyle = colour;
  ctx.fillStyle = colour;
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(x, y);
  ctx.lineTo(x + dx - ux * head, y + dy - uy * head);
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(x + dx, y + dy);
  ctx.lineTo(x + dx - ux * head - uy * head * 0.5, y + dy - uy * head + ux * head * 0.5);
  ctx.lineTo(x + dx - ux * head + uy * head * 0.5, y + dy - uy * head - ux * head * 0.5);
  ctx.closePath();
  ctx.fill();
}

// A vector (in world units) drawn `scale` pixels per unit, but never longer than
// `cap` pixels: the acceleration at a close pericentre would leave the picture.
function capped(vx, vy, scale, cap) {
  const length = Math.hypot(vx, vy) * scale;
  const k = length > cap ? cap / length : 1;
  return [vx * scale * k, -vy * scale * k];      // the canvas's y axis points down
}

// Where the solver's body is in the plane: the satellite's position, or the
// pendulum's bob at angle theta from the downward vertical (rod length 1).
function body(scene, runner) {
  if (scene === 'orbit') return runner.x;
  return [Math.sin(runner.x), -Math.cos(runner.x)];
}

// The scene: trails of every solver, and the bodies with their arrows.
export class SceneView {
  constructor(canvas) {
    this.canvas = canvas;
    this.trails = [];       // per runner (in the frame's order): {solver, points}
    this.extent = 0;        // half the width of the world shown; grows as a solver spirals out
  }

  clear() {
    this.trails = [];
    this.extent = 0;
  }

  trailLengths() {
    return Object.fromEntries(this.trails.map((trail) => [trail.solver, trail.points.length]));
  }

  // Keep each solver's path; a new list of solvers starts new trails.
  record(frame, settings) {
    const names = frame.runners.map((r) => r.solver);
    if (names.join() !== this.trails.map((t) => t.solver).join()) {
      this.trails = names.map((solver) => ({ solver, points: [] }));
    }
    const centre = this.centre(settings);
    frame.runners.forEach((runner, i) => {
      const p = body(settings.scene, runner);
      const points = this.trails[i].points;
      const last = points[points.length - 1];
      if (last && last[0] === p[0] && last[1] === p[1]) return;    // paused: nothing moved
      // the server sends some of the steps since the last frame, so that at x100 a
      // trail follows the orbit instead of cutting across it
      for (const x of runner.path || []) points.push(body(settings.scene, { x }));
      points.push(p);
      if (points.length > TRAIL_LIMIT) points.splice(0, points.length - TRAIL_LIMIT);
      // the view only grows (until a reset), so a trail does not jump about the screen
      const reach = Math.hypot(p[0] - centre[0], p[1] - centre[1]);
      if (Number.isFinite(reach)) this.extent = Math.max(this.extent, Math.min(60, 1.08 * reach));
    });
  }

  // The orbit is centred on its ellipse (semi-major axis 1, planet at a focus);
  // the pendulum on its pivot.
  centre(settings) {
    return settings.scene === 'orbit' ? [-settings.e, 0] : [0, 0];
  }

  // `limits` are the server's (its hello): the planet's radius, the thrust's size.
  draw(frame, settings, limits) {
    const { ctx, w, h } = fitCanvas(this.canvas);
    ctx.fillStyle = BACKGROUND;
    ctx.fillRect(0, 0, w, h);
    if (!settings) return;
    const orbit = settings.scene === 'orbit';
    const centre = this.centre(settings);
    const extent = Math.max(this.extent, orbit ? 1.2 : 1.25);
    const scale = Math.min(w, h) / (2 * extent);
    const toScreen = ([x, y]) => [w / 2 + (x - centre[0]) * scale, h / 2 - (y - centre[1]) * scale];

    if (orbit) this.drawPlanet(ctx, toScreen([0, 0]), limits.planet_radius * scale);
    else this.drawPivot(ctx, toScreen([0, 0]), scale);
    if (!orbit && settings.wall !== null && settings.wall !== undefined) this.drawWall(ctx, toScreen([-settings.wall, 0])[0], h);
    if (!frame) return;         // before the first frame: the planet or the pivot alone
    // Solvers that agree draw the same path.  So that none hides another, the
    // paths are drawn like a cable: the first solver thinnest and on top, each
    // later one a little wider underneath, showing as a band along the others.
    for (let i = this.trails.length - 1; i >= 0; i--) {
      this.drawTrail(ctx, this.trails[i].points, PALETTE[i], 2 + CABLE * i, toScreen);
    }
    for (let i = frame.runners.length - 1; i >= 0; i--) {
      const runner = frame.runners[i];
      const at = toScreen(body(settings.scene, runner));
      if (!orbit) this.drawRod(ctx, toScreen([0, 0]), at);
      this.drawBody(ctx, at, PALETTE[i], 5 + CABLE * i);
    }
    // the arrows over every body, so that a body does not hide another's arrows
    frame.runners.forEach((runner) => this.drawArrows(ctx, toScreen(body(settings.scene, runner)), runner, orbit, limits.thrust_dv));
    ctx.fillStyle = INK;
    ctx.font = '12px system-ui, sans-serif';
    ctx.fillText(`t = ${frame.t.toFixed(2)}${frame.paused ? '  (paused)' : ''}`, 10, 18);
  }

  // At its true size, where the server stops a satellite that hits it (but never
  // smaller than a dot when the view has grown far out).
  drawPlanet(ctx, [x, y], radius) {
    const r = Math.max(2, radius);
    const glow = ctx.createRadialGradient(x - 0.3 * r, y - 0.3 * r, 0.1 * r, x, y, 1.1 * r);
    glow.addColorStop(0, '#c7d2fe');
    glow.addColorStop(1, '#475569');
    ctx.fillStyle = glow;
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.fill();
  }

  // The pendulum's wall: a vertical line the bob bounces off, the whole height of the picture.
  drawWall(ctx, x, h) {
    ctx.strokeStyle = INK;
    ctx.lineWidth = 3;
    ctx.beginPath();
    ctx.moveTo(x, 0);
    ctx.lineTo(x, h);
    ctx.stroke();
  }

  drawPivot(ctx, [x, y], scale) {
    ctx.strokeStyle = '#1e293b';       // the circle the bob is bound to
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.arc(x, y, scale, 0, 2 * Math.PI);
    ctx.stroke();
    ctx.fillStyle = INK;
    ctx.fillRect(x - 8, y - 2, 16, 4);
  }

  drawRod(ctx, [x0, y0], [x1, y1]) {
    ctx.strokeStyle = '#64748b';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1, y1);
    ctx.stroke();
  }

  drawTrail(ctx, points, colour, width, toScreen) {
    if (points.length < 2) return;
    ctx.strokeStyle = colour;
    ctx.lineWidth = width;
    ctx.lineJoin = 'round';
    ctx.beginPath();
    points.forEach((p, j) => {
      const [x, y] = toScreen(p);
      if (j === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    });
    ctx.stroke();
  }

  drawBody(ctx, [x, y], colour, radius) {
    ctx.fillStyle = colour;
    ctx.strokeStyle = BACKGROUND;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.arc(x, y, radius, 0, 2 * Math.PI);
    ctx.fill();
    ctx.stroke();
  }

  // Velocity (green), acceleration (blue) and the last burn (yellow).  The
  // pendulum's are along the tangent of its circle: L omega, L alpha, L d(omega).
  drawArrows(ctx, [x, y], runner, orbit, thrustDv) {
    const burn = runner.thrust;
    let velocity, accel, thrust;
    if (orbit) {
      velocity = capped(runner.v[0], runner.v[1], 70, 160);
      accel = capped(runner.accel[0], runner.accel[1], 30, 160);
      thrust = burn && capped(burn[0], burn[1], 60 / thrustDv, 80);
    } else {
      const tangent = [Math.cos(runner.x), Math.sin(runner.x)];
      const along = (s, k, cap) => capped(tangent[0] * s, tangent[1] * s, k, cap);
      velocity = along(runner.v, 25, 160);
      accel = along(runner.accel, 12, 160);
      thrust = burn !== null && burn !== undefined && along(burn, 60 / thrustDv, 80);
    }
    arrow(ctx, x, y, ...velocity, ARROW.velocity);
    arrow(ctx, x, y, ...accel, ARROW.accel);
    if (thrust) arrow(ctx, x, y, ...thrust, ARROW.thrust);
  }
}

// log10 of a relative error; round-off sits near 1e-16.
const log10 = (e) => Math.max(-16, Math.log10(Math.abs(e)));

// The relative energy error of each solver against simulated time, on a log scale:
// Euler's grows without bound, a symplectic method's stays bounded.
export class ErrorPlot {
  constructor(canvas) {
    this.canvas = canvas;
    this.series = [];       // per runner: {solver, points: [[t, log10|err|]]}
  }

  clear() {
    this.series = [];
  }

  record(frame) {
    const names = frame.runners.map((r) => r.solver);
    if (names.join() !== this.series.map((s) => s.solver).join()) {
      this.series = names.map((solver) => ({ solver, points: [] }));
    }
    frame.runners.forEach((runner, i) => {
      // an exact zero (the first frame, or just after a burn) has no logarithm
      if (!Number.isFinite(runner.energy_error) || runner.energy_error === 0) return;
      const points = this.series[i].points;
      if (points.length && points[points.length - 1][0] === frame.t) return;   // paused
      points.push([frame.t, log10(runner.energy_error)]);
      if (points.length > ERROR_LIMIT) points.splice(0, points.length - ERROR_LIMIT);
    });
  }

  draw() {
    const { ctx, w, h } = fitCanvas(this.canvas);
    ctx.fillStyle = BACKGROUND;
    ctx.fillRect(0, 0, w, h);
    const all = this.series.flatMap((s) => s.points);
    if (all.length < 2) return;
    const t0 = Math.min(...all.map((p) => p[0])), t1 = Math.max(...all.map((p) => p[0]));
    let lo = Math.floor(Math.min(...all.map((p) => p[1]))), hi = Math.ceil(Math.max(...all.map((p) => p[1])));
    if (hi - lo < 2) lo = hi - 2;
    const left = 42, bottom = h - 18, top = 8, right = w - 8;
    const sx = (t) => left + (right - left) * (t1 > t0 ? (t - t0) / (t1 - t0) : 0);
    const sy = (y) => bottom - (bottom - top) * (y - lo) / (hi - lo);
    this.drawAxes(ctx, { lo, hi, t0, t1, left, right, top, bottom, sy });
    this.series.forEach((series, i) => {
      ctx.strokeStyle = PALETTE[i];
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      series.points.forEach(([t, y], j) => (j ? ctx.lineTo(sx(t), sy(y)) : ctx.moveTo(sx(t), sy(y))));
      ctx.stroke();
    });
  }

  drawAxes(ctx, { lo, hi, t0, t1, left, right, top, bottom, sy }) {
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = INK;
    ctx.strokeStyle = '#1e293b';
    ctx.lineWidth = 1;
    const every = Math.ceil((hi - lo) / 6);      // at most about six labelled decades
    for (let d = hi; d >= lo; d -= every) {
      ctx.beginPath();
      ctx.moveTo(left, sy(d));
      ctx.lineTo(right, sy(d));
      ctx.stroke();
      ctx.fillText(`1e${d}`, 4, sy(d) + 4);
    }
    ctx.fillText(`t ${t0.toFixed(1)}`, left, bottom + 14);
    const end = `${t1.toFixed(1)}`;
    ctx.fillText(end, right - ctx.measureText(end).width, bottom + 14);
    ctx.strokeStyle = INK;
    ctx.strokeRect(left, top, right - left, bottom - top);
  }
}
