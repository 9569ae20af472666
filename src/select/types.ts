/**
 * The selection seam: every candidate of one instance, with whatever evidence exists for it,
 * goes in; one `Selection` (winner, full ranking, reasons) comes out.
 */
import type { CandidateChecks, Score, Task, Trajectory, VerifyResult } from '../types/index.js';
import type { LearnedSelector } from '../types/selector.js';
import type { TamperTask } from './tamper.js';

/** One candidate of one instance and the evidence gathered for it. */
export interface Candidate {
  trajectory: Trajectory;
  /** The value model's verdict; absent when the scorer failed or was not run. */
  score?: Score;
  /** The test outcome; absent when verification did not run for this candidate. */
  verify?: VerifyResult;
  /** Regressions and reproduction-test passes (src/solve's checks); absent when they did not run. */
  checks?: CandidateChecks;
}

/**
 * The pairwise judge's verdicts (src/judge), gathered before selection: per trajectory id, the sum
 * of the preferences it earned (each in [0, 1], the two orders of a pair averaged) and the number
 * of opponents it met. `hybrid` breaks ties with wins / games; `judge` ranks by it.
 */
export interface JudgeScores {
  /** The judge's model, named in the reasons. */
  model: string;
  byId: ReadonlyMap<string, { wins: number; games: number }>;
}

export interface SelectOptions {
  /**
   * The instance the candidates belong to; every candidate must match it. Without it the id is
   * taken from the first candidate, or is '' when there are none.
   */
  instanceId?: string;
  /** `learned`: the weights from the model folder; without them learned selection degrades to value. */
  selector?: LearnedSelector;
  /** The task: its issue text for `learned`'s signals; its test patch, named tests and test command for the tamper checks. */
  task?: Pick<Task, 'problem_statement'> & TamperTask;
  /** `hybrid` (ties only) and `judge`: the pairwise judge's verdicts; without them `judge` degrades to value. */
  judge?: JudgeScores;
  /** `judge`: why there are no verdicts (the judge failed, none is configured), for the fallback's reason. */
  judgeUnavailable?: string;
}
