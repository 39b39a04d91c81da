// The stability explorer's drawing: the complex plane of z = h lambda with each
// method's region |R(z)| <= 1, from the coefficients of R = P/Q the server sends
// (odekit.analysis.stability_function), and the animation of |R(z)|^n.

import { BACKGROUND, PALETTE, fitCanvas } from './draw.js';

const INK = '#94a3b8';
const GRID = '#1e293b';
const FILL_ALPHA = 0.28;
// the part of the plane shown: the explicit methods' regions reach Re z ~ -4,
// the imaginary axis about +-3
const VIEW = { re: [-5, 2.5], im: [-3.4, 3.4] };

// P(z) by Horner's rule in complex arithmetic; coefficients in ascending powers.
function polynomial(coefficients, re, im) {
  let pr = 0, pi = 0;
  for (let k = coefficients.length - 1; k >= 0; k--) {
    const r = pr * re - pi * im + coefficients[k];
    pi = pr * im + pi * re;
    pr = r;
  }
  return [pr, pi];
}

// |R(z)| = |P(z)| / |Q(z)| of a method the server described as rational; a pole is infinite.
export function absR(data, re, im) {
  const [nr, ni] = polynomial(data.numerator, re, im);
  const [dr, di] = polynomial(data.denominator, re, im);
  const denominator = Math.hypot(dr, di);
  return denominator === 0 ? Infinity : Math.hypot(nr, ni) / denominator;
}

function rgb(hex) {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
}

export class StabilityView {
  constructor(canvas) {
    this.canvas = canvas;
    this.methods = [];      // [{name, data}] in the order chosen; colour by position
    this.point = null;      // [re, im] of the last point asked about
    this.regions = null;    // cached ImageData of the shaded regions (they are slow-ish to compute)
  }

  setMethods(names, data) {
    this.methods = names.filter((name) => data[name]).map((name) => ({ name, data: data[name] }));
    this.regions = null;
  }

  // The map between the plane and the canvas (CSS pixels), square units, the view centred.
  frame() {
    const w = this.canvas.clientWidth, h = this.canvas.clientHeight;
    const scale = Math.min(w / (VIEW.re[1] - VIEW.re[0]), h / (VIEW.im[1] - VIEW.im[0]));
    const re0 = (VIEW.re[0] + VIEW.re[1]) / 2, im0 = (VIEW.im[0] + VIEW.im[1]) / 2;
    return { w, h, scale, re0, im0 };
  }

  toCanvas(re, im) {
    const { w, h, scale, re0, im0 } = this.frame();
    return { x: w / 2 + (re - re0) * scale, y: h / 2 - (im - im0) * scale };
  }

  toPlane(x, y) {
    const { w, h, scale, re0, im0 } = this.frame();
    return [re0 + (x - w / 2) / scale, im0 - (y - h / 2) / scale];
  }

  draw() {
    const { ctx, w, h } = fitCanvas(this.canvas);
    if (!this.regions || this.regions.width !== this.canvas.width || this.regions.height !== this.canvas.height) {
      this.regions = this.shade(ctx);
    }
    ctx.putImageData(this.regions, 0, 0);
    this.drawGrid(ctx, w, h);
    this.drawIntervals(ctx);
    this.drawPoint(ctx);
  }

  // Every device pixel: the background, blended with each method whose region
  // holds it; the region's edge (where the test changes between neighbours) solid.
  shade(ctx) {
    const width = this.canvas.width, height = this.canvas.height;
    const ratio = width / Math.max(1, this.canvas.clientWidth);
    const image = ctx.createImageData(width, height);
    const base = rgb(BACKGROUND);
    const rational = this.methods.map((m, i) => ({ ...m, colour: rgb(PALETTE[i]) }))
      .filter((m) => m.data.kind === 'rational');
    const inside = rational.map(() => new Uint8Array(width * height));
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const [re, im] = this.toPlane((x + 0.5) / ratio, (y + 0.5) / ratio);
        rational.forEach((m, k) => { inside[k][y * width + x] = absR(m.data, re, im) <= 1 ? 1 : 0; });
      }
    }
    for (let p = 0; p < width * height; p++) {
      let [r, g, b] = base;
      rational.forEach((m, k) => {
        const here = inside[k][p];
        const edge = (p % width > 0 && inside[k][p - 1] !== here) || (p >= width && inside[k][p - width] !== here);
        const alpha = edge ? 1 : here ? FILL_ALPHA : 0;
        r += alpha * (m.colour[0] - r);
        g += alpha * (m.colour[1] - g);
        b += alpha * (m.colour[2] - b);
      });
      image.data[4 * p] = r;
      image.data[4 * p + 1] = g;
      image.data[4 * p + 2] = b;
      image.data[4 * p + 3] = 255;
    }
    return image;
  }

  drawGrid(ctx, w, h) {
    ctx.font = '11px system-ui, sans-serif';
    ctx.lineWidth = 1;
    for (let re = Math.ceil(VIEW.re[0]); re <= VIEW.re[1]; re++) {
      const { x } = this.toCanvas(re, 0);
      ctx.strokeStyle = re === 0 ? INK : GRID;
      ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, h); ctx.stroke();
      ctx.fillStyle = INK;
      if (re !== 0) ctx.fillText(String(re), x + 3, this.toCanvas(0, 0).y + 13);
    }
    for (let im = Math.ceil(VIEW.im[0]); im <= VIEW.im[1]; im++) {
      const { y } = this.toCanvas(0, im);
      ctx.strokeStyle = im === 0 ? INK : GRID;
      ctx.beginPath(); ctx.moveTo(0, y); ctx.lineTo(w, y); ctx.stroke();
      ctx.fillStyle = INK;
      if (im !== 0) ctx.fillText(`${im}i`, this.toCanvas(0, 0).x + 4, y - 3);
    }
    ctx.fillText('Re z', w - 30, this.toCanvas(0, 0).y - 5);
  }

  // Splitting methods: the interval |Im z| < theta* on the imaginary axis, one
  // bar per method side by side so that equal limits stay visible.
  drawIntervals(ctx) {
    let slot = 0;
    this.methods.forEach((m, i) => {
      if (m.data.kind !== 'oscillator') return;
      const offset = 5 + 6 * slot++;
      const top = this.toCanvas(0, m.data.limit), bottom = this.toCanvas(0, -m.data.limit);
      ctx.strokeStyle = PALETTE[i];
      ctx.lineWidth = 4;
      ctx.beginPath();
      ctx.moveTo(top.x + offset, top.y);
      ctx.lineTo(bottom.x + offset, bottom.y);
      ctx.stroke();
      ctx.fillStyle = PALETTE[i];
      ctx.fillText(`θ*=${m.data.limit.toPrecision(3)}`, top.x + offset + 4, top.y - 4 - 12 * (slot - 1));
    });
  }

  drawPoint(ctx) {
    if (!this.point) return;
    const { x, y } = this.toCanvas(...this.point);
    ctx.strokeStyle = '#ffffff';
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.arc(x, y, 6, 0, 2 * Math.PI);
    ctx.moveTo(x - 10, y); ctx.lineTo(x + 10, y);
    ctx.moveTo(x, y - 10); ctx.lineTo(x, y + 10);
    ctx.stroke();
  }
}

// |R(z)|^n for n = 0..steps, one curve per method on a log scale clamped to
// +-LIMIT decades: growth above the line |R|^n = 1 is an unstable step.
const LIMIT = 8;
export function drawPowers(canvas, rows, n, steps) {
  const { ctx, w, h } = fitCanvas(canvas);
  ctx.fillStyle = BACKGROUND;
  ctx.fillRect(0, 0, w, h);
  const left = 36, right = w - 8, top = 8, bottom = h - 18;
  const sx = (k) => left + (right - left) * k / steps;
  const sy = (d) => bottom - (bottom - top) * (Math.max(-LIMIT, Math.min(LIMIT, d)) + LIMIT) / (2 * LIMIT);
  ctx.font = '11px system-ui, sans-serif';
  ctx.lineWidth = 1;
  for (let d = -LIMIT; d <= LIMIT; d += 4) {
    ctx.strokeStyle = d === 0 ? INK : GRID;
    ctx.beginPath(); ctx.moveTo(left, sy(d)); ctx.lineTo(right, sy(d)); ctx.stroke();
    ctx.fillStyle = INK;
    ctx.fillText(d === 0 ? '1' : `1e${d}`, 4, sy(d) + 4);
  }
  ctx.fillText(`n = ${steps}`, right - 40, bottom + 14);
  rows.forEach(({ absR: value, colour }) => {
    const decades = value === null ? LIMIT : value === 0 ? -LIMIT : Math.log10(value);
    ctx.strokeStyle = colour;
    ctx.lineWidth = 2;
    ctx.beginPath();
    for (let k = 0; k <= n; k++) (k ? ctx.lineTo(sx(k), sy(k * decades)) : ctx.moveTo(sx(k), sy(0)));
    ctx.stroke();
  });
}
