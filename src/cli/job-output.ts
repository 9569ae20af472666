/** Terminal output of a solve job, shared by `winnower demo` and `winnower solve`: event lines and the candidates table. */

export interface CandidateView {
  index: number;
  status: string;
  exit: string | null;
  steps: number | null;
  value: number | null;
  verify: { status: string; fail_to_pass: Tally; pass_to_pass: Tally; exit_code?: number | null; other_failed?: string[]; other_failed_count?: number } | null;
  trajectory_id: string | null;
  error: { code: string; message: string } | null;
  patch: string | null;
}

export interface JobView {
  job_id: string;
  status: string;
  candidates: CandidateView[];
  result: {
    chosen: { index: number; patch: string } | null;
    /** Why a candidate can never be chosen (no patch, unparseable, refused, did not apply), per trajectory. */
    selection?: { ranking: Array<{ trajectory_id: string; unusable?: { kind: string } | null }> };
    rollouts: Record<string, number>;
    compute: Record<string, number>;
  } | null;
  error: { code: string; message: string } | null;
}

interface Tally {
  passed: number;
  failed: number;
  missing: number;
}

/** One line for a job event, or undefined for events not worth a line. */
export function formatEvent(type: string, data: Record<string, unknown>): string | undefined {
  const lines: Record<string, () => string> = {
    'rollout-start': () => `rollout ${data.index} started`,
    'rollout-finish': () => `rollout ${data.index} ${data.status} (${data.exit}, ${data.steps} steps, ${data.patch_bytes} B patch)${data.error ? `: ${data.error}` : ''}`,
    'rollout-skip': () => `rollout ${data.index} skipped: ${data.reason}`,
    'candidate-unusable': () => `candidate ${data.index}: ${data.reason}, not scored or tested`,
    'score-available': () => `candidate ${data.index} value ${typeof data.value === 'number' ? data.value.toFixed(3) : 'n/a'}`,
    'verify-finish': () => `candidate ${data.index} tests: ${data.status}${data.other_failures ? ` (${data.other_failures})` : ''}`,
    'stop-rule': () => `stop rule met by candidate ${data.index}: ${data.reason}`,
    selection: () => `selected candidate ${data.chosen_index ?? 'none'}: ${data.reason}`,
    'job-finish': () => `job ${data.status}${data.error ? `: ${data.error}` : ''}`,
  };
  return lines[type]?.();
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}

const tally = (t: Tally) => `${t.passed}/${t.passed + t.failed + t.missing}`;

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

/** The candidates table; `nameOf` labels each candidate (its recording, or its status). */
export function renderCandidates(job: JobView, nameHeader: string, nameOf: (candidate: CandidateView) => string): string {
  const chosen = job.result?.chosen;
  const unusable = new Map((job.result?.selection?.ranking ?? []).map((entry) => [entry.trajectory_id, entry.unusable?.kind]));
  return table([
    ['candidate', nameHeader, 'steps', 'value', 'tests', 'F2P', 'P2P', 'other tests', 'chosen'],
    ...job.candidates.map((c) => [
      String(c.index),
      nameOf(c),
      c.steps === null ? '—' : String(c.steps),
      c.value === null ? '—' : c.value.toFixed(3),
      testsCell(c, c.trajectory_id === null ? undefined : unusable.get(c.trajectory_id)),
      c.verify ? tally(c.verify.fail_to_pass) : '—',
      c.verify ? tally(c.verify.pass_to_pass) : '—',
      c.verify ? otherTests(c.verify) : '—',
      chosen?.index === c.index ? '  ✔' : '',
    ]),
  ]);
}

/** Rollout counts, compute saved and the chosen patch. */
export function renderOutcome(job: JobView): string {
  if (!job.result) return `job ${job.status}: ${job.error ? `${job.error.code}: ${job.error.message}` : 'no result'}`;
  const { rollouts, compute, chosen } = job.result;
  const counts = `rollouts: ${rollouts.finished} finished, ${rollouts.failed} failed, ${rollouts.cancelled} cancelled, ${rollouts.skipped} skipped; compute saved: ${((compute.saved_fraction ?? 0) * 100).toFixed(0)}%`;
  return `${counts}\n\n${chosen ? `chosen patch (candidate ${chosen.index}):\n\n${chosen.patch}` : 'no candidate produced a usable patch'}`;
}
