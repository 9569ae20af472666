/**
 * Classification heads with more than one output: which output is "success", and which activation
 * turns the logits into its probability. A multi-label critic (independent sigmoids, trained with
 * BCE) and a single-label classifier (one softmax over the classes) need different activations on
 * the same logits, and the weights seldom carry label names, so the label table lives client-side
 * and every response is checked against it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { wnwError } from '../../errors.js';
import { logit, sigmoid } from '../../util/logistic.js';
import type { ScoreOutput } from '../types.js';

export type Activation = 'sigmoid' | 'softmax';

export interface HeadSettings {
  /** Label names in output order; the response must hold exactly this many values. */
  labels: readonly string[];
  /** Output read as the probability of success. */
  labelIndex: number;
  activation: Activation;
}

/**
 * The 27 outputs of `OpenHands/openhands-critic-4b-v1.0`, in the order of the OpenHands SDK's
 * critic client (`success` first, then sentiment, agent issues, infrastructure, user follow-ups).
 * The checkpoint's config names them LABEL_0 … LABEL_26, so the names exist only here.
 */
export const OPENHANDS_CRITIC_LABELS: readonly string[] = [
  'success',
  'sentiment_positive',
  'sentiment_neutral',
  'sentiment_negative',
  'misunderstood_intention',
  'did_not_follow_instruction',
  'insufficient_analysis',
  'insufficient_clarification',
  'improper_tool_use_or_setup',
  'loop_behavior',
  'insufficient_testing',
  'insufficient_debugging',
  'incomplete_implementation',
  'file_management_errors',
  'scope_creep',
  'risky_actions_or_permission',
  'other_agent_issue',
  'infrastructure_external_issue',
  'infrastructure_agent_caused_issue',
  'clarification_or_restatement',
  'correction',
  'direction_change',
  'vcs_update_requests',
  'progress_or_scope_concern',
  'frustration_or_complaint',
  'removal_or_reversion_request',
  'other_user_issue',
];

/** Label tables known by name (`scorer.labels: openhands-critic`), with the activation they were trained for. */
export const LABEL_PRESETS: Record<string, { labels: readonly string[]; activation: Activation }> = {
  // BCE training: each label is an independent sigmoid (docs/design/07-openhands-critic.md#5).
  'openhands-critic': { labels: OPENHANDS_CRITIC_LABELS, activation: 'sigmoid' },
};

/** Activation that Hugging Face's `problem_type` implies; undefined for none or regression. */
export function activationOfProblemType(problemType: unknown): Activation | undefined {
  if (problemType === 'multi_label_classification') return 'sigmoid';
  if (problemType === 'single_label_classification') return 'softmax';
  return undefined;
}

/** `problem_type` of the `config.json` in the folder of `path` (a folder, or a file inside one), if any. */
export function readProblemType(path: string | undefined): string | undefined {
  if (path === undefined || !existsSync(path)) return undefined;
  const folder = statSync(path).isDirectory() ? path : dirname(path);
  const file = join(folder, 'config.json');
  if (!existsSync(file)) return undefined;
  try {
    const config = JSON.parse(readFileSync(file, 'utf8')) as { problem_type?: unknown };
    return typeof config.problem_type === 'string' ? config.problem_type : undefined;
  } catch (error) {
    throw wnwError('WNW_ERR_CFG_INVALID', `${file}: not JSON: ${(error as Error).message}`, {
      cause: error,
      details: { field: 'scorer.activation', file },
    });
  }
}

export interface HeadConfig {
  /** A preset name or the label names in output order. */
  labels: string | readonly string[];
  labelIndex?: number;
  activation?: Activation | 'auto';
  /** `problem_type` of the model's config.json, when it is at hand. */
  problemType?: string;
}

/**
 * The head a scorer reads: explicit activation first, then the model's `problem_type`, then the
 * preset's own; a table of several labels with none of these is refused rather than guessed.
 */
export function resolveHead(config: HeadConfig): HeadSettings {
  const preset = typeof config.labels === 'string' ? LABEL_PRESETS[config.labels] : undefined;
  if (typeof config.labels === 'string' && !preset) {
    throw wnwError(
      'WNW_ERR_CFG_INVALID',
      `scorer.labels: unknown label table "${config.labels}"; use one of ${Object.keys(LABEL_PRESETS).join(', ')} or a list of names`,
      {
        details: { field: 'scorer.labels', valid: Object.keys(LABEL_PRESETS) },
      },
    );
  }
  const labels = preset ? preset.labels : (config.labels as readonly string[]);
  const labelIndex = config.labelIndex ?? 0;
  if (!Number.isInteger(labelIndex) || labelIndex < 0 || labelIndex >= labels.length) {
    throw wnwError('WNW_ERR_CFG_INVALID', `scorer.labelIndex: ${labelIndex} is not an index of the ${labels.length} labels`, {
      details: { field: 'scorer.labelIndex' },
    });
  }
  const explicit = config.activation === 'auto' ? undefined : config.activation;
  const fromConfig = activationOfProblemType(config.problemType);
  const activation = explicit ?? fromConfig ?? preset?.activation ?? (labels.length === 1 ? 'sigmoid' : undefined);
  if (activation === undefined) {
    throw wnwError(
      'WNW_ERR_CFG_INVALID',
      `scorer.activation: a head of ${labels.length} labels needs sigmoid (multi-label) or softmax (single-label); ` +
        `set scorer.activation, or give a tokenizer folder whose config.json has problem_type${config.problemType ? ` (it has "${config.problemType}")` : ''}`,
      { details: { field: 'scorer.activation' } },
    );
  }
  return { labels, labelIndex, activation };
}

/** Checks that a result holds one value per label. */
export function checkLabelCount(head: HeadSettings, values: readonly number[], where: string): void {
  if (values.length !== head.labels.length) {
    throw wnwError(
      'WNW_ERR_SCORE_RESPONSE',
      `${where}: ${values.length} values for a head of ${head.labels.length} labels (${head.labels.slice(0, 3).join(', ')}, …); check scorer.labels against the served model`,
      {
        details: { expected: head.labels.length, received: values.length },
      },
    );
  }
}

/** Success probability from raw logits; `raw` keeps the success label's own logit. */
export function headFromLogits(head: HeadSettings, logits: readonly number[], where: string): ScoreOutput {
  checkLabelCount(head, logits, where);
  const raw = logits[head.labelIndex]!;
  if (head.activation === 'sigmoid') return { value: sigmoid(raw), raw };
  const max = Math.max(...logits);
  const total = logits.reduce((sum, value) => sum + Math.exp(value - max), 0);
  return { value: Math.exp(raw - max) / total, raw };
}

/**
 * Success probability from values the server already activated (a server that refused
 * `use_activation`); the logit is then only recoverable as the log-odds of that probability.
 */
export function headFromProbabilities(head: HeadSettings, probs: readonly number[], where: string): ScoreOutput {
  checkLabelCount(head, probs, where);
  const value = Math.min(1, Math.max(0, probs[head.labelIndex]!));
  return { value, raw: logit(value) };
}
