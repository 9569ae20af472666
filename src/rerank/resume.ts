/**
 * Stage 2 of batch reranking: what an earlier run with the same outputs already did. An instance
 * is done when --out holds its prediction from this strategy and --scores a line for each of its
 * candidates now, scored by this model; those are kept and not scored again. Anything else
 * (another strategy or model, another --scores, a candidate added or removed, a candidate left
 * unscored by a scorer failure) is redone. Both files are then rewritten to what is kept.
 */
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { lookupLabel } from '../formats/index.js';
import { select, type SelectOptions } from '../select/index.js';
import type { Selection, Strategy } from '../types/index.js';
import { modelNameFor } from './score-instance.js';
import type { InstanceExecution } from './execute-instance.js';
import type { RerankBatchOptions, RerankInputs, ScoreLine } from './types.js';

export interface Resumed {
  /** Instances taken from the earlier run. */
  done: Set<string>;
  /** Their score lines, labelled by this run's labels. */
  previous: ScoreLine[];
  /** With --verify: what running their code found (their lines of the checks file). */
  executions: InstanceExecution[];
}

/** The rows of a JSONL file, read as a stream: a 50,000-candidate --scores file is never one string. */
async function* readJsonl<T>(file: string): AsyncGenerator<T> {
  if (!existsSync(file)) return;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line.trim() === '') continue;
    try {
      yield JSON.parse(line) as T;
    } catch {
      // a line cut by a crash mid-write; that instance is redone
    }
  }
}

/** Every row of a JSONL file. */
async function readAll<T>(file: string): Promise<T[]> {
  const rows: T[] = [];
  for await (const row of readJsonl<T>(file)) rows.push(row);
  return rows;
}

export async function resume(options: RerankBatchOptions, inputs: RerankInputs): Promise<Resumed> {
  const { labels } = inputs;
  const byInstance = inputs.spool.instances;
  const { scorer } = options.valueModel;
  const scoreLinesOf = new Map<string, Map<string, ScoreLine>>();
  for await (const line of readJsonl<ScoreLine>(options.scores)) {
    if (!scoreLinesOf.has(line.instance_id)) scoreLinesOf.set(line.instance_id, new Map());
    scoreLinesOf.get(line.instance_id)!.set(line.trajectory_id, line);
  }
  // With --verify, an instance is done only when its code ran too: its evidence line is there and
  // every score line carries a verdict (a run without --verify left none).
  const executionOf = new Map<string, InstanceExecution>();
  if (options.execution && options.checksFile)
    for await (const line of readJsonl<InstanceExecution>(options.checksFile)) executionOf.set(line.instance_id, line);
  const complete = (instanceId: string): boolean => {
    if (options.execution && !executionOf.has(instanceId)) return false;
    const saved = scoreLinesOf.get(instanceId);
    const candidates = byInstance.get(instanceId);
    if (!saved || !candidates || saved.size !== candidates.length || !candidates.every((trajectory) => saved.has(trajectory.id)))
      return false;
    // A candidate the scorer failed on (an outage, a timeout) is worth another try: redo its instance.
    return [...saved.values()].every(
      (line) =>
        line.score !== null &&
        line.score.backend === scorer.backend &&
        line.score.model === scorer.model &&
        (!options.execution || line.verify !== undefined),
    );
  };
  const kept = [
    ...new Map(
      (await readAll<{ instance_id: string; model_name_or_path?: string }>(options.out))
        .filter((row) => row.model_name_or_path === modelNameFor(options.strategy) && complete(row.instance_id))
        .map((row) => [row.instance_id, row]),
    ).values(),
  ];
  const done = new Set(kept.map((row) => row.instance_id));
  // Labels are this run's: a label file given now also labels the instances resumed.
  const previous = [...done].flatMap((instanceId) =>
    byInstance.get(instanceId)!.map((trajectory) => {
      const line = scoreLinesOf.get(instanceId)!.get(trajectory.id)!;
      return { ...line, resolved: lookupLabel(labels, instanceId, trajectory.source) ?? null };
    }),
  );
  const executions = options.execution ? [...done].map((instanceId) => executionOf.get(instanceId)!) : [];
  await mkdir(dirname(options.out), { recursive: true });
  await mkdir(dirname(options.scores), { recursive: true });
  // Rewrite each from its complete rows: a line cut by a crash must not stay glued to the next one.
  const lines = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).join('\n') + (rows.length ? '\n' : '');
  await writeFile(options.out, lines(kept));
  await writeFile(options.scores, lines(previous));
  if (options.execution && options.checksFile) {
    await mkdir(dirname(options.checksFile), { recursive: true });
    await writeFile(options.checksFile, lines(executions));
  }
  return { done, previous, executions };
}

/** The selections of the resumed instances, recomputed from their saved scores (selection is deterministic). */
export function resumedSelections(options: RerankBatchOptions, inputs: RerankInputs, resumed: Resumed): Selection[] {
  return [...resumed.done].flatMap((instanceId) => {
    if (!inputs.spool.instances.has(instanceId)) return [];
    const candidates = inputs.spool.candidatesOf(instanceId);
    const lineOf = new Map(resumed.previous.filter((line) => line.instance_id === instanceId).map((line) => [line.trajectory_id, line]));
    const task = inputs.spool.task(instanceId);
    return [
      select(
        options.strategy,
        candidates.map((trajectory) => {
          const line = lineOf.get(trajectory.id);
          return {
            trajectory,
            score: line?.score ?? undefined,
            ...(line?.verify ? { verify: line.verify } : {}),
            ...(line?.checks ? { checks: line.checks } : {}),
          };
        }),
        {
          instanceId,
          selector: options.valueModel.selector,
          ...(task ? { task } : {}),
          // The judge is not asked again for what an earlier run chose: its games are in the score lines.
          ...savedJudge([...lineOf.values()], options.strategy),
        },
      ),
    ];
  });
}

/** The judge's verdicts an earlier run kept in its score lines, or why there are none. */
function savedJudge(lines: ScoreLine[], strategy: Strategy): Pick<SelectOptions, 'judge' | 'judgeUnavailable'> {
  const judged = lines.filter((line) => line.judge);
  if (judged.length)
    return {
      judge: {
        model: judged[0]!.judge!.model,
        byId: new Map(judged.map((line) => [line.trajectory_id, { wins: line.judge!.wins, games: line.judge!.games }])),
      },
    };
  return strategy === 'judge' ? { judgeUnavailable: 'resumed from an earlier run that kept no judge verdicts' } : {};
}
