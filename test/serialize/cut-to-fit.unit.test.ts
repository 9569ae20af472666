/**
 * `cutToFit` on a layout of plain pieces, counted one token per character: what fits comes back
 * with `fits: true`; when nothing fits, the last measurement (every piece cut) comes back, so the
 * caller's error needs no count of its own.
 */
import { describe, expect, it } from 'vitest';
import { cutToFit, type CutPiece, type Measured } from '../../src/serialize/cut-to-fit.js';

/** Pieces whose kept text is `raw` cut to its first `keepChars` characters plus `~`. */
function layout(raws: string[]) {
  const texts = [...raws];
  const pieces: CutPiece[] = raws.map((raw, index) => ({ raw, set: (text) => void (texts[index] = text) }));
  const measured: Measured[] = [];
  const measure = async (): Promise<Measured> => {
    const text = `[${texts.join('|')}]`;
    const result = { text, prefixChars: 0, final: { tokens: text.length } };
    measured.push(result);
    return result;
  };
  const keep = (raw: string, keepChars: number) => (keepChars + 1 < raw.length ? `${raw.slice(0, keepChars)}~` : undefined);
  return { pieces, measure, keep, measured };
}

describe('cutToFit', () => {
  it('cuts the largest piece first and grows it back as far as the budget allows', async () => {
    const { pieces, measure, keep } = layout(['a'.repeat(40), 'b'.repeat(10)]);
    const result = await cutToFit(pieces, { budget: 30, measure, keep });
    expect(result.fits).toBe(true);
    expect(result.measured.final.tokens).toBe(30);
    expect(result.measured.text).toBe(`[${'a'.repeat(16)}~|${'b'.repeat(10)}]`);
  });

  it('returns its last measurement, every piece cut, when nothing fits', async () => {
    const { pieces, measure, keep, measured } = layout(['a'.repeat(40), 'b'.repeat(10)]);
    const result = await cutToFit(pieces, { budget: 3, measure, keep });
    expect(result.fits).toBe(false);
    expect(result.measured).toBe(measured.at(-1));
    expect(result.measured.text).toBe('[~|~]');
    // One measurement per piece cut, none after: the caller reads the count from the result.
    expect(measured).toHaveLength(2);
  });

  it('grows a piece longer than probeChars back by doubling from there, so no probe holds much more than the budget', async () => {
    const { pieces, measure, keep, measured } = layout(['a'.repeat(1_000_000), 'b'.repeat(10)]);
    const result = await cutToFit(pieces, { budget: 30, measure, keep, probeChars: 8 });
    expect(result.fits).toBe(true);
    expect(result.measured.text).toBe(`[${'a'.repeat(16)}~|${'b'.repeat(10)}]`);
    // Halving from a million characters would have measured half a million first.
    expect(Math.max(...measured.map((probe) => probe.text.length))).toBeLessThanOrEqual(2 * 30);
  });
});
