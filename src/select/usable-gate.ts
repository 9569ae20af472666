/**
 * The gate every strategy runs inside (`select` in index.ts): the rules that hold whatever the
 * strategy, kept out of the strategies so that each only orders candidates that may win.
 *
 * 1. Unusable candidates never reach the strategy and are never chosen: an empty patch ("no
 *    patch"), an unparseable one, one the patch rules refuse (src/sandbox/patch-rules.ts), one
 *    that did not apply in verification, and one that could not be prepared for selection (an
 *    error while reading it; recorded with WNW_ERR_SELECT_CANDIDATE, never a failed request or
 *    job). The strategy ranks the usable ones; the unusable follow, scored first, value
 *    descending, then id. When none is usable, nothing is chosen and the reason counts why.
 * 2. A resolved candidate whose other tests failed (src/verify/other-failures.ts) ranks below
 *    every resolved one without: the two groups swap places within the strategy's order and
 *    nothing else moves, so a strategy that ranks a resolved candidate below an unresolved one
 *    still does.
 */
import { WinnowerError } from '../errors.js';
import { patchViolation } from '../sandbox/patch-rules.js';
import type { RankedCandidate, Selection, Strategy } from '../types/index.js';
import { describeOtherFailures, otherTestsFailed } from '../verify/other-failures.js';
import { patchShape } from './patch-shape.js';
import { checkIdentity } from './prepare.js';
import { formatValue, ordinal } from './rank.js';
import type { Candidate } from './types.js';

type Unusable = NonNullable<RankedCandidate['unusable']>;
type Ranker = (candidates: Candidate[], instanceId: string) => Selection;

/** How each kind is counted when nothing is usable: "(1 empty, 2 did not apply)". */
const COUNTED: Record<Unusable['kind'], string> = {
  empty: 'empty',
  unparseable: 'unparseable',
  refused: 'refused by the patch rules',
  apply_failed: 'did not apply',
  unprepared: 'could not be prepared',
};

/** Why a better-scored candidate lost: "x scored higher (0.9) but its patch is empty". */
const LOST: Record<Unusable['kind'], string> = {
  empty: 'its patch is empty',
  unparseable: 'its patch is unparseable',
  refused: 'its patch is refused by the patch rules',
  apply_failed: 'its patch did not apply',
  unprepared: 'it could not be prepared',
};

/** Why `candidate` can never be chosen, or null when it may be. */
export function unusableOf(candidate: Candidate): Unusable | null {
  const { patch } = candidate.trajectory;
  const shape = patchShape(patch);
  if (shape.kind === 'empty') return { kind: 'empty', reason: shape.why };
  if (shape.kind === 'unparseable') return { kind: 'unparseable', reason: `patch unparseable (${shape.why})` };
  const violation = patchViolation(patch);
  if (violation) return { kind: 'refused', reason: `patch refused: it ${violation.what}` };
  const verify = candidate.verify;
  if (verify?.status === 'apply_failed') {
    const why = verify.apply_error?.trim().split('\n')[0];
    return { kind: 'apply_failed', reason: `patch did not apply${why ? ` (${why})` : ''}` };
  }
  return null;
}

/** Ranks `candidates` with `rank` inside the gate; see the module comment. */
export function gate(strategy: Strategy, candidates: Candidate[], instanceIdOption: string | undefined, rank: Ranker): Selection {
  const instanceId = instanceIdOption ?? candidates[0]?.trajectory.instance_id ?? '';
  checkCandidates(candidates, instanceId);
  if (candidates.length === 0) return withFlags(strategy, instanceId, rank([], instanceId), new Map(), candidates);

  const unusable = new Map<string, Unusable>();
  for (const candidate of candidates) {
    try {
      const why = unusableOf(candidate);
      if (why) unusable.set(candidate.trajectory.id, why);
    } catch (error) {
      unusable.set(candidate.trajectory.id, unprepared(error));
    }
  }
  const { selection, failed } = rankUsable(
    candidates.filter((c) => !unusable.has(c.trajectory.id)),
    instanceId,
    rank,
  );
  for (const [id, why] of failed) unusable.set(id, why);
  return withFlags(strategy, instanceId, selection, unusable, candidates);
}

/**
 * The strategy's selection of the usable candidates. A candidate the strategy cannot handle (it
 * throws anything but a coded error, which is the caller's bad input) is found by ranking each
 * alone, set aside as unprepared, and the rest ranked again.
 */
function rankUsable(usable: Candidate[], instanceId: string, rank: Ranker): { selection: Selection | null; failed: Map<string, Unusable> } {
  const failed = new Map<string, Unusable>();
  let remaining = usable;
  while (remaining.length > 0) {
    try {
      return { selection: rank(remaining, instanceId), failed };
    } catch (error) {
      if (error instanceof WinnowerError) throw error;
      const culprits = remaining.filter((candidate) => {
        try {
          rank([candidate], instanceId);
          return false;
        } catch (alone) {
          if (alone instanceof WinnowerError) throw alone;
          failed.set(candidate.trajectory.id, unprepared(alone));
          return true;
        }
      });
      // Each candidate ranks alone but not together: nothing to set aside, so this is not an input problem.
      if (culprits.length === 0) throw error;
      remaining = remaining.filter((candidate) => !culprits.includes(candidate));
    }
  }
  return { selection: null, failed };
}

function unprepared(error: unknown): Unusable {
  const cause = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return {
    kind: 'unprepared',
    reason: `could not be prepared for selection (WNW_ERR_SELECT_CANDIDATE: ${cause})`,
    code: 'WNW_ERR_SELECT_CANDIDATE',
  };
}

/**
 * The final Selection: the strategy's ranking of the usable candidates with resolved candidates
 * whose other tests failed moved below the clean ones, then the unusable candidates, every entry
 * flagged; the reason says what the gate changed.
 */
function withFlags(
  strategy: Strategy,
  instanceId: string,
  inner: Selection | null,
  unusable: Map<string, Unusable>,
  candidates: Candidate[],
): Selection {
  const byId = new Map(candidates.map((candidate) => [candidate.trajectory.id, candidate]));
  const dirty = (entry: RankedCandidate): boolean => {
    const verify = byId.get(entry.trajectory_id)?.verify;
    return verify?.status === 'resolved' && otherTestsFailed(verify);
  };

  const usable: RankedCandidate[] = (inner?.ranking ?? []).map((entry) => {
    const other = dirty(entry);
    const verify = byId.get(entry.trajectory_id)?.verify;
    const note = other && verify ? [`other tests failed: ${describeOtherFailures(verify)}`] : [];
    return { ...entry, reasons: [...entry.reasons, ...note], unusable: null, other_tests_failed: other };
  });
  const resolvedAt = usable.flatMap((entry, index) => (byId.get(entry.trajectory_id)?.verify?.status === 'resolved' ? [index] : []));
  const reordered = [...usable];
  const clean = resolvedAt.filter((index) => !usable[index]!.other_tests_failed);
  const flagged = resolvedAt.filter((index) => usable[index]!.other_tests_failed);
  if (clean.length > 0 && flagged.length > 0) [...clean, ...flagged].forEach((from, k) => (reordered[resolvedAt[k]!] = usable[from]!));

  const scored = candidates.filter((candidate) => candidate.score && Number.isFinite(candidate.score.value));
  const rest = [...unusable.entries()].map(([id, why]) => unusableEntry(byId.get(id)!, why, scored));
  rest.sort(
    (a, b) =>
      b.key[1]! - a.key[1]! ||
      b.key[2]! - a.key[2]! ||
      (a.trajectory_id < b.trajectory_id ? -1 : a.trajectory_id > b.trajectory_id ? 1 : 0),
  );
  const ranking = [...reordered, ...rest].map((entry, index) => ({ ...entry, rank: index + 1 }));

  const chosen = inner?.chosen == null ? null : (reordered[0]?.trajectory_id ?? null);
  let reason: string;
  if (chosen === null) {
    reason = unusable.size === 0 ? stripPeriod(inner?.reason ?? 'nothing chosen') : noneUsable(unusable, candidates.length);
  } else {
    const first = usable[0]!;
    reason =
      chosen !== first.trajectory_id
        ? `chose ${chosen}: it resolved the named tests and no other test failed; ${first.trajectory_id}, first by ${inner!.degraded_to ?? inner!.strategy}, resolved them too but ${describeOtherFailures(byId.get(first.trajectory_id)!.verify!)}`
        : stripPeriod(inner!.reason);
    if (chosen === first.trajectory_id && first.other_tests_failed)
      reason += `; other tests failed for it: ${describeOtherFailures(byId.get(chosen)!.verify!)}`;
    const chosenValue = ranking[0]?.value ?? 0;
    const better = rest.filter((entry) => entry.value !== null && entry.value > chosenValue).sort((a, b) => b.value! - a.value!)[0];
    if (better) reason += `; ${better.trajectory_id} scored higher (${formatValue(better.value!)}) but ${LOST[better.unusable!.kind]}`;
  }
  return {
    instance_id: instanceId,
    strategy,
    degraded_to: inner?.degraded_to ?? null,
    chosen,
    ranking,
    reason: `${reason.charAt(0).toUpperCase()}${reason.slice(1)}.`,
  };
}

function unusableEntry(candidate: Candidate, why: Unusable, scored: Candidate[]): RankedCandidate {
  const value = why.kind !== 'unprepared' && candidate.score && Number.isFinite(candidate.score.value) ? candidate.score.value : null;
  const reasons = [why.reason];
  if (value === null) reasons.push(why.kind === 'unprepared' ? 'not scored for selection' : 'no score (scorer failed or not run)');
  else {
    const place = 1 + scored.filter((other) => other.score!.value > value).length;
    reasons.push(`value ${formatValue(value)} (${ordinal(place)} of ${scored.length})`);
  }
  if (candidate.verify) reasons.push(`tests: ${candidate.verify.status.replace('_', ' ')}`);
  return {
    trajectory_id: candidate.trajectory.id,
    rank: 1,
    value,
    verified: candidate.verify?.status ?? null,
    cluster: null,
    cluster_size: null,
    key: [0, value === null ? 0 : 1, value ?? -1],
    reasons,
    unusable: why,
    other_tests_failed: false,
  };
}

/** "none of the 3 candidates has a usable patch (1 empty, 2 did not apply), nothing chosen" */
function noneUsable(unusable: Map<string, Unusable>, total: number): string {
  const counts = new Map<string, number>();
  for (const why of unusable.values()) counts.set(COUNTED[why.kind], (counts.get(COUNTED[why.kind]) ?? 0) + 1);
  const parts = [...counts].map(([label, count]) => `${count} ${label}`).join(', ');
  return `none of the ${total} candidate${total === 1 ? '' : 's'} has a usable patch (${parts}), nothing chosen`;
}

function stripPeriod(text: string): string {
  return text.endsWith('.') ? text.slice(0, -1) : text;
}

/** The identity rules of `select` (docs/selection.md), checked on every candidate, usable or not. */
function checkCandidates(candidates: Candidate[], instanceId: string): void {
  const seen = new Set<string>();
  candidates.forEach((candidate, index) => checkIdentity(candidate, index, instanceId, seen));
}
