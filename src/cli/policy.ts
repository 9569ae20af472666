/**
 * `winnower policy serve`: an OpenAI-compatible chat server that replays recorded trajectories
 * (src/rollout/policy/replay-server.ts), so `/solve` can be tried and integration-tested without a
 * model server.
 */
import type { Command } from 'commander';
import { port } from './parse-options.js';

export interface PolicyServeFlags {
  host: string;
  port: number;
  format?: string;
}

export function registerPolicyCommand(program: Command): void {
  const policy = program.command('policy').description('agent policies: serve recorded trajectories as an OpenAI-compatible chat server');
  policy
    .command('serve')
    .description(
      "answer /v1/chat/completions from recorded trajectories (tool calls included): the request's model names a recording, else its seed picks one (seed mod count)",
    )
    .argument(
      '[trajectories...]',
      'recorded trajectories: files, folders or globs, any format rerank reads (default: examples/demo/trajectories)',
    )
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--port <port>', 'listen port', port, 30000)
    .option('--format <name>', "the recordings' format (default: detected per file)")
    .action(async (trajectories: string[], flags: PolicyServeFlags) =>
      (await import('./policy-action.js')).runPolicyServe(trajectories, flags),
    );
}
