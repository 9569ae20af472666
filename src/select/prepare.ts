/**
 * What every strategy needs to know about a candidate, computed once: patch shape, normalized
 * patch, usable score, test outcome, and the consensus clusters (with their weights and order).
 */
import { wnwError } from '../errors.js';
import type { CandidateChecks, TamperFlag, VerifyStatus } from '../types/index.js';
import { normalizeFiles, type NormalizedPatch } from './normalize-patch.js';
import { patchShape, type PatchShape } from './patch-shape.js';
import { tamperContext, tamperFlags, type TamperContext } from './tamper.js';
import type { Candidate } from './types.js';

export interface Prepared {
  id: string;
  candidate: Candidate;
  shape: PatchShape;
  /** Non-empty and parseable: the only candidates that may be chosen. */
  usable: boolean;
  normalized: NormalizedPatch | null;
  /** Added plus removed lines; 0 when not usable. */
  changedLines: number;
  /** The score's value, or null when there is no (finite) score. */
  value: number | null;
  verify: VerifyStatus | null;
  /** Regressions and reproduction-test passes, when those checks ran. */
  checks: CandidateChecks | null;
  /** What the patch does to the tests and their configuration (tamper.ts); empty when clean or not usable. */
  tamper: TamperFlag[];
  /** Consensus cluster (1 = heaviest), null when not usable. */
  cluster: number | null;
  clusterSize: number | null;
  /** size × mean value of the cluster, missing values imputed; 0 when not usable. */
  clusterWeight: number;
}

export interface PreparedInstance {
  instanceId: string;
  candidates: Prepared[];
  /** Clusters in consensus order (heaviest first); `members` in within-cluster order. */
  clusters: Prepared[][];
  /** Whether any candidate has a score / a usable candidate has a score. */
  anyScored: boolean;
  usableScored: boolean;
  /** Mean value of usable scored candidates, used for missing values in cluster weights. */
  meanValue: number | null;
}

/** Validates the candidates of one instance and computes the shared facts; `tamper`: the task's tests, for the tamper checks. */
export function prepare(candidates: Candidate[], instanceId?: string, tamper: TamperContext = tamperContext()): PreparedInstance {
  // An empty list is a normal outcome (every rollout failed): it selects nothing, it does not throw.
  const instance = instanceId ?? candidates[0]?.trajectory.instance_id ?? '';
  const seen = new Set<string>();
  const prepared = candidates.map((candidate, index): Prepared => {
    const { trajectory, score, verify } = candidate;
    checkIdentity(candidate, index, instance, seen);
    const shape = patchShape(trajectory.patch);
    const normalized = shape.kind === 'ok' ? normalizeFiles(shape.files, shape.added + shape.removed) : null;
    const value = score && Number.isFinite(score.value) ? score.value : null;
    return {
      id: trajectory.id,
      candidate,
      shape,
      usable: shape.kind === 'ok',
      normalized,
      changedLines: normalized?.changedLines ?? 0,
      value,
      verify: verify?.status ?? null,
      checks: candidate.checks ?? null,
      tamper: shape.kind === 'ok' ? tamperFlags(shape.files, tamper) : [],
      cluster: null,
      clusterSize: null,
      clusterWeight: 0,
    };
  });

  const usableValues = prepared
    .filter((p) => p.usable && p.value !== null)
    .sort(byId)
    .map((p) => p.value!);
  const meanValue = usableValues.length ? sum(usableValues) / usableValues.length : null;
  const clusters = cluster(prepared, meanValue);
  return {
    instanceId: instance,
    candidates: prepared,
    clusters,
    anyScored: prepared.some((p) => p.value !== null),
    usableScored: usableValues.length > 0,
    meanValue,
  };
}

/**
 * Groups usable candidates by normalized patch and orders the groups: weight (size × mean value,
 * a missing value counted as `meanValue`, every value as 1 when nobody has a score) descending,
 * then size descending, then the best member's value descending, patch size ascending, id.
 */
function cluster(prepared: Prepared[], meanValue: number | null): Prepared[][] {
  const groups = new Map<string, Prepared[]>();
  for (const p of prepared) {
    if (!p.normalized) continue;
    const group = groups.get(p.normalized.key);
    if (group) group.push(p);
    else groups.set(p.normalized.key, [p]);
  }
  const clusters = [...groups.values()].map((members) => {
    members.sort(withinCluster);
    const values = [...members].sort(byId).map((p) => p.value ?? meanValue ?? 1);
    const weight = quantize(sum(values));
    for (const p of members) {
      p.clusterSize = members.length;
      p.clusterWeight = weight;
    }
    return members;
  });
  clusters.sort((a, b) => b[0]!.clusterWeight - a[0]!.clusterWeight || b.length - a.length || withinCluster(a[0]!, b[0]!));
  clusters.forEach((members, index) => {
    for (const p of members) p.cluster = index + 1;
  });
  return clusters;
}

/** Scored first, value descending, smaller patch, then id. */
export function withinCluster(a: Prepared, b: Prepared): number {
  return (
    Number(b.value !== null) - Number(a.value !== null) || (b.value ?? 0) - (a.value ?? 0) || a.changedLines - b.changedLines || byId(a, b)
  );
}

/** Trajectory id in code-unit order, independent of locale. */
export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Rounds to 1e-9 so that sums of the same values compare equal whatever their order. */
export function quantize(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** The identity rules of `select` (docs/selection.md) for one candidate; `seen` collects the ids. */
export function checkIdentity({ trajectory, score, verify }: Candidate, index: number, instance: string, seen: Set<string>): void {
  const where = { index, trajectory_id: trajectory.id };
  if (trajectory.instance_id !== instance) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `select: candidate ${trajectory.id} belongs to ${trajectory.instance_id}, not ${instance}`, {
      details: { ...where, field: 'trajectory.instance_id' },
    });
  }
  if (seen.has(trajectory.id)) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `select: trajectory id ${trajectory.id} appears twice`, {
      details: { ...where, field: 'trajectory.id' },
    });
  }
  seen.add(trajectory.id);
  if (score && score.trajectory_id !== trajectory.id) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `select: score for ${score.trajectory_id} attached to ${trajectory.id}`, {
      details: { ...where, field: 'score.trajectory_id' },
    });
  }
  if (verify && verify.trajectory_id !== trajectory.id) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `select: test result for ${verify.trajectory_id} attached to ${trajectory.id}`, {
      details: { ...where, field: 'verify.trajectory_id' },
    });
  }
}
