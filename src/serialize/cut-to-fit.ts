/**
 * The last resort of budget fitting, on exact counts. Planned cuts are sized from counts of the
 * pieces, and the joined text can count more: tokens merge or split differently where pieces
 * meet, and a head + tail kept by its share of characters can hold more than its share of tokens.
 * When the planned text is still over the budget, pieces are cut further with every probe counted
 * on the whole text, so what is returned fits by the same count the model input gets.
 */
import type { FinalCount } from './count-document.js';

/** A piece of the layout that can be cut to head + tail. */
export interface CutPiece {
  /** The piece's text before any cut. */
  raw: string;
  /** Puts `text` in the layout in place of the piece (`raw` itself: the piece uncut). */
  set(text: string): void;
  /** Part of the prefix an instance's candidates share: cut only after every other piece. */
  shared?: boolean;
}

export interface Measured {
  text: string;
  prefixChars: number;
  final: FinalCount;
}

export interface CutToFitOptions {
  budget: number;
  /** Assembles the layout as the pieces now stand and counts it exactly. */
  measure(): Promise<Measured>;
  /** `raw` with about `keepChars` characters kept (head + marker + tail); undefined when that does not shorten it. */
  keep(raw: string, keepChars: number): string | undefined;
  /**
   * A piece longer than this is grown back from this many kept characters, doubling until a
   * probe is over the budget, before the binary search: no probe then holds much more text than
   * the budget can take (halving from a 2 MB piece would count megabytes). Unset: no bound.
   */
  probeChars?: number;
}

export interface CutResult {
  fits: boolean;
  /** The text that fits; when none does, the last one measured: every piece cut, still over the budget. */
  measured: Measured;
}

/**
 * Cuts pieces, largest first (shared ones last), down to the marker until the text fits; the
 * piece that made it fit is then grown back as far as it still fits (binary search on the
 * characters it keeps, above `probeChars` after doubling from there). When the text is over the budget with every piece cut, that measurement
 * comes back (`fits: false`), so the caller can say how far over without counting it again.
 */
export async function cutToFit(pieces: readonly CutPiece[], options: CutToFitOptions): Promise<CutResult> {
  const { budget, measure, keep } = options;
  const order = [...pieces].sort((a, b) => Number(a.shared ?? false) - Number(b.shared ?? false) || b.raw.length - a.raw.length);
  const setKept = (piece: CutPiece, chars: number) =>
    piece.set(chars >= piece.raw.length ? piece.raw : (keep(piece.raw, chars) ?? piece.raw));
  let last: Measured | undefined;
  for (const piece of order) {
    setKept(piece, 0);
    let fit = await measure();
    last = fit;
    if (fit.final.tokens > budget) continue;
    // Largest kept length that fits: `low` fits; lengths above `high` were measured over the budget.
    let low = 0;
    let high = piece.raw.length;
    for (let probeChars = Math.max(1, Math.floor(options.probeChars ?? high)); probeChars < high; probeChars *= 2) {
      setKept(piece, probeChars);
      const probe = await measure();
      if (probe.final.tokens > budget) {
        high = probeChars - 1;
        break;
      }
      low = probeChars;
      fit = probe;
    }
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      setKept(piece, middle);
      const probe = await measure();
      if (probe.final.tokens <= budget) {
        low = middle;
        fit = probe;
      } else high = middle - 1;
    }
    setKept(piece, low);
    return { fits: true, measured: fit };
  }
  // Nothing to cut: the layout as it stands is all there is to measure.
  last ??= await measure();
  return { fits: last.final.tokens <= budget, measured: last };
}
