/**
 * Where one /score request's time goes, stage by stage, in one process: the body's UTF-8 check,
 * JSON.parse, the depth walk, the route's zod schema, serializing the candidates and building
 * their scorer inputs (against a scorer that answers at once), and the answer's JSON. 8
 * candidates of ~4K tokens (`winnower bench`'s own bodies, src/loadgen/scenarios.ts), a vLLM-like
 * scorer without a client tokenizer (estimated counts, as for a remote model). p50 over the
 * repetitions after a warm-up; the fixed 50 ms backend of bench/service.bench.ts is the baseline
 * these stages add to.
 *
 *   npx tsx bench/score-stages.bench.ts [--reps 200] [--candidates 8] [--tokens 4096]
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { scoringBody } from '../src/loadgen/scenarios.js';
import { scoreCandidates } from '../src/scoring/score-candidates.js';
import type { Scorer } from '../src/scoring/types.js';
import { checkDepth, decodeUtf8 } from '../src/server/guards/body-check.js';
import { ScoreBody } from '../src/server/routes/rerank.js';
import type { Trajectory } from '../src/types/index.js';

const { values } = parseArgs({
  options: {
    reps: { type: 'string', default: '200' },
    candidates: { type: 'string', default: '8' },
    tokens: { type: 'string', default: '4096' },
  },
});
const reps = Number(values.reps);
const [head, tail] = scoringBody({ candidates: Number(values.candidates), tokens: Number(values.tokens) });
const scorer: Scorer = {
  backend: 'vllm',
  model: 'bench',
  maxInputTokens: 32_768,
  score: async (inputs) => inputs.map(() => ({ value: 0.5, raw: 0 })),
  close: async () => {},
};
const times = new Map<string, number[]>();
const lap = (stage: string, since: number): number => {
  const now = performance.now();
  if (!times.has(stage)) times.set(stage, []);
  times.get(stage)!.push(now - since);
  return now;
};
let bytes = 0;
for (let rep = 0; rep < reps + 20; rep += 1) {
  const raw = Buffer.from(`${head}${rep}${tail}`);
  bytes = raw.length;
  let at = performance.now();
  const text = decodeUtf8(raw);
  at = lap('UTF-8 check and decode', at);
  const value: unknown = JSON.parse(text);
  at = lap('JSON.parse', at);
  checkDepth(value);
  at = lap('depth walk', at);
  const body = ScoreBody.parse(value);
  at = lap('zod (the route schema)', at);
  const results = await scoreCandidates({ scorer }, body.task, body.candidates as Trajectory[], {});
  at = lap('serialize and score (scorer answers at once)', at);
  JSON.stringify({ scores: results.map((result) => result.score) });
  lap('answer JSON', at);
}
console.log(
  `/score body ${bytes.toLocaleString('en-US')} bytes, ${values.candidates} candidates of ~${values.tokens} tokens; p50 of ${reps} after 20 warm-up; load ${loadavg()[0]!.toFixed(1)}`,
);
let total = 0;
for (const [stage, samples] of times) {
  const sorted = samples.slice(20).sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)]!;
  total += p50;
  console.log(`${stage.padEnd(46)} ${p50.toFixed(3)} ms`);
}
console.log(`${'sum'.padEnd(46)} ${total.toFixed(3)} ms`);
