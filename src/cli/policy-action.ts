/** What `winnower policy serve` does once its flags are parsed, loaded only when it runs (policy.ts registers it). */
import { join } from 'node:path';
import { importTrajectories } from '../formats/index.js';
import { buildReplayServer } from '../rollout/policy/replay-server.js';
import { packageRoot } from '../util/package-root.js';
import type { PolicyServeFlags } from './policy.js';

export async function runPolicyServe(paths: string[], flags: PolicyServeFlags): Promise<void> {
  const inputs = paths.length > 0 ? paths : [join(packageRoot(), 'examples', 'demo', 'trajectories')];
  const imported = await importTrajectories(inputs, { sourceFrom: 'file', ...(flags.format ? { format: flags.format } : {}) });
  const app = buildReplayServer({ recordings: imported.items });
  const ordered = app.recordings;
  const stop = async () => {
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  const address = await app.listen({ host: flags.host, port: flags.port });
  console.log(`winnower policy: replaying ${ordered.length} recorded trajectories on ${address}/v1`);
  ordered.forEach((recording, index) =>
    console.log(`  seed ${index} (mod ${ordered.length}) or model "${recording.id}": ${recording.turns.length} turns`),
  );
  console.log("  any other model name: the seed picks the recording; commands run for real in each rollout's sandbox");
}
