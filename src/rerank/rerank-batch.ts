/**
 * Batch reranking: N candidates per instance (prediction files or trajectory dumps) in, one
 * prediction per instance out, with every candidate's score and a report. Read top to bottom as
 * its stages: the inputs, streamed into a spool read back one instance at a time (load-inputs.ts) → what an earlier run with the same outputs already did
 * (resume.ts) → each remaining instance scored, selected and appended as it finishes
 * (score-instance.ts), so a rerun resumes where this one stopped → the result, metrics and report
 * (summarize.ts).
 */
import { pushAll } from '../util/large-arrays.js';
import { refuseUnreadCheckFlags } from './execute-instance.js';
import { loadInputs } from './load-inputs.js';
import { resume, resumedSelections } from './resume.js';
import { scoreInstances } from './score-instance.js';
import { summarize, summaryLine } from './summarize.js';
import type { RerankBatchOptions, RerankBatchResult } from './types.js';

export { describeUnscored } from './summarize.js';
export type { RerankBatchOptions, RerankBatchResult, RerankWarning, ScoreLine, Unscored } from './types.js';

export async function rerankBatch(options: RerankBatchOptions): Promise<RerankBatchResult> {
  const timings: Record<string, number> = {};
  let started = Date.now();
  const inputs = await loadInputs(options);
  try {
    timings.import = Date.now() - started;
    if (options.execution) refuseUnreadCheckFlags(options.execution, inputs.spool.instances.keys(), (id) => inputs.spool.task(id));

    const resumed = await resume(options, inputs);
    const todo = [...inputs.spool.instances.keys()].filter((id) => !resumed.done.has(id));
    started = Date.now();
    const scored = await scoreInstances(options, inputs, todo);
    timings.score = Date.now() - started;

    const lines = resumed.previous.map((line) => summaryLine(line, options.report !== undefined));
    pushAll(lines, scored.lines);
    return await summarize(options, inputs, {
      resumed: resumed.done.size,
      lines,
      // Only the report reads the selections (summarize.ts).
      selections: options.report ? [...scored.selections, ...resumedSelections(options, inputs, resumed)] : [],
      noneUsable: scored.noneUsable,
      executions: [...resumed.executions, ...scored.executions],
      timings,
      judge: scored.judge,
    });
  } finally {
    inputs.spool.close();
  }
}
