/**
 * Where a /score request's CPU goes at 64 connections: the app as the server builds it (fastify,
 * `app.inject`, the body parser and every guard), the vLLM scorer (batching on; B=off for off)
 * against the fixed 50 ms stub, 64 concurrent requests (C=16 for 16) of 8 × ~4K-token candidates
 * for 8 s, under the V8 profiler. Prints requests/s, CPU ms per request (the stub's share
 * included), the mean time a caller's score call took beside the mean time of a batch at the
 * backend (their difference is what the batcher made calls wait), backend calls per request, and
 * self time by file and by function; writes the profile to $TMPDIR/score.cpuprofile (open it in Chrome's
 * DevTools). Run the same file in a `git archive` of another ref for a before/after.
 *
 *   npx tsx bench/score-profile.bench.ts
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startScorerStub } from '../src/loadgen/scorer-stub.js';
import { scoringBody } from '../src/loadgen/scenarios.js';
import { loadValueModel } from '../src/scoring/value-model.js';
import { startTestApp } from '../test/server/test-app.js';

const stub = await startScorerStub({ latencyMs: 50 });
const lanesCount = Number(process.env.C ?? 64);
const timing = { calls: 0, callMs: 0, batches: 0, batchMs: 0 };
const valueModel = await loadValueModel(
  {
    backend: 'vllm',
    model: stub.model,
    urls: [stub.url],
    retries: 0,
    cacheEntries: 0,
    batching: process.env.B === 'off' ? false : undefined,
  },
  {
    observer: {
      onCall: (event) => {
        timing.calls += 1;
        timing.callMs += event.durationMs;
      },
      onBatch: (event) => {
        timing.batches += 1;
        timing.batchMs += event.durationMs;
      },
    },
  },
);
const server = await startTestApp({ valueModel });
const [head, tail] = scoringBody({ candidates: 8, tokens: 4096 });
let n = 0;
const one = async () => {
  const payload = `${head}${n++}${tail}`;
  const r = await server.app.inject({ method: 'POST', url: '/score', payload, headers: { 'content-type': 'application/json' } });
  if (r.statusCode !== 200) throw new Error(r.body.slice(0, 300));
};
await one();
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.start');
Object.assign(timing, { calls: 0, callMs: 0, batches: 0, batchMs: 0 });
const start = performance.now();
const cpu = process.cpuUsage();
let done = 0;
const lanes = Array.from({ length: lanesCount }, async () => {
  while (performance.now() - start < 8000) {
    await one();
    done++;
  }
});
await Promise.all(lanes);
const secs = (performance.now() - start) / 1000;
const used = process.cpuUsage(cpu);
const { profile } = await session.post('Profiler.stop');
writeFileSync(join(tmpdir(), 'score.cpuprofile'), JSON.stringify(profile));
console.log(
  JSON.stringify({
    connections: lanesCount,
    batching: process.env.B !== 'off',
    reqPerS: done / secs,
    cpuMsPerReq: (used.user + used.system) / 1000 / done,
    meanCallMs: timing.callMs / timing.calls,
    meanBatchMs: timing.batchMs / timing.batches,
    backendCallsPerReq: timing.batches / done,
    bytes: head.length + tail.length,
  }),
);
// self time per function, top 40, and by url
const self = new Map<number, number>();
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const dt = profile.timeDeltas!;
profile.samples!.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
const byFn = new Map<string, number>();
const byFile = new Map<string, number>();
for (const [id, t] of self) {
  const node = nodes.get(id)!;
  const cf = node.callFrame;
  const file = cf.url.replace(/^.*node_modules\//, 'nm/').replace(/^file:\/\/.*\/main\//, '');
  byFn.set(
    `${cf.functionName || '(anon)'} ${file}:${cf.lineNumber}`,
    (byFn.get(`${cf.functionName || '(anon)'} ${file}:${cf.lineNumber}`) ?? 0) + t,
  );
  const key = file.split('/').slice(0, 3).join('/');
  byFile.set(key, (byFile.get(key) ?? 0) + t);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const top = (m: Map<string, number>, k: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([name, t]) => `${((100 * t) / total).toFixed(1)}% ${name}`)
    .join('\n');
console.log(top(byFile, 25));
console.log('---');
console.log(top(byFn, 40));
await server.close();
await valueModel.scorer.close();
await stub.close();
