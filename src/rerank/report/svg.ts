/**
 * The report's two figures as self-contained SVG strings: the score histogram split by label,
 * and the reliability diagram (calibration plot). Plain markup, no scripts, no external assets.
 */
import type { CalibrationBin, HistogramBin } from '../../metrics/ranking.js';
import { escapeHtml } from './format.js';

const RESOLVED = '#2e7d32';
const UNRESOLVED = '#c62828';
const AXIS = '#444';
const GRID = '#ddd';

const n = (value: number): string => String(Math.round(value * 100) / 100);

/** Histogram of values, resolved and unresolved bars side by side in each bin. */
export function histogramSvg(histogram: HistogramBin[]): string {
  const width = 640;
  const height = 280;
  const margin = { left: 48, right: 16, top: 36, bottom: 40 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const max = Math.max(1, ...histogram.map((bin) => Math.max(bin.resolved, bin.unresolved)));
  const x = (value: number): number => margin.left + value * plotWidth;
  const y = (count: number): number => margin.top + plotHeight - (count / max) * plotHeight;
  const parts: string[] = [];
  for (const tick of [0, Math.ceil(max / 2), max]) {
    parts.push(`<line x1="${n(x(0))}" y1="${n(y(tick))}" x2="${n(x(1))}" y2="${n(y(tick))}" stroke="${GRID}"/>`);
    parts.push(`<text x="${n(x(0) - 6)}" y="${n(y(tick) + 4)}" text-anchor="end">${tick}</text>`);
  }
  for (const bin of histogram) {
    const binWidth = (bin.upper - bin.lower) * plotWidth;
    const barWidth = Math.max(1, binWidth / 2 - 1);
    const bars: Array<[number, string, string]> = [
      [bin.resolved, RESOLVED, 'resolved'],
      [bin.unresolved, UNRESOLVED, 'not resolved'],
    ];
    bars.forEach(([count, color, label], index) => {
      if (count === 0) return;
      const left = x(bin.lower) + index * (binWidth / 2) + 0.5;
      const tip = escapeHtml(`${bin.lower.toFixed(2)}–${bin.upper.toFixed(2)}: ${count} ${label}`);
      parts.push(
        `<rect x="${n(left)}" y="${n(y(count))}" width="${n(barWidth)}" height="${n(y(0) - y(count))}" fill="${color}"><title>${tip}</title></rect>`,
      );
    });
  }
  parts.push(...xAxis(x, y(0), margin.top + plotHeight + 18));
  parts.push(`<text x="${n(x(0.5))}" y="${height - 4}" text-anchor="middle">value</text>`);
  parts.push(`<text x="${margin.left}" y="16" font-weight="bold">Scores by label</text>`);
  parts.push(...legend(width - margin.right - 210, 12));
  return svg(width, height, 'Histogram of value-model scores, resolved versus not resolved', parts);
}

/** Reliability diagram: mean predicted value against observed resolution rate per bin, with the diagonal. */
export function calibrationSvg(bins: CalibrationBin[]): string {
  const size = 320;
  const margin = { left: 48, right: 16, top: 36, bottom: 40 };
  const plot = size - margin.left - margin.right;
  const height = margin.top + plot + margin.bottom;
  const x = (value: number): number => margin.left + value * plot;
  const y = (value: number): number => margin.top + plot - value * plot;
  const parts: string[] = [];
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(`<line x1="${n(x(0))}" y1="${n(y(tick))}" x2="${n(x(1))}" y2="${n(y(tick))}" stroke="${GRID}"/>`);
    parts.push(`<text x="${n(x(0) - 6)}" y="${n(y(tick) + 4)}" text-anchor="end">${tick}</text>`);
  }
  parts.push(
    `<line x1="${n(x(0))}" y1="${n(y(0))}" x2="${n(x(1))}" y2="${n(y(1))}" stroke="#888" stroke-dasharray="4 4"><title>perfect calibration</title></line>`,
  );
  const filled = bins.filter((bin) => bin.count > 0 && bin.mean_value !== null && bin.observed !== null);
  const total = filled.reduce((sum, bin) => sum + bin.count, 0);
  if (filled.length > 1) {
    const points = filled.map((bin) => `${n(x(bin.mean_value!))},${n(y(bin.observed!))}`).join(' ');
    parts.push(`<polyline points="${points}" fill="none" stroke="#1565c0" stroke-width="1.5"/>`);
  }
  for (const bin of filled) {
    const radius = 3 + 6 * Math.sqrt(bin.count / Math.max(1, total));
    const tip = escapeHtml(
      `${bin.lower.toFixed(1)}–${bin.upper.toFixed(1)}: ${bin.count} candidates, mean value ${bin.mean_value!.toFixed(3)}, resolved ${(bin.observed! * 100).toFixed(1)}%`,
    );
    parts.push(
      `<circle cx="${n(x(bin.mean_value!))}" cy="${n(y(bin.observed!))}" r="${n(radius)}" fill="#1565c0" fill-opacity="0.7"><title>${tip}</title></circle>`,
    );
  }
  parts.push(...xAxis(x, y(0), margin.top + plot + 18, [0, 0.25, 0.5, 0.75, 1]));
  parts.push(`<text x="${n(x(0.5))}" y="${height - 4}" text-anchor="middle">mean predicted value</text>`);
  parts.push(`<text x="12" y="${n(y(0.5))}" text-anchor="middle" transform="rotate(-90 12 ${n(y(0.5))})">observed resolved</text>`);
  parts.push(`<text x="${margin.left}" y="16" font-weight="bold">Calibration</text>`);
  return svg(size, height, 'Reliability diagram: mean predicted value versus observed resolution rate per bin', parts);
}

function xAxis(x: (value: number) => number, baseline: number, labelY: number, ticks = [0, 0.25, 0.5, 0.75, 1]): string[] {
  const parts = [`<line x1="${n(x(0))}" y1="${n(baseline)}" x2="${n(x(1))}" y2="${n(baseline)}" stroke="${AXIS}"/>`];
  for (const tick of ticks) {
    parts.push(`<line x1="${n(x(tick))}" y1="${n(baseline)}" x2="${n(x(tick))}" y2="${n(baseline + 4)}" stroke="${AXIS}"/>`);
    parts.push(`<text x="${n(x(tick))}" y="${n(labelY)}" text-anchor="middle">${tick}</text>`);
  }
  return parts;
}

function legend(left: number, top: number): string[] {
  return [
    `<rect x="${left}" y="${top}" width="10" height="10" fill="${RESOLVED}"/>`,
    `<text x="${left + 14}" y="${top + 9}">resolved</text>`,
    `<rect x="${left + 90}" y="${top}" width="10" height="10" fill="${UNRESOLVED}"/>`,
    `<text x="${left + 104}" y="${top + 9}">not resolved</text>`,
  ];
}

function svg(width: number, height: number, label: string, parts: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(label)}" font-family="sans-serif" font-size="11">`,
    `<title>${escapeHtml(label)}</title>`,
    ...parts,
    '</svg>',
  ].join('\n');
}
