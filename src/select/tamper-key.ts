/**
 * The "clean" key entry: a candidate with tamper flags (tamper.ts) ranks below the clean
 * candidates with the same outcome, never below a worse one. Each strategy inserts it right after
 * the entries that measure outcomes (docs/selection.md#tamper-flags), and only when some usable
 * candidate is flagged, so an ordering without flags is unchanged.
 */
import { describeFlags } from './tamper.js';
import type { Prepared, PreparedInstance } from './prepare.js';
import { compareKeys, type Ordering } from './rank.js';

export function anyFlagged(instance: PreparedInstance): boolean {
  return instance.candidates.some((p) => p.usable && p.tamper.length > 0);
}

/** "flagged: skips-test in tests/test_x.py", or null for a clean candidate. */
export function flaggedReason(p: Prepared): string | null {
  return p.tamper.length ? `flagged: ${describeFlags(p.tamper)}` : null;
}

/** `ordering` with 1 (clean) / 0 (flagged) inserted at `at`, counted as a primary criterion, the flags named in the reasons. */
export function withClean(ordering: Ordering, instance: PreparedInstance, at: number): Ordering {
  if (!anyFlagged(instance)) return ordering;
  return {
    ...ordering,
    key: (p) => {
      const key = ordering.key(p);
      return [...key.slice(0, at), Number(p.tamper.length === 0), ...key.slice(at)];
    },
    primary: ordering.primary + 1,
    tieSubject: `${ordering.tieSubject} and tamper checks`,
    reasons: (p, inner) => [...(ordering.reasons?.(p, inner) ?? []), ...(p.tamper.length ? [flaggedReason(p)!] : [])],
    why(chosen, ranked, inner) {
      const clause = ordering.why(chosen, ranked, inner);
      if (chosen.tamper.length) return `${clause}; ${flaggedReason(chosen)} (no clean candidate had that outcome)`;
      // Flagged candidates the order without the flag put above the winner.
      const passed = ranked.filter((p) => p.usable && p.tamper.length > 0 && compareKeys(ordering.key(p), ordering.key(chosen)) < 0);
      return passed.length ? `${clause}; ${passed.map((p) => `${p.id} ranked lower, ${flaggedReason(p)}`).join('; ')}` : clause;
    },
  };
}
