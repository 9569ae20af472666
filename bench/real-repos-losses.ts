/**
 * Where execution-backed selection loses on the real-repos world (bench/real-repos.bench.ts
 * `--losses`): the instances where a run chose an unresolved candidate although a resolved one
 * was in the pool, each candidate's checks evidence beside its constructed kind, and a cause per
 * loss read off that evidence.
 */
import type { WorldCandidate, WorldInstance } from './real-repos-world.js';

/** What a scores line holds that the analysis reads. */
export interface LossLine {
  instance_id: string;
  source: string;
  chosen: boolean;
  score?: { value: number } | null;
  checks?: {
    regressions: number | null;
    pool?: { score: number; passed: number; total: number; own_passed: number; own_total: number; failed_weight?: number };
  } | null;
  tamper?: Array<{ kind: string }>;
}

export type LossCause =
  /** The chosen candidate and a resolved one are equal on every check: the tie-break picked the wrong one. */
  | 'tie on the checks'
  /** The chosen candidate fails less of the pool tests than every clean resolved one. */
  | 'pool tests rank it higher'
  /** A resolved candidate was demoted by the regression check or a tamper flag. */
  | 'a resolved candidate was demoted'
  /** No resolved candidate has checks at all (not checked). */
  | 'resolved candidates not checked'
  | 'other';

export interface Loss {
  instance: WorldInstance;
  chosen: WorldCandidate | null;
  cause: LossCause;
  rows: string[];
}

const key = (instance: string, source: string) => `${instance}\u0000${source}`;

/** The checks key selection compares, as far as the scores file shows it: clean, pool key (src/select/checks.ts), not flagged. */
function checksOf(line: LossLine | undefined): [number, number, number] {
  const regressions = line?.checks?.regressions;
  const clean = regressions === null || regressions === undefined ? 0.5 : regressions === 0 ? 1 : 0;
  return [clean, poolKey(line), (line?.tamper?.length ?? 0) > 0 ? 0 : 1];
}

/** Minus the weight of the others' pool tests failed, as selection ranks; the passes' score in evidence without it. */
export function poolKey(line: LossLine | undefined): number {
  const pool = line?.checks?.pool;
  if (!pool) return 0;
  return pool.failed_weight !== undefined ? -pool.failed_weight : pool.score;
}

function causeOf(chosen: LossLine | undefined, resolved: Array<LossLine | undefined>): LossCause {
  const mine = checksOf(chosen);
  if (resolved.every((line) => !line?.checks)) return 'resolved candidates not checked';
  if (resolved.every((line) => checksOf(line)[0] < 1 || checksOf(line)[2] === 0)) return 'a resolved candidate was demoted';
  const best = resolved.filter((line) => checksOf(line)[0] === 1 && checksOf(line)[2] === 1);
  if (best.some((line) => checksOf(line).join() === mine.join())) return 'tie on the checks';
  if (best.every((line) => checksOf(line)[1] < mine[1])) return 'pool tests rank it higher';
  return 'other';
}

function describe(c: WorldCandidate, line: LossLine | undefined): string {
  const checks = line?.checks;
  const pool = checks?.pool;
  const parts = [
    `${line?.chosen ? '**' : ''}${c.source}${line?.chosen ? '**' : ''}`,
    c.kind,
    `own test ${c.test}`,
    checks ? (checks.regressions === null ? 'regression: not checked' : `regressions ${checks.regressions}`) : 'no checks',
    pool
      ? `pool ${pool.passed}/${pool.total} (${pool.failed_weight === undefined ? '' : `failed weight ${pool.failed_weight}, `}score ${pool.score}), own ${pool.own_passed}/${pool.own_total}`
      : 'pool –',
    line?.tamper?.length ? `flagged ${line.tamper.map((t) => t.kind).join('+')}` : 'clean',
    line?.score ? `value ${line.score.value.toFixed(3)}` : 'no value',
  ];
  return parts.join(', ');
}

/** The losses of one run: instances with a resolved candidate where the chosen one is unresolved. */
export function lossesOf(instances: WorldInstance[], candidates: WorldCandidate[], lines: LossLine[]): Loss[] {
  const byKey = new Map(lines.map((line) => [key(line.instance_id, line.source), line]));
  const losses: Loss[] = [];
  for (const instance of instances) {
    const members = candidates.filter((c) => c.instance_id === instance.instance_id);
    if (!members.some((c) => c.resolved)) continue;
    const lineOf = (c: WorldCandidate) => byKey.get(key(c.instance_id, c.source));
    const chosen = members.find((c) => lineOf(c)?.chosen) ?? null;
    if (chosen?.resolved) continue;
    losses.push({
      instance,
      chosen,
      cause: causeOf(chosen ? lineOf(chosen) : undefined, members.filter((c) => c.resolved).map(lineOf)),
      rows: members.map((c) => describe(c, lineOf(c))),
    });
  }
  return losses;
}

/** The losses as markdown: a count per cause, then each instance's candidates. */
export function lossReport(run: string, losses: Loss[], detail: boolean): string[] {
  const out: string[] = [];
  const causes = new Map<LossCause, number>();
  for (const loss of losses) causes.set(loss.cause, (causes.get(loss.cause) ?? 0) + 1);
  out.push(
    `Run \`${run}\`: ${losses.length} instance${losses.length === 1 ? '' : 's'} with a resolved candidate where an unresolved one was chosen${
      losses.length ? ` (${[...causes].map(([cause, n]) => `${cause} ${n}`).join(', ')})` : ''
    }.`,
  );
  if (!detail) return out;
  for (const loss of losses) {
    out.push('');
    out.push(
      `- ${loss.instance.instance_id} (${loss.instance.shape}, ${loss.instance.bug}): chose ${loss.chosen?.kind ?? 'nothing'}; ${loss.cause}`,
    );
    for (const row of loss.rows) out.push(`  - ${row}`);
  }
  return out;
}
