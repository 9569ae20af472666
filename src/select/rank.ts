/**
 * Shared by the strategies: sort by an ordering key, explain every candidate, assemble the
 * `Selection`. A strategy only says how to build the key and why its winner won.
 */
import type { RankedCandidate, Selection, Strategy } from '../types/index.js';
import { byId, type Prepared, type PreparedInstance } from './prepare.js';

export interface Ordering {
  /** The strategy whose order this is. */
  strategy: Strategy;
  /** Compared entry by entry, highest first; equal keys fall back to trajectory id, ascending. */
  key(p: Prepared): number[];
  /** How many leading key entries are the strategy's own criteria; the rest are tie-breaks. */
  primary: number;
  /** What the primary entries measure, for "tied with X on …". */
  tieSubject: string;
  /** Names of the tie-break entries after `primary`, for "… won on …". */
  tieBreaks: string[];
  /** Reasons specific to this strategy, added after the common ones. */
  reasons?(p: Prepared, instance: PreparedInstance): string[];
  /** Why the (usable) winner won: a clause starting "chose <id>". */
  why(chosen: Prepared, ranked: Prepared[], instance: PreparedInstance): string;
}

/** Candidates sorted by `ordering`, best first; deterministic whatever the input order. */
export function rank(instance: PreparedInstance, ordering: Ordering): Prepared[] {
  const keyed = instance.candidates.map((p) => ({ p, key: ordering.key(p) }));
  keyed.sort((a, b) => compareKeys(a.key, b.key) || byId(a.p, b.p));
  return keyed.map(({ p }) => p);
}

/**
 * Ranks with `ordering` and builds the Selection. `requested` is the strategy asked for; when it
 * differs from `ordering.strategy`, `fallback` says why (a clause) and `degraded_to` records it.
 */
export function assemble(instance: PreparedInstance, requested: Strategy, ordering: Ordering, fallback?: string): Selection {
  const ranked = rank(instance, ordering);
  const winner = ranked[0]?.usable ? ranked[0] : null;
  const ranking: RankedCandidate[] = ranked.map((p, index) => ({
    trajectory_id: p.id,
    rank: index + 1,
    value: p.value,
    verified: p.verify,
    cluster: p.cluster,
    cluster_size: p.clusterSize,
    key: ordering.key(p),
    reasons: [...commonReasons(p, instance, ordering.strategy), ...(ordering.reasons?.(p, instance) ?? [])],
    tamper: p.tamper,
  }));
  let reason: string;
  if (!winner) {
    reason = noWinner(instance);
  } else {
    reason = ordering.why(winner, ranked, instance);
    const runnerUp = ranked[1];
    if (runnerUp?.usable) reason += tieClause(winner, runnerUp, ordering);
  }
  if (fallback) reason = `${fallback}: ${reason}`;
  return {
    instance_id: instance.instanceId,
    strategy: requested,
    degraded_to: ordering.strategy === requested ? null : ordering.strategy,
    chosen: winner?.id ?? null,
    ranking,
    reason: sentence(reason),
  };
}

/** Negative when `a` ranks before `b`: entries compared in order, higher first. */
export function compareKeys(a: number[], b: number[]): number {
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    const difference = (b[index] ?? 0) - (a[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** "; tied with t2 on value, won on smaller patch" when only tie-breaks separate the top two. */
function tieClause(winner: Prepared, runnerUp: Prepared, ordering: Ordering): string {
  const a = ordering.key(winner);
  const b = ordering.key(runnerUp);
  let differs = a.findIndex((entry, index) => entry !== b[index]);
  if (differs === -1) differs = a.length;
  if (differs < ordering.primary) return '';
  const decidedBy = ordering.tieBreaks[differs - ordering.primary] ?? 'trajectory id (lexicographic)';
  return `; tied with ${runnerUp.id} on ${ordering.tieSubject}, won on ${decidedBy}`;
}

function commonReasons(p: Prepared, instance: PreparedInstance, strategy: Strategy): string[] {
  const reasons: string[] = [];
  if (p.shape.kind === 'ok') {
    const files = p.normalized?.files.length ?? 0;
    reasons.push(`patch +${p.shape.added} -${p.shape.removed} in ${files} file${files === 1 ? '' : 's'}`);
  } else if (p.shape.kind === 'empty') {
    reasons.push(p.shape.why);
  } else {
    reasons.push(`patch unparseable (${p.shape.why})`);
  }
  if (p.value === null) {
    reasons.push('no score (scorer failed or not run)');
  } else {
    const scored = instance.candidates.filter((other) => other.value !== null);
    const place = 1 + scored.filter((other) => other.value! > p.value!).length;
    const tied = scored.filter((other) => other.value === p.value).length > 1;
    reasons.push(`value ${formatValue(p.value)} (${tied ? '=' : ''}${ordinal(place)} of ${scored.length})`);
    if (p.candidate.score?.truncated) reasons.push('scored on a truncated trajectory');
  }
  if (p.clusterSize !== null) reasons.push(p.clusterSize > 1 ? `cluster of ${p.clusterSize} equal patches` : 'unique patch');
  if (p.verify) reasons.push(`tests: ${p.verify.replace('_', ' ')}`);
  else if (strategy === 'hybrid') reasons.push('tests: not run');
  return reasons;
}

function noWinner(instance: PreparedInstance): string {
  const total = instance.candidates.length;
  if (total === 0) return 'no candidates, nothing chosen';
  const empty = instance.candidates.filter((p) => p.shape.kind === 'empty').length;
  const broken = total - empty;
  const parts = [empty ? `${empty} empty` : '', broken ? `${broken} unparseable` : ''].filter(Boolean);
  return `none of the ${total} candidates has a usable patch (${parts.join(', ')}), nothing chosen`;
}

/** 0.82 → "0.82", 0.8234 → "0.823". */
export function formatValue(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}

/** 1 → "1st", 12 → "12th", 22 → "22nd". */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

function sentence(clause: string): string {
  const text = clause.charAt(0).toUpperCase() + clause.slice(1);
  return text.endsWith('.') ? text : `${text}.`;
}
