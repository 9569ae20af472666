/**
 * `winnower rerank --cross-fit K`: the out-of-fold pick per instance as SWE-bench predictions
 * (--out, so the official harness can grade it), every candidate's out-of-fold rank (--scores)
 * and the table (--report, Markdown; stdout always). It ranks with learned priors, not a value
 * model, so the scoring flags do not apply: given, they are refused by name, never ignored.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { wnwError } from '../errors.js';
import { crossFit } from '../train/cross-fit.js';
import { flagsGiven } from './parse-options.js';
import { type RerankFlags, VERIFY_ONLY_FLAGS } from './rerank.js';

/** The model name the predictions carry, so a harness report says where they came from. */
export const CROSS_FIT_MODEL = 'winnower-cross-fit';

/** Flags of a plain rerank that have no meaning here (the scorer's, the strategy's, the summary's). */
const NOT_WITH_CROSS_FIT: Record<string, string> = {
  scorer: '--scorer',
  model: '--model',
  url: '--url',
  tokenizer: '--tokenizer',
  chatTemplate: '--chat-template',
  headLabels: '--head-labels',
  labelIndex: '--label-index',
  activation: '--activation',
  apiKey: '--api-key',
  template: '--template',
  budget: '--budget',
  strategy: '--strategy',
  summary: '--summary',
  strict: '--strict',
  concurrency: '--concurrency',
  format: '--format',
  inspector: '--no-inspector',
  // Cross-fitting ranks saved runs by their labels; it runs no code.
  verify: '--verify',
  ...VERIFY_ONLY_FLAGS,
};

export async function runCrossFit(flags: RerankFlags, given: readonly string[]): Promise<void> {
  const refused = flagsGiven(NOT_WITH_CROSS_FIT, given);
  if (refused.length > 0) {
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `--cross-fit ranks with priors learned from the labels, not with a value model: ${refused.join(', ')} cannot apply (drop ${refused.length === 1 ? 'it' : 'them'})`,
      { details: { field: refused[0]!.replace(/^--(no-)?/, '').replaceAll('-', '_'), refused } },
    );
  }
  if (flags.crossFit! < 2)
    throw wnwError('WNW_ERR_INPUT_INVALID', '--cross-fit: give at least 2 folds', { details: { field: 'cross_fit' } });
  if (flags.report?.endsWith('.html')) {
    throw wnwError('WNW_ERR_INPUT_INVALID', '--report: with --cross-fit the report is Markdown; give a .md path', {
      details: { field: 'report' },
    });
  }
  const result = await crossFit({
    rollouts: flags.candidates,
    labels: flags.labels,
    tasks: flags.tasks,
    sourceFrom: flags.sourceFrom,
    onInvalid: flags.skipInvalid ? 'skip' : 'fail',
    folds: flags.crossFit!,
    sources: flags.sources,
  });
  const scores = flags.scores ?? flags.out.replace(/(\.jsonl)?$/, '.scores.jsonl');
  const jsonl = (rows: unknown[]) => rows.map((row) => `${JSON.stringify(row)}\n`).join('');
  const predictions = result.choices.map((choice) => ({
    instance_id: choice.instance_id,
    model_name_or_path: CROSS_FIT_MODEL,
    model_patch: choice.patch,
  }));
  const scoreLines = result.choices.flatMap((choice) =>
    choice.candidates.map((candidate) => ({
      instance_id: choice.instance_id,
      pool: choice.pool,
      fold: choice.fold,
      ...candidate,
      chosen: candidate.trajectory_id === choice.chosen,
    })),
  );
  await write(flags.out, jsonl(predictions));
  await write(scores, jsonl(scoreLines));
  if (flags.report) await write(flags.report, result.markdown);
  console.log(result.markdown);
  console.error(
    `cross-fitted ${result.table.candidates} candidates over ${result.folds} folds in ${result.seconds.toFixed(1)} s: ` +
      `${predictions.length} predictions → ${flags.out}, scores → ${scores}${flags.report ? `, report → ${flags.report}` : ''}`,
  );
}

async function write(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
}
