/**
 * Execution checks in an ordering (`hybrid`, `learned`): a candidate that breaks no test that
 * passed on base and passes the largest share of the valid reproduction tests comes first, then
 * the one that fails the least weight of the tests from the pool others wrote
 * (docs/checks.md#tests-from-the-pool); the strategy's own criteria (value, learned score) then
 * break ties. Failures, not passes: a writer cannot pass its own test for credit, so by passes
 * every writer would lose its own test's weight to the candidates that wrote none.
 * Inserted only when some candidate of the instance has checks, so an ordering without them is
 * unchanged.
 */
import type { Prepared, PreparedInstance } from './prepare.js';
import type { Ordering } from './rank.js';

/** How many entries `withChecks` inserts into an ordering's key. */
export const CHECKS_KEY_LENGTH = 3;

/**
 * 1 = no regression, 0.5 = not checked, 0 = breaks tests; then the reproduction pass share; then
 * minus the weight of the others' pool tests it fails (0 without pool evidence; evidence written
 * before `failed_weight` existed ranks by its passes' score instead).
 */
export function checksKey(p: Prepared): [number, number, number] {
  const checks = p.checks;
  if (!checks) return [0.5, 0, 0];
  const clean = checks.regressions === null ? 0.5 : checks.regressions === 0 ? 1 : 0;
  const pool = checks.pool;
  const poolKey = !pool ? 0 : pool.failed_weight !== undefined ? -pool.failed_weight : pool.score;
  return [clean, checks.repro_total > 0 ? checks.repro_passed / checks.repro_total : 0, poolKey];
}

export function hasChecks(instance: PreparedInstance): boolean {
  return instance.candidates.some((p) => p.usable && p.checks !== null);
}

/** "breaks 2 tests, passes 1/2 reproduction tests" for one candidate. */
export function describeChecks(p: Prepared): string {
  const checks = p.checks;
  if (!checks) return 'no execution checks';
  const parts: string[] = [];
  if (checks.regressions !== null)
    parts.push(
      checks.regressions === 0 ? 'breaks no test' : `breaks ${checks.regressions} test${checks.regressions === 1 ? '' : 's'} (regression)`,
    );
  if (checks.repro_total > 0) parts.push(`passes ${checks.repro_passed}/${checks.repro_total} reproduction tests`);
  const pool = checks.pool;
  if (pool && pool.total + pool.own_total > 0) {
    const own = pool.own_total > 0 ? `; its own ${pool.own_passed}/${pool.own_total} not counted` : '';
    const failed = pool.failed_weight !== undefined ? `failed weight ${pool.failed_weight}, ` : '';
    parts.push(`pool tests: passes ${pool.passed}/${pool.total} of the others' (${failed}score ${pool.score}${own})`);
  }
  return parts.join(', ') || 'no execution checks';
}

/**
 * `ordering` with the checks' two key entries inserted at `at` (after the entries that must stay
 * first, such as "usable"), counted as primary criteria, and the checks named in its reasons.
 */
export function withChecks(ordering: Ordering, instance: PreparedInstance, at: number): Ordering {
  if (!hasChecks(instance)) return ordering;
  return {
    ...ordering,
    key: (p) => {
      const key = ordering.key(p);
      return [...key.slice(0, at), ...checksKey(p), ...key.slice(at)];
    },
    primary: ordering.primary + CHECKS_KEY_LENGTH,
    tieSubject: `execution checks and ${ordering.tieSubject}`,
    reasons: (p, inner) => [describeChecks(p), ...(ordering.reasons?.(p, inner) ?? [])],
    why(chosen, ranked, inner) {
      const clause = ordering.why(chosen, ranked, inner);
      const peers = inner.candidates.filter((p) => p.usable && checksKey(p).join() === checksKey(chosen).join()).length;
      const beaten = ranked.filter(
        (p) =>
          p.usable &&
          p !== chosen &&
          checksKey(p).join() !== checksKey(chosen).join() &&
          p.value !== null &&
          chosen.value !== null &&
          p.value > chosen.value,
      );
      const override = beaten.length
        ? `; ${beaten.map((p) => `${p.id} (${describeChecks(p)})`).join(', ')} had a higher value but worse checks`
        : '';
      const ties = peers > 1 ? ` (${peers} candidates tied on the checks; ${ordering.tieSubject} broke the tie)` : '';
      return `${clause}; checks: ${describeChecks(chosen)}${ties}${override}`;
    },
  };
}
