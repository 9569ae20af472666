/** Terminal output of a solve job, shared by `winnower demo` and `winnower solve`: event lines and the candidates table. */
import { patchShape } from '../select/patch-shape.js';

export interface CandidateView {
  index: number;
  status: string;
  exit: string | null;
  steps: number | null;
  value: number | null;
  verify: {
    status: string;
    fail_to_pass: Tally;
    pass_to_pass: Tally;
    exit_code?: number | null;
    other_failed?: string[];
    other_failed_count?: number;
    /** `harbor-reward` for a Harbor task, whose verdict is its reward (docs/harbor.md#verification). */
    parser?: string;
    reward?: { value: number; threshold: number };
  } | null;
  trajectory_id: string | null;
  error: { code: string; message: string } | null;
  patch: string | null;
}

export interface JobView {
  job_id: string;
  status: string;
  candidates: CandidateView[];
  result: {
    /** `none-usable`: the job ran to its end but chose nothing (absent in a job saved before it was recorded). */
    outcome?: 'chosen' | 'none-usable';
    chosen: { index: number; patch: string; patch_encoding?: 'base64' } | null;
    /** Why a candidate can never be chosen (no patch, unparseable, refused, did not apply), per trajectory. */
    selection?: { reason?: string; ranking: Array<{ trajectory_id: string; unusable?: { kind: string } | null }> };
    rollouts: Record<string, number>;
    compute: Record<string, number>;
    checks?: ChecksView;
  } | null;
  error: { code: string; message: string } | null;
}

interface Tally {
  passed: number;
  failed: number;
  missing: number;
}

/** ` (run name)` or ` (model, harness)` for a rollout of a mixed job's policy `policy` > 0 or named; '' otherwise. */
function mixedPolicyOf(data: Record<string, unknown>): string {
  const config = data.config && typeof data.config === 'object' ? (data.config as Record<string, unknown>) : undefined;
  if (!config || (config.run === undefined && !(typeof data.policy === 'number' && data.policy > 0))) return '';
  return ` (${typeof config.run === 'string' ? config.run : `${String(config.model)}, ${String(config.harness)}`})`;
}

/** One line for a job event, or undefined for events not worth a line. */
export function formatEvent(type: string, data: Record<string, unknown>): string | undefined {
  const lines: Record<string, () => string> = {
    // A mixed job's rollout says which policy runs it (its run name, else its model and harness).
    'rollout-start': () => `rollout ${data.index} started${mixedPolicyOf(data)}`,
    'rollout-finish': () =>
      `rollout ${data.index} ${data.status} (${data.exit}, ${data.steps} steps, ${data.patch_bytes} B patch)${data.error ? `: ${data.error}` : ''}`,
    'setup-start': () =>
      `setup: ${data.commands} command(s), ${data.mode === 'fork' ? 'run once and forked' : 'run in each sandbox'} (${data.reason})`,
    'setup-finish': () =>
      data.error
        ? `setup failed after ${data.duration_ms} ms: ${data.error}`
        : `setup done in ${data.duration_ms} ms, snapshot ${data.snapshot_bytes} B`,
    'prefix-start': () => `shared prefix: one rollout until ${data.at === 'first-edit' ? 'its first edit' : `step ${data.at}`}`,
    'prefix-finish': () =>
      `shared prefix ${data.shared ? 'taken' : 'not shared'} after ${data.steps ?? 0} step(s) in ${data.duration_ms} ms: ${data.reason}`,
    'rollout-skip': () => `rollout ${data.index} skipped: ${data.reason}`,
    'rollout-reuse': () => `rollout ${data.index} finished in the earlier job: ${data.from}, not run again`,
    'candidate-unusable': () => `candidate ${data.index}: ${data.reason}, not scored or tested`,
    'score-available': () => `candidate ${data.index} value ${typeof data.value === 'number' ? data.value.toFixed(3) : 'n/a'}`,
    'verify-finish': () => `candidate ${data.index} tests: ${data.status}${data.other_failures ? ` (${data.other_failures})` : ''}`,
    'stop-rule': () => `stop rule met by candidate ${data.index}: ${data.reason}`,
    'regression-finish': () => regressionLine(data),
    'repro-test-finish': () => {
      const test = data.test as { file: string | null; valid: boolean; discard_reason: string | null };
      return `reproduction test ${data.writer}${test.file ? ` (${test.file})` : ''}: ${test.valid ? 'fails on base: valid' : `discarded: ${test.discard_reason}`}`;
    },
    'matrix-finish': () =>
      `pass matrix: ${(data.rows as Array<{ index: number; passed: number; total: number }>).map((row) => `candidate ${row.index} ${row.passed}/${row.total}`).join(', ') || 'no valid reproduction test'}`,
    'pool-tests-start': () => `tests from the pool: ${data.error ? `not run: ${data.error}` : `run with the ${data.runner} runner`}`,
    'pool-test-finish': () => {
      const test = data.test as {
        files: Array<{ path: string }>;
        ids: string[];
        base_outcome: string | null;
        discard_reason: string | null;
      };
      const files = test.files.map((file) => file.path).join(', ');
      return `pool test of candidate ${data.writer} (${files}): ${test.discard_reason ? `discarded: ${test.discard_reason}` : `${test.ids.length} failing on base`}`;
    },
    'pool-matrix-finish': () =>
      `pool matrix: ${(data.scores as Array<{ index: number; score: number; passed: number; total: number }>).map((row) => `candidate ${row.index} score ${row.score} (${row.passed}/${row.total})`).join(', ') || 'no valid pool test'}`,
    selection: () => `selected candidate ${data.chosen_index ?? 'none'}: ${data.reason}`,
    'job-finish': () =>
      `job ${data.status}${data.outcome === 'none-usable' ? ': nothing usable chosen' : ''}${data.error ? `: ${data.error}` : ''}`,
  };
  return lines[type]?.();
}

function regressionLine(data: Record<string, unknown>): string {
  const base = data.base as { command: string; passed: number; flaky: string[]; error?: string } | undefined;
  if (base)
    return base.error
      ? `regression check: not run: ${base.error}`
      : `regression check: base commit ran \`${base.command}\` twice: ${base.passed} tests pass, ${base.flaky.length} flaky`;
  const candidate = data.candidate as { status: string; regressions: unknown[]; error?: string } | undefined;
  if (!candidate) return 'regression check';
  if (candidate.status !== 'checked')
    return `candidate ${data.index} regression check: ${candidate.status}${candidate.error ? `: ${candidate.error}` : ''}`;
  return `candidate ${data.index} regression check: ${candidate.regressions.length} regression${candidate.regressions.length === 1 ? '' : 's'}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `passed/named`; a dash when the task names no such test (a command graded by its exit code). */
const tally = (t: Tally) => {
  const named = t.passed + t.failed + t.missing;
  return named === 0 ? '—' : `${t.passed}/${named}`;
};

/** Tests the task does not name that failed, and the exit code when it tells more: `2 failed (exit 1)`, `exit 1`, `none`. */
function otherTests(verify: NonNullable<CandidateView['verify']>): string {
  const count = verify.other_failed_count ?? 0;
  const exit = verify.exit_code ?? null;
  if (count > 0) return `${count} failed${exit !== null ? ` (exit ${exit})` : ''}`;
  return verify.status === 'resolved' && exit !== null && exit !== 0 ? `exit ${exit}` : 'none';
}

/** The tests cell: `no patch` for an empty patch (the same words as the event line), why another unusable patch was not tested, or the outcome. */
function testsCell(candidate: CandidateView, unusable: string | undefined): string {
  if (candidate.patch === '' || unusable === 'empty') return 'no patch';
  if (!candidate.verify && unusable === 'unparseable') return 'unparseable patch';
  if (!candidate.verify && unusable === 'refused') return 'patch refused';
  return candidate.verify?.status ?? '—';
}

/**
 * A name for a candidate in the tables of `winnower solve`: what its patch changes (`+1 -1
 * durations.py`, `+9 -2 in 3 files`), else its status (no patch, failed, cancelled).
 */
export function candidateLabel(candidate: CandidateView): string {
  if (candidate.status !== 'finished' || candidate.patch === null) return candidate.status;
  const shape = patchShape(candidate.patch);
  if (shape.kind === 'empty') return 'no patch';
  if (shape.kind === 'unparseable') return 'unparseable patch';
  const only = shape.files.length === 1 ? shape.files[0]! : undefined;
  const where = only ? (only.newPath ?? only.oldPath ?? '?') : `in ${shape.files.length} files`;
  return `+${shape.added} -${shape.removed} ${where}`;
}

/**
 * The candidates table; `nameOf` labels each candidate (its recording, or its status). A Harbor
 * task's candidates show their reward instead of test tallies and exit codes, which mean nothing there.
 */
export function renderCandidates(job: JobView, nameHeader: string, nameOf: (candidate: CandidateView) => string): string {
  const chosen = job.result?.chosen;
  const unusable = new Map((job.result?.selection?.ranking ?? []).map((entry) => [entry.trajectory_id, entry.unusable?.kind]));
  const testsOf = (c: CandidateView) => testsCell(c, c.trajectory_id === null ? undefined : unusable.get(c.trajectory_id));
  if (job.candidates.some((c) => c.verify?.parser === 'harbor-reward'))
    return table([
      ['candidate', nameHeader, 'steps', 'value', 'tests', 'reward', 'chosen'],
      ...job.candidates.map((c) => [
        String(c.index),
        nameOf(c),
        c.steps === null ? '—' : String(c.steps),
        c.value === null ? '—' : c.value.toFixed(3),
        testsOf(c),
        c.verify?.reward ? `${c.verify.reward.value} (≥ ${c.verify.reward.threshold})` : '—',
        chosen?.index === c.index ? '  ✔' : '',
      ]),
    ]);
  return table([
    ['candidate', nameHeader, 'steps', 'value', 'tests', 'F2P', 'P2P', 'other tests', 'chosen'],
    ...job.candidates.map((c) => [
      String(c.index),
      nameOf(c),
      c.steps === null ? '—' : String(c.steps),
      c.value === null ? '—' : c.value.toFixed(3),
      testsOf(c),
      c.verify ? tally(c.verify.fail_to_pass) : '—',
      c.verify ? tally(c.verify.pass_to_pass) : '—',
      c.verify ? otherTests(c.verify) : '—',
      chosen?.index === c.index ? '  ✔' : '',
    ]),
  ]);
}

/** The part of `result.checks` (src/types/checks.ts) the terminal shows. */
export interface ChecksView {
  regression: {
    base: { runner: string; command: string; scope: string; passed: number; flaky: string[]; error?: string } | null;
    candidates: Array<{ index: number; status: string; regressions: Array<{ test: string; candidate: string }>; error?: string }>;
  } | null;
  reproduction: {
    tests: Array<{ writer: number; file: string | null; base_outcome: string | null; valid: boolean; discard_reason: string | null }>;
    matrix: Array<{ index: number; writer: number; outcome: string }>;
  } | null;
  pool_tests?: {
    runner: string | null;
    error?: string;
    tests: Array<{ writer: number; files: Array<{ path: string }>; ids: string[]; valid: boolean; discard_reason: string | null }>;
    matrix: Array<{ index: number; writer: number; outcome: string; own: boolean }>;
    clusters: Array<{ writers: number[]; weight: number }>;
    scores: Array<{ index: number; score: number; passed: number; total: number; own_passed: number; own_total: number }>;
    sandbox_ms: Array<{ index: number; sandbox_ms: number }>;
  } | null;
  cost: { sandbox_ms: number; policy_tokens: number; policy_calls: number };
}

const CELL: Record<string, string> = {
  passed: 'pass',
  failed: 'FAIL',
  error: 'error',
  apply_failed: 'no patch',
  conflict: 'conflict',
  not_run: 'not run',
};

/**
 * The execution checks under the candidates table: the regression check's base runs, every
 * generated reproduction test (valid, or why discarded), and the pass matrix — one row per
 * candidate with its regressions and its outcome on each valid test, the chosen row marked.
 */
export function renderChecks(job: JobView, nameOf: (candidate: CandidateView) => string): string {
  const checks = job.result?.checks;
  if (!checks || (!checks.regression && !checks.reproduction && !checks.pool_tests)) return '';
  const lines: string[] = [];
  const base = checks.regression?.base;
  if (checks.regression) {
    if (!base) lines.push('regression check: did not finish');
    else if (base.error) lines.push(`regression check: not run: ${base.error}`);
    else
      lines.push(
        `regression check: \`${base.command}\` (${base.runner}, ${base.scope} suite) on the base commit twice: ${base.passed} tests pass, ${base.flaky.length} flaky${base.flaky.length ? ` (ignored: ${base.flaky.join(', ')})` : ''}`,
      );
  }
  const tests = checks.reproduction?.tests ?? [];
  const valid = tests.filter((test) => test.valid);
  if (checks.reproduction) {
    lines.push(`reproduction tests: ${tests.length} written, ${valid.length} valid (fail on the base commit)`);
    for (const test of tests)
      lines.push(
        `  test ${test.writer}  ${test.file ?? '(no file)'}: ${test.valid ? 'fails on base: valid' : `discarded: ${test.discard_reason}`}`,
      );
  }
  const regressionsOf = new Map((checks.regression?.candidates ?? []).map((c) => [c.index, c]));
  const cellOf = (index: number, writer: number) =>
    checks.reproduction?.matrix.find((cell) => cell.index === index && cell.writer === writer)?.outcome;
  const chosen = job.result?.chosen;
  const rows = job.candidates.map((c) => {
    const regression = regressionsOf.get(c.index);
    const regressionText = !regression
      ? '—'
      : regression.status !== 'checked'
        ? regression.status.replace('_', ' ')
        : String(regression.regressions.length);
    const cells = valid.map((test) => {
      const outcome = cellOf(c.index, test.writer);
      return outcome ? (CELL[outcome] ?? outcome) : '—';
    });
    const passed = valid.filter((test) => cellOf(c.index, test.writer) === 'passed').length;
    const ran = valid.some((test) => cellOf(c.index, test.writer) !== undefined);
    return [
      String(c.index),
      nameOf(c),
      regressionText,
      ...cells,
      ran ? `${passed}/${valid.length}` : '—',
      chosen?.index === c.index ? '  ✔ chosen' : '',
    ];
  });
  lines.push('', 'pass matrix (regressions: tests that passed on base and fail with the patch; test k: a valid reproduction test):');
  lines.push(
    table([['candidate', 'name', 'regressions', ...valid.map((test) => `test ${test.writer}`), 'reproduction', 'chosen'], ...rows]),
  );
  const broken = [...regressionsOf.values()].filter((c) => c.regressions.length > 0);
  for (const c of broken)
    lines.push(`  candidate ${c.index} regressions: ${c.regressions.map((r) => `${r.test} (${r.candidate})`).join(', ')}`);
  if (checks.pool_tests) lines.push('', ...renderPoolTests(checks.pool_tests, job, nameOf));
  lines.push(
    `checks cost: ${(checks.cost.sandbox_ms / 1000).toFixed(1)} sandbox-seconds, ${checks.cost.policy_tokens} policy tokens in ${checks.cost.policy_calls} calls`,
  );
  return lines.join('\n');
}

/**
 * The tests from the pool: each writer's test (valid with its weight, or why discarded), then the
 * pool matrix — per candidate its outcome on each valid test (its own in brackets: not counted),
 * its score and its sandbox time.
 */
function renderPoolTests(
  pool: NonNullable<ChecksView['pool_tests']>,
  job: JobView,
  nameOf: (candidate: CandidateView) => string,
): string[] {
  if (pool.error) return [`tests from the pool: not run: ${pool.error}`];
  const valid = pool.tests.filter((test) => test.valid);
  const weightOf = new Map(pool.clusters.flatMap((cluster) => cluster.writers.map((writer) => [writer, cluster.weight] as const)));
  const lines = [
    `tests from the pool (${pool.runner} runner): ${pool.tests.length} written by the candidates, ${valid.length} valid (fail on base, passed by a candidate)`,
  ];
  for (const test of pool.tests)
    lines.push(
      `  candidate ${test.writer}'s test  ${test.files.map((file) => file.path).join(', ')}: ${test.valid ? `valid, ${test.ids.length} id${test.ids.length === 1 ? '' : 's'}, weight ${weightOf.get(test.writer)}` : `discarded: ${test.discard_reason}`}`,
    );
  if (valid.length === 0) return lines;
  const cellOf = (index: number, writer: number) => pool.matrix.find((cell) => cell.index === index && cell.writer === writer);
  const scoreOf = new Map(pool.scores.map((score) => [score.index, score]));
  const spentOf = new Map(pool.sandbox_ms.map((row) => [row.index, row.sandbox_ms]));
  const chosen = job.result?.chosen;
  const rows = job.candidates.map((c) => {
    const score = scoreOf.get(c.index);
    const cells = valid.map((test) => {
      const cell = cellOf(c.index, test.writer);
      if (!cell) return '—';
      const text = CELL[cell.outcome] ?? cell.outcome;
      return cell.own ? `(${text})` : text;
    });
    const spent = spentOf.get(c.index);
    return [
      String(c.index),
      nameOf(c),
      ...cells,
      score ? `${score.score} (${score.passed}/${score.total})` : '—',
      spent === undefined ? '—' : (spent / 1000).toFixed(1),
      chosen?.index === c.index ? '  ✔ chosen' : '',
    ];
  });
  lines.push(
    '',
    "pool matrix (by k: the test candidate k wrote; a candidate's own test in brackets, not counted; score: weights of the others' tests it passes):",
    table([['candidate', 'name', ...valid.map((test) => `by ${test.writer}`), 'score', 'sandbox-s', 'chosen'], ...rows]),
  );
  return lines;
}

/** Rollout counts, compute saved and the chosen patch. */
export function renderOutcome(job: JobView): string {
  if (!job.result) return `job ${job.status}: ${job.error ? `${job.error.code}: ${job.error.message}` : 'no result'}`;
  const { rollouts, compute, chosen } = job.result;
  const counts = `rollouts: ${rollouts.finished} finished, ${rollouts.failed} failed, ${rollouts.cancelled} cancelled, ${rollouts.skipped} skipped; compute saved: ${((compute.saved_fraction ?? 0) * 100).toFixed(0)}%`;
  // Nothing chosen: the selection's reason counts why (no patch, did not apply, ...).
  const none = job.result.selection?.reason ? `nothing chosen: ${job.result.selection.reason}` : 'no candidate produced a usable patch';
  return `${counts}\n\n${chosen ? `chosen patch (candidate ${chosen.index}):\n\n${chosen.patch}` : none}`;
}
